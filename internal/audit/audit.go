package audit

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/pswap/pswap/manifest"
	"github.com/pswap/pswap/swap"
)

// Kind is what an attempt was (a string, so that the facade's AuditRow
// and Row convert into each other).
type Kind = string

// Kinds of attempts.
const (
	KindCommit   Kind = "commit"   // a commit of new data (commit, commit --staged, --partitioned)
	KindRollback Kind = "rollback" // a rollback --to an earlier generation
	KindMerge    Kind = "merge"    // a merge (upsert by key) into the partition
	KindStaged   Kind = "staged"   // an attempt that staged and never committed
	KindPointer  Kind = "pointer"  // a partition whose pointer cannot be read (StateCorrupt)
)

// State is where an attempt ended, as the store tells it now (a string,
// as Kind).
type State = string

// States of attempts.
const (
	StateCurrent     State = "current"     // the partition's current generation
	StateSuperseded  State = "superseded"  // committed, then replaced by a later commit
	StateRolledBack  State = "rolled-back" // committed, then replaced by a rollback
	StateFailed      State = "failed"      // wrote its manifest, never became current; or (an attempt record) ended with an error
	StateNoOp        State = "no-op"       // an attempt record: ended without a change (its run had committed, or the content was current)
	StateStaged      State = "staged"      // staged or reserved, may still be committed
	StateUncommitted State = "uncommitted" // uploaded files, no manifest: died, or still running
	StateAbandoned   State = "abandoned"   // never committed and past the grace period: never will be
	StateUnknown     State = "unknown"     // a manifest behind a garbage-collected generation
	StateCorrupt     State = "corrupt"     // the partition's pointer cannot be read: its attempts cannot be told apart
)

// Row is one attempt. Unknown numbers and times are nil (null in JSON),
// unknown strings empty.
type Row rowFields

// rowFields are Row's fields. A struct type with exactly these (the
// facade's AuditRow) converts to and from Row: Rows and RowsAs.
type rowFields = struct {
	Partition      string     `json:"partition"`
	Generation     string     `json:"generation"`
	RunID          string     `json:"run_id"`
	Kind           Kind       `json:"kind"`
	State          State      `json:"state"`
	Rows           *int64     `json:"rows"`
	Bytes          *int64     `json:"bytes"`
	Files          *int64     `json:"files"`
	CreatedAt      *time.Time `json:"created_at"`
	CommittedAt    *time.Time `json:"committed_at"`
	SupersededBy   string     `json:"superseded_by"`
	SupersededAt   *time.Time `json:"superseded_at"`
	Parent         string     `json:"parent"`
	DataGeneration string     `json:"data_generation"`
	RollbackOf     string     `json:"rollback_of"`
	Why            string     `json:"why"`
	Status         string     `json:"status"`
	Job            string     `json:"job"`
	Task           string     `json:"task"`
	LogicalDate    string     `json:"logical_date"`
	JobRunID       string     `json:"job_run_id"`
	StartedAt      *time.Time `json:"started_at"`
	FinishedAt     *time.Time `json:"finished_at"`
	NoOpOf         string     `json:"noop_of"`
}

// Rows converts rows of a struct type with Row's fields (the facade's
// AuditRow) into Rows, for this package's writers.
func Rows[R ~rowFields](rows []R) []Row {
	out := make([]Row, len(rows))
	for i, r := range rows {
		out[i] = Row(r)
	}
	return out
}

// RowsAs converts Rows into a struct type with Row's fields (nil stays
// nil).
func RowsAs[R ~rowFields](rows []Row) []R {
	if rows == nil {
		return nil
	}
	out := make([]R, len(rows))
	for i, r := range rows {
		out[i] = R(r)
	}
	return out
}

