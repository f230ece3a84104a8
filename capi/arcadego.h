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
**    dereferenced. A handle that was closed, committed or rolled back is
**    reported as ARCADEGO_CLOSED, never as a crash.
**  - Arrow data follows the Arrow C Data Interface
**    (https://arrow.apache.org/docs/format/CDataInterface.html): a function
**    that takes a struct ArrowSchema*, ArrowArray* or ArrowArrayStream*
**    MOVES it: on return, successful or not, the struct has been released
**    (its release member is NULL) and the caller must not release it again.
**    A struct whose release member is already NULL is rejected with
**    ARCADEGO_INVALID_ARGUMENT. Output streams belong to the caller, who
**    calls their release callback when done.
**  - Strings are UTF-8. Type, property and device names are user strings of
**    at most 256 bytes without control characters; none ever becomes a file
**    name.
**  - The library never lets a Go panic cross this boundary: a recovered
**    panic is reported as ARCADEGO_INTERNAL.
**  - A process that forks must not call the library in the child: the Go
**    runtime does not survive fork(). Use exec, or Python's "spawn" or
**    "forkserver" start methods.
**
** All functions are thread safe, except that one transaction must not be
** used from two threads at once.
*/
#ifndef ARCADEGO_H
#define ARCADEGO_H

#include <stdint.h>

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
**   "time_column": name of the time column of inserted batches ("time")
** On success *out is a new handle that the caller closes with
** arcadego_close(). A directory open in another process gives ARCADEGO_IO.
*/
int arcadego_open(const char *path, const char *options_json, arcadego_db **out, char **err);

/*
** Close the database and invalidate its handle and every transaction still
** open on it (they are rolled back). Closing a closed handle gives
** ARCADEGO_CLOSED.
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
int arcadego_tx_exec(arcadego_tx *tx, const char *script, char **err);

/*
** Add one record batch (a struct array, as exported by e.g. pyarrow's
** RecordBatch) to the transaction, for `type` and `device` (NULL: "").
** Moves `schema` and `batch` (see the conventions). The batch must have a
** non-null int64 or timestamp time column; other columns are properties.
*/
int arcadego_tx_insert(arcadego_tx *tx, const char *type, const char *device,
                       struct ArrowSchema *schema, struct ArrowArray *batch, char **err);

/* Add every batch of a stream, as arcadego_tx_insert. Moves `stream`. */
int arcadego_tx_insert_stream(arcadego_tx *tx, const char *type, const char *device,
                              struct ArrowArrayStream *stream, char **err);

/*
** Commit: validate everything, write one log record, wait for its fsync
** (shared with concurrent commits), publish. The handle is invalid
** afterwards whatever the result.
*/
int arcadego_commit(arcadego_tx *tx, char **err);

/* Discard the transaction and invalidate its handle. */
int arcadego_rollback(arcadego_tx *tx);

/* Run a DDL script as one transaction (see arcadego_tx_exec). */
int arcadego_exec(arcadego_db *db, const char *script, char **err);

/* Insert one batch as one transaction (see arcadego_tx_insert). */
int arcadego_insert(arcadego_db *db, const char *type, const char *device,
                    struct ArrowSchema *schema, struct ArrowArray *batch, char **err);

/* Insert a stream as one transaction (see arcadego_tx_insert_stream). */
int arcadego_insert_stream(arcadego_db *db, const char *type, const char *device,
                           struct ArrowArrayStream *stream, char **err);

/*
** Scan one type into `out`, which the caller releases. `request_json`:
**   {"type": "A",                 required
**    "devices": ["d1", ...],      optional, default all devices
**    "properties": ["k", ...],    optional, default all, in creation order
**    "start": 0, "end": 100,      optional, start <= time < end
**    "batch_rows": 65536}         optional
** Columns: "device" (utf8), the time column (typed as inserted), then the
** properties. Rows are sorted by device, then time.
*/
int arcadego_scan(arcadego_db *db, const char *request_json, struct ArrowArrayStream *out, char **err);

/*
** Describe the schema as JSON in *json_out (free it with arcadego_free):
** {"types":[{"name":..,"properties":[{"name":..,"type":"INT64"}],
**            "indexes":[{"name":..,"unique":false,"properties":[..]}]}]}
** `type` NULL describes every type; otherwise only that one (NOT_FOUND if absent).
*/
int arcadego_describe(arcadego_db *db, const char *type, char **json_out, char **err);

/*
** Set Go runtime limits, which the runtime otherwise reads only from the
** environment at process start: JSON object with any of
**   "gomaxprocs": N (> 0), "memory_limit": bytes (> 0), "gc_percent": N (-1 = off)
*/
int arcadego_set_runtime(const char *options_json, char **err);

/*
** Cancel the calls running on `db` in other threads (scans and stream
** inserts); they return ARCADEGO_CANCELED and change nothing. A commit that
** has reached its log write is not interrupted. Calls started afterwards
** are not affected.
*/
int arcadego_cancel(arcadego_db *db);

/* Free a message or JSON string returned by this library. NULL is a no-op. */
void arcadego_free(void *p);

#ifdef __cplusplus
}
#endif
#endif /* ARCADEGO_H */
