//===- runtime/Settings.cpp - The CAUSAL_* variables, read once at start-up ===//

#include "Settings.h"

#include "Experiment.h"
#include "ExperimentPolicy.h"

#include "causal/waits_format.h"

#include <string.h>
#include <unistd.h>

namespace causal::rt {

namespace {

// "auto|perf|timer" -> "auto, perf, timer"; the word |value| is one of them?
bool isChoice(const char *words, const char *value, char *listed, size_t size) {
  bool found = false;
  size_t used = 0;
  for (const char *word = words; word;) {
    const char *bar = strchr(word, '|');
    size_t length = bar ? size_t(bar - word) : strlen(word);
    if (value && strlen(value) == length && !strncmp(word, value, length))
      found = true;
    used += formatTo(listed + used, size - used, "%s%.*s", used ? ", " : "", int(length), word);
    word = bar ? bar + 1 : nullptr;
  }
  return found;
}

SettingValue readNumber(const SettingInfo &row, const char *value) {
  SettingValue result;
  bool malformed = false;
  uint64_t number = envUnsigned(row.variable, row.number, &malformed);
  bool in_range = number >= row.min && (row.max == 0 || number <= row.max) &&
                  (row.step <= 1 || number % row.step == 0);
  switch (row.kind) {
  case SettingKind::Floor:
    if (malformed) {
      message("%s=%s is not a number; using %llu", row.variable, value, row.number);
      number = row.number;
    } else if (number < row.min) {
      message("%s=%s is below the minimum; using %llu", row.variable, value, row.min);
      number = row.min;
    }
    break;
  case SettingKind::Optional:
    if (malformed || !in_range) {
      message("%s=%s is not a number from %llu to %llu; ignored", row.variable, value, row.min,
              row.max);
      return result;
    }
    break;
  default: // Number
    if (malformed || !in_range) {
      if (row.step > 1)
        message("%s=%s is not a multiple of %llu from %llu to %llu; using %llu", row.variable,
                value, row.step, row.min, row.max, row.number);
      else
        message("%s=%s is not a number from %llu to %llu; using %llu", row.variable, value, row.min,
                row.max, row.number);
      number = row.number;
    }
    break;
  }
  result.set = true;
  result.number = number;
  return result;
}

} // namespace

SettingValue readSetting(Setting id) {
  const SettingInfo &row = settingInfo(id);
  const char *value = envString(row.variable);
  SettingValue result;
  switch (row.kind) {
  case SettingKind::Flag:
    result.number = envFlag(row.variable) ? 1 : row.number;
    result.set = value != nullptr;
    return result;
  case SettingKind::Switch:
    result.number = value ? strcmp(value, "0") != 0 : row.number;
    result.set = value != nullptr;
    return result;
  case SettingKind::Number:
  case SettingKind::Floor:
  case SettingKind::Optional:
    if (!value) {
      result.number = row.number;
      return result;
    }
    return readNumber(row, value);
  case SettingKind::Choice: {
    char listed[256];
    bool valid = isChoice(row.arg, value, listed, sizeof listed);
    if (value && !valid)
      message("%s=%s is not one of %s; using %s", row.variable, value, listed, row.text);
    result.set = valid;
    result.text = valid ? value : row.text;
    return result;
  }
  case SettingKind::Text:
  case SettingKind::FileLine:
  case SettingKind::Path:
    result.set = value != nullptr;
    result.text = value ? value : (row.text[0] ? row.text : nullptr);
    return result;
  }
  return result;
}

namespace {

void absolutePath(const char *path, char *out, size_t size) {
  if (path[0] == '/') {
    formatTo(out, size, "%s", path);
    return;
  }
  char cwd[PATH_MAX];
  if (getcwd(cwd, sizeof(cwd)))
    formatTo(out, size, "%s/%s", cwd, path);
  else
    formatTo(out, size, "%s", path);
}

void readRuntimeSettings(RuntimeConfig *c) {
  c->verbose = settingOn(Setting::VERBOSE);
  const char *sampler = readSetting(Setting::SAMPLER).text;
  c->requested = !strcmp(sampler, "perf")    ? SamplerKind::Perf
                 : !strcmp(sampler, "timer") ? SamplerKind::Timer
                                             : SamplerKind::None; // auto
  c->period_ns = readSetting(Setting::SAMPLE_PERIOD).number;
  SettingValue switch_cost = readSetting(Setting::PERF_SWITCH_COST);
  c->perf_switch_cost_ns = switch_cost.set ? int64_t(switch_cost.number) : -1;
  SettingValue sample_cost = readSetting(Setting::SAMPLE_COST);
  c->sample_cost_ns = sample_cost.set ? int64_t(sample_cost.number) : -1;
  SettingValue line_period = readSetting(Setting::LINE_SAMPLE_PERIOD);
  c->line_sample_period_ns = line_period.set ? int64_t(line_period.number) : -1;
  c->batch = uint32_t(readSetting(Setting::SAMPLE_BATCH).number);
  c->stack_copy_bytes = uint32_t(readSetting(Setting::STACK_COPY).number);
  absolutePath(readSetting(Setting::OUTPUT).text, c->output_path, sizeof(c->output_path));
  c->flush_seconds = readSetting(Setting::FLUSH_SECONDS).number;
  if (const char *log = readSetting(Setting::SAMPLE_LOG).text)
    absolutePath(log, c->sample_log_path, sizeof(c->sample_log_path));
  c->duration_seconds = readSetting(Setting::DURATION).number;
  if (const char *stop = readSetting(Setting::STOP_FILE).text)
    absolutePath(stop, c->stop_file, sizeof(c->stop_file));
  if ((c->duration_seconds || c->stop_file[0]) && settingOn(Setting::END_TO_END)) {
    // The end of the run is the progress point: a run cut short measures
    // nothing.
    message("%s and %s do not go with %s (the end of the run is the progress point); "
            "profiling lasts to the end",
            CAUSAL_ENV_DURATION, CAUSAL_ENV_STOP_FILE, CAUSAL_ENV_END_TO_END);
    c->duration_seconds = 0;
    c->stop_file[0] = 0;
  }
  c->paths_cpu_clock = settingOn(Setting::PATHS_CPU_CLOCK);
  c->paths_time_one_in = uint32_t(readSetting(Setting::PATHS_TIME_ONE_IN).number);
  c->paths_walk_one_in = uint32_t(readSetting(Setting::PATHS_WALK_ONE_IN).number);
  namespace wf = causal::waits_format;
  const char *waits = readSetting(Setting::WAITS).text;
  c->waits_classes = !strcmp(waits, "sync")  ? wf::kWaitSync
                     : !strcmp(waits, "io")  ? wf::kWaitIo
                     : !strcmp(waits, "all") ? wf::kWaitSync | wf::kWaitIo
                                             : 0; // off
}

void readExperimentSettings(ExperimentConfig *c) {
  c->enabled = settingOn(Setting::EXPERIMENTS);
  c->end_to_end = settingOn(Setting::END_TO_END);
  c->shared_cpus = settingOn(Setting::SHARED_CPUS);
  if (const char *fixed = readSetting(Setting::FIXED_LINE).text) {
    c->has_fixed_line = parseFixedLine(fixed, c->fixed_file, sizeof(c->fixed_file), &c->fixed_line);
    if (!c->has_fixed_line)
      message("%s=%s is not FILE:LINE; ignored", CAUSAL_ENV_FIXED_LINE, fixed);
  }
  c->wait_targets = settingOn(Setting::WAIT_EXPERIMENTS);
  if (const char *fixed = readSetting(Setting::FIXED_WAIT).text) {
    if (c->has_fixed_line) {
      message("%s and %s are both set: the experiments select the line", CAUSAL_ENV_FIXED_LINE,
              CAUSAL_ENV_FIXED_WAIT);
    } else if (parseFixedWait(fixed, c->fixed_file, sizeof(c->fixed_file), &c->fixed_line,
                              &c->fixed_wait_kind)) {
      c->has_fixed_line = true;
      c->fixed_is_wait = true;
      c->wait_targets = true;
    } else {
      message("%s=%s is not FILE:LINE or FILE:LINE@KIND (KIND: timer, disk, network, other); "
              "ignored",
              CAUSAL_ENV_FIXED_WAIT, fixed);
    }
  }
  // Calling contexts (Paths.h): a fixed one goes with a fixed line only.
  if (const char *caller = readSetting(Setting::FIXED_PATH).text) {
    if (!c->has_fixed_line || c->fixed_is_wait)
      message("%s=%s needs %s (the line whose samples it qualifies); ignored",
              CAUSAL_ENV_FIXED_PATH, caller, CAUSAL_ENV_FIXED_LINE);
    else if (strlen(caller) >= sizeof(c->fixed_path))
      message("%s: a caller of %zu bytes or more; ignored", CAUSAL_ENV_FIXED_PATH,
              sizeof(c->fixed_path));
    else
      formatTo(c->fixed_path, sizeof(c->fixed_path), "%s", caller);
  }
  c->path_experiments = settingOn(Setting::PATH_EXPERIMENTS);
  if (c->path_experiments && c->has_fixed_line) {
    message("%s goes with free runs, not with %s; ignored", CAUSAL_ENV_PATH_EXPERIMENTS,
            c->fixed_is_wait ? CAUSAL_ENV_FIXED_WAIT : CAUSAL_ENV_FIXED_LINE);
    c->path_experiments = false;
  }
  SettingValue speedup = readSetting(Setting::FIXED_SPEEDUP);
  if (speedup.set && speedup.number % (100 / CAUSAL_SPEEDUP_DIVISIONS) != 0)
    message("%s=%llu: speedups are drawn in steps of %u %%; using %llu %% as given",
            CAUSAL_ENV_FIXED_SPEEDUP, (unsigned long long)speedup.number,
            100 / CAUSAL_SPEEDUP_DIVISIONS, (unsigned long long)speedup.number);
  c->fixed_speedup_percent = speedup.set ? int(speedup.number) : -1;
  SettingValue ab = readSetting(Setting::AB_SPEEDUP);
  c->ab_speedup_percent = ab.set ? int(ab.number) : -1;
  SettingValue seed = readSetting(Setting::SEED);
  c->seed = seed.set ? seed.number : realtimeNs() ^ (uint64_t(getpid()) << 32);
  c->min_length_ns = readSetting(Setting::EXPERIMENT_NS).number;
  c->cooloff_ns = readSetting(Setting::COOLOFF_NS).number;
  if (const char *scope = readSetting(Setting::SCOPE).text)
    formatTo(c->scope, sizeof(c->scope), "%s", scope);
  if (const char *scope = readSetting(Setting::BINARY_SCOPE).text)
    formatTo(c->binary_scope, sizeof(c->binary_scope), "%s", scope);
}

} // namespace

void readSettings(RuntimeConfig *runtime, ExperimentConfig *experiments) {
  readRuntimeSettings(runtime);
  readExperimentSettings(experiments);
  // Experiments on waits learn of waits from their recording.
  if (experiments->wait_targets)
    runtime->waits_classes |= causal::waits_format::kWaitIo;
}

} // namespace causal::rt
