package deltalog

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/parquet-go/parquet-go"

	"github.com/pswap/pswap/internal/strictjson"
)

// A checkpoint is the classic single-file Parquet checkpoint of
// PROTOCOL.md ("Checkpoints"): one row per action of the table's state
// (protocol, metaData, each txn, each add, each remove still within the
// file retention), each row with exactly one column set.

type cpFormat struct {
	Provider string            `parquet:"provider"`
	Options  map[string]string `parquet:"options,optional"`
}

type cpMetadata struct {
	ID               string            `parquet:"id"`
	Name             *string           `parquet:"name,optional"`
	Description      *string           `parquet:"description,optional"`
	Format           cpFormat          `parquet:"format"`
	SchemaString     string            `parquet:"schemaString"`
	PartitionColumns []string          `parquet:"partitionColumns,list"`
	Configuration    map[string]string `parquet:"configuration,optional"`
	CreatedTime      *int64            `parquet:"createdTime,optional"`
}

type cpProtocol struct {
	MinReaderVersion int32    `parquet:"minReaderVersion"`
	MinWriterVersion int32    `parquet:"minWriterVersion"`
	ReaderFeatures   []string `parquet:"readerFeatures,optional,list"`
	WriterFeatures   []string `parquet:"writerFeatures,optional,list"`
}

type cpTxn struct {
	AppID       string `parquet:"appId"`
	Version     int64  `parquet:"version"`
	LastUpdated *int64 `parquet:"lastUpdated,optional"`
}

type cpAdd struct {
	Path             string             `parquet:"path"`
	PartitionValues  map[string]*string `parquet:"partitionValues"`
	Size             int64              `parquet:"size"`
	ModificationTime int64              `parquet:"modificationTime"`
	DataChange       bool               `parquet:"dataChange"`
	Stats            *string            `parquet:"stats,optional"`
	Tags             map[string]string  `parquet:"tags,optional"`
}

type cpRemove struct {
	Path                 string             `parquet:"path"`
	DeletionTimestamp    *int64             `parquet:"deletionTimestamp,optional"`
	DataChange           bool               `parquet:"dataChange"`
	ExtendedFileMetadata *bool              `parquet:"extendedFileMetadata,optional"`
	PartitionValues      map[string]*string `parquet:"partitionValues,optional"`
	Size                 *int64             `parquet:"size,optional"`
}

type cpRow struct {
	Txn      *cpTxn      `parquet:"txn,optional"`
	Add      *cpAdd      `parquet:"add,optional"`
	Remove   *cpRemove   `parquet:"remove,optional"`
	MetaData *cpMetadata `parquet:"metaData,optional"`
	Protocol *cpProtocol `parquet:"protocol,optional"`
}

func ptr[T any](v T) *T { return &v }

