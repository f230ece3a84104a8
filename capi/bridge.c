// The C half of capi: see bridge.h.
#include <errno.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <pthread.h>
#include <time.h>

#include "bridge.h"
#include "_cgo_export.h"

void ag_release_schema(struct ArrowSchema *s) {
  if (s != NULL && s->release != NULL) {
    s->release(s);
    s->release = NULL; /* a producer that forgets to mark it must not be called twice */
  }
}

void ag_release_array(struct ArrowArray *a) {
  if (a != NULL && a->release != NULL) {
    a->release(a);
    a->release = NULL;
  }
}

void ag_release_input(struct ArrowSchema *s, struct ArrowArray *a) {
  ag_release_schema(s);
  ag_release_array(a);
}

void ag_release_stream(struct ArrowArrayStream *s) {
  if (s != NULL && s->release != NULL) {
    s->release(s);
    s->release = NULL;
  }
}

int ag_stream_get_schema(struct ArrowArrayStream *s, struct ArrowSchema *out) {
  memset(out, 0, sizeof *out);
  return s->get_schema(s, out);
}

int ag_stream_get_next(struct ArrowArrayStream *s, struct ArrowArray *out) {
  memset(out, 0, sizeof *out);
  return s->get_next(s, out);
}

const char *ag_stream_get_last_error(struct ArrowArrayStream *s) {
  if (s->get_last_error == NULL) {
    return NULL;
  }
  return s->get_last_error(s);
}

static pthread_mutex_t ag_pool_mu = PTHREAD_MUTEX_INITIALIZER;
static struct {
  struct ag_export *block;
  int64_t since; /* CLOCK_MONOTONIC ns */
} ag_pool[AG_POOL_SLOTS];
static int ag_pool_len;
static size_t ag_pool_bytes;

static int64_t ag_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

void *ag_export_alloc(size_t size) {
  if (size >= AG_POOL_MIN) {
    struct ag_export *best = NULL;
    pthread_mutex_lock(&ag_pool_mu);
    int at = -1;
    for (int i = 0; i < ag_pool_len; i++) {
      size_t cap = (size_t)ag_pool[i].block->cap;
      if (cap >= size && cap <= size + size / 2 && (at < 0 || cap < (size_t)ag_pool[at].block->cap)) {
        at = i;
      }
    }
    if (at >= 0) {
      best = ag_pool[at].block;
      ag_pool_bytes -= (size_t)best->cap;
      ag_pool[at] = ag_pool[--ag_pool_len];
    }
    pthread_mutex_unlock(&ag_pool_mu);
    if (best != NULL) {
      return best; /* not cleared: the export writes what it needs (cdata.Memory) */
    }
  }
  struct ag_export *e = malloc(size);
  if (e != NULL) {
    e->cap = (int64_t)size;
  }
  return e;
}

void ag_export_unref(void *block) {
  struct ag_export *e = block;
  if (__atomic_sub_fetch(&e->refs, 1, __ATOMIC_ACQ_REL) != 0) {
    return;
  }
  void **held = (void **)((char *)e + e->held);
  for (int64_t i = 0; i < e->nheld; i++) {
    ag_export_unref(held[i]); /* blocks of decoded rows: they hold none */
  }
  if ((size_t)e->cap >= AG_POOL_MIN) {
    pthread_mutex_lock(&ag_pool_mu);
    if (ag_pool_len < AG_POOL_SLOTS && ag_pool_bytes + (size_t)e->cap <= AG_POOL_BYTES) {
      ag_pool[ag_pool_len].block = e;
      ag_pool[ag_pool_len].since = ag_now();
      ag_pool_len++;
      ag_pool_bytes += (size_t)e->cap;
      e = NULL;
    }
    pthread_mutex_unlock(&ag_pool_mu);
  }
  free(e);
}

void ag_export_ref(void *block) {
  struct ag_export *e = block;
  __atomic_add_fetch(&e->refs, 1, __ATOMIC_ACQ_REL);
}

void ag_release_free_memory(void) {
#ifdef __GLIBC__
  malloc_trim(0); /* freed result blocks go back to the system, not to malloc's arenas */
#endif
}

