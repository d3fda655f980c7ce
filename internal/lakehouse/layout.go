package lakehouse

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path"
	"strconv"
	"strings"

	"github.com/pswap/pswap/store"
)

// Keys of the Iceberg metadata, relative to the table root.
const (
	// MetadataDir is the folder of every Iceberg metadata file.
	MetadataDir = "metadata"
	// VersionHintKey names the latest published version (a number).
	VersionHintKey = MetadataDir + "/version-hint.text"
	// MetadataPrefix is the key prefix of everything under MetadataDir.
	MetadataPrefix = MetadataDir + "/"
)

// MetadataKey is the key of version v's metadata file.
func MetadataKey(v int) string { return fmt.Sprintf("%s/v%d.metadata.json", MetadataDir, v) }

// VersionOfKey returns the version of a metadata file key, or false.
func VersionOfKey(key string) (int, bool) {
	name, ok := strings.CutPrefix(key, MetadataDir+"/v")
	if !ok {
		return 0, false
	}
	num, ok := strings.CutSuffix(name, ".metadata.json")
	if !ok {
		return 0, false
	}
	v, err := strconv.Atoi(num)
	if err != nil || v <= 0 || strconv.Itoa(v) != num {
		return 0, false
	}
	return v, true
}

// partHash names a partition in manifest file names: 16 hex digits of the
// SHA-256 of its key (keys may hold characters that file names must not).
func partHash(part string) string {
	h := sha256.Sum256([]byte(part))
	return hex.EncodeToString(h[:8])
}

// manifestRef is what a manifest's name says about it: a group's
// manifest (group.go) names its group and how many members it has; a
// partition's manifest of its own, written before grouping, names the
// partition, the pointer's sequence number and the generation.
type manifestRef struct {
	part string // partHash of the partition ("" for a group's)
	seq  int64  // the pointer's sequence number of the generation
	gen  string // the generation the pointer named

	group   string // groupHash of the group, or coldHash ("" for a partition's)
	members int    // the group's members

	// cold is a cold manifest's watermark (cold.go): the newest group
	// value it holds (2026-11, or 2026-11-29 for groups of a day); ""
	// for every other manifest.
	cold string

	// app is an append manifest's partition hash (appends.go; "" for
	// every other manifest): its seq and gen are the newest append it
	// holds, appGroup the partition's group hash, appN how many appends
	// it holds and appTotal the partition's files after the newest.
	app, appGroup  string
	appN, appTotal int
}

// id is the manifest's partition or group hash; a cold manifest's, its
// prefix's hash and its watermark (coldID: the segments share the hash).
func (r manifestRef) id() string {
	if r.app != "" {
		return appendID(r.app, r.seq)
	}
	if r.cold != "" {
		return coldID(r.group, r.cold)
	}
	return r.part + r.group
}

// parseManifestPath reads a manifest's name (the last segment of its
// location): a group's, pswap-g<group>-<members>-<snapshot>-<digest>.avro,
// a cold manifest's (cold.go),
// pswap-c<cold>-<watermark>-<members>-<snapshot>-<digest>.avro (pswap-m...
// before segments), or a
// partition's own, which pswap wrote before grouping,
// pswap-<partition>-<seq>-<generation>-<snapshot>[.<digest>].avro.
// Manifests not named by this package are not ours: false.
func parseManifestPath(loc string) (manifestRef, bool) {
	name, ok := strings.CutPrefix(path.Base(loc), "pswap-")
	if !ok {
		return manifestRef{}, false
	}
	name, ok = strings.CutSuffix(name, ".avro")
	if !ok {
		return manifestRef{}, false
	}
	if g, ok := strings.CutPrefix(name, "g"); ok {
		return parseGroupName(g)
	}
	if a, ok := strings.CutPrefix(name, "ap"); ok {
		return parseAppendName(a)
	}
	if c, ok := strings.CutPrefix(name, "c"); ok {
		return parseColdName(c)
	}
	if c, ok := strings.CutPrefix(name, "m"); ok {
		return parseColdName(c) // one cold manifest per prefix, before segments
	}
	// <hash16>-<seq>-<uuid with 4 dashes>-<snapshot>
	parts := strings.Split(name, "-")
	if len(parts) != 8 || len(parts[0]) != 16 {
		return manifestRef{}, false
	}
	seq, err := strconv.ParseInt(parts[1], 10, 64)
	if err != nil || seq <= 0 {
		return manifestRef{}, false
	}
	return manifestRef{part: parts[0], seq: seq, gen: strings.Join(parts[2:7], "-")}, true
}

