/*
** arcadego.h: the C interface of libarcadego, an embedded, Arrow-native
** store for wide time series and typed documents.
**
** Conventions (they hold for every function below unless it says otherwise):
**
**  - Every function returns a status code: ARCADEGO_OK (0) on success, one
**    of the ARCADEGO_* codes below otherwise. Nothing is changed by a call
**    that fails.
**  - A function with a `char **err` parameter stores a NUL-terminated,
**    malloc'ed message there when it fails (and NULL when it succeeds), if
**    err is not NULL. The caller frees the message with arcadego_free().
**    There is no global "last error".
**  - Handles (arcadego_db*, arcadego_tx*) are opaque tokens, never
**    dereferenced, and never reused within a process. A NULL handle is
**    ARCADEGO_INVALID_ARGUMENT; a handle that was closed, committed or
**    rolled back, or one of the other kind, is ARCADEGO_CLOSED, never a
**    crash.
**  - A NULL pointer where the function needs one (out parameters, scripts,
**    JSON, Arrow structs, the type name) is ARCADEGO_INVALID_ARGUMENT.
**    JSON arguments must be valid UTF-8 and hold no keys but the listed
**    ones.
**  - Arrow data follows the Arrow C Data Interface
**    (https://arrow.apache.org/docs/format/CDataInterface.html): a function
**    that takes a struct ArrowSchema*, ArrowArray* or ArrowArrayStream*
**    MOVES it: on return, successful or not, the struct has been released
**    (its release member is NULL) and the caller must not release it again.
**    A struct whose release member is already NULL is rejected with
**    ARCADEGO_INVALID_ARGUMENT (and not released again). The library calls
**    the release callback of the top-level struct exactly once, before the
**    function returns; it never calls or writes the children's. Output
**    streams belong to the caller, who calls their release callback when
**    done.
**  - Strings are UTF-8. Type, property and device names are user strings of
**    at most 256 bytes without control characters; none ever becomes a file
**    name. Names (type, device, device column) and DDL scripts are passed
**    with their length in bytes (`type, type_len`): they need no NUL
**    terminator, and every byte of the length is read, so a NUL inside a
**    name or script is refused (ARCADEGO_INVALID_ARGUMENT naming it), never
**    cut there. A NULL pointer is refused whatever the length, except
**    where NULL is said to mean something (a device of NULL is "").
**    Paths and JSON arguments are NUL-terminated (a JSON string spells NUL
**    "\u0000", which is refused in a name the same way).
**  - The library never lets a Go panic cross this boundary: a recovered
**    panic is reported as ARCADEGO_INTERNAL. Reading an Arrow buffer that
**    is shorter than its array claims is caught where the memory is
**    unmapped (ARCADEGO_INVALID_ARGUMENT); a buffer that is merely short
**    inside mapped memory cannot be detected.
**  - A process that forks must not call the library in the child: the Go
**    runtime does not survive fork(). The library notices (pthread_atfork)
**    and, in the child, returns ARCADEGO_CLOSED from every call with a
**    message, releasing any Arrow input, without entering Go or touching
**    the parent's database. Use exec, or Python's "spawn" or "forkserver"
**    start methods.
**
** All functions are thread safe, except that one transaction must not be
** used from two threads at once.
*/
#ifndef ARCADEGO_H
#define ARCADEGO_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Status codes. */
#define ARCADEGO_OK               0
#define ARCADEGO_INVALID_ARGUMENT 1 /* bad input: NULL pointer, bad name, bad Arrow data, type mismatch */
#define ARCADEGO_NOT_FOUND        2 /* unknown type, property, index or device */
#define ARCADEGO_ALREADY_EXISTS   3 /* creating something that exists */
#define ARCADEGO_CONFLICT         4 /* a concurrent commit made this one invalid */
#define ARCADEGO_IO               5 /* the operating system refused a read, write or fsync */
#define ARCADEGO_CLOSED           6 /* the database or transaction is closed */
#define ARCADEGO_CORRUPT          7 /* files on disk failed a checksum or format check */
#define ARCADEGO_CANCELED         8 /* arcadego_cancel() interrupted the call */
#define ARCADEGO_INTERNAL         9 /* a bug: please report it */