// DataFolder is what a listing found under one gen/<generation>/ prefix.
type DataFolder struct {
	Files          int64
	Bytes          int64
	Oldest, Newest time.Time // store times of its files
	// Unfinished counts the uploads among Files that never became objects:
	// a local write's temporary file or an S3 multipart upload, still being
	// written or left by a killed writer (store.UploadLister). Bytes counts
	// them where the store knows their size (a temporary file's).
	Unfinished int64
}

// Facts is what Collect read of one partition.
type Facts struct {
	Partition string
	Pointer   *manifest.Pointer             // nil: never committed
	Manifests map[string]*manifest.Manifest // by generation
	Staged    map[string]*swap.StagedRecord // by generation
	Data      map[string]DataFolder         // by data generation
	Now       time.Time                     // the store's clock when the listing began
	// Attempts are the attempt records (layout.AttemptKey), by
	// generation; BadAttempts why each record that cannot be read cannot.
	Attempts    map[string]*Attempt
	BadAttempts map[string]string
	// Batch are the partition's entries of the table's batch records
	// (Batch.Attempts), by generation: each stands for the attempt record
	// of its generation when there is none in Attempts. An entry still
	// started with nothing else of its generation on the store is no
	// attempt (the backfill never reached the partition, or died before
	// its first upload began): it gives no row.
	Batch map[string]*Attempt
	// Corrupt is why the partition's pointer cannot be read (it matches
	// swap.ErrCorrupt), nil when it can. Which generation is current, and
	// so where each attempt ended, is then unknown: Derive gives the
	// partition one row saying so, and Collect reads no manifest.
	Corrupt error
}

// Options tune Derive. The zero value works.
type Options struct {
	// GracePeriod is the age past which a generation can no longer be
	// committed (swap.Options.GracePeriod; default swap's default, 24 h).
	GracePeriod time.Duration
}

func (o Options) grace() time.Duration {
	if o.GracePeriod > 0 {
		return o.GracePeriod
	}
	return swap.Options{}.WithDefaults().GracePeriod
}

// KindOf returns the kind of a committed generation's manifest.
//
// A merge is recognized here once its manifest records it: the one place
// to wire it.
func KindOf(m *manifest.Manifest) Kind {
	switch {
	case m.RollbackOf != "":
		return KindRollback
	case m.Kind == manifest.KindMerge:
		return KindMerge
	}
	return KindCommit
}

