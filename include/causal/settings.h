//===- causal/settings.h - The table of causal/settings.def as C++ data ----===//
//
// The rows of settings.def as a constexpr array, for the runtime's parsing
// (runtime/Settings.cpp), `causal run` (tools/causal/Run.cpp) and the test
// that keeps the docs' table true. Data only: no library code, usable in
// the runtime (no libstdc++ at run time).
//
//===----------------------------------------------------------------------===//
#ifndef CAUSAL_SETTINGS_H
#define CAUSAL_SETTINGS_H

#include "causal/tunables.h"

namespace causal {

/// What a variable's value is and how it is read (settings.def says each).
enum class SettingKind : unsigned char {
  Flag,     ///< on when "1", "yes", "true", "on"
  Switch,   ///< on unless "0"
  Number,   ///< decimal in [min, max], a multiple of step, else the default
  Floor,    ///< decimal; below min: min
  Optional, ///< decimal in [min, max], else unset
  Choice,   ///< one of the '|'-separated words of arg, else the default
  Text,     ///< any text
  FileLine, ///< FILE:LINE
  Path,     ///< a file name, made absolute at start-up
};

/// One row of settings.def.
struct SettingInfo {
  const char *variable;
  SettingKind kind;
  unsigned long long number; ///< default of the numeric kinds
  const char *text;          ///< default of the text kinds ("": unset); null for numeric kinds
  unsigned long long min, max, step;
  const char *option; ///< `causal run` option, "" if none
  const char *alias;  ///< another name of the option, "" if none
  const char *arg;    ///< the option's argument, or the value an option without one sets
  const char *help;

  constexpr bool numeric() const {
    return kind == SettingKind::Flag || kind == SettingKind::Switch ||
           kind == SettingKind::Number || kind == SettingKind::Floor ||
           kind == SettingKind::Optional;
  }
  /// True for a Choice or a Text whose option may be given without a value
  /// (`--OPTION` alone sets the |min|-th '|'-separated word of |arg|).
  constexpr bool wordOptional() const {
    return (kind == SettingKind::Choice || kind == SettingKind::Text) && min != 0;
  }
  /// True for an option that takes no argument and sets |arg|.
  constexpr bool optionSetsValue() const {
    return kind == SettingKind::Flag || kind == SettingKind::Switch;
  }
};

/// Index of each row: Setting::OUTPUT, Setting::SAMPLE_PERIOD, ...
enum class Setting : unsigned {
#define CAUSAL_SETTING(ID, ...) ID,
#include "causal/settings.def"
#undef CAUSAL_SETTING
};

// The default column holds a number or a string depending on the kind.
#define CAUSAL_SETTING_DEFAULT_Flag(D) (unsigned long long)(D), nullptr
#define CAUSAL_SETTING_DEFAULT_Switch(D) (unsigned long long)(D), nullptr
#define CAUSAL_SETTING_DEFAULT_Number(D) (unsigned long long)(D), nullptr
#define CAUSAL_SETTING_DEFAULT_Floor(D) (unsigned long long)(D), nullptr
#define CAUSAL_SETTING_DEFAULT_Optional(D) (unsigned long long)(D), nullptr
#define CAUSAL_SETTING_DEFAULT_Choice(D) 0ull, D
#define CAUSAL_SETTING_DEFAULT_Text(D) 0ull, D
#define CAUSAL_SETTING_DEFAULT_FileLine(D) 0ull, D
#define CAUSAL_SETTING_DEFAULT_Path(D) 0ull, D

inline constexpr SettingInfo kSettings[] = {
#define CAUSAL_SETTING(ID, VARIABLE, KIND, DEFAULT, MIN, MAX, STEP, OPTION, ALIAS, ARG, HELP)      \
  {VARIABLE,                                                                                       \
   SettingKind::KIND,                                                                              \
   CAUSAL_SETTING_DEFAULT_##KIND(DEFAULT),                                                         \
   (unsigned long long)(MIN),                                                                      \
   (unsigned long long)(MAX),                                                                      \
   (unsigned long long)(STEP),                                                                     \
   OPTION,                                                                                         \
   ALIAS,                                                                                          \
   ARG,                                                                                            \
   HELP},
#include "causal/settings.def"
#undef CAUSAL_SETTING
};

#undef CAUSAL_SETTING_DEFAULT_Flag
#undef CAUSAL_SETTING_DEFAULT_Switch
#undef CAUSAL_SETTING_DEFAULT_Number
#undef CAUSAL_SETTING_DEFAULT_Floor
#undef CAUSAL_SETTING_DEFAULT_Optional
#undef CAUSAL_SETTING_DEFAULT_Choice
#undef CAUSAL_SETTING_DEFAULT_Text
#undef CAUSAL_SETTING_DEFAULT_FileLine
#undef CAUSAL_SETTING_DEFAULT_Path

inline constexpr unsigned kNumSettings = sizeof(kSettings) / sizeof(kSettings[0]);

constexpr const SettingInfo &settingInfo(Setting id) { return kSettings[unsigned(id)]; }

} // namespace causal

#endif // CAUSAL_SETTINGS_H