/* Arrow C Data Interface structs, exactly as the specification defines them. */
#ifndef ARROW_C_DATA_INTERFACE
#define ARROW_C_DATA_INTERFACE
#define ARROW_FLAG_DICTIONARY_ORDERED 1
#define ARROW_FLAG_NULLABLE 2
#define ARROW_FLAG_MAP_KEYS_SORTED 4
struct ArrowSchema {
  const char *format;
  const char *name;
  const char *metadata;
  int64_t flags;
  int64_t n_children;
  struct ArrowSchema **children;
  struct ArrowSchema *dictionary;
  void (*release)(struct ArrowSchema *);
  void *private_data;
};
struct ArrowArray {
  int64_t length;
  int64_t null_count;
  int64_t offset;
  int64_t n_buffers;
  int64_t n_children;
  const void **buffers;
  struct ArrowArray **children;
  struct ArrowArray *dictionary;
  void (*release)(struct ArrowArray *);
  void *private_data;
};
#endif
#ifndef ARROW_C_STREAM_INTERFACE
#define ARROW_C_STREAM_INTERFACE
struct ArrowArrayStream {
  int (*get_schema)(struct ArrowArrayStream *, struct ArrowSchema *out);
  int (*get_next)(struct ArrowArrayStream *, struct ArrowArray *out);
  const char *(*get_last_error)(struct ArrowArrayStream *);
  void (*release)(struct ArrowArrayStream *);
  void *private_data;
};
#endif

/*
** ARCADEGO_S(s): the NUL-terminated string s as the (pointer, length) pair
** that the functions below take for names and scripts, e.g.
**   arcadego_exec(db, ARCADEGO_S("CREATE DOCUMENT TYPE A"), &err);
*/
#define ARCADEGO_S(s) (s), strlen(s)

typedef struct arcadego_db arcadego_db; /* an open database */
typedef struct arcadego_tx arcadego_tx; /* an open transaction */

/* The library version, e.g. "0.1.0". Static storage: do not free. */
const char *arcadego_version(void);

/*
** Open (creating if needed) the database in directory `path`; NULL or ""
** opens a database held only in memory. `options_json` may be NULL or a JSON
** object with any of:
**   "sync":        "full" (default: a commit returns after fsync),
**                  "normal" (background fsync every few ms), "off"
**   "auto_create": false (default) | true: inserts create missing types and
**                  properties, typed from the batch, in the same commit
**   "time_column": name of the time column of inserted batches and of scan
**                  results ("time"; it cannot be "device")
**   "memtable_budget": bytes (an integer >= 0; 0 or absent: 64 MiB) of
**                  committed data held in memory before it is handed over
**                  to a background flush to Parquet (see arcadego_flush)
**   "direct_write_bytes": a transaction's inserts into one type of at least
**                  this many bytes (0 or absent: 16 MiB; -1: never) are
**                  written straight to Parquet files, once, instead of to
**                  the log and later to Parquet again; the log records the
**                  files. A long-format batch that is its type's only
**                  write in the transaction does so from a quarter of it
**                  (4 MiB by default). Where they could meet older rows of
**                  the same devices and times still in memory, they go the
**                  usual way.
**   "read_only":   false (default) | true: open an existing database that
**                  another process (or handle) may be writing, without its
**                  lock and without writing a byte. The handle sees the
**                  database as it was on disk when it opened and nothing
**                  committed after (open again to see more); transactions,
**                  inserts, DDL, arcadego_flush, arcadego_checkpoint and
**                  arcadego_clone give ARCADEGO_INVALID_ARGUMENT. A path
**                  without a database gives ARCADEGO_NOT_FOUND.
** On success *out is a new handle that the caller closes with
** arcadego_close(); on failure *out is NULL. Bad options give
** ARCADEGO_INVALID_ARGUMENT naming the problem. A directory open in
** another process gives ARCADEGO_IO.
*/
int arcadego_open(const char *path, const char *options_json, arcadego_db **out, char **err);

/*
** Close the database and invalidate its handle and every transaction still
** open on it (they are rolled back). Calls running on it are canceled
** (see arcadego_cancel), and so are its open result streams: their
** get_next then fails with ECANCELED. Closing a closed handle gives
** ARCADEGO_CLOSED. The handle is invalid afterwards even if closing failed
** (ARCADEGO_IO: the final log sync failed).
*/
int arcadego_close(arcadego_db *db, char **err);

