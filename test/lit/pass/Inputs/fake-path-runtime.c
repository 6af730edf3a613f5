/* Stand-in for libcausal_rt's call-path entry points (causal/abi.h, "Call
 * paths of chosen functions"): enables every descriptor it is given and
 * prints each registration, entry (with its inlined_at string, tabs shown
 * as " | " and newlines as " ;") and exit. */
#include "causal/abi.h"

#include <stdio.h>

static uint32_t next_token = 1;

void __causal_register_path_fns(struct causal_path_fn *start, struct causal_path_fn *stop) {
  for (struct causal_path_fn *fn = start; fn < stop; ++fn) {
    printf("register symbol=%s name=%s enabled=%d id=%u\n", fn->symbol, fn->name, fn->enabled,
           fn->id);
    __atomic_store_n(&fn->enabled, 1, __ATOMIC_RELAXED);
  }
}

uint32_t __causal_path_enter(struct causal_path_fn *fn, const char *inlined_at) {
  printf("enter %s token=%u inlined_at=", fn->name, next_token);
  if (!inlined_at)
    printf("null");
  for (const char *c = inlined_at; c && *c; ++c)
    printf("%s", *c == '\t' ? " | " : *c == '\n' ? " ;" : (char[]){*c, 0});
  printf("\n");
  return next_token++;
}

void __causal_path_exit(struct causal_path_fn *fn, uint32_t token) {
  printf("exit %s token=%u\n", fn->name, token);
}
