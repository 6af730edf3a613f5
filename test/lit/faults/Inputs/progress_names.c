// Progress points whose names hold bytes a profile line cannot carry as
// they are (tab, newline, carriage return, control bytes, a backslash,
// invalid UTF-8) and ones it can (space, '=', UTF-8), a 400-byte name and
// two 1,200-byte names that differ only at their end. Every round visits
// each point once. Writes every name, hex-encoded, to NAMES_FILE for the
// checker; prints the rounds done.
#include "causal/causal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define S40 "0123456789abcdefghijklmnopqrstuvwxyzABCD"
#define S400 S40 S40 S40 S40 S40 S40 S40 S40 S40 S40
#define S1200 S400 S400 S400

static const char *const names[] = {
    "tab\there",      "tab here",       "new\nline",      "carriage\rreturn", "key=value=more", "with space",
    "back\\slash",    "lit\\tab",       "bell\x01\x7f",      "na\xc3\xafve \xe2\x86\x92 \xe5\x90\x8d", "bad\xff\xfe",
    S400,             S1200 "-first",   S1200 "-second",     "lat\tency",
};

static volatile unsigned long sink;

static void spin(unsigned n) {
  for (unsigned i = 0; i < n; ++i) // HOT
    sink += i;
}

int main(int argc, char **argv) {
  unsigned long rounds = argc > 1 ? strtoul(argv[1], 0, 10) : 1000;
  if (argc > 2) {
    FILE *out = fopen(argv[2], "w");
    if (!out)
      return 2;
    for (size_t n = 0; n < sizeof names / sizeof *names; ++n) {
      for (const char *c = names[n]; *c; ++c)
        fprintf(out, "%02x", (unsigned char)*c);
      fprintf(out, "\n");
    }
    fclose(out);
  }
  for (unsigned long r = 0; r < rounds; ++r) {
    CAUSAL_PROGRESS_NAMED("tab\there");
    CAUSAL_PROGRESS_NAMED("tab here");
    CAUSAL_PROGRESS_NAMED("new\nline");
    CAUSAL_PROGRESS_NAMED("carriage\rreturn");
    CAUSAL_PROGRESS_NAMED("key=value=more");
    CAUSAL_PROGRESS_NAMED("with space");
    CAUSAL_PROGRESS_NAMED("back\\slash");
    CAUSAL_PROGRESS_NAMED("lit\\tab");
    CAUSAL_PROGRESS_NAMED("bell\x01\x7f");
    CAUSAL_PROGRESS_NAMED("na\xc3\xafve \xe2\x86\x92 \xe5\x90\x8d");
    CAUSAL_PROGRESS_NAMED("bad\xff\xfe");
    CAUSAL_PROGRESS_NAMED(S400);
    CAUSAL_PROGRESS_NAMED(S1200 "-first");
    CAUSAL_PROGRESS_NAMED(S1200 "-second");
    CAUSAL_BEGIN("lat\tency");
    spin(20000);
    CAUSAL_END("lat\tency");
  }
  printf("%lu rounds\n", rounds);
  return 0;
}
