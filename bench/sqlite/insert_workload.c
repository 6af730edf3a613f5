// A write-intensive parallel SQLite workload after the one in the Coz paper
// (section 4.2.3): each thread inserts rows into its own private table as
// fast as it can, with a progress point after every insert. The threads have
// nothing to share but SQLite's own global state (allocator and mutexes), so
// any slowdown with more threads is the engine's.
//
// Each insert is its own transaction (autocommit), as in a program that logs
// rows one by one. To bound memory, every ROWS_KEPT inserts the thread deletes
// all but the newest ROWS_KEPT / 2 rows. At the end each thread checks that
// its table holds exactly the rows it should (count and sums recomputed from
// the same pseudo-random sequence).
//
// usage: insert_workload [THREADS] [ROWS_PER_THREAD] [SECONDS]
//   Without SECONDS (or 0): every thread inserts ROWS_PER_THREAD rows and the
//   program prints a checksum of the tables; the same arguments print the
//   same line, profiled or not.
//   With SECONDS > 0: every thread stops after ROWS_PER_THREAD rows or when
//   SECONDS have passed, whichever comes first. Standard output then says
//   only whether the tables were verified (the same line whatever the speed);
//   the rows inserted and the rows per second go to standard error.
// Exit status: 0 if every table was verified, 1 otherwise, 2 on bad usage.
#include "causal/causal.h"
#include "sqlite3.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

enum { ROWS_KEPT = 20000, MAX_THREADS = 64 };

struct worker {
  int id;
  long max_rows;
  long long deadline_ns; // 0: no deadline
  long rows;             // rows inserted
  long long checksum;
  int failed;
};

static long long monotonic_ns(void) {
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return (long long)now.tv_sec * 1000000000ll + now.tv_nsec;
}

static int check(struct worker *w, sqlite3 *db, int rc, const char *what) {
  if (rc == SQLITE_OK || rc == SQLITE_DONE || rc == SQLITE_ROW)
    return 0;
  fprintf(stderr, "thread %d: %s: %s\n", w->id, what, db ? sqlite3_errmsg(db) : "no database");
  w->failed = 1;
  return 1;
}

static unsigned next_seed(unsigned seed) { return seed * 1103515245u + 12345u; }
static unsigned first_seed(int id) { return 2654435761u * (unsigned)(id + 1); }
static int value_text(char *buf, size_t size, int id, long row, unsigned seed) {
  return snprintf(buf, size, "row-%d-%ld-%u", id, row, seed % 100003u);
}

// The table must hold rows (ids) above the last trim's cut, with the k and v
// the sequence gave them.
static void verify(struct worker *w, sqlite3 *db, const char *table) {
  long trims = w->rows / ROWS_KEPT;
  long cut = trims > 0 ? trims * ROWS_KEPT - ROWS_KEPT / 2 : 0;
  long long expected_count = w->rows - cut, expected_k = 0, expected_length = 0;
  unsigned seed = first_seed(w->id);
  char value[48];
  for (long row = 0; row < w->rows; ++row) {
    seed = next_seed(seed);
    if (row + 1 > cut) {
      expected_k += (long long)(seed >> 8);
      expected_length += value_text(value, sizeof value, w->id, row, seed);
    }
  }
  char sql[160];
  sqlite3_stmt *summary = NULL;
  snprintf(sql, sizeof sql, "SELECT count(*), total(k), total(length(v)), min(id) FROM %s", table);
  if (check(w, db, sqlite3_prepare_v2(db, sql, -1, &summary, NULL), "prepare summary"))
    return;
  if (sqlite3_step(summary) != SQLITE_ROW) {
    check(w, db, sqlite3_errcode(db), "summary");
  } else {
    long long count = sqlite3_column_int64(summary, 0);
    long long k = (long long)sqlite3_column_double(summary, 1);
    long long length = (long long)sqlite3_column_double(summary, 2);
    if (count != expected_count || k != expected_k || length != expected_length ||
        (count > 0 && sqlite3_column_int64(summary, 3) != cut + 1)) {
      fprintf(stderr, "thread %d: table %s does not hold the rows inserted\n", w->id, table);
      w->failed = 1;
    }
    w->checksum = count * 1000003 + k + length + trims;
  }
  sqlite3_finalize(summary);
}