/*
** Start a transaction. DDL and inserts added to it become durable and
** visible together at arcadego_commit(), or not at all.
*/
int arcadego_begin(arcadego_db *db, arcadego_tx **out, char **err);

/*
** Add the statements of a DDL script to the transaction, e.g.
**   "CREATE DOCUMENT TYPE A; CREATE PROPERTY A.k INT64;
**    CREATE INDEX ON A (k) NOTUNIQUE"
** A statement that fails (message with line and column) adds nothing of the
** script; the transaction stays usable.
*/
int arcadego_tx_exec(arcadego_tx *tx, const char *script, size_t script_len, char **err);

/*
** Add one record batch (a struct array, as exported by e.g. pyarrow's
** RecordBatch) to the transaction, for `type` and `device` (NULL: "").
** Moves `schema` and `batch` (see the conventions); the batch is copied
** into the transaction, so its memory is free when the call returns.
**
** The batch must have a non-null int64 or timestamp column named by the
** "time_column" option; every other column is a property of its name.
** Accepted Arrow types: bool, int8/16/32/64, uint8/16/32/64, float32,
** float64, utf8, large_utf8, string_view, binary, large_binary,
** binary_view, fixed_size_binary, timestamp (any unit and zone), date32,
** date64, and dictionaries of these; sliced arrays (offsets) too.
** Zero-length buffers may be NULL or a dangling pointer such as 0x1 (as
** polars and arrow-rs export them). Nested types, decimals, float16,
** intervals, durations and the null type are refused, naming the column.
**
** ARCADEGO_INVALID_ARGUMENT: malformed Arrow structs, unsupported types,
** duplicate or invalid column names, a missing or null-bearing time
** column, a column whose type conflicts with its property, invalid UTF-8.
** ARCADEGO_NOT_FOUND: the type or a property does not exist and the
** database was not opened with "auto_create". The transaction is
** unchanged by a failed insert and stays usable.
*/
int arcadego_tx_insert(arcadego_tx *tx, const char *type, size_t type_len, const char *device, size_t device_len,
                       struct ArrowSchema *schema, struct ArrowArray *batch, char **err);

/*
** Add every batch of a stream, as arcadego_tx_insert, all or none. Moves
** `stream`. The whole stream is read and checked before the first batch
** goes in, so the batches are held in memory until the call returns.
** arcadego_cancel() stops the reading (ARCADEGO_CANCELED). A failing
** stream callback gives ARCADEGO_INVALID_ARGUMENT with its
** get_last_error() message.
*/
int arcadego_tx_insert_stream(arcadego_tx *tx, const char *type, size_t type_len, const char *device, size_t device_len,
                              struct ArrowArrayStream *stream, char **err);

/*
** Commit: validate everything, write one log record, wait for its fsync
** (shared with concurrent commits), publish. The handle is invalid
** afterwards whatever the result. ARCADEGO_ALREADY_EXISTS, NOT_FOUND or
** CONFLICT: a commit since arcadego_begin() made this one invalid (say, it
** created the same type); nothing of it was written.
*/
int arcadego_commit(arcadego_tx *tx, char **err);

/*
** Discard the transaction and invalidate its handle. Returns ARCADEGO_OK,
** ARCADEGO_INVALID_ARGUMENT for NULL, ARCADEGO_CLOSED for a finished
** transaction.
*/
int arcadego_rollback(arcadego_tx *tx);

/* Run a DDL script as one transaction (see arcadego_tx_exec). */
int arcadego_exec(arcadego_db *db, const char *script, size_t script_len, char **err);

/* Insert one batch as one transaction (see arcadego_tx_insert). */
int arcadego_insert(arcadego_db *db, const char *type, size_t type_len, const char *device, size_t device_len,
                    struct ArrowSchema *schema, struct ArrowArray *batch, char **err);

/*
** Insert a stream as one transaction (see arcadego_tx_insert_stream); each
** batch is copied and released as it arrives, and the stream is released
** before the call returns.
*/
int arcadego_insert_stream(arcadego_db *db, const char *type, size_t type_len, const char *device, size_t device_len,
                           struct ArrowArrayStream *stream, char **err);

