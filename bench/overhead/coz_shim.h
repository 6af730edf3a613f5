/*===- bench/overhead/coz_shim.h - causal.h progress points as Coz's -------===*
 *
 * Force-included (clang -include coz_shim.h) when an example written for
 * causal.h is built for Coz: it maps each causal.h macro to its coz.h
 * equivalent and defines causal.h's include guard, so the example's own
 * #include "causal/causal.h" adds nothing. The source is not changed.
 *
 *===----------------------------------------------------------------------===*/
#ifndef CAUSAL_OVERHEAD_COZ_SHIM_H
#define CAUSAL_OVERHEAD_COZ_SHIM_H

#include <coz.h>

#define CAUSAL_CAUSAL_H 1 /* causal.h's guard: its definitions are skipped */

#define CAUSAL_PROGRESS COZ_PROGRESS
#define CAUSAL_PROGRESS_NAMED(name) COZ_PROGRESS_NAMED(name)
#define CAUSAL_BEGIN(name) COZ_BEGIN(name)
#define CAUSAL_END(name) COZ_END(name)
/* Coz has no function attributes. */
#define CAUSAL_PROGRESS_FUNCTION
#define CAUSAL_TRANSACTION(name)

#endif /* CAUSAL_OVERHEAD_COZ_SHIM_H */