// parseGroupName reads the rest of a group manifest's name:
// <hash16>-<members>-<snapshot>-<digest8>.
func parseGroupName(name string) (manifestRef, bool) {
	parts := strings.Split(name, "-")
	if len(parts) != 4 || len(parts[0]) != 16 || len(parts[3]) != 8 {
		return manifestRef{}, false
	}
	for _, h := range []string{parts[0], parts[3]} {
		if _, err := hex.DecodeString(h); err != nil {
			return manifestRef{}, false
		}
	}
	n, err := strconv.Atoi(parts[1])
	if err != nil || n < 0 || strconv.Itoa(n) != parts[1] {
		return manifestRef{}, false
	}
	if _, err := strconv.ParseUint(parts[2], 10, 63); err != nil {
		return manifestRef{}, false
	}
	return manifestRef{group: parts[0], members: n}, true
}

// parseColdName reads the rest of a cold manifest's name:
// <hash16>-<watermark digits>-<members>-<snapshot>-<digest8>, the
// watermark a month (202611) or a day (20261129).
func parseColdName(name string) (manifestRef, bool) {
	hash, rest, ok := strings.Cut(name, "-")
	if !ok {
		return manifestRef{}, false
	}
	w, rest, ok := strings.Cut(rest, "-")
	if !ok {
		return manifestRef{}, false
	}
	mark, ok := watermarkOf(w)
	if !ok {
		return manifestRef{}, false
	}
	r, ok := parseGroupName(hash + "-" + rest)
	if !ok {
		return manifestRef{}, false
	}
	r.cold = mark
	return r, true
}

// ManifestShape says what a manifest's name (the last segment of loc) makes
// it: shared is true for a manifest whose members are in its Avro header
// (pswap.members): a group's, a cold one, or an append manifest (one
// member: a partition's newest appends, whose record is newer than its
// group's, see appends.go); cold for a cold manifest (a segment, or the
// one cold manifest per prefix of a pswap before segments). Checkers
// outside this package (the simulation's) use it rather than a copy of
// the names.
func ManifestShape(loc string) (shared, cold bool) {
	r, ok := parseManifestPath(loc)
	if !ok {
		return false, false
	}
	return r.group != "" || r.app != "", r.cold != ""
}

func manifestListKey(snapshot int64, attempt int, unique string) string {
	return fmt.Sprintf("%s/snap-%d-%d-%s.avro", MetadataDir, snapshot, attempt, unique)
}

// IsMetadataKey reports whether key is one of the Iceberg metadata files a
// publish writes: a version, the version hint, a manifest list or a
// manifest (checkers of the table's layout use it).
func IsMetadataKey(key string) bool {
	name, ok := strings.CutPrefix(key, MetadataPrefix)
	if !ok || strings.Contains(name, "/") || store.ValidateKey(key) != nil {
		return false
	}
	if _, ok := VersionOfKey(key); ok || key == VersionHintKey {
		return true
	}
	if _, ok := parseManifestPath(name); ok {
		return true
	}
	rest, ok := strings.CutPrefix(name, "snap-")
	if !ok {
		return false
	}
	rest, ok = strings.CutSuffix(rest, ".avro")
	parts := strings.Split(rest, "-")
	if !ok || len(parts) != 3 {
		return false
	}
	for _, p := range parts[:2] {
		if _, err := strconv.ParseUint(p, 10, 63); err != nil {
			return false
		}
	}
	return len(parts[2]) == 8
}