size_t ag_pool_trim(int64_t max_age_ns) {
  int64_t now = ag_now();
  size_t freed = 0;
  pthread_mutex_lock(&ag_pool_mu);
  for (int i = 0; i < ag_pool_len;) {
    if (now - ag_pool[i].since >= max_age_ns) {
      ag_pool_bytes -= (size_t)ag_pool[i].block->cap;
      freed += (size_t)ag_pool[i].block->cap;
      free(ag_pool[i].block);
      ag_pool[i] = ag_pool[--ag_pool_len];
    } else {
      i++;
    }
  }
  pthread_mutex_unlock(&ag_pool_mu);
  return freed;
}

/* A child struct may sit in the block or, moved, in the consumer's memory:
** it is marked released before the block may go. A struct's release also
** releases its dictionary (a struct of the same block with a reference of
** its own), as the C Data Interface requires: consumers never release a
** dictionary themselves. */
void ag_export_schema_child_release(struct ArrowSchema *s) {
  void *block = s->private_data;
  struct ArrowSchema *d = s->dictionary;
  if (d != NULL && d->release != NULL) {
    d->release(d);
  }
  s->release = NULL;
  ag_export_unref(block);
}

void ag_export_schema_release(struct ArrowSchema *s) {
  for (int64_t i = 0; i < s->n_children; i++) {
    struct ArrowSchema *c = s->children[i];
    if (c->release != NULL) {
      c->release(c);
    }
  }
  ag_export_schema_child_release(s);
}

void ag_export_array_child_release(struct ArrowArray *a) {
  void *block = a->private_data;
  struct ArrowArray *d = a->dictionary;
  if (d != NULL && d->release != NULL) {
    d->release(d);
  }
  a->release = NULL;
  ag_export_unref(block);
}

void ag_export_array_release(struct ArrowArray *a) {
  for (int64_t i = 0; i < a->n_children; i++) {
    struct ArrowArray *c = a->children[i];
    if (c->release != NULL) {
      c->release(c);
    }
  }
  ag_export_array_child_release(a);
}

/* ag_result_forked sets the error of a stream used in a forked child. */
static int ag_result_forked(struct ag_result *r) {
  free(r->last_error);
  r->last_error = strdup("libarcadego cannot be used in a forked child: the Go runtime does not survive fork()");
  return EIO;
}

/* The output structs are zeroed before Go writes into them: Go's write
** barrier must never see stale bytes that look like pointers
** (apache/arrow-adbc#729). */
static int ag_result_get_schema(struct ArrowArrayStream *s, struct ArrowSchema *out) {
  memset(out, 0, sizeof *out);
  if (s->private_data == NULL) {
    return EINVAL;
  }
  if (ag_in_forked_child()) {
    return ag_result_forked((struct ag_result *)s->private_data);
  }
  return agResultSchema((struct ag_result *)s->private_data, out);
}

static int ag_result_get_next(struct ArrowArrayStream *s, struct ArrowArray *out) {
  memset(out, 0, sizeof *out);
  if (s->private_data == NULL) {
    return EINVAL;
  }
  if (ag_in_forked_child()) {
    return ag_result_forked((struct ag_result *)s->private_data);
  }
  return agResultNext((struct ag_result *)s->private_data, out);
}

static const char *ag_result_get_last_error(struct ArrowArrayStream *s) {
  if (s->private_data == NULL) {
    return NULL;
  }
  return ((struct ag_result *)s->private_data)->last_error;
}

static void ag_result_release(struct ArrowArrayStream *s) {
  struct ag_result *r = (struct ag_result *)s->private_data;
  if (r != NULL) {
    if (!ag_in_forked_child()) { /* a child leaves the parent's scan alone */
      agResultRelease(r->id);
    }
    free(r->last_error);
    free(r);
  }
  s->private_data = NULL;
  s->release = NULL;
}

int ag_result_init(struct ArrowArrayStream *out, uintptr_t id) {
  struct ag_result *r = calloc(1, sizeof *r);
  if (r == NULL) {
    return ENOMEM;
  }
  r->id = id;
  out->get_schema = ag_result_get_schema;
  out->get_next = ag_result_get_next;
  out->get_last_error = ag_result_get_last_error;
  out->release = ag_result_release;
  out->private_data = r;
  return 0;
}
