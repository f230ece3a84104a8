/*
** bench_insert.c: the fixed cost of a small tablet through the C ABI, as a
** C program pays it. One arcadego_insert (its own transaction) of a batch
** of ROWS rows (time int64 and 10 int64 properties) into a memory
** database, timed with CLOCK_MONOTONIC:
**   existing: 1,000 devices written in turn, each row later than the last;
**   new:      a device that does not exist yet, every time;
**   tx:       the same two, but in transactions of 1,000 tablets
**             (arcadego_tx_insert, then one arcadego_commit): the cost of a
**             tablet itself, its commit's share being a thousandth.
** The batch is built once and re-armed before each call (its release
** callbacks only mark it released), so the figures are the library's.
** Each case prints the mean over all inserts and the median of the means
** of blocks of 10,000 (less sensitive to a busy machine), then the fixed
** cost of a tablet: the one-row mean less one row's share of the values,
** the slope from one row to ten.
**
** Build and run: make bench-c (tests/c/bench.sh); an argument "existing",
** "new" or "tx" runs those cases alone. "loop new|existing PER_TX N" runs
** N one-row inserts of one case (PER_TX 0: each its own commit), for
** tests/c/callgrind.sh to count their instructions.
*/
#define _POSIX_C_SOURCE 199309L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "arcadego.h"

#define COLS 10      /* properties, besides time */
#define MAX_ROWS 10
#define BLOCK 10000  /* inserts per timed block */

static const char *names[COLS + 1] = {"time", "c0", "c1", "c2", "c3", "c4", "c5", "c6", "c7", "c8", "c9"};

static struct ArrowSchema schema, child_schemas[COLS + 1], *schema_children[COLS + 1];
static struct ArrowArray array, child_arrays[COLS + 1], *array_children[COLS + 1];
static const void *top_buffers[1], *child_buffers[COLS + 1][2];
static int64_t values[COLS + 1][MAX_ROWS]; /* values[0]: the times */

static void release_schema(struct ArrowSchema *s) { s->release = NULL; }
static void release_array(struct ArrowArray *a) { a->release = NULL; }

/* arm makes the batch of rows rows ready for one call. */
static void arm(int64_t rows) {
  schema = (struct ArrowSchema){.format = "+s", .name = "", .n_children = COLS + 1,
                                .children = schema_children, .release = release_schema};
  array = (struct ArrowArray){.length = rows, .n_buffers = 1, .buffers = top_buffers,
                              .n_children = COLS + 1, .children = array_children,
                              .release = release_array};
  for (int c = 0; c <= COLS; c++) {
    child_schemas[c] = (struct ArrowSchema){.format = "l", .name = names[c], .release = release_schema};
    schema_children[c] = &child_schemas[c];
    child_buffers[c][1] = values[c];
    child_arrays[c] = (struct ArrowArray){.length = rows, .n_buffers = 2, .buffers = child_buffers[c],
                                          .release = release_array};
    array_children[c] = &child_arrays[c];
  }
}