// Derive returns the rows of one partition: the committed generations
// newest first, then the attempts that never committed, oldest first.
func Derive(f Facts, opts Options) []Row {
	if f.Corrupt != nil {
		return []Row{{Partition: f.Partition, Kind: KindPointer, State: StateCorrupt,
			Why: fmt.Sprintf("its pointer cannot be read (%v): which generation is current, and so where each attempt ended, "+
				"is unknown until it is repaired; its manifests and data are untouched", f.Corrupt)}}
	}
	if len(f.Batch) > 0 {
		all := make(map[string]*Attempt, len(f.Attempts)+len(f.Batch))
		for gen, a := range f.Batch {
			if _, bad := f.BadAttempts[gen]; !bad {
				all[gen] = a
			}
		}
		for gen, a := range f.Attempts {
			all[gen] = a // a partition's own record takes precedence
		}
		f.Attempts = all
	}
	var rows []Row
	inChain := map[string]bool{}
	usedData := map[string]bool{}
	for _, m := range f.Manifests {
		usedData[m.DataGen()] = true
	}
	if p := f.Pointer; p != nil {
		rows = chain(f, inChain)
	}
	// Manifests outside the chain: written, never current.
	var oldestCommitted time.Time
	collectedEnd := false
	for _, r := range rows {
		if r.CommittedAt != nil {
			oldestCommitted = *r.CommittedAt
		}
	}
	if n := len(rows); n > 0 && rows[n-1].Files == nil {
		collectedEnd = true
	}
	var rest []Row
	for gen, m := range f.Manifests {
		if inChain[gen] {
			continue
		}
		r := manifestRow(m)
		r.State = StateFailed
		r.Why = "manifest written, never current: the attempt died between its manifest and its pointer swap, or lost a race and could not remove it"
		if collectedEnd && !oldestCommitted.IsZero() && m.CommittedAt.Before(oldestCommitted) {
			r.State = StateUnknown
			r.Why = "older than the partition's garbage-collected generations: whether it was committed is no longer known"
		}
		rest = append(rest, r)
	}
	grace := opts.grace()
	for gen, s := range f.Staged {
		if f.Manifests[gen] != nil || inChain[gen] {
			continue // committed by commit --staged; the record's removal did not happen
		}
		at := utc(s.StagedAt)
		r := Row{Partition: f.Partition, Generation: gen, Kind: KindStaged, State: StateStaged, CreatedAt: &at}
		if s.Content != nil {
			r.Rows, r.Bytes, r.Files = ptr(s.Content.Rows), ptr(s.Content.Bytes), ptr(int64(len(s.Content.Files)))
		}
		if d, ok := f.Data[gen]; ok && s.Reserved {
			r.Bytes, r.Files = ptr(d.Bytes), ptr(d.Files)
		} else if s.Reserved {
			r.Bytes, r.Files = ptr(int64(0)), ptr(int64(0))
		}
		what := "staged (pswap stage), not committed"
		if s.Reserved {
			what = "reserved for an engine (pswap stage --reserve), not committed"
		}
		switch {
		case !f.Now.IsZero() && f.Now.Sub(at) > grace:
			r.State = StateAbandoned
			r.Why = fmt.Sprintf("%s; older than the %s grace period: it can no longer be committed (gc removes it)", what, grace)
		case s.Base != nil && (f.Pointer == nil || f.Pointer.Generation != s.Base.Generation):
			r.Why = what + "; another run committed since it was staged: commit --staged is a conflict unless --on-conflict overwrite"
		default:
			r.Why = what + "; pswap commit --staged " + gen + " commits it"
		}
		rest = append(rest, r)
	}
	for gen, d := range f.Data {
		if usedData[gen] || f.Manifests[gen] != nil || f.Staged[gen] != nil || inChain[gen] {
			continue
		}
		at := utc(d.Oldest)
		r := Row{Partition: f.Partition, Generation: gen, Kind: KindStaged, State: StateUncommitted,
			Bytes: ptr(d.Bytes), Files: ptr(d.Files), CreatedAt: &at}
		files := "1 file uploaded"
		if d.Files != 1 {
			files = fmt.Sprintf("%d files uploaded", d.Files)
		}
		switch {
		case d.Unfinished == 1 && d.Files == 1:
			files = "1 unfinished upload"
		case d.Unfinished == d.Files:
			files = fmt.Sprintf("%d unfinished uploads", d.Files)
		case d.Unfinished > 0:
			files += fmt.Sprintf(" (%d of them unfinished)", d.Unfinished)
		}
		if !f.Now.IsZero() && f.Now.Sub(d.Oldest) > grace {
			r.State = StateAbandoned
			r.Why = fmt.Sprintf("%s, no manifest, older than the %s grace period: the attempt died (killed or failed) before its commit and can no longer commit (gc removes it)", files, grace)
		} else {
			r.Why = files + ", no manifest: the attempt died (killed or failed) before its commit, or is still running"
		}
		rest = append(rest, r)
	}
	// Attempt records with nothing else on the store: an attempt that
	// ended without a commit (no-op, failed: it removed its files), or
	// one that died (or still runs) before its first file landed.
	for gen, a := range f.Attempts {
		if usedData[gen] || f.Manifests[gen] != nil || f.Staged[gen] != nil || inChain[gen] {
			continue
		}
		if _, ok := f.Data[gen]; ok {
			continue
		}
		if a.Status == StatusStarted && f.Batch[gen] == a {
			continue // a backfill's entry of an attempt that never began
		}
		at := utc(a.StartedAt)
		r := Row{Partition: f.Partition, Generation: gen, Kind: KindCommit, CreatedAt: &at}
		switch a.Status {
		case StatusNoOp:
			r.State, r.Why = StateNoOp, cmp.Or(a.Why, "ended without a change")
		case StatusFailed:
			r.State, r.Why = StateFailed, joinWhy("ended with an error before its commit (it removed what it wrote)", a.Why)
		default:
			r.Kind, r.State = KindStaged, StateUncommitted
			r.Why = "no file uploaded, no manifest: the attempt died (killed or failed) before its commit, or is still running"
			if !f.Now.IsZero() && f.Now.Sub(at) > grace {
				r.State = StateAbandoned
				r.Why = fmt.Sprintf("no file uploaded, no manifest, older than the %s grace period: the attempt died (killed or failed) before its commit and can no longer commit (gc removes its record)", grace)
			}
		}
		rest = append(rest, r)
	}
	slices.SortFunc(rest, func(a, b Row) int {
		return cmp.Or(a.CreatedAt.Compare(*b.CreatedAt), cmp.Compare(a.Generation, b.Generation))
	})
	rows = append(rows, rest...)
	withAttempts(f, rows)
	return rows
}

