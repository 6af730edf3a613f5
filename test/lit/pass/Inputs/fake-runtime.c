/* Stand-in for libcausal_rt's registration entry points: prints what the
 * module constructor/destructor pass. */
#include <stdio.h>

void __causal_register_module(const void *start, const void *stop) {
  printf("register start=%s size=%ld\n", start ? "set" : "null",
         (long)((const char *)stop - (const char *)start));
}

void __causal_unregister_module(const void *start) {
  printf("unregister start=%s\n", start ? "set" : "null");
}
