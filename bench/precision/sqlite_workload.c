// A multi-threaded SQLite workload for bench/precision/run.sh: each thread
// owns an in-memory database, inserts rows in transactions through a
// prepared statement, then runs indexed range selects and an aggregate.
// Prints one checksum so runs can be compared.
//
// usage: sqlite_workload [THREADS] [ROUNDS]
#include "sqlite3.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

struct worker {
  int id;
  int rounds;
  long long checksum;
  int failed;
};

static int check(struct worker *w, sqlite3 *db, int rc, const char *what) {
  if (rc == SQLITE_OK || rc == SQLITE_DONE || rc == SQLITE_ROW)
    return 0;
  fprintf(stderr, "thread %d: %s: %s\n", w->id, what, sqlite3_errmsg(db));
  w->failed = 1;
  return 1;
}

static void *work(void *arg) {
  struct worker *w = arg;
  sqlite3 *db = NULL;
  sqlite3_stmt *insert = NULL, *range = NULL, *total = NULL;
  if (sqlite3_open(":memory:", &db) != SQLITE_OK) {
    w->failed = 1;
    return NULL;
  }
  if (check(w, db,
            sqlite3_exec(db,
                         "CREATE TABLE items(id INTEGER PRIMARY KEY, k INTEGER, name TEXT);"
                         "CREATE INDEX items_k ON items(k);",
                         NULL, NULL, NULL),
            "create") ||
      check(w, db,
            sqlite3_prepare_v2(db, "INSERT INTO items(k, name) VALUES(?1, ?2)", -1, &insert, NULL),
            "prepare insert") ||
      check(w, db,
            sqlite3_prepare_v2(
                db, "SELECT count(*), sum(length(name)) FROM items WHERE k BETWEEN ?1 AND ?2", -1,
                &range, NULL),
            "prepare range") ||
      check(w, db,
            sqlite3_prepare_v2(db, "SELECT max(k) - min(k), count(DISTINCT k % 97) FROM items", -1,
                               &total, NULL),
            "prepare total"))
    goto done;

  unsigned seed = 12345u + (unsigned)w->id;
  char name[48];
  for (int round = 0; round < w->rounds; ++round) {
    if (check(w, db, sqlite3_exec(db, "BEGIN", NULL, NULL, NULL), "begin"))
      goto done;
    for (int i = 0; i < 500; ++i) {
      seed = seed * 1103515245u + 12345u;
      int k = (int)(seed >> 8) % 100000;
      int len = snprintf(name, sizeof(name), "item-%d-%d-%u", w->id, round, seed % 9973u);
      sqlite3_bind_int(insert, 1, k);
      sqlite3_bind_text(insert, 2, name, len, SQLITE_TRANSIENT);
      if (check(w, db, sqlite3_step(insert), "insert"))
        goto done;
      sqlite3_reset(insert);
    }
    if (check(w, db, sqlite3_exec(db, "COMMIT", NULL, NULL, NULL), "commit"))
      goto done;
    for (int q = 0; q < 40; ++q) {
      seed = seed * 1103515245u + 12345u;
      int lo = (int)(seed >> 8) % 100000;
      sqlite3_bind_int(range, 1, lo);
      sqlite3_bind_int(range, 2, lo + 2000);
      if (sqlite3_step(range) == SQLITE_ROW)
        w->checksum += sqlite3_column_int64(range, 0) * 31 + sqlite3_column_int64(range, 1);
      sqlite3_reset(range);
    }
    if (round % 10 == 9) {
      if (sqlite3_step(total) == SQLITE_ROW)
        w->checksum += sqlite3_column_int64(total, 0) + sqlite3_column_int64(total, 1);
      sqlite3_reset(total);
      if (check(w, db, sqlite3_exec(db, "DELETE FROM items WHERE k % 3 = 0", NULL, NULL, NULL),
                "delete"))
        goto done;
    }
  }
done:
  sqlite3_finalize(insert);
  sqlite3_finalize(range);
  sqlite3_finalize(total);
  sqlite3_close(db);
  return NULL;
}

int main(int argc, char **argv) {
  int threads = argc > 1 ? atoi(argv[1]) : 4;
  int rounds = argc > 2 ? atoi(argv[2]) : 200;
  if (threads < 1 || threads > 64 || rounds < 1) {
    fprintf(stderr, "usage: %s [THREADS 1-64] [ROUNDS >= 1]\n", argv[0]);
    return 2;
  }
  pthread_t tids[64];
  struct worker workers[64];
  for (int i = 0; i < threads; ++i) {
    workers[i] = (struct worker){i, rounds, 0, 0};
    if (pthread_create(&tids[i], NULL, work, &workers[i]) != 0) {
      fprintf(stderr, "pthread_create failed\n");
      return 1;
    }
  }
  long long checksum = 0;
  int failed = 0;
  for (int i = 0; i < threads; ++i) {
    pthread_join(tids[i], NULL);
    checksum += workers[i].checksum;
    failed |= workers[i].failed;
  }
  printf("threads=%d rounds=%d checksum=%lld\n", threads, rounds, checksum);
  return failed;
}
