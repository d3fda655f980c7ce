// Package layout is the layout of pswap's own state on the store: the keys
// of each partition's pointer, manifests, data generations and staged
// records. It is the one place that spells them; every other package
// (swap, the garbage collector, the Iceberg and Delta publishers, the
// audit) uses these builders and Classify.
//
// Everything pswap owns for a partition lives under the table's top-level
// _pswap/ folder (beside table.json), which every peer's maintenance
// spares: delta-rs's vacuum spares a path relative to the root that starts
// with "_", Spark's VACUUM and Iceberg's orphan-file removal a folder whose
// name starts with "_":
//
//	_pswap/p/<partition>/pointer.json               the only mutable object
//	_pswap/p/<partition>/manifests/<generation>.json write-once
//	_pswap/p/<partition>/staged/<generation>.json    a staged (or reserved) generation's record
//	_pswap/p/<partition>/gen/<generation>/<file>     write-once data files of new generations
//	_pswap/p/<partition>/gen/<root>/_segments/<id>.json an append head's segment (package manifest), kept and collected with its data generation
//	_pswap/fold/<partition>/<seq>                    an Iceberg publish's fold marker (FoldKey), empty
//	_pswap/publish.lease                              the Iceberg publish lease (LeaseKey): who folds the markers now
//	_pswap/p/<partition>/attempts/<generation>.json  an attempt's record: written when it starts, rewritten when it ends without a commit
//	_pswap/p/<partition>/runs/<sha256 of run id>.json an append's run record
//	_pswap/batches/<id>.json                          a backfill's attempt record, for all its partitions
//
// An attempt record lies in this layout even for a partition of the
// legacy one (nothing reads it but the audit and GC, which list both).
//
// Tables written before that layout keep the same objects in each
// partition's own _pswap folder (the Legacy* builders):
//
//	<partition>/_pswap/pointer.json, manifests/, staged/, gen/
//
// A partition moves from the legacy layout to this one by the migration in
// package swap (swap.Migrate): manifests and staged records are copied,
// the legacy pointer is replaced by a moved record (Pointer.MovedTo) and
// the pointer is created at its new key. Data files never move: a manifest
// says where its data generation lies (manifest.Manifest.DataLayout), and
// DataPrefixOf resolves it.
package layout

import (
	"strconv"
	"strings"

	"github.com/pswap/pswap/manifest"
	"github.com/pswap/pswap/partition"
)

// MetaDir is the name of the folder that holds everything pswap owns: at
// the table's root (table.json, and every partition's state under
// PartitionsRoot), and, in the legacy layout, under each partition.
const MetaDir = metaDir

// PartitionsRoot is the key prefix under which every partition's state
// lies in the current layout: "_pswap/p/".
const PartitionsRoot = metaDir + "/p/"

const (
	metaDir      = "_pswap"
	pointerName  = "pointer.json"
	manifestsDir = "manifests"
	genDir       = "gen"
	stagedDir    = "staged"
	attemptsDir  = "attempts"
	runsDir      = "runs"
)

// MetaPrefix is the key prefix of everything pswap keeps for a partition:
// "_pswap/p/<partition>/".
func MetaPrefix(part string) string { return PartitionsRoot + part + "/" }

// PointerKey is the store key of a partition's pointer.
func PointerKey(part string) string { return MetaPrefix(part) + pointerName }

// ManifestKey is the store key of a generation's manifest.
func ManifestKey(part, generation string) string {
	return ManifestsPrefix(part) + generation + ".json"
}

// ManifestsPrefix is the key prefix of all manifests of a partition.
func ManifestsPrefix(part string) string { return MetaPrefix(part) + manifestsDir + "/" }

// DataPrefix is the key prefix (ending in "/") under which a new
// generation's data files are written.
func DataPrefix(part, generation string) string {
	return GenerationsPrefix(part) + generation + "/"
}

// GenerationsPrefix is the key prefix of the data generations written in
// this layout.
func GenerationsPrefix(part string) string { return MetaPrefix(part) + genDir + "/" }

// StagedKey is the store key of a staged generation's record.
func StagedKey(part, gen string) string { return StagedPrefix(part) + gen + ".json" }

// RunsPrefix is the key prefix of a partition's run records (package
// swap's appends: one small record per run id that appended,
// never touched by garbage collection).
func RunsPrefix(part string) string { return MetaPrefix(part) + runsDir + "/" }

// StagedPrefix is the key prefix of all staged records of a partition.
func StagedPrefix(part string) string { return MetaPrefix(part) + stagedDir + "/" }

// AttemptKey is the store key of the record of the attempt that writes
// generation gen: its run id, identity and start time, written beside its
// first upload (and its end, when it ends without a commit).
func AttemptKey(part, gen string) string { return AttemptsPrefix(part) + gen + ".json" }

// AttemptsPrefix is the key prefix of all attempt records of a partition.
func AttemptsPrefix(part string) string { return MetaPrefix(part) + attemptsDir + "/" }

