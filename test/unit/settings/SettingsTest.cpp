//===- SettingsTest.cpp - The settings table, the docs and the runtime -----===//
//
// include/causal/settings.def is the one list of the runtime's environment
// variables. These tests keep what is written elsewhere from drifting: the
// table in docs/usage.md is the one the rows make (on failure the expected
// table is printed, ready to paste), and the runtime reads the environment
// only through runtime/Settings.cpp.
//
//===----------------------------------------------------------------------===//

#include "causal/settings.h"

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>

namespace {

using causal::kSettings;
using causal::SettingInfo;
using causal::SettingKind;

std::string readFile(const std::filesystem::path &path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string code(const std::string &text) {
  std::string escaped; // a '|' would end the table cell
  for (char c : text)
    escaped += c == '|' ? std::string("\\|") : std::string(1, c);
  return "`" + escaped + "`";
}

std::string defaultCell(const SettingInfo &s) {
  switch (s.kind) {
  case SettingKind::Flag:
    return s.number ? "on" : "off";
  case SettingKind::Switch:
    return s.number ? "on" : "off";
  case SettingKind::Number:
  case SettingKind::Floor:
    return std::to_string(s.number);
  case SettingKind::Optional:
    return "unset";
  default:
    return s.text[0] ? code(s.text) : "unset";
  }
}

// The docs' table, from the rows.
std::string markdownTable() {
  std::string table = "| option | environment | default | meaning |\n|---|---|---|---|\n";
  for (const SettingInfo &s : kSettings) {
    std::string option;
    if (s.option[0])
      option = s.optionSetsValue() ? code(s.option)
               : s.wordOptional()  ? code(std::string(s.option) + "[=" + s.arg + "]")
                                   : code(std::string(s.option) + " " + s.arg);
    if (s.alias[0])
      option += ", " + code(s.alias);
    std::string variable = s.variable;
    if (s.optionSetsValue() || !s.option[0])
      variable += std::string("=") + s.arg;
    table +=
        "| " + option + " | " + code(variable) + " | " + defaultCell(s) + " | " + s.help + " |\n";
  }
  return table;
}

TEST(Settings, RowsAreConsistent) {
  for (const SettingInfo &s : kSettings) {
    SCOPED_TRACE(s.variable);
    EXPECT_EQ(std::strncmp(s.variable, "CAUSAL_", 7), 0);
    EXPECT_EQ(std::strchr(s.help, '|'), nullptr) << "a '|' in the help breaks the docs' table";
    EXPECT_TRUE(!s.option[0] || !std::strncmp(s.option, "--", 2));
    EXPECT_EQ(s.text == nullptr, s.numeric());
    switch (s.kind) {
    case SettingKind::Flag:
      EXPECT_EQ(s.number, 0u);
      break;
    case SettingKind::Switch:
      EXPECT_EQ(s.number, 1u);
      break;
    case SettingKind::Number:
      EXPECT_GE(s.number, s.min);
      EXPECT_LE(s.number, s.max);
      EXPECT_EQ(s.number % s.step, 0u);
      break;
    case SettingKind::Floor:
      EXPECT_GE(s.number, s.min);
      break;
    case SettingKind::Choice: {
      unsigned long long words = 1;
      for (const char *c = s.arg; *c; ++c)
        words += *c == '|';
      EXPECT_LE(s.min, words) << "the word the option alone sets is not one of the choices";
      EXPECT_NE(("|" + std::string(s.arg) + "|").find("|" + std::string(s.text) + "|"),
                std::string::npos)
          << "the default is not one of the choices";
      break;
    }
    case SettingKind::Text:
      if (s.min != 0) { // `--OPTION` alone sets the min-th word of ARG
        unsigned long long words = 1;
        for (const char *c = s.arg; *c; ++c)
          words += *c == '|';
        EXPECT_LE(s.min, words) << "the text the option alone sets is not a word of its ARG";
      }
      break;
    default:
      break;
    }
  }
}

TEST(Settings, EachHasItsConstant) {
  EXPECT_STREQ(CAUSAL_ENV_OUTPUT, "CAUSAL_OUTPUT");
  EXPECT_STREQ(CAUSAL_ENV_SAMPLE_PERIOD, "CAUSAL_SAMPLE_PERIOD_NS");
  EXPECT_STREQ(CAUSAL_ENV_DISABLE, "CAUSAL_DISABLE");
  EXPECT_STREQ(causal::settingInfo(causal::Setting::STACK_COPY).variable,
               "CAUSAL_STACK_COPY_BYTES");
}

TEST(Settings, DocsHoldTheTable) {
  std::string docs = readFile(std::filesystem::path(CAUSAL_SOURCE_DIR) / "docs" / "usage.md");
  ASSERT_FALSE(docs.empty());
  std::string table = markdownTable();
  EXPECT_NE(docs.find(table), std::string::npos)
      << "docs/usage.md does not hold the settings table of include/causal/settings.def; it "
         "should be:\n\n"
      << table;
  // Every variable named in the docs is a row (no variable the runtime
  // does not read).
  for (const char *name : {"usage.md", "runtime.md"}) {
    std::string text = readFile(std::filesystem::path(CAUSAL_SOURCE_DIR) / "docs" / name);
    std::regex variable("`(CAUSAL_[A-Z_]+)(=[^`]*)?`");
    for (std::sregex_iterator it(text.begin(), text.end(), variable), end; it != end; ++it) {
      std::string found = (*it)[1];
      bool known = false;
      for (const SettingInfo &s : kSettings)
        known |= found == s.variable;
      // Compile-time tunables (causal/tunables.h) and the macros of
      // causal/causal.h and abi.h are named in the docs too.
      bool environment_like = (*it)[2].matched;
      if (environment_like)
        EXPECT_TRUE(known) << name << " sets " << found << ", which no row of settings.def reads";
    }
  }
}

TEST(Settings, RuntimeReadsTheEnvironmentOnlyThroughTheTable) {
  std::filesystem::path runtime = std::filesystem::path(CAUSAL_SOURCE_DIR) / "runtime";
  std::regex reader(R"(\b(getenv|secure_getenv|envString|envUnsigned|envFlag)\s*\()");
  for (const auto &entry : std::filesystem::recursive_directory_iterator(runtime)) {
    std::string file = entry.path().filename().string();
    if (!entry.is_regular_file() || file == "Settings.cpp" || file == "Support.cpp" ||
        file == "Support.h")
      continue;
    std::string text = readFile(entry.path());
    EXPECT_FALSE(std::regex_search(text, reader))
        << entry.path() << " reads the environment: read a row of settings.def instead "
        << "(runtime/Settings.h)";
  }
}

} // namespace