/*
** Long format: the _long forms of the four inserts take the rows of any
** number of devices in one batch (or stream), the device of each row in
** the column named `device_column` (utf8, large_utf8, string_view or a
** dictionary of them, as a scan result carries it; no nulls), which is
** not stored as a property. The rows are split by device in the library,
** in the same transaction: where each device's rows are already together
** the parts share the batch's memory, otherwise the batch is copied once,
** grouped by device. A null or invalid device, or a missing device
** column, is ARCADEGO_INVALID_ARGUMENT and adds nothing.
*/
int arcadego_tx_insert_long(arcadego_tx *tx, const char *type, size_t type_len, const char *device_column, size_t device_column_len,
                            struct ArrowSchema *schema, struct ArrowArray *batch, char **err);
int arcadego_tx_insert_stream_long(arcadego_tx *tx, const char *type, size_t type_len, const char *device_column, size_t device_column_len,
                                   struct ArrowArrayStream *stream, char **err);
int arcadego_insert_long(arcadego_db *db, const char *type, size_t type_len, const char *device_column, size_t device_column_len,
                         struct ArrowSchema *schema, struct ArrowArray *batch, char **err);
int arcadego_insert_stream_long(arcadego_db *db, const char *type, size_t type_len, const char *device_column, size_t device_column_len,
                                struct ArrowArrayStream *stream, char **err);

/*
** Scan one type into `out`, which the caller releases. `request_json`:
**   {"type": "A",                 required
**    "devices": ["d1", ...],      optional, default all devices
**    "device_prefix": "plant-7/", optional: the devices whose names start
**                                 with it (a range of the sorted device
**                                 directories)
**    "properties": ["k", ...],    optional, default all, in creation order
**    "start": 0, "end": 100,      optional, start <= time < end
**    "batch_rows": 65536,         optional
**    "with_device": false,        optional, default true; false leaves the
**                                 device column out, for a scan whose
**                                 "devices" names one device
**    "where": {...}}              optional: a value filter, below
** A filter is a condition {"property": "x", "op": ">", "value": 0.5} (op
** =, !=, <, <=, >, >=, "in" with a list value, "is null", "is not null"
** without one), or {"and": [filters]} or {"or": [filters]}. Values are
** JSON numbers for numeric, timestamp (nanoseconds since the epoch) and
** date (days) properties, strings for strings and binaries, true/false
** for booleans; for FLOAT and DOUBLE, {"float": "NaN"}, {"float":
** "Infinity"} and {"float": "-Infinity"} too (floats compare as IEEE 754
** says: NaN equals nothing and is neither less nor greater than anything).
** As in SQL, a comparison with a null is false. The filter's properties
** need not be among "properties". An unknown property, op or key, or a
** value of the wrong kind, is ARCADEGO_INVALID_ARGUMENT.
** Columns: "device" (unless left out), the time column (named by the "time_column"
** option; int64, or timestamp with the unit and zone of the type's first
** timestamp insert), then the properties. Rows are sorted by device, then
** time, in batches of at most batch_rows rows: a device's rows in order,
** and the short runs of several devices (fewer than 8,192 rows each)
** joined into one batch, so that a scan of many small devices is not a
** batch per device. No matching rows: a stream with the schema and no
** batches.
**
** The device column is dictionary-encoded, so that it costs 4 bytes a row
** rather than a copy of the name per row: its schema has format "i" (int32
** indices; not nullable, dictionary not ordered) and a `dictionary` schema
** of format "u" (utf8). In each batch its array has buffers {NULL, indices}
** and its `dictionary` is a utf8 array of the batch's devices in row order,
** each once (one entry, index 0 on every row, for a batch of one device).
** Each batch has its own dictionary. As the C Data Interface says, a
** dictionary is released by the release of the struct that points to it,
** never by the consumer. The stream sees the data committed when
** arcadego_scan() was called.
**
** Unknown type or property: ARCADEGO_NOT_FOUND. On failure *out is left
** released (release == NULL). The stream's callbacks may be called from
** any thread (they are serialized). get_next returns 0, or ECANCELED
** after arcadego_cancel() or arcadego_close(), EINVAL, or EIO, with the
** message in get_last_error(), valid until the next call on the stream.
** Every buffer of a result is C memory; the stream and each batch are
** released through their release callbacks, in any order. A child of a
** result schema or batch may be moved out before its parent is released
** (as the C Data Interface allows); its memory lives until its own release.
*/
int arcadego_scan(arcadego_db *db, const char *request_json, struct ArrowArrayStream *out, char **err);

