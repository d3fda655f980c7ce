// Package filestore is the store.Store of a local directory, the embedded
// default of pswap (file:///path or a plain path).
//
// Conditional writes are atomic by construction and hold across processes:
//   - every write goes to a fully written, fsynced temporary file beside the
//     target (".NAME.RANDOM.pswap-tmp");
//   - create-if-absent is link(2) of that file to the final name, which fails
//     if the name exists — never stat-then-rename;
//   - replace-if-match takes an exclusive flock(2) on ".NAME.pswap-lock",
//     compares the current content hash with the expected one, and renames.
//
// The version token (ETag) is a SHA-256 content hash, never a timestamp, so a
// replace within the same clock tick is still seen as a change. Temporary and
// lock files are hidden from List, and keys may not use their suffixes.
//
// A writer that dies mid-write leaves its temporary file behind. The store
// lists such files as unfinished uploads (store.UploadLister, like S3's
// multipart uploads, with their size and TempFile set), so that garbage
// collection removes them once they are older than its orphan age. A
// writer's Abort, and every Delete, removes the folders it leaves empty;
// PruneEmptyFolders (store.FolderPruner) removes those that a process killed
// between making a folder and writing to it left, for garbage collection.
//
// A full disk (ENOSPC, or EDQUOT for a quota) is ErrNoSpace: permanent, so
// no retry loop retries it and a commit never calls it an unknown outcome;
// the temporary file is removed and the object is as it was.
package filestore
