//===- runtime/Runtime.cpp - Start-up and registration ---------------------===//
//
// libcausal_rt's life cycle, one room each:
//   * start-up (here): the constructor reads the settings (Settings.cpp;
//     CAUSAL_DISABLE=1: do nothing at all), gives the sampler and the
//     experiments what they need, installs the handlers and starts sampling
//     the main thread;
//   * registration (here): __causal_register_module / _unregister_module and
//     __causal_register_counters, called by each instrumented image's
//     constructor/destructor (possibly before the runtime's own constructor);
//     __causal_register_path_fns too (Paths.cpp, with the paths' collection);
//   * threads (Threads.cpp): every new thread samples itself from its first
//     instruction of user code until it ends;
//   * fork (Fork.cpp): the child re-arms sampling for its one thread and
//     writes its own records;
//   * process end and signals (ProcessEnd.cpp): the profile block is
//     appended once (exit, _exit, quick_exit, exec, terminating signals);
//   * Coz's entry points (CozApi.cpp).
// The hooks of pthread_create, _exit, _Exit, quick_exit and exec
// (runtime/hooks/) call into Threads.cpp and ProcessEnd.cpp (Lifecycle.h).
//
//===----------------------------------------------------------------------===//

#include "Runtime.h"
#include "Attribution.h"
#include "Experiment.h"
#include "Lifecycle.h"
#include "Paths.h"
#include "PathsControl.h"
#include "Sampler.h"
#include "Waits.h"

#include "causal/abi.h"
#include "causal/tunables.h"

#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

// Bounds of the section holding callThreadStart (defined by the linker).
extern "C" const char __start_causal_rt_entry[] CAUSAL_RT_HIDDEN;
extern "C" const char __stop_causal_rt_entry[] CAUSAL_RT_HIDDEN;
// Bounds of the sync-call wrappers (SyncHooks.cpp).
extern "C" const char __start_causal_rt_forward[] CAUSAL_RT_HIDDEN;
extern "C" const char __stop_causal_rt_forward[] CAUSAL_RT_HIDDEN;

