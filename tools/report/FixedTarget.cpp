//===- FixedTarget.cpp - The run settings that select one line ------------===//
//
// What `causal confirm` sets for a run whose experiments all select one of
// the ranking's lines: the line, the wait target, or the line in one
// calling context (docs/report.md, "Wait targets", "Per calling context").
//
//===----------------------------------------------------------------------===//
#include "Report.h"

#include "causal/settings.h"

#include <cstring>

namespace causal::report {

const char *pathSettingVariable() {
  for (const SettingInfo &setting : kSettings)
    if (std::strcmp(setting.option, "--path") == 0)
      return setting.variable;
  return nullptr;
}

bool fixedTargetSettings(const std::string &line, const char *pathVariable, Settings &settings,
                         std::string &problem) {
  settings.clear();
  profile::LineName split = profile::splitLineName(line);
  if (!split.valid) {
    problem = "its name is neither FILE:LINE, FILE:LINE (KIND wait) nor FILE:LINE (via CALLER), "
              "so no run can select it";
    return false;
  }
  if (split.isWait()) {
    settings.push_back(
        {CAUSAL_ENV_FIXED_WAIT, split.location() + "@" + profile::waitTargetKindName(split.wait)});
    return true;
  }
  if (split.isPath()) {
    if (!pathVariable || !*pathVariable) {
      problem = "a line in one calling context, and this causal has no `causal run --path` to "
                "select it";
      return false;
    }
    settings.push_back({CAUSAL_ENV_FIXED_LINE, split.location()});
    settings.push_back({pathVariable, split.caller});
    return true;
  }
  settings.push_back({CAUSAL_ENV_FIXED_LINE, line});
  return true;
}

bool fixedTargetSettings(const std::string &line, Settings &settings, std::string &problem) {
  return fixedTargetSettings(line, pathSettingVariable(), settings, problem);
}

} // namespace causal::report