static void *insert_rows(void *arg) {
  struct worker *w = arg;
  sqlite3 *db = NULL;
  sqlite3_stmt *insert = NULL, *trim = NULL;
  char sql[160], table[16];
  snprintf(table, sizeof table, "t%d", w->id);
  if (check(w, db, sqlite3_open(":memory:", &db), "open"))
    goto done;
  snprintf(sql, sizeof sql, "CREATE TABLE %s(id INTEGER PRIMARY KEY, k INTEGER, v TEXT)", table);
  if (check(w, db, sqlite3_exec(db, sql, NULL, NULL, NULL), "create"))
    goto done;
  snprintf(sql, sizeof sql, "INSERT INTO %s(k, v) VALUES(?1, ?2)", table);
  if (check(w, db, sqlite3_prepare_v2(db, sql, -1, &insert, NULL), "prepare insert"))
    goto done;
  snprintf(sql, sizeof sql, "DELETE FROM %s WHERE id <= ?1", table);
  if (check(w, db, sqlite3_prepare_v2(db, sql, -1, &trim, NULL), "prepare trim"))
    goto done;

  unsigned seed = first_seed(w->id);
  char value[48];
  for (long row = 0; row < w->max_rows; ++row) {
    if (w->deadline_ns && monotonic_ns() >= w->deadline_ns)
      break;
    seed = next_seed(seed);
    int len = value_text(value, sizeof value, w->id, row, seed);
    sqlite3_bind_int(insert, 1, (int)(seed >> 8));
    sqlite3_bind_text(insert, 2, value, len, SQLITE_TRANSIENT);
    if (check(w, db, sqlite3_step(insert), "insert"))
      goto done;
    sqlite3_reset(insert);
    w->rows = row + 1;
    CAUSAL_PROGRESS; // one visit per inserted row
    if ((row + 1) % ROWS_KEPT == 0) {
      sqlite3_bind_int64(trim, 1, row + 1 - ROWS_KEPT / 2);
      if (check(w, db, sqlite3_step(trim), "trim"))
        goto done;
      sqlite3_reset(trim);
    }
  }
  verify(w, db, table);
done:
  sqlite3_finalize(insert);
  sqlite3_finalize(trim);
  sqlite3_close(db);
  return NULL;
}

int main(int argc, char **argv) {
  int threads = argc > 1 ? atoi(argv[1]) : 4;
  long rows = argc > 2 ? atol(argv[2]) : 100000;
  double seconds = argc > 3 ? atof(argv[3]) : 0;
  if (argc > 4 || threads < 1 || threads > MAX_THREADS || rows < 1 || seconds < 0) {
    fprintf(stderr, "usage: %s [THREADS 1-%d] [ROWS_PER_THREAD >= 1] [SECONDS >= 0]\n", argv[0],
            MAX_THREADS);
    return 2;
  }
  long long start = monotonic_ns();
  long long deadline = seconds > 0 ? start + (long long)(seconds * 1e9) : 0;
  pthread_t tids[MAX_THREADS];
  struct worker workers[MAX_THREADS];
  for (int i = 0; i < threads; ++i) {
    workers[i] = (struct worker){i, rows, deadline, 0, 0, 0};
    if (pthread_create(&tids[i], NULL, insert_rows, &workers[i]) != 0) {
      fprintf(stderr, "pthread_create failed\n");
      return 1;
    }
  }
  long long checksum = 0, total_rows = 0;
  int failed = 0;
  for (int i = 0; i < threads; ++i) {
    pthread_join(tids[i], NULL);
    checksum += workers[i].checksum;
    total_rows += workers[i].rows;
    failed |= workers[i].failed;
  }
  double elapsed = (monotonic_ns() - start) / 1e9;
  if (seconds > 0)
    printf("threads=%d rows_per_thread=timed tables=%s\n", threads,
           failed ? "NOT-VERIFIED" : "verified");
  else
    printf("threads=%d rows_per_thread=%ld checksum=%lld tables=%s\n", threads, rows, checksum,
           failed ? "NOT-VERIFIED" : "verified");
  fprintf(stderr, "rows=%lld seconds=%.3f rows_per_second=%.0f\n", total_rows, elapsed,
          elapsed > 0 ? total_rows / elapsed : 0.0);
  return failed;
}
