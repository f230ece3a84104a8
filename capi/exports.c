// The exported functions of arcadego.h. Each checks, in C, that the
// process is not a forked child of the one that loaded the library before
// it enters Go (ag_go_*, in the .go files): the Go runtime does not survive
// fork(), its other threads are gone and their locks may be held, so a
// child must not enter it, let alone write to the parent's log at the
// parent's offset. A child gets ARCADEGO_CLOSED and a message instead.
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "arcadego.h"
#include "_cgo_export.h"

static volatile int ag_forked;

static void ag_on_fork_child(void) { ag_forked = 1; }

__attribute__((constructor)) static void ag_watch_fork(void) {
  pthread_atfork(NULL, NULL, ag_on_fork_child);
}

int ag_in_forked_child(void) { return ag_forked; }

static const char ag_fork_message[] =
    "libarcadego cannot be used in a forked child: the Go runtime does not survive fork(), so "
    "nothing is read or written here; open the database in a new process (exec, or "
    "multiprocessing's spawn or forkserver start method)";

/* forked: in a forked child, store the message in *err (when err is set)
** and say so. */
static int forked(char **err) {
  if (!ag_forked) {
    return 0;
  }
  if (err != NULL) {
    *err = strdup(ag_fork_message);
  }
  return 1;
}

#define GUARD(err)              \
  do {                          \
    if (forked(err)) {          \
      return ARCADEGO_CLOSED;   \
    }                           \
  } while (0)

/* clear_outputs marks the Arrow structs a call writes released (zeroed)
** before anything can fail: the Go side of a call that returns a result
** relies on it. */
static void clear_outputs(struct ArrowSchema *schema, struct ArrowArray *array, struct ArrowArrayStream *stream) {
  if (schema != NULL) {
    memset(schema, 0, sizeof *schema);
  }
  if (array != NULL) {
    memset(array, 0, sizeof *array);
  }
  if (stream != NULL) {
    memset(stream, 0, sizeof *stream);
  }
}

/* release_inputs releases the Arrow structs a refused insert was given:
** they are moved on every path, this one too. */
static void release_inputs(struct ArrowSchema *schema, struct ArrowArray *batch, struct ArrowArrayStream *stream) {
  if (schema != NULL && schema->release != NULL) {
    schema->release(schema);
  }
  if (batch != NULL && batch->release != NULL) {
    batch->release(batch);
  }
  if (stream != NULL && stream->release != NULL) {
    stream->release(stream);
  }
}

static const char *ag_version;

const char *arcadego_version(void) {
  if (ag_version == NULL && !ag_forked) {
    ag_version = ag_go_version();
  }
  return ag_version != NULL ? ag_version : "unknown (forked child)";
}

int arcadego_open(const char *path, const char *options_json, arcadego_db **out, char **err) {
  GUARD(err);
  return ag_go_open((char *)path, (char *)options_json, (uintptr_t *)out, err);
}

int arcadego_close(arcadego_db *db, char **err) {
  GUARD(err);
  return ag_go_close((uintptr_t)db, err);
}

int arcadego_begin(arcadego_db *db, arcadego_tx **out, char **err) {
  GUARD(err);
  return ag_go_begin((uintptr_t)db, (uintptr_t *)out, err);
}

int arcadego_tx_exec(arcadego_tx *tx, const char *script, size_t script_len, char **err) {
  GUARD(err);
  return ag_go_tx_exec((uintptr_t)tx, (char *)script, script_len, err);
}

int arcadego_tx_insert(arcadego_tx *tx, const char *type, size_t type_len, const char *device, size_t device_len, struct ArrowSchema *schema,
                       struct ArrowArray *batch, char **err) {
  if (forked(err)) {
    release_inputs(schema, batch, NULL);
    return ARCADEGO_CLOSED;
  }
  return ag_go_tx_insert((uintptr_t)tx, (char *)type, type_len, (char *)device, device_len, schema, batch, err);
}

int arcadego_tx_insert_stream(arcadego_tx *tx, const char *type, size_t type_len, const char *device, size_t device_len,
                              struct ArrowArrayStream *stream, char **err) {
  if (forked(err)) {
    release_inputs(NULL, NULL, stream);
    return ARCADEGO_CLOSED;
  }
  return ag_go_tx_insert_stream((uintptr_t)tx, (char *)type, type_len, (char *)device, device_len, stream, err);
}

