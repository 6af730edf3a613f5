//===- LineName.cpp - What a line's name in the profile says --------------===//
#include "LineName.h"

#include "causal/profile_schema.h"

#include <tuple>

namespace causal::profile {

namespace {

constexpr std::string_view kWaitEnd = " wait)";
constexpr std::string_view kViaStart = " (via ";

/// FILE:LINE split at its last colon; false unless FILE is not empty and
/// LINE is 1 to 2^32 - 1 in decimal digits only.
bool splitLocation(std::string_view location, std::string_view &file, uint32_t &line) {
  size_t colon = location.rfind(':');
  if (colon == std::string_view::npos || colon == 0 || colon + 1 >= location.size() ||
      location.size() - colon - 1 > 10)
    return false;
  uint64_t value = 0;
  for (size_t i = colon + 1; i < location.size(); ++i) {
    char c = location[i];
    if (c < '0' || c > '9')
      return false;
    value = value * 10 + uint64_t(c - '0');
  }
  if (value == 0 || value > UINT32_MAX)
    return false;
  file = location.substr(0, colon);
  line = uint32_t(value);
  return true;
}

} // namespace

const char *waitTargetKindName(WaitTargetKind kind) {
  unsigned index = unsigned(kind);
  return index > 0 && index < profile_schema::kWaitTargetKindCount
             ? profile_schema::kWaitTargetKinds[index]
             : "";
}

bool parseWaitTargetKind(std::string_view word, WaitTargetKind &kind) {
  for (unsigned k = 1; k < profile_schema::kWaitTargetKindCount; ++k)
    if (word == profile_schema::kWaitTargetKinds[k]) {
      kind = WaitTargetKind(k);
      return true;
    }
  return false;
}

std::string LineName::location() const {
  return valid ? file + ":" + std::to_string(line) : std::string();
}

namespace {

/// FILE:LINE or FILE:LINE (KIND wait) into \p result; false for any other
/// name.
bool splitWaitOrLine(std::string_view name, LineName &result) {
  std::string_view location = name;
  WaitTargetKind wait = WaitTargetKind::None;
  // A wait target: "FILE:LINE (KIND wait)". Anything else that ends in a
  // parenthesis is no FILE:LINE either (a CPU line ends in its number).
  if (name.size() >= kWaitEnd.size() &&
      name.compare(name.size() - kWaitEnd.size(), kWaitEnd.size(), kWaitEnd) == 0) {
    size_t wordEnd = name.size() - kWaitEnd.size();
    size_t open = name.rfind(" (", wordEnd);
    if (open == std::string_view::npos || open + 2 > wordEnd)
      return false;
    std::string_view word = name.substr(open + 2, wordEnd - open - 2);
    if (!parseWaitTargetKind(word, wait))
      return false;
    location = name.substr(0, open);
  }
  std::string_view file;
  uint32_t line = 0;
  if (!splitLocation(location, file, line))
    return false;
  result.valid = true;
  result.file = std::string(file);
  result.line = line;
  result.wait = wait;
  return true;
}

/// FILE:LINE (via CALLER) into \p result; false for any other name. The
/// suffix starts at the first " (via " after a valid FILE:LINE, so that the
/// caller may hold anything but a tab or a newline, " (via " included.
bool splitPathName(std::string_view name, LineName &result) {
  if (name.empty() || name.back() != ')')
    return false;
  for (size_t at = name.find(kViaStart); at != std::string_view::npos;
       at = name.find(kViaStart, at + 1)) {
    std::string_view file;
    uint32_t line = 0;
    if (!splitLocation(name.substr(0, at), file, line))
      continue;
    size_t begin = at + kViaStart.size();
    if (begin + 1 >= name.size()) // "FILE:LINE (via )": no caller
      return false;
    std::string_view caller = name.substr(begin, name.size() - 1 - begin);
    if (caller.find_first_of("\t\n") != std::string_view::npos)
      return false;
    result.valid = true;
    result.file = std::string(file);
    result.line = line;
    result.caller = std::string(caller);
    return true;
  }
  return false;
}

} // namespace

LineName splitLineName(std::string_view name) {
  LineName result;
  if (splitWaitOrLine(name, result) || splitPathName(name, result))
    return result;
  return LineName();
}

std::string waitTargetName(std::string_view location, WaitTargetKind kind) {
  std::string name(location);
  if (kind != WaitTargetKind::None)
    name += std::string(" (") + waitTargetKindName(kind) + " wait)";
  return name;
}

std::string pathLineName(std::string_view location, std::string_view caller) {
  std::string name(location);
  if (!caller.empty())
    name += std::string(kViaStart) + std::string(caller) + ")";
  return name;
}

bool lineNameLess(std::string_view a, std::string_view b) {
  LineName x = splitLineName(a), y = splitLineName(b);
  // The line itself (no caller, no wait), its callers, its waits.
  auto group = [](const LineName &n) { return n.isWait() ? 2 : n.isPath() ? 1 : 0; };
  return std::make_tuple(!x.valid, std::string_view(x.file), x.line, group(x), int(x.wait),
                         std::string_view(x.caller),
                         a) < std::make_tuple(!y.valid, std::string_view(y.file), y.line, group(y),
                                              int(y.wait), std::string_view(y.caller), b);
}

} // namespace causal::profile
