/*
** smoke.c: a plain C caller of libarcadego. It opens a database in a
** temporary directory, sets up a schema in a transaction, inserts a
** hand-built Arrow batch (time int64, k int64, s utf8 with a null) that it
** owns through a release callback, scans it back through the result
** stream, flushes and checkpoints, reads the counters, and frees
** everything. Exit status 0 only if every check passed, so run.sh can
** also run it under valgrind for leaks and bad accesses.
*/
#define _DEFAULT_SOURCE /* mkdtemp */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "arcadego.h"

static int failures;

#define CHECK(cond, ...)                                               \
  do {                                                                 \
    if (!(cond)) {                                                     \
      fprintf(stderr, "smoke.c:%d: check failed: %s: ", __LINE__, #cond); \
      fprintf(stderr, __VA_ARGS__);                                    \
      fprintf(stderr, "\n");                                           \
      failures++;                                                      \
    }                                                                  \
  } while (0)

static int schemas_released, arrays_released;

/* ---- a producer of Arrow structs, as a C library would write one ---- */

static void release_child_schema(struct ArrowSchema *s) { s->release = NULL; }

static void release_schema(struct ArrowSchema *s) {
  for (int64_t i = 0; i < s->n_children; i++) {
    struct ArrowSchema *c = s->children[i];
    if (c->release != NULL) {
      c->release(c);
    }
    free(c);
  }
  free(s->children);
  s->release = NULL;
  schemas_released++;
}

static struct ArrowSchema *child_schema(const char *format, const char *name, int64_t flags) {
  struct ArrowSchema *c = calloc(1, sizeof *c);
  c->format = format;
  c->name = name;
  c->flags = flags;
  c->release = release_child_schema;
  return c;
}

static void make_schema(struct ArrowSchema *s) {
  memset(s, 0, sizeof *s);
  s->format = "+s";
  s->name = "";
  s->n_children = 3;
  s->children = calloc(3, sizeof *s->children);
  s->children[0] = child_schema("l", "time", 0);
  s->children[1] = child_schema("l", "k", ARROW_FLAG_NULLABLE);
  s->children[2] = child_schema("u", "s", ARROW_FLAG_NULLABLE);
  s->release = release_schema;
}

static void release_array_buffers(struct ArrowArray *a) {
  for (int64_t i = 0; i < a->n_buffers; i++) {
    free((void *)a->buffers[i]);
  }
  free(a->buffers);
}

static void release_child_array(struct ArrowArray *a) {
  release_array_buffers(a);
  a->release = NULL;
}

static void release_array(struct ArrowArray *a) {
  for (int64_t i = 0; i < a->n_children; i++) {
    struct ArrowArray *c = a->children[i];
    if (c->release != NULL) {
      c->release(c);
    }
    free(c);
  }
  free(a->children);
  release_array_buffers(a);
  a->release = NULL;
  arrays_released++;
}

static void *copy_of(const void *p, size_t n) {
  void *q = malloc(n ? n : 1);
  memcpy(q, p, n);
  return q;
}

static struct ArrowArray *child_array(int64_t length, int64_t null_count, int64_t n_buffers) {
  struct ArrowArray *c = calloc(1, sizeof *c);
  c->length = length;
  c->null_count = null_count;
  c->n_buffers = n_buffers;
  c->buffers = calloc((size_t)n_buffers, sizeof *c->buffers);
  c->release = release_child_array;
  return c;
}

/* Rows: time 1,2,3; k 10,20,30; s "a", null, "ccc". */
static void make_batch(struct ArrowArray *a) {
  static const int64_t times[] = {1, 2, 3};
  static const int64_t ks[] = {10, 20, 30};
  static const int32_t offsets[] = {0, 1, 1, 4};
  static const char data[] = "accc";
  static const uint8_t validity[] = {0x5}; /* rows 0 and 2 */

  memset(a, 0, sizeof *a);
  a->length = 3;
  a->n_buffers = 1;
  a->buffers = calloc(1, sizeof *a->buffers); /* no top-level validity */
  a->n_children = 3;
  a->children = calloc(3, sizeof *a->children);

  struct ArrowArray *t = child_array(3, 0, 2);
  t->buffers[1] = copy_of(times, sizeof times);
  struct ArrowArray *k = child_array(3, 0, 2);
  k->buffers[1] = copy_of(ks, sizeof ks);
  struct ArrowArray *s = child_array(3, 1, 3);
  s->buffers[0] = copy_of(validity, sizeof validity);
  s->buffers[1] = copy_of(offsets, sizeof offsets);
  s->buffers[2] = copy_of(data, 4);

  a->children[0] = t;
  a->children[1] = k;
  a->children[2] = s;
  a->release = release_array;
}

/* ---- reading results ---- */

static int bit(const void *bitmap, int64_t i) {
  if (bitmap == NULL) {
    return 1;
  }
  return (((const uint8_t *)bitmap)[i >> 3] >> (i & 7)) & 1;
}

/* The device column is dictionary-encoded: int32 indices ("i"), not
** nullable, into an unordered utf8 ("u") dictionary. */
static void check_result_schema(struct ArrowSchema *s) {
  static const char *names[] = {"device", "time", "k", "s"};
  static const char *formats[] = {"i", "l", "l", "u"};
  static const int64_t flags[] = {0, 0, ARROW_FLAG_NULLABLE, ARROW_FLAG_NULLABLE};
  CHECK(strcmp(s->format, "+s") == 0, "format %s", s->format);
  CHECK(s->n_children == 4, "%lld columns", (long long)s->n_children);
  for (int64_t i = 0; i < s->n_children && i < 4; i++) {
    struct ArrowSchema *c = s->children[i];
    CHECK(strcmp(c->name, names[i]) == 0, "column %lld is %s", (long long)i, c->name);
    CHECK(strcmp(c->format, formats[i]) == 0, "column %s has format %s", names[i], c->format);
    CHECK(c->flags == flags[i], "column %s has flags %lld", names[i], (long long)c->flags);
    CHECK((c->dictionary != NULL) == (i == 0), "column %s: dictionary %p", names[i], (void *)c->dictionary);
  }
  if (s->n_children > 0 && s->children[0]->dictionary != NULL) {
    struct ArrowSchema *d = s->children[0]->dictionary;
    CHECK(strcmp(d->format, "u") == 0, "device dictionary has format %s", d->format);
    CHECK(d->n_children == 0 && d->dictionary == NULL && d->release != NULL, "device dictionary schema");
  }
}

/* Row r of the device column: its index must be 0, into a dictionary of
** one value. */
static int device_is(const struct ArrowArray *dev, int64_t r, const char *want) {
  const struct ArrowArray *d = dev->dictionary;
  if (dev->n_buffers != 2 || dev->buffers[0] != NULL || d == NULL || d->length != 1 || d->n_buffers != 3) {
    return 0;
  }
  int32_t idx = ((const int32_t *)dev->buffers[1])[dev->offset + r];
  if (idx != 0) {
    return 0;
  }
  const int32_t *off = d->buffers[1];
  size_t n = strlen(want);
  return off[d->offset + 1] - off[d->offset] == (int32_t)n &&
         memcmp((const char *)d->buffers[2] + off[d->offset], want, n) == 0;
}

static void check_result_batch(struct ArrowArray *a) {
  CHECK(a->length == 3, "%lld rows", (long long)a->length);
  CHECK(a->n_children == 4, "%lld columns", (long long)a->n_children);
  if (a->length != 3 || a->n_children != 4) {
    return;
  }
  struct ArrowArray *dev = a->children[0], *t = a->children[1], *k = a->children[2], *s = a->children[3];
  CHECK(dev->null_count == 0 && dev->dictionary != NULL && dev->dictionary->release != NULL &&
            dev->dictionary->dictionary == NULL,
        "device column layout");
  for (int i = 0; i < 3; i++) {
    CHECK(device_is(dev, i, "d1"), "device of row %d", i);
    CHECK(((const int64_t *)t->buffers[1])[t->offset + i] == i + 1, "time of row %d", i);
    CHECK(bit(k->buffers[0], k->offset + i), "k of row %d is null", i);
    CHECK(((const int64_t *)k->buffers[1])[k->offset + i] == 10 * (i + 1), "k of row %d", i);
  }
  const int32_t *soff = s->buffers[1];
  const char *sdata = s->buffers[2];
  int64_t o = s->offset;
  CHECK(s->null_count == 1, "s has %lld nulls", (long long)s->null_count);
  CHECK(bit(s->buffers[0], o + 0) && soff[o + 1] - soff[o] == 1 && memcmp(sdata + soff[o], "a", 1) == 0,
        "s of row 0");
  CHECK(!bit(s->buffers[0], o + 1), "s of row 1 is not null");
  CHECK(bit(s->buffers[0], o + 2) && soff[o + 3] - soff[o + 2] == 3 && memcmp(sdata + soff[o + 2], "ccc", 3) == 0,
        "s of row 2");
}

/* Move the device column (schema and array, each with its dictionary) out
** of a result, as the C Data Interface allows, and release it before or
** after its parent. Its release must release its dictionary, once: valgrind
** sees any leak, double free or read of freed memory. */
static void check_moved_device_column(arcadego_db *db, int parent_first) {
  char *err = NULL;
  struct ArrowArrayStream stream;
  int rc = arcadego_scan(db, "{\"type\": \"A\"}", &stream, &err);
  CHECK(rc == ARCADEGO_OK, "scan: %d %s", rc, err ? err : "");
  arcadego_free(err);
  if (rc != ARCADEGO_OK) {
    return;
  }
  struct ArrowSchema rs;
  struct ArrowArray ra;
  rc = stream.get_schema(&stream, &rs);
  CHECK(rc == 0, "get_schema: %d", rc);
  rc = stream.get_next(&stream, &ra);
  CHECK(rc == 0 && ra.release != NULL, "get_next: %d", rc);
  if (rc != 0 || ra.release == NULL) {
    stream.release(&stream);
    return;
  }
  struct ArrowSchema ms = *rs.children[0];
  rs.children[0]->release = NULL;
  struct ArrowArray ma = *ra.children[0];
  ra.children[0]->release = NULL;
  if (parent_first) {
    rs.release(&rs);
    ra.release(&ra);
    CHECK(rs.release == NULL && ra.release == NULL, "parents marked released");
    CHECK(strcmp(ms.format, "i") == 0 && strcmp(ms.dictionary->format, "u") == 0, "moved device schema");
    for (int i = 0; i < 3; i++) {
      CHECK(device_is(&ma, i, "d1"), "moved device of row %d", i);
    }
    ms.release(&ms);
    ma.release(&ma);
    CHECK(ms.release == NULL && ma.release == NULL, "moved device column marked released");
  } else {
    struct ArrowSchema *ds = ms.dictionary;
    struct ArrowArray *da = ma.dictionary;
    ms.release(&ms);
    ma.release(&ma);
    CHECK(ms.release == NULL && ma.release == NULL, "moved device column marked released");
    /* The parents still hold the blocks: the dictionaries are readable. */
    CHECK(ds->release == NULL && da->release == NULL, "dictionaries released with their column");
    rs.release(&rs);
    ra.release(&ra);
    CHECK(rs.release == NULL && ra.release == NULL, "parents marked released");
  }
  stream.release(&stream);
  CHECK(stream.release == NULL, "stream release did not mark it released");
}

/* A forked child must not enter the library (the Go runtime does not
** survive fork): every call is ARCADEGO_CLOSED with a message, its Arrow
** input is still released, and the parent's database is untouched. */
static void check_forked_child_is_refused(arcadego_db *db) {
  fflush(NULL);
  pid_t pid = fork();
  if (pid < 0) {
    perror("fork");
    failures++;
    return;
  }
  if (pid == 0) {
    alarm(600); /* only ends a child that hangs in the library; its calls return at once, even under valgrind on a busy machine */
    char *err = NULL;
    int rc = arcadego_exec(db, ARCADEGO_S("CREATE DOCUMENT TYPE Forked"), &err);
    CHECK(rc == ARCADEGO_CLOSED && err != NULL && strstr(err, "fork") != NULL, "exec in a child: %d %s", rc,
          err ? err : "");
    arcadego_free(err);
    err = NULL;
    struct ArrowSchema schema;
    struct ArrowArray batch;
    make_schema(&schema);
    make_batch(&batch);
    rc = arcadego_insert(db, ARCADEGO_S("A"), ARCADEGO_S("child"), &schema, &batch, &err);
    CHECK(rc == ARCADEGO_CLOSED && err != NULL, "insert in a child: %d", rc);
    CHECK(schema.release == NULL && batch.release == NULL, "the refused insert did not release its input");
    arcadego_free(err);
    err = NULL;
    struct ArrowArrayStream stream;
    rc = arcadego_scan(db, "{\"type\": \"A\"}", &stream, &err);
    CHECK(rc == ARCADEGO_CLOSED, "scan in a child: %d", rc);
    arcadego_free(err);
    err = NULL;
    struct ArrowSchema first_schema;
    struct ArrowArray first;
    first_schema.release = (void (*)(struct ArrowSchema *))1; /* garbage the call must clear */
    first.release = (void (*)(struct ArrowArray *))1;
    stream.release = (void (*)(struct ArrowArrayStream *))1;
    rc = arcadego_scan_first(db, "{\"type\": \"A\"}", &first_schema, &first, &stream, NULL, &err);
    CHECK(rc == ARCADEGO_CLOSED && first_schema.release == NULL && first.release == NULL && stream.release == NULL,
          "scan_first in a child: %d", rc);
    arcadego_free(err);
    err = NULL;
    rc = arcadego_close(db, &err);
    CHECK(rc == ARCADEGO_CLOSED, "close in a child: %d", rc);
    arcadego_free(err);
    CHECK(arcadego_cancel(db) == ARCADEGO_CLOSED, "cancel in a child");
    _exit(failures == 0 ? 0 : 1);
  }
  int status = 0;
  CHECK(waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0,
        "the forked child failed (status %#x)", status);
  /* The parent goes on: its database has no trace of the child. */
  char *json = NULL, *err = NULL;
  int rc = arcadego_describe(db, ARCADEGO_S("Forked"), &json, &err);
  CHECK(rc == ARCADEGO_NOT_FOUND, "the child created a type: %d", rc);
  arcadego_free(json);
  arcadego_free(err);
}

int main(void) {
  char dir[] = "/tmp/arcadego-smoke-XXXXXX";
  if (mkdtemp(dir) == NULL) {
    perror("mkdtemp");
    return 2;
  }
  char *err = NULL;
  int rc;

  CHECK(strlen(arcadego_version()) > 0, "empty version");

  /* A bad option is refused with a message. */
  arcadego_db *db = NULL;
  rc = arcadego_open(dir, "{\"sync\": \"sometimes\"}", &db, &err);
  CHECK(rc == ARCADEGO_INVALID_ARGUMENT && err != NULL, "bad option: status %d", rc);
  arcadego_free(err);
  err = NULL;

  rc = arcadego_open(dir, "{\"memtable_budget\": -1}", &db, &err);
  CHECK(rc == ARCADEGO_INVALID_ARGUMENT && err != NULL && strstr(err, "memtable_budget") != NULL,
        "negative memtable_budget: status %d %s", rc, err ? err : "");
  arcadego_free(err);
  err = NULL;

  rc = arcadego_open(dir, "{\"sync\": \"normal\", \"memtable_budget\": 1048576}", &db, &err);
  CHECK(rc == ARCADEGO_OK && db != NULL, "open: %d %s", rc, err ? err : "");
  arcadego_free(err);
  if (db == NULL) {
    return 1;
  }

  /* Schema and data in one transaction. */
  arcadego_tx *tx = NULL;
  rc = arcadego_begin(db, &tx, &err);
  CHECK(rc == ARCADEGO_OK, "begin: %d", rc);
  rc = arcadego_tx_exec(tx, ARCADEGO_S("CREATE DOCUMENT TYPE A; CREATE PROPERTY A.k INT64; CREATE PROPERTY A.s STRING"), &err);
  CHECK(rc == ARCADEGO_OK, "tx_exec: %d %s", rc, err ? err : "");
  arcadego_free(err);
  err = NULL;

  struct ArrowSchema schema;
  struct ArrowArray batch;
  make_schema(&schema);
  make_batch(&batch);
  rc = arcadego_tx_insert(tx, ARCADEGO_S("A"), ARCADEGO_S("d1"), &schema, &batch, &err);
  CHECK(rc == ARCADEGO_OK, "tx_insert: %d %s", rc, err ? err : "");
  arcadego_free(err);
  err = NULL;
  CHECK(schema.release == NULL && batch.release == NULL, "insert did not release its input");
  CHECK(schemas_released == 1 && arrays_released == 1, "released %d schemas, %d arrays", schemas_released,
        arrays_released);

  rc = arcadego_commit(tx, &err);
  CHECK(rc == ARCADEGO_OK, "commit: %d %s", rc, err ? err : "");
  arcadego_free(err);
  err = NULL;
  rc = arcadego_commit(tx, &err);
  CHECK(rc == ARCADEGO_CLOSED && err != NULL, "second commit: %d", rc);
  arcadego_free(err);
  err = NULL;

  /* A failing DDL statement reports line and column. */
  rc = arcadego_exec(db, ARCADEGO_S("CREATE PROPERTY A.k INT64"), &err);
  CHECK(rc == ARCADEGO_ALREADY_EXISTS && err != NULL, "duplicate property: %d", rc);
  arcadego_free(err);
  err = NULL;

  char *json = NULL;
  rc = arcadego_describe(db, ARCADEGO_S("A"), &json, &err);
  CHECK(rc == ARCADEGO_OK && json != NULL && strstr(json, "\"name\":\"k\"") != NULL, "describe: %d %s", rc,
        json ? json : "");
  arcadego_free(json);

  /* Scan it back. */
  struct ArrowArrayStream stream;
  rc = arcadego_scan(db, "{\"type\": \"A\"}", &stream, &err);
  CHECK(rc == ARCADEGO_OK, "scan: %d %s", rc, err ? err : "");
  arcadego_free(err);
  err = NULL;
  if (rc == ARCADEGO_OK) {
    struct ArrowSchema rs;
    rc = stream.get_schema(&stream, &rs);
    CHECK(rc == 0, "get_schema: %d", rc);
    if (rc == 0) {
      check_result_schema(&rs);
      rs.release(&rs);
    }
    int batches = 0;
    for (;;) {
      struct ArrowArray ra;
      rc = stream.get_next(&stream, &ra);
      CHECK(rc == 0, "get_next: %d %s", rc, stream.get_last_error(&stream));
      if (rc != 0 || ra.release == NULL) {
        break;
      }
      batches++;
      check_result_batch(&ra);
      ra.release(&ra);
      CHECK(ra.release == NULL, "result batch release did not mark it released");
    }
    CHECK(batches == 1, "%d batches", batches);
    stream.release(&stream);
    CHECK(stream.release == NULL, "stream release did not mark it released");
  }
  /* The same rows in one call: schema, the only batch, no stream to follow. */
  {
    struct ArrowSchema rs;
    struct ArrowArray ra;
    struct ArrowArrayStream rest;
    uint64_t schema_id = 0;
    rc = arcadego_scan_first(db, "{\"type\": \"A\"}", &rs, &ra, &rest, &schema_id, &err);
    CHECK(rc == ARCADEGO_OK && schema_id != 0, "scan_first: %d %s", rc, err ? err : "");
    arcadego_free(err);
    err = NULL;
    if (rc == ARCADEGO_OK) {
      CHECK(rest.release == NULL, "scan_first of one batch left a stream");
      check_result_schema(&rs);
      rs.release(&rs);
      CHECK(ra.release != NULL, "scan_first returned no batch");
      if (ra.release != NULL) {
        check_result_batch(&ra);
        ra.release(&ra);
      }
    }
  }
  check_moved_device_column(db, 0);
  check_moved_device_column(db, 1);
  check_forked_child_is_refused(db);

  /* The type's devices, from metadata. */
  json = NULL;
  rc = arcadego_devices(db, "{\"type\": \"A\"}", &json, &err);
  CHECK(rc == ARCADEGO_OK && json != NULL && strstr(json, "\"device\":[\"d1\"]") != NULL, "devices: %d %s", rc,
        json ? json : (err ? err : ""));
  arcadego_free(json);
  arcadego_free(err);
  err = NULL;

  /* The same listing as one Arrow batch: device, rows, first, last. */
  {
    struct ArrowSchema ls;
    struct ArrowArray la;
    rc = arcadego_device_list(db, "{\"type\": \"A\"}", &ls, &la, &err);
    CHECK(rc == ARCADEGO_OK, "device_list: %d %s", rc, err ? err : "");
    arcadego_free(err);
    err = NULL;
    if (rc == ARCADEGO_OK) {
      CHECK(ls.n_children == 4 && strcmp(ls.children[0]->name, "device") == 0 &&
                strcmp(ls.children[0]->format, "u") == 0 && strcmp(ls.children[1]->name, "rows") == 0,
            "device_list schema");
      CHECK(la.length == 1 && la.n_children == 4, "device_list: %lld devices", (long long)la.length);
      if (la.length == 1 && la.n_children == 4) {
        const int32_t *offs = la.children[0]->buffers[1];
        const char *names = la.children[0]->buffers[2];
        const int64_t *rows = la.children[1]->buffers[1];
        const int64_t *first = la.children[2]->buffers[1], *last = la.children[3]->buffers[1];
        CHECK(offs[1] - offs[0] == 2 && memcmp(names + offs[0], "d1", 2) == 0 && rows[0] > 0 && first[0] <= last[0],
              "device_list row: %.*s, %lld rows, %lld..%lld", (int)(offs[1] - offs[0]), names + offs[0],
              (long long)rows[0], (long long)first[0], (long long)last[0]);
      }
      la.release(&la);
      ls.release(&ls);
    }
    ls.release = release_schema; /* stale values a failed call must clear */
    la.release = release_array;
    rc = arcadego_device_list(db, "{\"type\": \"Nope\"}", &ls, &la, &err);
    CHECK(rc == ARCADEGO_NOT_FOUND && err != NULL && ls.release == NULL && la.release == NULL,
          "device_list of an unknown type: %d", rc);
    arcadego_free(err);
    err = NULL;
  }

  /* A batch on the stack, its release callbacks the library's marking
  ** ones: the insert takes it and leaves every struct released. */
  {
    int64_t times[2] = {100, 101}, ks[2] = {7, 8};
    const void *time_bufs[2] = {NULL, times}, *k_bufs[2] = {NULL, ks}, *top_bufs[1] = {NULL};
    struct ArrowSchema cols[2] = {
        {.format = "l", .name = "time", .release = arcadego_mark_schema_released},
        {.format = "l", .name = "k", .flags = 2, .release = arcadego_mark_schema_released}};
    struct ArrowSchema *col_ptrs[2] = {&cols[0], &cols[1]};
    struct ArrowSchema top = {.format = "+s", .name = "", .n_children = 2, .children = col_ptrs,
                              .release = arcadego_mark_schema_released};
    struct ArrowArray arrs[2] = {
        {.length = 2, .n_buffers = 2, .buffers = time_bufs, .release = arcadego_mark_array_released},
        {.length = 2, .n_buffers = 2, .buffers = k_bufs, .release = arcadego_mark_array_released}};
    struct ArrowArray *arr_ptrs[2] = {&arrs[0], &arrs[1]};
    struct ArrowArray batch = {.length = 2, .n_buffers = 1, .buffers = top_bufs, .n_children = 2,
                               .children = arr_ptrs, .release = arcadego_mark_array_released};
    rc = arcadego_insert(db, ARCADEGO_S("A"), ARCADEGO_S("marked"), &top, &batch, &err);
    CHECK(rc == ARCADEGO_OK, "insert with the marking release callbacks: %d %s", rc, err ? err : "");
    arcadego_free(err);
    err = NULL;
    CHECK(top.release == NULL && batch.release == NULL && cols[0].release == NULL && cols[1].release == NULL &&
              arrs[0].release == NULL && arrs[1].release == NULL,
          "the marking callbacks left a struct unreleased");
    arcadego_mark_schema_released(NULL); /* no-ops */
    arcadego_mark_array_released(&batch);
  }

  /* Flush to the types' Delta tables, checkpoint, read the counters. */
  rc = arcadego_flush(db, &err);
  CHECK(rc == ARCADEGO_OK, "flush: %d %s", rc, err ? err : "");
  arcadego_free(err);
  err = NULL;
  rc = arcadego_checkpoint(db, &err);
  CHECK(rc == ARCADEGO_OK, "checkpoint: %d %s", rc, err ? err : "");
  arcadego_free(err);
  err = NULL;
  json = NULL;
  rc = arcadego_stats(db, &json, &err);
  CHECK(rc == ARCADEGO_OK && json != NULL && strstr(json, "\"flushes\":") != NULL &&
            strstr(json, "\"types\":[") != NULL,
        "stats: %d %s", rc, json ? json : "");
  arcadego_free(json);
  arcadego_free(err);
  err = NULL;
  rc = arcadego_stats(db, NULL, &err);
  CHECK(rc == ARCADEGO_INVALID_ARGUMENT && err != NULL, "stats with json_out NULL: %d", rc);
  arcadego_free(err);
  err = NULL;

  rc = arcadego_close(db, &err);
  CHECK(rc == ARCADEGO_OK, "close: %d %s", rc, err ? err : "");
  arcadego_free(err);
  err = NULL;
  rc = arcadego_close(db, &err);
  CHECK(rc == ARCADEGO_CLOSED, "second close: %d", rc);
  arcadego_free(err);
  err = NULL;
  rc = arcadego_flush(db, &err);
  CHECK(rc == ARCADEGO_CLOSED && err != NULL, "flush after close: %d", rc);
  arcadego_free(err);
  err = NULL;
  rc = arcadego_checkpoint(db, &err);
  CHECK(rc == ARCADEGO_CLOSED && err != NULL, "checkpoint after close: %d", rc);
  arcadego_free(err);
  err = NULL;
  json = (char *)"unchanged";
  rc = arcadego_stats(db, &json, &err);
  CHECK(rc == ARCADEGO_CLOSED && err != NULL && json == NULL, "stats after close: %d", rc);
  arcadego_free(err);

  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  if (system(cmd) != 0) {
    fprintf(stderr, "could not remove %s\n", dir);
  }
  if (failures > 0) {
    fprintf(stderr, "smoke: %d checks failed\n", failures);
    return 1;
  }
  printf("smoke: all checks passed\n");
  return 0;
}