int arcadego_commit(arcadego_tx *tx, char **err) {
  GUARD(err);
  return ag_go_commit((uintptr_t)tx, err);
}

int arcadego_rollback(arcadego_tx *tx) {
  GUARD(NULL);
  return ag_go_rollback((uintptr_t)tx);
}

int arcadego_exec(arcadego_db *db, const char *script, size_t script_len, char **err) {
  GUARD(err);
  return ag_go_exec((uintptr_t)db, (char *)script, script_len, err);
}

int arcadego_insert(arcadego_db *db, const char *type, size_t type_len, const char *device, size_t device_len, struct ArrowSchema *schema,
                    struct ArrowArray *batch, char **err) {
  if (forked(err)) {
    release_inputs(schema, batch, NULL);
    return ARCADEGO_CLOSED;
  }
  return ag_go_insert((uintptr_t)db, (char *)type, type_len, (char *)device, device_len, schema, batch, err);
}

int arcadego_insert_stream(arcadego_db *db, const char *type, size_t type_len, const char *device, size_t device_len, struct ArrowArrayStream *stream,
                           char **err) {
  if (forked(err)) {
    release_inputs(NULL, NULL, stream);
    return ARCADEGO_CLOSED;
  }
  return ag_go_insert_stream((uintptr_t)db, (char *)type, type_len, (char *)device, device_len, stream, err);
}

int arcadego_tx_insert_long(arcadego_tx *tx, const char *type, size_t type_len, const char *device_column, size_t device_column_len, struct ArrowSchema *schema,
                            struct ArrowArray *batch, char **err) {
  if (forked(err)) {
    release_inputs(schema, batch, NULL);
    return ARCADEGO_CLOSED;
  }
  return ag_go_tx_insert_long((uintptr_t)tx, (char *)type, type_len, (char *)device_column, device_column_len, schema, batch, err);
}

int arcadego_tx_insert_stream_long(arcadego_tx *tx, const char *type, size_t type_len, const char *device_column, size_t device_column_len,
                                   struct ArrowArrayStream *stream, char **err) {
  if (forked(err)) {
    release_inputs(NULL, NULL, stream);
    return ARCADEGO_CLOSED;
  }
  return ag_go_tx_insert_stream_long((uintptr_t)tx, (char *)type, type_len, (char *)device_column, device_column_len, stream, err);
}

int arcadego_insert_long(arcadego_db *db, const char *type, size_t type_len, const char *device_column, size_t device_column_len, struct ArrowSchema *schema,
                         struct ArrowArray *batch, char **err) {
  if (forked(err)) {
    release_inputs(schema, batch, NULL);
    return ARCADEGO_CLOSED;
  }
  return ag_go_insert_long((uintptr_t)db, (char *)type, type_len, (char *)device_column, device_column_len, schema, batch, err);
}

int arcadego_insert_stream_long(arcadego_db *db, const char *type, size_t type_len, const char *device_column, size_t device_column_len,
                                struct ArrowArrayStream *stream, char **err) {
  if (forked(err)) {
    release_inputs(NULL, NULL, stream);
    return ARCADEGO_CLOSED;
  }
  return ag_go_insert_stream_long((uintptr_t)db, (char *)type, type_len, (char *)device_column, device_column_len, stream, err);
}

int arcadego_scan(arcadego_db *db, const char *request_json, struct ArrowArrayStream *out, char **err) {
  clear_outputs(NULL, NULL, out); /* released on every failure, a forked child's too */
  GUARD(err);
  return ag_go_scan((uintptr_t)db, (char *)request_json, out, err);
}

int arcadego_scan_first(arcadego_db *db, const char *request_json, struct ArrowSchema *schema_out, struct ArrowArray *first_out,
                        struct ArrowArrayStream *rest_out, uint64_t *schema_id_out, char **err) {
  clear_outputs(schema_out, first_out, rest_out);
  if (schema_id_out != NULL) {
    *schema_id_out = 0;
  }
  GUARD(err);
  return ag_go_scan_first((uintptr_t)db, (char *)request_json, schema_out, first_out, rest_out, schema_id_out, err);
}