// DataPrefixIn is the data prefix of generation gen of partition part in
// data layout dataLayout (manifest.Manifest.DataLayout: 0 for the legacy
// layout, manifest.DataLayoutTable for this one).
func DataPrefixIn(part, gen string, dataLayout int) string {
	if dataLayout == manifest.DataLayoutTable {
		return DataPrefix(part, gen)
	}
	return LegacyDataPrefix(part, gen)
}

// DataPrefixOf is the key prefix under which m's files lie (of its data
// generation, in the layout the manifest records).
func DataPrefixOf(m *manifest.Manifest) string {
	return DataPrefixIn(m.Partition, m.DataGen(), m.DataLayout)
}

// LegacyMetaPrefix is the key prefix of what the legacy layout keeps for a
// partition: "<partition>/_pswap/".
func LegacyMetaPrefix(part string) string { return part + "/" + metaDir + "/" }

// LegacyPointerKey is the key of a partition's pointer in the legacy
// layout (after its migration, the moved record).
func LegacyPointerKey(part string) string { return LegacyMetaPrefix(part) + pointerName }

// LegacyManifestKey is the key of a generation's manifest in the legacy
// layout.
func LegacyManifestKey(part, gen string) string { return LegacyManifestsPrefix(part) + gen + ".json" }

// LegacyManifestsPrefix is the key prefix of a partition's manifests in the
// legacy layout.
func LegacyManifestsPrefix(part string) string { return LegacyMetaPrefix(part) + manifestsDir + "/" }

// LegacyStagedKey is the key of a staged record in the legacy layout.
func LegacyStagedKey(part, gen string) string { return LegacyStagedPrefix(part) + gen + ".json" }

// LegacyStagedPrefix is the key prefix of a partition's staged records in
// the legacy layout.
func LegacyStagedPrefix(part string) string { return LegacyMetaPrefix(part) + stagedDir + "/" }

// LegacyDataPrefix is the data prefix of a generation written in the
// legacy layout.
func LegacyDataPrefix(part, gen string) string { return LegacyGenerationsPrefix(part) + gen + "/" }

// LegacyGenerationsPrefix is the key prefix of a partition's data
// generations in the legacy layout.
func LegacyGenerationsPrefix(part string) string { return LegacyMetaPrefix(part) + genDir + "/" }

// MetaPrefixes are both prefixes under which a partition's objects can lie:
// this layout's first, then the legacy one.
func MetaPrefixes(part string) []string { return []string{MetaPrefix(part), LegacyMetaPrefix(part)} }

// PartitionOfPointerKey returns the partition of a pointer key (of either
// layout), or false.
func PartitionOfPointerKey(key string) (string, bool) {
	if rest, ok := strings.CutPrefix(key, PartitionsRoot); ok {
		return strings.CutSuffix(rest, "/"+pointerName)
	}
	return strings.CutSuffix(key, "/"+metaDir+"/"+pointerName)
}

// metaSep separates a partition key from its _pswap folder in a legacy key.
const metaSep = "/" + metaDir + "/"

// InsideMeta reports whether a key prefix reaches inside pswap's own
// folders (a partition's legacy _pswap folder, or the table's top-level
// one) and so selects only part of a partition's objects.
func InsideMeta(prefix string) bool {
	return strings.Contains("/"+prefix, metaSep) || prefix == metaDir
}

// PartitionOf returns the partition whose state holds key, in either
// layout, or false when key lies in no valid partition's. In this layout
// the partition is the run of key=value segments after "_pswap/p/"; in the
// legacy one, what precedes the first "/_pswap/".
func PartitionOf(key string) (string, bool) {
	if rest, ok := strings.CutPrefix(key, PartitionsRoot); ok {
		i, n := 0, 0
		for {
			j := strings.IndexByte(rest[i:], '/')
			if j < 0 || !strings.Contains(rest[i:i+j], "=") {
				break
			}
			i += j + 1
			n++
		}
		if n == 0 {
			return "", false
		}
		part := rest[:i-1]
		return part, partition.Validate(part) == nil
	}
	if strings.HasPrefix(key, metaDir+"/") {
		return "", false
	}
	i := strings.Index(key, metaSep)
	if i <= 0 {
		return "", false
	}
	part := key[:i]
	return part, partition.Validate(part) == nil
}

// Kind is what an object of a partition's state is.
type Kind int

const (
	KindOther    Kind = iota // not pswap's layout: never touched
	KindPointer              // pointer.json (or a legacy moved record): never touched by GC
	KindManifest             // manifests/<gen>.json
	KindData                 // gen/<gen>/<file>
	KindStaged               // staged/<gen>.json
	KindAttempt              // attempts/<gen>.json
)

func (k Kind) String() string {
	return [...]string{"other", "pointer", "manifest", "data", "staged", "attempt"}[k]
}