/*
** arcadego_scan() and the stream's first batch in one call, for results
** that are often one batch (a device's rows, a short time range): one call
** into the library instead of the stream's five. `request_json` is
** arcadego_scan's. On success, which the caller releases:
**   *schema_out  the result's schema (the stream's get_schema);
**   *first_out   the first batch, or released (release == NULL) when no
**                row matches;
**   *rest_out    a stream of the batches after the first, or released
**                (release == NULL) when the first batch was the last. The
**                library reads one batch ahead to tell: a failure of that
**                read fails this call.
** and, unless schema_id_out is NULL:
**   *schema_id_out  a number for the schema's layout (names, formats,
**                dictionaries, flags): results of one layout get the same
**                number while the library has room to remember it (a few
**                MiB of layouts; then it starts over with new numbers),
**                and a number is never given to two layouts. A caller that
**                kept what it made of an earlier schema of that number may
**                release this one unread.
** On failure all three are left released and the id is 0. Errors as
** arcadego_scan's.
*/
int arcadego_scan_first(arcadego_db *db, const char *request_json, struct ArrowSchema *schema_out, struct ArrowArray *first_out,
                        struct ArrowArrayStream *rest_out, uint64_t *schema_id_out, char **err);

/*
** How arcadego_scan() would read the rows of `request_json` (the same
** request), without reading them, in *plan_out (free it with
** arcadego_free): "index NAME on TYPE (CONSTRAINTS): N candidate rows in
** D devices, ..." when a filter constrains the leading properties of an
** index (equality or "in" on each, then a range on the next), else
** "scan of TYPE: ...". A scan through an index reads only the devices
** and times of the rows whose indexed key matches, then applies the
** whole filter to them. Errors as arcadego_scan's.
*/
int arcadego_explain(arcadego_db *db, const char *request_json, char **plan_out, char **err);

/*
** Aggregates of one type's rows into `out`, a stream as arcadego_scan's.
** `request_json`:
**   {"type": "A",                               required
**    "aggregates": [["x", "min"], ["x", "count"]], required: property and
**                                                 function (count, min, max,
**                                                 sum, mean, first, last)
**    "devices", "device_prefix", "start", "end":  as arcadego_scan's
**    "by_device": false,                          a result row per device
**    "every": 0, "origin": 0,                     buckets of time
**                                                 [origin + k*every, +every)
**    "fill": "",                                  with every: "null",
**                                                 "previous" or "linear"
**                                                 rows for empty buckets
**    "where": {...}}                              a filter, as arcadego_scan's
** Nulls are skipped, as in SQL; an aggregate of a group without a value is
** null (count: 0). Columns: "device" (with by_device), the time column (the
** bucket's start, or without every the group's first time), then one
** column per aggregate named "<property>_<function>": count INT64, sum
** INT64 for integers (summed exactly: a total beyond INT64 is
** ARCADEGO_INVALID_ARGUMENT) and DOUBLE for floats, mean DOUBLE (of
** integers, the exact sum over the count), min, max, first and last the
** property's type
** (min and max of numbers, timestamps, dates and strings). Buckets without
** rows have no result row, unless "fill" gives them one: from the range's
** first bucket ("start"'s, else the first with rows) to its last ("end"'s,
** else the last with rows), per device with by_device; their aggregates
** are null ("null"), those of the bucket before ("previous"), or for
** numbers interpolated between the buckets on both sides, integers rounded
** ("linear"); their counts are 0. Rows are sorted by device, then time.
*/
int arcadego_aggregate(arcadego_db *db, const char *request_json, struct ArrowArrayStream *out, char **err);

