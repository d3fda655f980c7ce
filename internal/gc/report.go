package gc

// Report is what garbage collection did (or, in a dry run, would do) to one
// partition. Objects and Bytes count what was deleted; in a dry run, what
// would be.
type Report struct {
	Partition string `json:"partition"`
	// Current is the generation current when the plan was made ("" for a
	// partition that was never committed).
	Current string `json:"current,omitempty"`
	// Kept are the committed generations kept, current first.
	Kept []string `json:"kept"`
	// KeptReasons says why each generation of Kept was kept: one of the
	// Kept* reasons (the first rule that keeps it, in that order).
	KeptReasons map[string]string `json:"kept_reasons"`
	// Collected are the retired generations whose manifests (and data no
	// kept generation shares) were deleted.
	Collected []string `json:"collected"`
	// Orphans are the uncommitted generations deleted.
	Orphans []string `json:"orphans"`
	// OrphansKept are uncommitted generations left alone because some of
	// their objects are younger than the orphan age: a writer may still
	// commit them.
	OrphansKept []string `json:"orphans_kept"`
	// Objects and Bytes are what was deleted (in a dry run: would be).
	Objects int   `json:"objects"`
	Bytes   int64 `json:"bytes"`
	// Keys are the deleted keys, relative to the store root (in a dry run:
	// exactly the keys that would be deleted).
	Keys []string `json:"keys,omitempty"`
	// Uploads counts the abandoned multipart uploads aborted, or on a
	// file system the temporary files of interrupted writes removed (in a
	// dry run: that would be); UploadKeys names their keys, UploadBytes
	// sums their sizes where the store knows them (a temporary file's),
	// and UploadKind names them: UploadMultipart or UploadTempFile.
	Uploads     int      `json:"uploads_aborted"`
	UploadKeys  []string `json:"upload_keys,omitempty"`
	UploadBytes int64    `json:"upload_bytes"`
	UploadKind  string   `json:"upload_kind,omitempty"`
	// EmptyFolders are the empty generation folders removed (in a dry
	// run: that would be), on a store whose folders exist apart from their
	// objects (store.FolderPruner: a file system), where an interrupted
	// write leaves one.
	EmptyFolders []string `json:"empty_folders,omitempty"`
	// Recomputed counts the plans thrown away because the pointer changed
	// between reading it and deleting.
	Recomputed int  `json:"recomputed"`
	DryRun     bool `json:"dry_run"`
	// Error is the failure of this partition, if any (also returned).
	Error string `json:"error,omitempty"`
}

// Why a generation was kept (Report.KeptReasons), in the order the rules
// are applied.
const (
	// KeptCurrent: the pointer names it.
	KeptCurrent = "current"
	// KeptForRollback: among the Options.Keep most recently retired.
	KeptForRollback = "keep"
	// KeptUnknownAge: when it was retired cannot be told (its successor's
	// manifest is gone), so it is taken to be young.
	KeptUnknownAge = "unknown-age"
	// KeptMinAge: retired less than Options.MinAge ago; readers that
	// resolved it may still be reading it.
	KeptMinAge = "min-age"
	// KeptCommitWindow: retired after Options.Protect looked, or less than
	// Options.CommitWindow before: a publisher may be writing a snapshot
	// that names it.
	KeptCommitWindow = "commit-window"
	// KeptClockSlack: retired within the resolution of the store's clock
	// (a couple of seconds) of now, which counts as not yet retired.
	KeptClockSlack = "clock-slack"
	// KeptSnapshot: an Iceberg snapshot still retained names its files
	// (Options.Protect).
	KeptSnapshot = "snapshot"
)

// What Report.UploadKind names.
const (
	// UploadMultipart: abandoned multipart uploads (S3).
	UploadMultipart = "multipart upload"
	// UploadTempFile: temporary files that interrupted writes left on a
	// file system (".NAME.RANDOM.pswap-tmp").
	UploadTempFile = "temporary upload file"
)

// TableReport is what garbage collection did to the partitions of a table.
type TableReport struct {
	// Partitions are the per-partition reports, sorted by partition key.
	Partitions []Report `json:"partitions"`
	Totals     Totals   `json:"totals"`
	DryRun     bool     `json:"dry_run"`
	// BatchKeys are the backfills' batch attempt records deleted (in a
	// dry run: exactly those that would be), sorted (see batches.go).
	BatchKeys []string `json:"batch_keys,omitempty"`

	batchBytes int64 // their sizes
}

// AddBatches adds the batch records of tr to the totals: their count,
// and their objects and bytes.
func (t *Totals) AddBatches(tr *TableReport) {
	t.BatchRecords += len(tr.BatchKeys)
	t.Objects += len(tr.BatchKeys)
	t.Bytes += tr.batchBytes
}

// Totals sums a TableReport's partitions.
type Totals struct {
	Partitions int   `json:"partitions"`
	Kept       int   `json:"kept"`
	Collected  int   `json:"collected"`
	Orphans    int   `json:"orphans"`
	Objects    int   `json:"objects"`
	Bytes      int64 `json:"bytes"`
	Uploads    int   `json:"uploads_aborted"`
	// UploadBytes sums the partitions' UploadBytes.
	UploadBytes int64 `json:"upload_bytes"`
	Errors      int   `json:"errors"`
	// BatchRecords counts the backfills' batch attempt records deleted
	// (TableReport.BatchKeys), which Objects and Bytes include.
	BatchRecords int `json:"batch_records"`
}

// Add adds one partition's report to the totals.
func (t *Totals) Add(r *Report) {
	t.Partitions++
	t.Kept += len(r.Kept)
	t.Collected += len(r.Collected)
	t.Orphans += len(r.Orphans)
	t.Objects += r.Objects
	t.Bytes += r.Bytes
	t.Uploads += r.Uploads
	t.UploadBytes += r.UploadBytes
	if r.Error != "" {
		t.Errors++
	}
}
