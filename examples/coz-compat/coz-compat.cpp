// A program annotated for Coz with Coz's own header (coz.h from Debian's
// coz-profiler package), built with `causal-clang++ -fcausal-profile` and not
// changed in any way: our runtime answers coz.h's lookup of
// _coz_get_counter, so the Coz progress points appear in our profile.
//
//   coz-compat [ITEMS] [WORK_ITERATIONS]   (defaults: 1000, 2000000)
//
// One thread handles ITEMS items. Each item is a Coz latency transaction
// (COZ_BEGIN/COZ_END "item"), its work is one loop (line WORK), and each
// finished item is a Coz throughput progress point
// (COZ_PROGRESS_NAMED("item-done")); a second, unnamed point (COZ_PROGRESS)
// counts every 100th item.
//
// The right causal answer: WORK is practically all of the program's time, so
// speeding it up by s makes the items s faster, both in throughput (period of
// "item-done") and in latency ("item"): at s = 50 %, 50 %.
//
// Built without the profiler (or run under Coz itself) it behaves the same.
#include <coz.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>

namespace {

uint64_t handleItem(uint64_t item, uint64_t work) {
  COZ_BEGIN("item");
  for (volatile uint64_t x = 0; x < work; x++) { // WORK
  }
  COZ_END("item");
  return item * 3 + 1;
}

} // namespace

int main(int argc, char **argv) {
  long items = argc > 1 ? std::atol(argv[1]) : 1000;
  long work = argc > 2 ? std::atol(argv[2]) : 2000000;
  if (items < 0 || work < 0) {
    std::fprintf(stderr, "usage: coz-compat [ITEMS] [WORK_ITERATIONS]\n");
    return 2;
  }
  uint64_t checksum = 0;
  for (long i = 0; i < items; ++i) {
    checksum += handleItem(static_cast<uint64_t>(i), static_cast<uint64_t>(work));
    COZ_PROGRESS_NAMED("item-done");
    if (i % 100 == 99) {
      COZ_PROGRESS; // COZ-UNNAMED
    }
  }
  std::printf("coz-compat: %ld items, checksum %llu\n", items,
              static_cast<unsigned long long>(checksum));
  return 0;
}
