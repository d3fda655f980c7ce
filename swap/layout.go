package swap

import "strings"

// The layout of one partition on the store. Everything pswap owns lives under
// a "_pswap" folder, which Hive-style engines skip:
//
//	<partition>/_pswap/pointer.json               the only mutable object
//	<partition>/_pswap/manifests/<generation>.json write-once
//	<partition>/_pswap/gen/<generation>/<file>     write-once data files
const (
	metaDir      = "_pswap"
	pointerName  = "pointer.json"
	manifestsDir = "manifests"
	genDir       = "gen"
)

// PointerKey is the store key of a partition's pointer.
func PointerKey(partition string) string {
	return partition + "/" + metaDir + "/" + pointerName
}

// ManifestKey is the store key of a generation's manifest.
func ManifestKey(partition, generation string) string {
	return partition + "/" + metaDir + "/" + manifestsDir + "/" + generation + ".json"
}

// ManifestsPrefix is the key prefix of all manifests of a partition.
func ManifestsPrefix(partition string) string {
	return partition + "/" + metaDir + "/" + manifestsDir + "/"
}

// DataPrefix is the key prefix (ending in "/") under which a generation's
// data files are written.
func DataPrefix(partition, generation string) string {
	return partition + "/" + metaDir + "/" + genDir + "/" + generation + "/"
}

// GenerationsPrefix is the key prefix of all data generations of a partition.
func GenerationsPrefix(partition string) string {
	return partition + "/" + metaDir + "/" + genDir + "/"
}

// MetaPrefix is the key prefix of everything pswap keeps for a partition.
func MetaPrefix(partition string) string { return partition + "/" + metaDir + "/" }

// PartitionOfPointerKey returns the partition of a pointer key, or false.
func PartitionOfPointerKey(key string) (string, bool) {
	return strings.CutSuffix(key, "/"+metaDir+"/"+pointerName)
}
