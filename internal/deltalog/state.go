package deltalog

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"
)

// Tags pswap sets on each add (and remove) it writes: which partition,
// generation and pointer sequence number a file belongs to. An add
// without them is another writer's.
const (
	TagPartition  = "pswap.partition"
	TagGeneration = "pswap.generation"
	TagSeq        = "pswap.seq"
)

// State is a table's Delta state at a version: the replay of its log.
type State struct {
	// Version is the version replayed (-1: the table has no Delta log).
	Version    int64
	Protocol   *Protocol
	Metadata   *Metadata
	Files      map[string]*Add    // by path: the files of the table
	Tombstones map[string]*Remove // by path: removed files
	Txns       map[string]Txn     // by appId
	// Checkpoint is the version of the checkpoint the replay started from
	// (-1: none).
	Checkpoint int64
	foreign    string // the first thing another writer did, for ErrForeign
}

func newState() *State {
	return &State{Version: -1, Checkpoint: -1, Files: map[string]*Add{}, Tombstones: map[string]*Remove{}, Txns: map[string]Txn{}}
}

// apply replays one version's actions.
func (s *State) apply(version int64, actions []Action) {
	for _, a := range actions {
		switch {
		case a.Protocol != nil:
			s.Protocol = a.Protocol
		case a.Metadata != nil:
			s.Metadata = a.Metadata
		case a.Txn != nil:
			s.Txns[a.Txn.AppID] = *a.Txn
		case a.Add != nil:
			s.Files[a.Add.Path] = a.Add
			delete(s.Tombstones, a.Add.Path)
		case a.Remove != nil:
			delete(s.Files, a.Remove.Path)
			s.Tombstones[a.Remove.Path] = a.Remove
		case a.Other != "" && a.Other != "cdc" && a.Other != "domainMetadata" && s.foreign == "":
			s.foreign = fmt.Sprintf("version %d has a %q action", version, a.Other)
		}
	}
	s.Version = version
}

// part is what the state holds of one pswap partition.
type part struct {
	seq   int64
	gen   string
	files []*Add
}

// bytes is the sum of the part's files' sizes.
func (p *part) bytes() int64 {
	var n int64
	for _, a := range p.files {
		n += a.Size
	}
	return n
}

// partitions groups the state's files by the pswap partition their tags
// name, and says what another writer added (a file without pswap's
// tags, a deletion vector), if anything.
func (s *State) partitions() (map[string]*part, error) {
	out := map[string]*part{}
	for _, path := range sortedKeys(s.Files) {
		a := s.Files[path]
		p, gen, seqs := a.Tags[TagPartition], a.Tags[TagGeneration], a.Tags[TagSeq]
		seq, err := strconv.ParseInt(seqs, 10, 64)
		if p == "" || gen == "" || err != nil || a.Foreign != "" {
			why := "it has no pswap tags"
			if a.Foreign != "" {
				why = "it has a " + a.Foreign
			}
			return nil, fmt.Errorf("%w: the file %s is not pswap's (%s): another writer changed the Delta table", ErrForeign, path, why)
		}
		cur := out[p]
		if cur == nil {
			cur = &part{seq: seq, gen: gen}
			out[p] = cur
		}
		if seq > cur.seq {
			cur.seq, cur.gen = seq, gen
		}
		cur.files = append(cur.files, a)
	}
	if s.foreign != "" {
		return nil, fmt.Errorf("%w: %s, which pswap does not write", ErrForeign, s.foreign)
	}
	return out, nil
}

// EscapePath is the add.path of a store key: relative to the table root,
// each segment percent-encoded as a URI path (RFC 3986), so that readers
// that decode it get the key back.
func EscapePath(key string) string {
	segs := strings.Split(key, "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	return strings.Join(segs, "/")
}

// KeyOfPath is the store key of a relative add.path (false for an
// absolute URI or one that does not decode).
func KeyOfPath(p string) (string, bool) {
	if strings.Contains(p, "://") || strings.HasPrefix(p, "/") {
		return "", false
	}
	k, err := url.PathUnescape(p)
	if err != nil {
		return "", false
	}
	return k, true
}