static double now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int by_value(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* run times n inserts of rows rows and stores the mean in *mean;
** new_devices: a new device each time; per_tx: tablets per transaction
** (0: each insert is its own commit). */
static int run(const char *label, int64_t rows, int new_devices, int per_tx, int n, double *mean) {
  arcadego_db *db = NULL;
  char *err = NULL;
  if (arcadego_open(NULL, "{\"auto_create\": true}", &db, &err) != ARCADEGO_OK) {
    fprintf(stderr, "open: %s\n", err);
    return 1;
  }
  char device[32];
  arcadego_tx *tx = NULL;
  int blocks = n / BLOCK;
  double *means = calloc((size_t)blocks, sizeof *means);
  double start = now_ns(), total = 0;
  for (int b = 0; b < blocks; b++) {
    double t0 = now_ns();
    for (int i = b * BLOCK; i < (b + 1) * BLOCK; i++) {
      int d = new_devices ? i : i % 1000;
      int64_t round = new_devices ? 0 : i / 1000;
      for (int64_t r = 0; r < rows; r++) {
        values[0][r] = round * rows + r;
      }
      int len = snprintf(device, sizeof device, "device-%d", d);
      arm(rows);
      if (per_tx > 0 && i % per_tx == 0 && arcadego_begin(db, &tx, &err) != ARCADEGO_OK) {
        fprintf(stderr, "begin: %s\n", err);
        return 1;
      }
      int status = per_tx > 0 ? arcadego_tx_insert(tx, "T", 1, device, (size_t)len, &schema, &array, &err)
                              : arcadego_insert(db, "T", 1, device, (size_t)len, &schema, &array, &err);
      if (status != ARCADEGO_OK) {
        fprintf(stderr, "insert: %s\n", err);
        return 1;
      }
      if (per_tx > 0 && (i + 1) % per_tx == 0 && arcadego_commit(tx, &err) != ARCADEGO_OK) {
        fprintf(stderr, "commit: %s\n", err);
        return 1;
      }
    }
    means[b] = (now_ns() - t0) / BLOCK;
  }
  total = (now_ns() - start) / (blocks * BLOCK);
  *mean = total;
  qsort(means, (size_t)blocks, sizeof *means, by_value);
  printf("%-30s rows=%-3lld %8.2f us/insert mean, %8.2f us median of %d blocks\n", label, (long long)rows,
         total / 1e3, means[blocks / 2] / 1e3, blocks);
  free(means);
  if (arcadego_close(db, &err) != ARCADEGO_OK) {
    fprintf(stderr, "close: %s\n", err);
    return 1;
  }
  return 0;
}

/* run_case runs a case with one row and with MAX_ROWS, then prints its
** fixed cost: the one-row mean less a row's share, the slope between the
** two. */
static int run_case(const char *label, int new_devices, int per_tx, int n) {
  double one = 0, ten = 0;
  int failed = run(label, 1, new_devices, per_tx, n, &one);
  failed |= run(label, MAX_ROWS, new_devices, per_tx, n, &ten);
  double row = (ten - one) / (MAX_ROWS - 1);
  printf("%-30s fixed    %8.2f us/insert (a row's values: %.2f us)\n", label, (one - row) / 1e3, row / 1e3);
  return failed;
}

int main(int argc, char **argv) {
  const char *only = argc > 1 ? argv[1] : ""; /* "existing", "new" or "tx": those cases alone */
  for (int c = 1; c <= COLS; c++) {
    for (int r = 0; r < MAX_ROWS; r++) {
      values[c][r] = c * 100 + r;
    }
  }
  if (strcmp(only, "loop") == 0 && argc == 5) {
    double mean;
    int n = atoi(argv[4]);
    if (n <= 0 || n % BLOCK != 0) {
      fprintf(stderr, "loop: N must be a positive multiple of %d\n", BLOCK);
      return 2;
    }
    return run("loop", 1, strcmp(argv[2], "new") == 0, atoi(argv[3]), n, &mean);
  }
  int failed = 0;
  int all = *only == 0;
  if (!all && strcmp(only, "existing") != 0 && strcmp(only, "new") != 0 && strcmp(only, "tx") != 0) {
    fprintf(stderr, "usage: %s [existing|new|tx] | loop new|existing PER_TX N\n", argv[0]);
    return 2;
  }
  if (all || strcmp(only, "existing") == 0) {
    failed |= run_case("existing devices (1,000)", 0, 0, 200000);
  }
  if (all || strcmp(only, "new") == 0) {
    failed |= run_case("new devices", 1, 0, 100000);
  }
  if (all || strcmp(only, "tx") == 0) {
    failed |= run_case("tx of 1,000, existing devices", 0, 1000, 200000);
    failed |= run_case("tx of 1,000, new devices", 1, 1000, 100000);
  }
  return failed;
}