int arcadego_aggregate(arcadego_db *db, const char *request_json, struct ArrowArrayStream *out, char **err) {
  clear_outputs(NULL, NULL, out);
  GUARD(err);
  return ag_go_aggregate((uintptr_t)db, (char *)request_json, out, err);
}

int arcadego_explain(arcadego_db *db, const char *request_json, char **plan_out, char **err) {
  GUARD(err);
  return ag_go_explain((uintptr_t)db, (char *)request_json, plan_out, err);
}

int arcadego_last(arcadego_db *db, const char *request_json, struct ArrowArrayStream *out, char **err) {
  clear_outputs(NULL, NULL, out);
  GUARD(err);
  return ag_go_last((uintptr_t)db, (char *)request_json, out, err);
}

int arcadego_describe(arcadego_db *db, const char *type, size_t type_len, char **json_out, char **err) {
  GUARD(err);
  return ag_go_describe((uintptr_t)db, (char *)type, type_len, json_out, err);
}

int arcadego_devices(arcadego_db *db, const char *request_json, char **json_out, char **err) {
  GUARD(err);
  return ag_go_devices((uintptr_t)db, (char *)request_json, json_out, err);
}

int arcadego_device_list(arcadego_db *db, const char *request_json, struct ArrowSchema *schema_out, struct ArrowArray *array_out,
                         char **err) {
  clear_outputs(schema_out, array_out, NULL);
  GUARD(err);
  return ag_go_device_list((uintptr_t)db, (char *)request_json, schema_out, array_out, err);
}

int arcadego_flush(arcadego_db *db, char **err) {
  GUARD(err);
  return ag_go_flush((uintptr_t)db, err);
}

int arcadego_clone(arcadego_db *db, const char *dest, char **err) {
  GUARD(err);
  return ag_go_clone((uintptr_t)db, (char *)dest, err);
}

int arcadego_checkpoint(arcadego_db *db, char **err) {
  GUARD(err);
  return ag_go_checkpoint((uintptr_t)db, err);
}

int arcadego_delete(arcadego_db *db, const char *request_json, char **err) {
  GUARD(err);
  return ag_go_delete((uintptr_t)db, (char *)request_json, err);
}

int arcadego_tx_delete(arcadego_tx *tx, const char *request_json, char **err) {
  GUARD(err);
  return ag_go_tx_delete((uintptr_t)tx, (char *)request_json, err);
}

int arcadego_compact(arcadego_db *db, const char *type, size_t type_len, char **err) {
  GUARD(err);
  return ag_go_compact((uintptr_t)db, (char *)type, type_len, err);
}

int arcadego_stats(arcadego_db *db, char **json_out, char **err) {
  GUARD(err);
  return ag_go_stats((uintptr_t)db, json_out, err);
}

int arcadego_set_runtime(const char *options_json, char **err) {
  GUARD(err);
  return ag_go_set_runtime((char *)options_json, err);
}

int arcadego_cancel(arcadego_db *db) {
  GUARD(NULL);
  return ag_go_cancel((uintptr_t)db);
}

/* Messages and JSON strings are malloc'ed by the library: freeing them
** needs no Go, so a forked child may free what its parent was given. */
void arcadego_free(void *p) { free(p); }

/* Release callbacks that free nothing (see arcadego.h). Plain C: a caller
** whose callbacks would run in an interpreter (Python's ctypes callbacks
** cost tens of microseconds each) passes these instead. */
void arcadego_mark_schema_released(struct ArrowSchema *schema) {
  if (schema == NULL || schema->release == NULL) {
    return;
  }
  for (int64_t i = 0; i < schema->n_children; i++) {
    struct ArrowSchema *child = schema->children[i];
    if (child != NULL && child->release != NULL) {
      child->release(child);
    }
  }
  if (schema->dictionary != NULL && schema->dictionary->release != NULL) {
    schema->dictionary->release(schema->dictionary);
  }
  schema->release = NULL;
}

void arcadego_mark_array_released(struct ArrowArray *array) {
  if (array == NULL || array->release == NULL) {
    return;
  }
  for (int64_t i = 0; i < array->n_children; i++) {
    struct ArrowArray *child = array->children[i];
    if (child != NULL && child->release != NULL) {
      child->release(child);
    }
  }
  if (array->dictionary != NULL && array->dictionary->release != NULL) {
    array->dictionary->release(array->dictionary);
  }
  array->release = NULL;
}
