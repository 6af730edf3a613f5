//===- runtime/Settings.h - The CAUSAL_* variables, read once at start-up --===//
//
// Every environment variable the runtime reads is a row of
// causal/settings.def; readSetting() reads one as its row says (kind,
// default, limits) and says once on stderr what is wrong with a value and
// what is used instead. readSettings() turns them into the configurations
// the other parts are given (RuntimeConfig here, ExperimentConfig in
// Experiment.h). Nothing else in the runtime calls getenv.
//
//===----------------------------------------------------------------------===//
#ifndef CAUSAL_RUNTIME_SETTINGS_H
#define CAUSAL_RUNTIME_SETTINGS_H

#include "ThreadState.h"

#include "causal/settings.h"

#include <limits.h>
#include <stdint.h>

namespace causal::rt {

struct ExperimentConfig;

/// What the process-wide parts use: the sampler's settings and the outputs.
struct RuntimeConfig {
  bool verbose = false;
  SamplerKind requested = SamplerKind::None; ///< None = auto
  uint64_t period_ns = 0;
  int64_t perf_switch_cost_ns = -1;   ///< CAUSAL_PERF_SWITCH_COST_NS (-1: measure it)
  int64_t sample_cost_ns = -1;        ///< CAUSAL_SAMPLE_COST_NS (-1: measure it; 0: off)
  int64_t line_sample_period_ns = -1; ///< CAUSAL_LINE_SAMPLE_PERIOD_NS (-1: auto; 0: off)
  uint32_t batch = 0;
  uint32_t stack_copy_bytes = 0;
  char output_path[PATH_MAX] = {};
  char sample_log_path[PATH_MAX] = {}; ///< empty: no sample log
  uint64_t flush_seconds = 0;          ///< the periodic flush's period (0: off)
  uint32_t waits_classes = 0;          ///< --waits: waits_format::WaitClass bits (0: off)
  uint64_t duration_seconds = 0;       ///< profiling ends after this long (0: at the end)
  char stop_file[PATH_MAX] = {};       ///< profiling ends once this file exists (empty: none)
  bool paths_cpu_clock = false;        ///< --paths-cpu-clock (CAUSAL_PATHS itself: Paths.cpp)
  uint32_t paths_time_one_in = 1;      ///< --paths-time-one-in
  uint32_t paths_walk_one_in = 0;      ///< --paths-walk-one-in (0: auto)
};

/// A variable's value as its kind reads it. Flag, Switch: |number| 0 or 1;
/// Number, Floor: |number|; Optional: |number| when |set|; Choice: |text| is
/// one of the words; Text, FileLine, Path: |text|, null when unset.
struct SettingValue {
  bool set = false; ///< the variable held a valid value (not the default)
  uint64_t number = 0;
  const char *text = nullptr;
};

/// Reads one variable (says once what is wrong with its value). Not
/// signal-safe; the text points into the environment or the table.
SettingValue readSetting(Setting id);

/// A Flag or Switch variable: on or off.
inline bool settingOn(Setting id) { return readSetting(id).number != 0; }

/// Reads every variable into |runtime| and |experiments|.
void readSettings(RuntimeConfig *runtime, ExperimentConfig *experiments);

} // namespace causal::rt

#endif // CAUSAL_RUNTIME_SETTINGS_H