/*
** The latest values of a type's devices into `out`, a stream as
** arcadego_scan's. `request_json`:
**   {"type": "A",                  required
**    "properties": ["x", ...],     optional, default all
**    "devices": [...], "device_prefix": ".."}   optional, as arcadego_scan's
** One row per device with rows, sorted by name: "device", the time column
** (the device's latest time), then per property its last non-null value
** and "<property>_time", that value's time (INT64 in the type's time unit);
** both null when the device has no value of the property. Each device is
** read backward from its latest time (a point read when its latest rows
** hold every property), not scanned whole.
*/
int arcadego_last(arcadego_db *db, const char *request_json, struct ArrowArrayStream *out, char **err);

/*
** Describe the schema as JSON in *json_out (free it with arcadego_free):
** {"types":[{"name":..,"time":{"unit":"ms","zone":"UTC"},"ttl_ns":..,
**            "properties":[{"name":..,"type":"INT64"}],
**            "indexes":[{"name":..,"unique":false,"properties":[..]}]}]}
** Types are sorted by name, properties and indexes in creation order;
** "time" is present once a timestamp insert fixed the type's time
** representation (unit "s", "ms", "us" or "ns"; zone "" for none);
** "ttl_ns" once ALTER TYPE .. SET TTL gave it a time to live.
** `type` NULL describes every type; otherwise only that one (NOT_FOUND if
** absent). On failure *json_out is NULL.
*/
int arcadego_describe(arcadego_db *db, const char *type, size_t type_len, char **json_out, char **err);

/*
** List the devices of a type, from metadata (no data is read), sorted by
** name. `request_json`: {"type": "A", "prefix": "plant-7/"} ("prefix"
** optional). *json_out (free with arcadego_free) holds one list per
** column: {"device": [...], "rows": [...], "first": [...], "last": [...]}:
** each device's row count (exact unless rows were overwritten since its
** last flush, then an upper bound) and least and greatest time, in the
** type's time unit. The device directories are sorted, so a prefix costs
** the devices it lists. ARCADEGO_NOT_FOUND for an unknown type.
*/
int arcadego_devices(arcadego_db *db, const char *request_json, char **json_out, char **err);

/*
** arcadego_devices as one Arrow record batch, for large fleets: no JSON
** to build or parse, the names in one buffer and the counts and times in
** three. Same request and errors. On ARCADEGO_OK, *schema_out and
** *array_out (a struct array of one row per device, sorted by name) are
** the caller's to release: "device" (utf8, or large_utf8 when the names
** pass 2 GiB), "rows" (int64), "first" and "last" (the type of the type's
** time column: timestamp in its unit and zone, or int64). On failure both
** are left released (zeroed).
*/
int arcadego_device_list(arcadego_db *db, const char *request_json, struct ArrowSchema *schema_out,
                         struct ArrowArray *array_out, char **err);

/*
** Write everything committed before the call to the types' tables and
** return once it is there: each type with data is a Delta Lake table
** (Parquet files and _delta_log/) in its own directory under `path`, named
** by "types"[i]."path" of arcadego_stats(), which Spark, delta-rs, polars
** and DuckDB read in place. Scans return the same rows before and after.
** Commits may run while a flush does. ARCADEGO_IO: a write or fsync
** failed; ARCADEGO_CLOSED: the handle is closed.
*/
int arcadego_flush(arcadego_db *db, char **err);

/*
** Write a consistent copy of the database into directory `dest`, which
** must not exist or be empty: every commit acknowledged before the call.
** Parquet files are hard-linked where `dest` is on the same file system,
** the rest (manifest, catalog snapshot, log, Delta logs) is copied, so a
** copy of a database holding only its schema takes about a millisecond.
** The copy is opened with arcadego_open like any database. Commits go on
** meanwhile; flushes wait. ARCADEGO_ALREADY_EXISTS: `dest` is not empty;
** ARCADEGO_INVALID_ARGUMENT: the database is in memory; ARCADEGO_IO: a
** copy failed (nothing is left at `dest`).
*/
int arcadego_clone(arcadego_db *db, const char *dest, char **err);

/*
** Flush (see arcadego_flush), then write a snapshot of the catalog and
** delete the log segments that the flushed data covers, so that the next
** open replays less. Status codes as arcadego_flush.
*/
int arcadego_checkpoint(arcadego_db *db, char **err);

