// Linked into the -finstrument-functions build: chooses sqlite3_mutex_enter
// and sqlite3Malloc for cyg_hooks.c before main, and prints their entry
// counts at exit (to standard error, so outputs stay comparable).
#include <stdio.h>
#include <stdlib.h>

void paths_bench_choose(void *first, void *second);
unsigned long paths_bench_entries(int which);
void sqlite3_mutex_enter(void *);
void *sqlite3Malloc(unsigned long long);

__attribute__((no_instrument_function)) static void report(void) {
  fprintf(stderr, "cyg entries: sqlite3_mutex_enter=%lu sqlite3Malloc=%lu\n",
          paths_bench_entries(0), paths_bench_entries(1));
}

__attribute__((constructor, no_instrument_function)) static void choose(void) {
  paths_bench_choose((void *)sqlite3_mutex_enter, (void *)sqlite3Malloc);
  atexit(report);
}
