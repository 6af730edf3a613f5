//===- LineName.h - What a line's name in the profile says ----------------===//
//
// An experiment's `selected=` (and every line the analysis keys by it) is
// either a CPU line, FILE:LINE, or a wait target, FILE:LINE (KIND wait): the
// call site of a blocking call and the kind of pseudo-thread that ended its
// waits (docs/report.md, "Wait targets"). The whole string stays the line's
// name (Coz's viewer keys by it, so a wait's curve stays apart from the CPU
// curve of the same source line); this is the one place that takes it apart.
// Every tool that needs a file, a line number or the kind of wait asks here.
//
//===----------------------------------------------------------------------===//
#ifndef CAUSAL_PROFILE_LINENAME_H
#define CAUSAL_PROFILE_LINENAME_H

#include <cstdint>
#include <string>
#include <string_view>

namespace causal::profile {

/// The kind of wait a wait target names; None: a CPU line. Numbered as
/// causal/profile_schema.h's kWaitTargetKinds.
enum class WaitTargetKind { None, Timer, Disk, Network, Other };

/// "timer", "disk", "network", "other"; "" for None.
const char *waitTargetKindName(WaitTargetKind kind);
/// The kind a word names ("timer", ...); false for any other word (and "").
bool parseWaitTargetKind(std::string_view word, WaitTargetKind &kind);

struct LineName {
  /// FILE:LINE with a line number from 1 to 2^32 - 1 and, for a wait target,
  /// a known KIND. A name that is not (a wait suffix of an unknown kind, no
  /// colon, no number, a number out of range) is invalid: file empty, line
  /// 0, wait None. Tools then show the name as it is and read no source
  /// line for it, and `causal confirm` does not re-run it.
  bool valid = false;
  std::string file;
  uint32_t line = 0;
  WaitTargetKind wait = WaitTargetKind::None;

  bool isWait() const { return wait != WaitTargetKind::None; }
  /// FILE:LINE: the CPU line itself, or the call site of a wait; "" when
  /// invalid. The key of the profile's `samples` records.
  std::string location() const;
};

/// Splits a line's name. Never fails: an invalid name gives an invalid
/// LineName. The file may hold spaces, colons and parentheses; only the
/// last ':' (before a wait's suffix) ends it.
LineName splitLineName(std::string_view name);

/// "FILE:LINE (KIND wait)" for a location and a kind; \p location itself
/// for None.
std::string waitTargetName(std::string_view location, WaitTargetKind kind);

/// Names order by file, then line number ("f.c:12" before "f.c:100"), then
/// the CPU line before its waits (timer, disk, network, other); invalid
/// names after valid ones, by their text.
bool lineNameLess(std::string_view a, std::string_view b);

} // namespace causal::profile

#endif