/*
** Delete rows: `request_json` is
**   {"type": "A",             required
**    "devices": ["d1", ...],  optional, default every device
**    "start": 0, "end": 100}  optional, start <= time < end
** The rows committed before the call (arcadego_tx_delete: and those the
** transaction added before it) go; rows inserted later stay. Scans and
** arcadego_devices see it at once; the next flush rewrites the Parquet
** files that held deleted rows (see the README's Storage section).
** ARCADEGO_NOT_FOUND: no such type. An empty range deletes nothing.
*/
int arcadego_delete(arcadego_db *db, const char *request_json, char **err);
int arcadego_tx_delete(arcadego_tx *tx, const char *request_json, char **err);

/*
** Flush, then merge the Parquet files of `type` (NULL: every type) into
** as few as their size allows (about a million rows each), now: one Delta
** commit per type removes the old files and adds the new ones; deleted
** and expired rows and the columns of dropped properties go, and the old
** files are deleted (scans already reading them finish). The same runs in the background after a flush, for a type
** with 8 or more small files. ARCADEGO_NOT_FOUND: no such type;
** ARCADEGO_IO: a file could not be written (nothing changed).
*/
int arcadego_compact(arcadego_db *db, const char *type, size_t type_len, char **err);

/*
** The database's counters and storage as JSON in *json_out (free it with
** arcadego_free):
** {"memtable_bytes":..,"immutable_memtables":..,"immutable_bytes":..,
**  "memtable_budget":..,"pool_bytes":..,"flushes":..,"flushed_rows":..,"flushed_bytes":..,
**  "direct_writes":..,
**  "checkpoints":..,"stalls":..,"stall_nanos":..,"flush_error":"..",
**  "wal_bytes":..,"wal_segments":..,"fsyncs":..,
**  "types":[{"name":..,"id":..,"path":..,"files":..,"bytes":..,"rows":..,
**            "delta_version":..}]}
** Counters count since arcadego_open(); "flush_error" is present only while
** the last flush failed. "types" lists the types with flushed data, by
** name; "path" is the directory of the type's Delta Lake table ("" in
** memory) and "delta_version" its latest commit (-1: none). Keys may be
** added in later versions. On failure *json_out is NULL.
*/
int arcadego_stats(arcadego_db *db, char **json_out, char **err);

/*
** Set Go runtime limits, which the runtime otherwise reads only from the
** environment at process start: JSON object with any of
**   "gomaxprocs": N (> 0), "memory_limit": bytes (> 0), "gc_percent": N (-1 = off)
** They apply to the whole process. A bad value changes nothing
** (ARCADEGO_INVALID_ARGUMENT); NULL is ARCADEGO_INVALID_ARGUMENT too.
** Unless GOMEMLIMIT is set, the library paces its garbage collector to
** the memtables: after each collection it sets the memory limit to the
** most the open databases' memtables have held plus half their budgets
** (or to what is live plus what is live beyond the memtables, when more),
** instead of letting the heap double. "memory_limit" turns that off for
** the life of the process.
*/
int arcadego_set_runtime(const char *options_json, char **err);

/*
** Cancel the calls running on `db` in other threads (scans and stream
** inserts); they return ARCADEGO_CANCELED and change nothing. A commit that
** has reached its log write is not interrupted. Calls started afterwards
** are not affected. Open result streams of the database are canceled too.
** Returns ARCADEGO_OK, ARCADEGO_INVALID_ARGUMENT for NULL, ARCADEGO_CLOSED.
*/
int arcadego_cancel(arcadego_db *db);

/*
** Free a message or JSON string returned by this library (never the
** version string). NULL is a no-op.
*/
void arcadego_free(void *p);

/*
** Release callbacks that free nothing, for a caller that keeps everything
** it passes in an Arrow struct (buffers, names, children and their structs)
** alive until the call that takes the struct returns: the library
** releases what it takes before returning (see the rules at the top). Each
** calls the release callback of each child and of the dictionary not yet
** released, then marks the struct released (release = NULL); NULL, or a
** struct already released, is a no-op. Set them as the release members of
** a struct and its children. The Python package exports dicts and numpy
** arrays this way: a release callback into Python costs tens of
** microseconds, about as much as a small insert.
*/
void arcadego_mark_schema_released(struct ArrowSchema *schema);
void arcadego_mark_array_released(struct ArrowArray *array);

#ifdef __cplusplus
}
#endif
#endif /* ARCADEGO_H */