namespace causal::rt {

std::atomic<uint32_t> g_status{kUninitialized};
RuntimeConfig g_config;
ModuleRegistry g_modules;
ThreadRegistry g_threads;
SampleLog g_sample_log;

namespace {

constexpr uint32_t kInitializing = 3;

// The experiments' settings and what else they are given (setupExperiments).
ExperimentSetup g_experiment_setup;

// ---- Start-up ---------------------------------------------------------------

bool disabledByEnvironment() { return settingOn(Setting::DISABLE); }

// Where the runtime's code, the thread entry and the sync-call wrappers
// are, for telling samples in them apart; loads libunwind.
void startAttribution() {
  AttributionSetup setup;
  setup.registry = &g_modules;
  setup.max_frames = CAUSAL_MAX_CALLCHAIN;
  setup.stack_bytes = g_config.stack_copy_bytes;
#ifndef CAUSAL_RT_STATIC
  // The whole executable segment of libcausal_rt.so is profiler code.
  setup.runtime_code = executableRangeOf(reinterpret_cast<const void *>(&startAttribution));
#endif
  setup.thread_entry.begin = reinterpret_cast<uintptr_t>(__start_causal_rt_entry);
  setup.thread_entry.end = reinterpret_cast<uintptr_t>(__stop_causal_rt_entry);
  setup.forwarding_code.begin = reinterpret_cast<uintptr_t>(__start_causal_rt_forward);
  setup.forwarding_code.end = reinterpret_cast<uintptr_t>(__stop_causal_rt_forward);
  // libunwind keeps a pipe open (it validates memory through it): out of
  // the program's low descriptor numbers, like every descriptor the runtime
  // keeps; not at all under a descriptor limit that leaves no room.
  struct Init {
    AttributionSetup *setup;
    const char *problem = nullptr;
    bool ok = false;
  } init{&setup};
  if (!openAboveDescriptorFloor(
          2, // libunwind's pipe
          [](void *raw) {
            auto *i = static_cast<Init *>(raw);
            i->ok = initUnwinding(*i->setup, &i->problem);
          },
          &init)) {
    setup.load_unwinder = false;
    initUnwinding(setup, &init.problem);
    init.problem = "the descriptor limit leaves the profiler no descriptor for its pipe";
  }
  const char *unwind_problem = init.problem;
  if (!init.ok)
    message("cannot use libunwind (%s): samples in uninstrumented code are charged using the "
            "frame-pointer chain only, which skips the caller of a frameless function",
            unwind_problem ? unwind_problem : "unknown error");
}

void giveSamplerItsSetup() {
  SamplerSetup sampler;
  sampler.requested = g_config.requested;
  sampler.period_ns = g_config.period_ns;
  sampler.perf_switch_cost_ns = g_config.perf_switch_cost_ns;
  sampler.sample_cost_ns = g_config.sample_cost_ns;
  sampler.line_sample_period_ns = g_config.line_sample_period_ns;
  sampler.batch = g_config.batch;
  sampler.verbose = g_config.verbose;
  sampler.experiments = g_experiment_setup.config.enabled;
  sampler.modules = &g_modules;
  sampler.sample_log = &g_sample_log;
  sampler.write_profile_if_due = writeProfileIfDue;
  setupSampler(sampler);
}

void giveExperimentsTheirSetup() {
  g_experiment_setup.modules = &g_modules;
  g_experiment_setup.threads = &g_threads;
  g_experiment_setup.period_ns = g_config.period_ns;
  g_experiment_setup.batch = g_config.batch;
  g_experiment_setup.verbose = g_config.verbose;
  g_experiment_setup.write_profile_if_due = writeProfileIfDue;
  g_experiment_setup.bounded = profilingBounded();
  g_experiment_setup.profiling_should_end = profilingShouldEnd;
  g_experiment_setup.end_profiling = endProfilingEarly;
  setupExperiments(g_experiment_setup);
}

// Experiments per calling context (Paths.h): the paths give each record its
// context, which the handler reads at each sample's own signal. The batch of
// 1 (from when samples were read from a ring in batches) keeps the
// end-of-experiment drain these experiments were measured with.
void setupContextsOfExperiments() {
  const ExperimentConfig &c = g_experiment_setup.config;
  if (!c.enabled || (!c.fixed_path[0] && !c.path_experiments))
    return;
  setupPathContexts(c.fixed_path[0] ? PathContextMode::Fixed : PathContextMode::Callers,
                    c.fixed_path);
  g_config.batch = 1;
}

void initialize() {
  uint32_t expected = kUninitialized;
  if (!g_status.compare_exchange_strong(expected, kInitializing))
    return;
  if (disabledByEnvironment()) {
    g_status.store(kInert, std::memory_order_release);
    return;
  }
  startProfileClock();
  readSettings(&g_config, &g_experiment_setup.config);
  setupWaits(g_config.output_path, g_config.waits_classes);
  setupContextsOfExperiments();
  setupPaths(g_config.output_path, g_config.paths_cpu_clock, g_config.paths_time_one_in,
             g_config.paths_walk_one_in);
  registerExitWriter();

  startAttribution();

  if (g_config.sample_log_path[0] && !g_sample_log.init(CAUSAL_SAMPLE_LOG_SLOTS))
    message("cannot allocate the sample log table; %s will not be written",
            g_config.sample_log_path);

  if (!setupThreads()) {
    message("cannot create a thread-specific key; profiling is off");
    g_status.store(kInert, std::memory_order_release);
    return;
  }
  installForkHandlers();
  giveSamplerItsSetup();
  if (int error = installSampleHandler()) {
    message("cannot install the sample signal handler: %s; profiling is off", strerror(error));
    g_status.store(kInert, std::memory_order_release);
    return;
  }
  installFatalSignalHandlers();
  startProfileParts();
  giveExperimentsTheirSetup();
  g_status.store(kActive, std::memory_order_release);
  beginThread(true, 0, 0);
  waitsThreadBegins(tls_thread, 0, 0);
  pathsControlFunctionsRegistered(); // those registered before: live control (PathsControl.h)
  startExperiments();
  if (g_config.verbose)
    message("sampler: %s, period %llu ns, batch %u, unwinding reads %u bytes of stack; a "
            "context switch costs a perf-sampled thread %llu ns; profile: %s",
            processSamplerName(), (unsigned long long)g_config.period_ns, g_config.batch,
            g_config.stack_copy_bytes, (unsigned long long)perfSwitchCostNs(),
            g_config.output_path);
}

__attribute__((constructor(101))) void runtimeConstructor() { initialize(); }

// ---- Module registration messages -------------------------------------------

// Images already complained about (by load base), so each is named once.
constexpr unsigned kComplaintSlots = 64;
uintptr_t g_complained[kComplaintSlots];
std::atomic<unsigned> g_complaints{0};

void complainOnce(const void *where, const char *problem) {
  Dl_info info;
  uintptr_t base = 0;
  if (where && dladdr(where, &info))
    base = reinterpret_cast<uintptr_t>(info.dli_fbase);
  unsigned seen = g_complaints.load();
  for (unsigned i = 0; i < seen && i < kComplaintSlots; ++i)
    if (g_complained[i] == base)
      return;
  unsigned index = g_complaints.fetch_add(1);
  if (index < kComplaintSlots)
    g_complained[index] = base;
  char path[PATH_MAX];
  imagePathOf(where, path, sizeof(path));
  message("%s: %s; its code is not profiled", path[0] ? path : "<unknown image>", problem);
}

// [lowest, highest) address of the loaded segments of the image holding
// |address|; empty if none.
AddressRange imageRangeOf(const void *address) {
  struct Search {
    uintptr_t address;
    AddressRange range;
  } search{reinterpret_cast<uintptr_t>(address), {}};
  dl_iterate_phdr(
      [](struct dl_phdr_info *info, size_t, void *data) -> int {
        auto *s = static_cast<Search *>(data);
        uintptr_t low = UINTPTR_MAX, high = 0;
        for (int i = 0; i < info->dlpi_phnum; ++i) {
          const ElfW(Phdr) &ph = info->dlpi_phdr[i];
          if (ph.p_type != PT_LOAD)
            continue;
          uintptr_t begin = info->dlpi_addr + ph.p_vaddr;
          low = begin < low ? begin : low;
          high = begin + ph.p_memsz > high ? begin + ph.p_memsz : high;
        }
        if (s->address >= low && s->address < high) {
          s->range.begin = low;
          s->range.end = high;
          return 1;
        }
        return 0;
      },
      &search);
  return search.range;
}

} // namespace

void sayGracePeriodGivenUp(const char *what) {
  static std::atomic<bool> said{false};
  if (!said.exchange(true))
    message("a sample handler or a call path entry of the profiler never finished (the program's "
            "signal handler may have left it with siglongjmp): %s without waiting for it after "
            "%.1f s",
            what, double(CAUSAL_GRACE_PERIOD_WAIT_NS) / 1e9);
}

} // namespace causal::rt