// Classify parses a key of partition part by either layout and returns its
// kind and the generation id it belongs to ("" for the pointer and for
// KindOther). A key whose generation id is not canonical is KindOther. A
// manifest or staged record copied by a migration has a key in each
// layout, both of the same kind and generation.
func Classify(part, key string) (Kind, string) {
	for i, meta := range MetaPrefixes(part) {
		if rest, ok := strings.CutPrefix(key, meta); ok {
			k, gen := classifyRest(rest)
			if k == KindAttempt && i > 0 {
				return KindOther, "" // attempt records lie in this layout only
			}
			return k, gen
		}
	}
	return KindOther, ""
}

// IsLegacy reports whether key lies in the legacy layout (under some
// partition's own _pswap folder).
func IsLegacy(key string) bool {
	return !strings.HasPrefix(key, metaDir+"/") && strings.Contains(key, metaSep)
}

func classifyRest(rest string) (Kind, string) {
	if rest == pointerName {
		return KindPointer, ""
	}
	if r, ok := strings.CutPrefix(rest, manifestsDir+"/"); ok {
		if gen, ok := strings.CutSuffix(r, ".json"); ok && manifest.ValidateGenerationID(gen) == nil {
			return KindManifest, gen
		}
		return KindOther, ""
	}
	if r, ok := strings.CutPrefix(rest, genDir+"/"); ok {
		gen, file, ok := strings.Cut(r, "/")
		if ok && file != "" && manifest.ValidateGenerationID(gen) == nil {
			return KindData, gen
		}
		return KindOther, ""
	}
	if r, ok := strings.CutPrefix(rest, stagedDir+"/"); ok {
		if gen, ok := strings.CutSuffix(r, ".json"); ok && manifest.ValidateGenerationID(gen) == nil {
			return KindStaged, gen
		}
	}
	if r, ok := strings.CutPrefix(rest, attemptsDir+"/"); ok {
		if gen, ok := strings.CutSuffix(r, ".json"); ok && manifest.ValidateGenerationID(gen) == nil {
			return KindAttempt, gen
		}
	}
	return KindOther, ""
}

// FoldPrefix is the key prefix of the fold markers: "_pswap/fold/". An
// Iceberg publish that lost the race for the next metadata version leaves
// one (FoldKey) so that the publisher that writes the next version folds
// its partition in; it deletes it once a version reflects its commit. A
// marker is only a hint: the partition's pointer says what is current, and
// a lost or stale marker costs at most a rebase. Garbage collection never
// touches them (KindOther).
const FoldPrefix = metaDir + "/fold/"

// FoldKey is the store key of the fold marker of a partition's commit of
// pointer sequence number seq: "_pswap/fold/<partition>/<seq>".
func FoldKey(part string, seq int64) string {
	return FoldPrefix + part + "/" + strconv.FormatInt(seq, 10)
}

// ParseFoldKey returns the partition and sequence number of a fold
// marker's key, or false for a key that is not one.
func ParseFoldKey(key string) (part string, seq int64, ok bool) {
	rest, ok := strings.CutPrefix(key, FoldPrefix)
	if !ok {
		return "", 0, false
	}
	i := strings.LastIndexByte(rest, '/')
	if i <= 0 {
		return "", 0, false
	}
	seq, err := strconv.ParseInt(rest[i+1:], 10, 64)
	if err != nil || seq <= 0 || strconv.FormatInt(seq, 10) != rest[i+1:] {
		return "", 0, false
	}
	part = rest[:i]
	if partition.Validate(part) != nil {
		return "", 0, false
	}
	return part, seq, true
}

// LeaseKey is the key of the Iceberg publish lease: "_pswap/publish.lease".
// The publisher that holds it writes the versions of a burst of commits
// and folds their markers (FoldKey); a publisher that finds it held by a
// live holder leaves its marker and returns (package lakehouse, lease.go).
// It is deleted on release; garbage collection never touches it
// (KindOther).
const LeaseKey = metaDir + "/publish.lease"

// BatchesPrefix is the key prefix of the batch attempt records:
// "_pswap/batches/". A backfill (pswap commit --partitioned) writes one
// record for all its partitions (BatchKey) instead of one attempt record
// per partition: the audit reads them all (one listing) and gives each
// partition's attempt what its entry says. GC does not touch them
// (KindOther).
const BatchesPrefix = metaDir + "/batches/"

// BatchKey is the store key of a batch attempt record: id is the batch's
// own id, a generation id (manifest.NewGenerationID).
func BatchKey(id string) string { return BatchesPrefix + id + ".json" }

// ParseBatchKey returns the id of a batch attempt record's key, or false
// for a key that is not one.
func ParseBatchKey(key string) (id string, ok bool) {
	rest, ok := strings.CutPrefix(key, BatchesPrefix)
	if !ok {
		return "", false
	}
	id, ok = strings.CutSuffix(rest, ".json")
	if !ok || manifest.ValidateGenerationID(id) != nil {
		return "", false
	}
	return id, true
}
