// Package layout is the layout of a partition on the store: the keys of
// its pointer, manifests, data generations and staged records, all under
// its _pswap folder. It is the one place that spells them; every other
// package (swap, the garbage collector, the Iceberg and Delta publishers,
// the audit) uses these builders and Classify.
package layout

import (
	"strings"

	"github.com/pswap/pswap/manifest"
	"github.com/pswap/pswap/partition"
)

// Everything pswap owns lives under a "_pswap" folder, which Hive-style
// engines skip:
//
//	<partition>/_pswap/pointer.json               the only mutable object
//	<partition>/_pswap/manifests/<generation>.json write-once
//	<partition>/_pswap/gen/<generation>/<file>     write-once data files
//	<partition>/_pswap/staged/<generation>.json    a staged (or reserved) generation's record
//
// MetaDir is the name of the folder under each partition that holds
// everything pswap owns.
const MetaDir = metaDir

const (
	metaDir      = "_pswap"
	pointerName  = "pointer.json"
	manifestsDir = "manifests"
	genDir       = "gen"
	stagedDir    = "staged"
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

// StagedKey is the store key of a staged generation's record.
func StagedKey(part, gen string) string { return MetaPrefix(part) + stagedDir + "/" + gen + ".json" }

// StagedPrefix is the key prefix of all staged records of a partition.
func StagedPrefix(part string) string { return MetaPrefix(part) + stagedDir + "/" }

// metaSep separates a partition key from its _pswap folder in a store key.
const metaSep = "/" + metaDir + "/"

// InsideMeta reports whether a key prefix reaches inside some partition's
// _pswap folder (and so selects only part of a partition's objects).
func InsideMeta(prefix string) bool { return strings.Contains("/"+prefix, metaSep) }

// PartitionOf returns the partition whose _pswap folder holds key (the
// first "/_pswap/" in it), or false when key lies in no valid partition's.
func PartitionOf(key string) (string, bool) {
	i := strings.Index(key, metaSep)
	if i <= 0 {
		return "", false
	}
	part := key[:i]
	return part, partition.Validate(part) == nil
}

// Kind is what an object under a partition's _pswap folder is.
type Kind int

const (
	KindOther    Kind = iota // not pswap's layout: never touched
	KindPointer              // pointer.json: never touched by GC
	KindManifest             // manifests/<gen>.json
	KindData                 // gen/<gen>/<file>
	KindStaged               // staged/<gen>.json
)

func (k Kind) String() string {
	return [...]string{"other", "pointer", "manifest", "data", "staged"}[k]
}

// Classify parses a key of partition part by this layout and returns its
// kind and the generation id it belongs to ("" for the pointer and for
// KindOther). A key whose generation id is not canonical is KindOther.
func Classify(part, key string) (Kind, string) {
	if key == PointerKey(part) {
		return KindPointer, ""
	}
	if rest, ok := strings.CutPrefix(key, ManifestsPrefix(part)); ok {
		if gen, ok := strings.CutSuffix(rest, ".json"); ok && manifest.ValidateGenerationID(gen) == nil {
			return KindManifest, gen
		}
		return KindOther, ""
	}
	if rest, ok := strings.CutPrefix(key, GenerationsPrefix(part)); ok {
		gen, file, ok := strings.Cut(rest, "/")
		if ok && file != "" && manifest.ValidateGenerationID(gen) == nil {
			return KindData, gen
		}
		return KindOther, ""
	}
	if rest, ok := strings.CutPrefix(key, StagedPrefix(part)); ok {
		if gen, ok := strings.CutSuffix(rest, ".json"); ok && manifest.ValidateGenerationID(gen) == nil {
			return KindStaged, gen
		}
	}
	return KindOther, ""
}