// withAttempts fills in what the attempt records tell of each row (run
// id, identity, start and end) and each row's status. An attempt that
// never ended (status started) is failed once a later attempt of the same
// run (started after it) ended: the orchestrator retried it, so it died.
func withAttempts(f Facts, rows []Row) {
	for i := range rows {
		r := &rows[i]
		a := f.Attempts[r.Generation]
		if m := f.Manifests[r.Generation]; a == nil && m != nil && m.Kind == "" && m.RollbackOf == "" && m.DataGen() != r.Generation {
			// A commit under a generation of its own that reuses the
			// data its attempt uploaded (a rebase after a lost race, a
			// commit --staged): that attempt's record.
			a = f.Attempts[m.DataGen()]
		}
		if a != nil {
			if r.RunID == "" {
				r.RunID = a.RunID
			}
			r.Job, r.Task, r.LogicalDate, r.JobRunID = a.Identity.Job, a.Identity.Task, a.Identity.LogicalDate, a.Identity.JobRunID
			at := utc(a.StartedAt)
			if a.RunStart && r.CreatedAt != nil && r.CreatedAt.After(at) {
				// A backfill's entry knows only the run's start: the
				// attempt's own is its manifest's created_at (when it
				// began), else the first upload of what it left (it
				// began at most its first file's staging before).
				at = *r.CreatedAt
			}
			r.StartedAt = &at
			if !a.FinishedAt.IsZero() {
				end := utc(a.FinishedAt)
				r.FinishedAt = &end
			}
			if a.Status == StatusNoOp {
				r.NoOpOf = a.Found
			}
		} else if why, bad := f.BadAttempts[r.Generation]; bad {
			r.Why = joinWhy(r.Why, "its attempt record cannot be read ("+why+")")
		}
		if r.StartedAt == nil && r.CreatedAt != nil {
			at := *r.CreatedAt
			r.StartedAt = &at
		}
		switch r.State {
		case StateCurrent, StateSuperseded, StateRolledBack:
			r.Status, r.FinishedAt = StatusSucceeded, r.CommittedAt
		case StateFailed:
			r.Status = StatusFailed
		case StateNoOp:
			r.Status = StatusNoOp
		case StateStaged, StateUncommitted:
			r.Status = StatusStarted
		case StateAbandoned:
			r.Status = StatusAbandoned
		}
		if a != nil && r.Status != StatusSucceeded && a.Status != StatusStarted {
			// It ended (no-op, failed) and something of it is left
			// (its cleanup was cut short): what it said stands.
			r.Status = a.Status
			if a.Status == StatusFailed {
				r.Why = joinWhy(r.Why, "it ended with an error: "+a.Why)
			}
		}
	}
	for i := range rows {
		r := &rows[i]
		if (r.Status != StatusStarted && r.Status != StatusAbandoned) || r.RunID == "" || r.StartedAt == nil || r.Kind == KindStaged && f.Staged[r.Generation] != nil {
			continue
		}
		for _, o := range rows {
			if o.Generation == r.Generation || o.RunID != r.RunID || o.StartedAt == nil || !o.StartedAt.After(*r.StartedAt) ||
				(o.Status != StatusSucceeded && o.Status != StatusNoOp && o.Status != StatusFailed) {
				continue
			}
			r.Status = StatusFailed
			r.Why = joinWhy(strings.Replace(r.Why, ", or is still running", "", 1),
				fmt.Sprintf("a later attempt of its run ended (%s, %s): this one died", o.Generation, o.Status))
			break
		}
	}
}

