/*
** bridge.h: the C half of capi, included by every Go file of the package.
**
** Go cannot call C function pointers, and the export header that cgo writes
** must not see arcadego.h (its prototypes use pointer types where the Go
** exports use uintptr_t handles), so this file repeats the Arrow C Data
** Interface structs and declares the small C helpers of bridge.c.
*/
#ifndef ARCADEGO_BRIDGE_H
#define ARCADEGO_BRIDGE_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

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

/* Call the caller's callbacks. The release helpers accept NULL and
** already released structs (no-op). */
void ag_release_schema(struct ArrowSchema *s);
void ag_release_array(struct ArrowArray *a);
void ag_release_input(struct ArrowSchema *s, struct ArrowArray *a);
void ag_release_stream(struct ArrowArrayStream *s);
int ag_stream_get_schema(struct ArrowArrayStream *s, struct ArrowSchema *out);
int ag_stream_get_next(struct ArrowArrayStream *s, struct ArrowArray *out);
const char *ag_stream_get_last_error(struct ArrowArrayStream *s);

/* Result streams (arcadego_scan). private_data points to an ag_result. */
struct ag_result {
  uintptr_t id;     /* key of the Go-side reader */
  char *last_error; /* malloc'ed; freed by the next error or the release */
};
/* ag_in_forked_child reports whether this process is a fork of the one
** that loaded the library (exports.c), which must not enter Go. */
int ag_in_forked_child(void);

/* Fill *out with the result-stream callbacks for reader id. Returns 0, or
** ENOMEM. */
int ag_result_init(struct ArrowArrayStream *out, uintptr_t id);

/* Exported results (schemas and batches of result streams). Each export is
** one block holding every struct, pointer array and buffer of it, except
** buffers of flushed rows, which stay in the blocks the scan decoded them
** into: the batch's block holds a reference on each of those (nheld, held).
** A block starts with a reference count: one for the root, one per child
** and one per dictionary, since a consumer may move a child out and release
** the root (the C Data Interface allows it). The root's release releases
** the children still in place, and every struct's release its dictionary
** if not yet released; the block is freed when the count reaches zero. */
struct ag_export {
  int64_t refs;
  int64_t cap;   /* bytes allocated, header included */
  int64_t nheld; /* other blocks this one holds a reference on ... */
  int64_t held;  /* ... listed at this offset from the block's start */
};

/* Blocks of AG_POOL_MIN bytes and more are kept, when released, for later
** results (up to AG_POOL_BYTES in all, each for a request of at most 1.5
** times its size, not cleared: the export writes every byte a consumer
** reads), and freed by ag_pool_trim
** once unused for a while. A scan's batches are megabytes each: writing
** them into fresh memory costs a page fault per 4 KiB, which was as much
** as the copy itself, and a process that reads results again and again
** (a dashboard, a test suite) would pay it every time. From 64 KiB: the
** blocks a filtered scan decodes a window of a column into are below a
** megabyte, and malloc gave them back to the system between scans (a
** filter over 10 M rows took 4,000 page faults a scan). */
#define AG_POOL_MIN (64 << 10)
#define AG_POOL_BYTES ((size_t)1 << 30)
#define AG_POOL_SLOTS 1024
/* ag_export_alloc returns a block of size bytes, not zeroed (header
** included, its cap set), or NULL. */
void *ag_export_alloc(size_t size);
/* ag_export_unref drops a reference to a block, releasing it (and the
** references it holds) at zero; ag_export_ref adds one. A block of decoded
** rows that several result batches point to is freed with the last. */
void ag_export_unref(void *block);
void ag_export_ref(void *block);
/* ag_pool_trim frees the kept blocks unused for max_age_ns or more; it
** returns the bytes freed. */
size_t ag_pool_trim(int64_t max_age_ns);
/* ag_release_free_memory hands malloc's free memory back to the system
** (glibc's malloc_trim; nothing elsewhere). */
void ag_release_free_memory(void);
void ag_export_schema_release(struct ArrowSchema *s);
void ag_export_schema_child_release(struct ArrowSchema *s);
void ag_export_array_release(struct ArrowArray *a);
void ag_export_array_child_release(struct ArrowArray *a);

#endif
