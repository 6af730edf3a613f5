/* Stand-in for the runtime's counter registration: remembers the counter
 * section of each image and, at exit, prints every counter (sorted by name,
 * kind and image), so tests can compare visit counts. */
#include "causal/abi.h"

#include <stdio.h>
#include <string.h>

#define MAX_IMAGES 8
static struct causal_counter *Starts[MAX_IMAGES], *Stops[MAX_IMAGES];
static int Images;

void __causal_register_counters(struct causal_counter *start, struct causal_counter *stop) {
  printf("register image=%d counters=%ld\n", Images, (long)(stop - start));
  if (Images < MAX_IMAGES) {
    Starts[Images] = start;
    Stops[Images] = stop;
    ++Images;
  }
}

static int before(const struct causal_counter *a, int ia, const struct causal_counter *b, int ib) {
  int c = strcmp(a->name, b->name);
  if (c != 0)
    return c < 0;
  if (a->kind != b->kind)
    return a->kind < b->kind;
  return ia < ib;
}

__attribute__((destructor)) static void dump_counters(void) {
  const struct causal_counter *all[256];
  int image_of[256];
  int n = 0, i, j;
  for (i = 0; i < Images; ++i)
    for (struct causal_counter *c = Starts[i]; c && c < Stops[i] && n < 256; ++c) {
      all[n] = c;
      image_of[n++] = i;
    }
  for (i = 1; i < n; ++i) /* insertion sort: tests have few counters */
    for (j = i; j > 0 && before(all[j], image_of[j], all[j - 1], image_of[j - 1]); --j) {
      const struct causal_counter *t = all[j];
      int ti = image_of[j];
      all[j] = all[j - 1];
      image_of[j] = image_of[j - 1];
      all[j - 1] = t;
      image_of[j - 1] = ti;
    }
  for (i = 0; i < n; ++i)
    printf("counter name=%s kind=%u image=%d count=%llu flags=%u\n", all[i]->name, all[i]->kind,
           image_of[i], (unsigned long long)all[i]->count, all[i]->flags);
}