// chain returns the committed generations, newest first: from the pointer
// through each manifest's parent, then through the pointer's history past
// a manifest that is gone.
func chain(f Facts, inChain map[string]bool) []Row {
	p := f.Pointer
	hist := map[string]int{}
	for i, e := range p.History {
		hist[e.Generation] = i
	}
	var rows []Row
	gen := p.Generation
	for gen != "" && !inChain[gen] {
		inChain[gen] = true
		var r Row
		if m := f.Manifests[gen]; m != nil {
			r = manifestRow(m)
			gen = m.Parent
		} else {
			// Garbage-collected (or never written by a 1.0 writer): what
			// the pointer's history remembers of it.
			r = Row{Partition: f.Partition, Generation: gen, Kind: KindCommit,
				Why: "manifest garbage-collected: rows, run id and times from the pointer's history where it reaches"}
			next := ""
			if i, ok := hist[gen]; ok {
				e := p.History[i]
				at := utc(e.CommittedAt)
				r.RunID, r.Rows, r.CommittedAt = e.RunID, ptr(e.Rows), &at
				r.DataGeneration = e.DataGeneration
				if i+1 < len(p.History) {
					next = p.History[i+1].Generation
				}
			} else if gen == p.Generation {
				at := utc(p.CommittedAt)
				r.RunID, r.Rows, r.CommittedAt, r.Parent = p.RunID, ptr(p.Rows), &at, p.Parent
				next = p.Parent
			}
			r.Parent = next
			gen = next
		}
		r.State = StateCurrent
		if n := len(rows); n > 0 {
			newer := rows[n-1]
			r.SupersededBy, r.SupersededAt = newer.Generation, newer.CommittedAt
			r.State = StateSuperseded
			if newer.Kind == KindRollback {
				r.State = StateRolledBack
				r.Why = joinWhy(r.Why, "rolled back to "+newer.RollbackOf+" by "+newer.Generation)
			}
		}
		rows = append(rows, r)
	}
	return rows
}

func manifestRow(m *manifest.Manifest) Row {
	created, committed := utc(m.CreatedAt), utc(m.CommittedAt)
	r := Row{Partition: m.Partition, Generation: m.Generation, RunID: m.RunID, Kind: KindOf(m),
		Rows: ptr(m.Rows), Bytes: ptr(m.Bytes), Files: ptr(int64(m.FileCount())),
		CreatedAt: &created, CommittedAt: &committed, Parent: m.Parent, RollbackOf: m.RollbackOf}
	if m.DataGen() != m.Generation {
		r.DataGeneration = m.DataGen()
	}
	if m.RollbackOf != "" {
		r.Why = "restores the data of " + m.RollbackOf
	}
	return r
}

func joinWhy(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}

func ptr[T any](v T) *T { return &v }

// utc returns t in UTC at microsecond precision, the unit of Iceberg's
// timestamps: the rows read the same from JSON and from the audit table.
func utc(t time.Time) time.Time { return t.UTC().Truncate(time.Microsecond) }