func optStr(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func deref[T any](p *T) T {
	var z T
	if p == nil {
		return z
	}
	return *p
}

// encodeCheckpoint writes the state s as a checkpoint Parquet file; its
// removes are the tombstones given (those within the file retention).
func encodeCheckpoint(s *State, tombstones []*Remove) ([]byte, int, error) {
	if s.Protocol == nil || s.Metadata == nil {
		return nil, 0, fmt.Errorf("%w: a checkpoint needs the protocol and the metadata", ErrInvalid)
	}
	p, m := s.Protocol, s.Metadata
	rows := []cpRow{
		{Protocol: &cpProtocol{MinReaderVersion: int32(p.MinReaderVersion), MinWriterVersion: int32(p.MinWriterVersion), ReaderFeatures: p.ReaderFeatures, WriterFeatures: p.WriterFeatures}},
		{MetaData: &cpMetadata{ID: m.ID, Name: optStr(m.Name), Description: optStr(m.Description),
			Format:       cpFormat{Provider: m.Format.Provider, Options: m.Format.Options},
			SchemaString: m.SchemaString, PartitionColumns: m.PartitionColumns, Configuration: m.Configuration, CreatedTime: ptr(m.CreatedTime)}},
	}
	for _, id := range sortedKeys(s.Txns) {
		t := s.Txns[id]
		rows = append(rows, cpRow{Txn: &cpTxn{AppID: t.AppID, Version: t.Version, LastUpdated: ptr(t.LastUpdated)}})
	}
	for _, path := range sortedKeys(s.Files) {
		a := s.Files[path]
		rows = append(rows, cpRow{Add: &cpAdd{Path: a.Path, PartitionValues: a.PartitionValues, Size: a.Size,
			ModificationTime: a.ModificationTime, DataChange: false, Stats: optStr(a.Stats), Tags: a.Tags}})
	}
	for _, r := range tombstones {
		rows = append(rows, cpRow{Remove: &cpRemove{Path: r.Path, DeletionTimestamp: ptr(r.DeletionTimestamp), DataChange: false,
			ExtendedFileMetadata: ptr(r.ExtendedFileMetadata), PartitionValues: r.PartitionValues, Size: ptr(r.Size)}})
	}
	var b bytes.Buffer
	w := parquet.NewGenericWriter[cpRow](&b, parquet.Compression(&parquet.Snappy))
	if _, err := w.Write(rows); err != nil {
		return nil, 0, fmt.Errorf("write checkpoint: %w", err)
	}
	if err := w.Close(); err != nil {
		return nil, 0, fmt.Errorf("write checkpoint: %w", err)
	}
	return b.Bytes(), len(rows), nil
}

// decodeCheckpoint reads a classic checkpoint (pswap's or another
// writer's: columns it does not know are ignored) into a state.
func decodeCheckpoint(data []byte, version int64) (s *State, err error) {
	defer func() {
		if r := recover(); r != nil {
			s, err = nil, fmt.Errorf("%w: checkpoint of version %d: %v", ErrCorrupt, version, r)
		}
	}()
	f, err := parquet.OpenFile(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return nil, fmt.Errorf("%w: checkpoint of version %d: %v", ErrCorrupt, version, err)
	}
	r := parquet.NewGenericReader[cpRow](f)
	defer r.Close()
	s = newState()
	s.Version = version
	buf := make([]cpRow, 256)
	for {
		n, rerr := r.Read(buf)
		for _, row := range buf[:n] {
			if err := s.applyCheckpointRow(row); err != nil {
				return nil, fmt.Errorf("%w: checkpoint of version %d: %v", ErrCorrupt, version, err)
			}
		}
		clear(buf[:n])
		if rerr != nil {
			if errors.Is(rerr, io.EOF) {
				break
			}
			return nil, fmt.Errorf("%w: checkpoint of version %d: %v", ErrCorrupt, version, rerr)
		}
	}
	if s.Protocol == nil || s.Metadata == nil {
		return nil, fmt.Errorf("%w: checkpoint of version %d has no protocol or metaData", ErrCorrupt, version)
	}
	return s, nil
}

func (s *State) applyCheckpointRow(row cpRow) error {
	switch {
	case row.Protocol != nil:
		p := row.Protocol
		s.Protocol = &Protocol{MinReaderVersion: int(p.MinReaderVersion), MinWriterVersion: int(p.MinWriterVersion),
			ReaderFeatures: p.ReaderFeatures, WriterFeatures: p.WriterFeatures}
	case row.MetaData != nil:
		m := row.MetaData
		s.Metadata = &Metadata{ID: m.ID, Name: deref(m.Name), Description: deref(m.Description),
			Format: Format{Provider: m.Format.Provider, Options: m.Format.Options}, SchemaString: m.SchemaString,
			PartitionColumns: m.PartitionColumns, Configuration: m.Configuration, CreatedTime: deref(m.CreatedTime)}
	case row.Txn != nil:
		s.Txns[row.Txn.AppID] = Txn{AppID: row.Txn.AppID, Version: row.Txn.Version, LastUpdated: deref(row.Txn.LastUpdated)}
	case row.Add != nil:
		a := row.Add
		if a.Path == "" || len(a.Path) > MaxPathBytes {
			return fmt.Errorf("an add with a path of %d bytes", len(a.Path))
		}
		s.Files[a.Path] = &Add{Path: a.Path, PartitionValues: a.PartitionValues, Size: a.Size,
			ModificationTime: a.ModificationTime, DataChange: a.DataChange, Stats: deref(a.Stats), Tags: a.Tags}
	case row.Remove != nil:
		r := row.Remove
		s.Tombstones[r.Path] = &Remove{Path: r.Path, DeletionTimestamp: deref(r.DeletionTimestamp), DataChange: r.DataChange,
			ExtendedFileMetadata: deref(r.ExtendedFileMetadata), PartitionValues: r.PartitionValues, Size: deref(r.Size)}
	}
	return nil
}

// lastCheckpoint is _delta_log/_last_checkpoint.
type lastCheckpoint struct {
	Version int64 `json:"version"`
	Size    int64 `json:"size"`
	// Parts is set by writers of multi-part checkpoints, which pswap
	// does not read (it replays the JSON entries instead).
	Parts int64 `json:"parts,omitempty"`
}

func encodeLastCheckpoint(lc lastCheckpoint) []byte {
	b, _ := json.Marshal(lc)
	return b
}

// decodeLastCheckpoint reads _last_checkpoint strictly (its fields
// beyond version, size and parts, such as a checksum or a v2
// checkpoint's, are ignored).
func decodeLastCheckpoint(data []byte) (lastCheckpoint, error) {
	top, p := strictjson.Parse(data, strictjson.Limits{MaxBytes: 1 << 20})
	if p != nil {
		return lastCheckpoint{}, fmt.Errorf("%w: _last_checkpoint: %v", ErrCorrupt, p)
	}
	r := strictjson.NewReader(top, "Delta protocol")
	lc := lastCheckpoint{Version: r.Int("version", 64), Size: optInt(r, "size"), Parts: optInt(r, "parts")}
	if p := r.Err(); p != nil {
		return lastCheckpoint{}, fmt.Errorf("%w: _last_checkpoint: %v", ErrCorrupt, p)
	}
	if lc.Version < 0 {
		return lastCheckpoint{}, fmt.Errorf("%w: _last_checkpoint: version %d is negative", ErrCorrupt, lc.Version)
	}
	return lc, nil
}

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}