using namespace causal::rt;

// ---- Interposers ------------------------------------------------------------

extern "C" CAUSAL_RT_EXPORT void __causal_register_module(const void *start, const void *stop) {
  uint32_t status = g_status.load(std::memory_order_acquire);
  if (status == kInert || (status == kUninitialized && disabledByEnvironment()))
    return;
  const void *caller = __builtin_return_address(0);
  using Result = ModuleRegistry::RegisterResult;
  Result result = g_modules.registerModule(start, stop, nullptr);
  switch (result) {
  case Result::Registered:
    if (settingOn(causal::Setting::VERBOSE)) {
      uint32_t slot = g_modules.slotsUsed() - 1;
      const causal_linetab_header *table = g_modules.table(slot);
      if (table)
        message("module %s: %u lines, %u rows, %u files, load bias 0x%llx", g_modules.path(slot),
                table->num_lines, table->num_rows, table->num_files,
                (unsigned long long)g_modules.bias(slot));
    }
    break;
  case Result::Reloaded: // its slot and counts, kept since it was unloaded
  case Result::AlreadyRegistered:
    break;
  case Result::NoTable:
    complainOnce(caller, "no causal line table (linked without causal-ld?)");
    break;
  case Result::InvalidTable:
    complainOnce(start, "the causal line table is invalid (corrupt, or written by another "
                        "version of causal)");
    break;
  case Result::Full:
    complainOnce(start, "too many instrumented images (CAUSAL_MAX_MODULES)");
    break;
  case Result::OutOfMemory:
    complainOnce(start, "out of memory for the sample counters");
    break;
  }
}

extern "C" CAUSAL_RT_EXPORT void __causal_unregister_module(const void *start) {
  waitsBeforeUnload(); // their lines resolve while the table is there
  AddressRange image = imageRangeOf(start ? start : __builtin_return_address(0));
  pathsBeforeUnload(image); // the same for the frames of the call paths
  bool gave_up = false;
  if (g_modules.unregisterModule(start, &gave_up))
    flushUnwindCache(); // cached unwind rules of the unloaded code are stale
  // Progress counters of the image are about to be unmapped: keep their
  // values, stop reading them.
  if (image.end > image.begin && !g_progress.retireRange(image.begin, image.end))
    gave_up = true;
  if (gave_up)
    sayGracePeriodGivenUp("the image is unloaded");
}

// ---- Progress points ------------------------------------------------------

extern "C" CAUSAL_RT_EXPORT void __causal_register_counters(struct causal_counter *start,
                                                            struct causal_counter *stop) {
  if (g_status.load(std::memory_order_acquire) == kInert)
    return;
  if (g_progress.registerCounters(start, stop))
    startExperiments(); // the first progress point starts the profiler thread
}
