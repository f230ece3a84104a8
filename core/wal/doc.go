// Package wal owns arcadego's write-ahead log: appending framed records to
// segment files, making them durable, checking and replaying them on open,
// and deleting segments a checkpoint no longer needs. It knows nothing of
// what a record means (the kind byte and the payload are the caller's) and
// must not import other arcadego packages except errs. Nothing but this
// package reads or writes the segment files.
//
// # On-disk format
//
// A log is a directory of segment files named by a zero-padded, 1-based
// sequence number, 000001.wal, 000002.wal, …, with no gaps. Other files in
// the directory are ignored. All integers are little-endian. A segment
// starts with a 16-byte header:
//
//	magic "AGWL" (4) | format version = 1 (uint32) | segment number (uint64)
//
// followed by records, each framed as
//
//	length (uint32) | CRC-32C (uint32) | kind (1 byte) | payload (length bytes)
//
// where length counts the payload only (at most MaxPayload) and the CRC
// (Castagnoli polynomial) covers kind and payload. A record's LSN is derived
// from its segment number and the offset of its frame; LSNs strictly
// increase in append order and are otherwise opaque. A segment is rotated
// when the next record would take it past Options.SegmentBytes (a record
// larger than that gets a segment of its own).
//
// # Torn tails and corruption
//
// A crash can interrupt the writes of the last records, leaving the end of
// the active (last) segment torn: a partial frame, a length that runs past
// the end of the file, bytes the file system exposed as zeros or garbage,
// or a record whose CRC does not match. Open tells a torn tail from
// corruption by looking past the first bad record of the last segment: if
// no offset after it holds a well-formed record (a length that fits and a
// matching CRC), the bad record and everything after it are a torn tail;
// the file is truncated at the bad record's start and Open succeeds. A
// last segment shorter than its header (a crash right after creating it)
// is treated as empty and its header is rewritten. Everything else is
// corruption, reported as errs.ErrCorrupt with the file's path and the
// byte offset: a bad record followed by a valid one, a bad record in an
// earlier segment, a bad header, or a missing segment number. The check
// cannot tell a torn record from corruption if its payload embeds a
// complete valid frame; such payloads would make a torn tail read as
// corruption, never the reverse.
//
// # Sync modes
//
// Append writes the record to the file before it returns (one write system
// call, so the record survives a crash of the process but not of the
// machine). Sync(lsn) then gives the mode's durability:
//
//   - SyncFull: Sync returns once an fsync begun after the record was
//     written has completed. Concurrent callers share fsyncs (group commit):
//     one leads and fsyncs everything written so far; the rest wait for it
//     and return without an fsync of their own if it covered them.
//   - SyncNormal: Sync returns at once; a background goroutine fsyncs every
//     Options.Interval when there are unsynced bytes, so a machine crash
//     loses at most about one interval of acknowledged records.
//   - SyncOff: nothing is ever fsynced, not even by Close; the operating
//     system writes the data back when it likes.
//
// Commits are made durable with fdatasync, which flushes a file's data and
// the metadata needed to read it back (its size included), not its times.
// The active segment is preallocated ahead of its records (fallocate, 1 MiB
// at a time), so that most commits leave its size alone and their
// fdatasync has no inode update to journal; the zeros past the last record
// are what Open takes for a torn tail of nothing and cuts, rotation cuts
// them before the fsync that finishes a segment, and Close cuts them.
//
// In SyncFull and SyncNormal the directory is fsynced whenever a segment is
// created or deleted, the previous segment is fsynced before a rotation,
// and a truncated torn tail is fsynced; Stats.Fsyncs counts every fsync.
// Records found by Open count as durable: in SyncFull and SyncNormal, Open
// fsyncs every segment it loads once, since a session in SyncOff may have
// left them in the page cache only.
//
// A failed fsync or write fails the log for good: every later Append,
// Sync, Rotate and DeleteBefore returns that error (kind errs.ErrIO).
// Retrying is unsafe because Linux may drop the dirty pages after a failed
// fsync and report the next fsync as successful (PostgreSQL's 2018
// "fsyncgate"); reopening the log re-reads what is really on disk.
//
// Replay hands each payload over as a fresh, 8-byte aligned allocation
// that the callback may keep.
package wal
