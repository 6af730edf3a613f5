//===- LineName.h - What a line's name in the profile says ----------------===//
//
// An experiment's `selected=` (and every line the analysis keys by it) is
// a CPU line, FILE:LINE; a wait target, FILE:LINE (KIND wait): the call
// site of a blocking call and the kind of pseudo-thread that ended its
// waits (docs/report.md, "Wait targets"); or a line in one calling context,
// FILE:LINE (via CALLER): the line's samples counted only while its thread
// runs a chosen function called from CALLER (docs/report.md, "Per calling
// context"). The whole string stays the line's name (Coz's viewer keys by
// it, so a wait's or a caller's curve stays apart from the CPU curve of the
// same source line); this is the one place that takes it apart. Every tool
// that needs a file, a line number, the kind of wait or the caller asks
// here.
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
  /// a known KIND, for a per-caller line a CALLER that is not empty. A name
  /// that is not (a wait suffix of an unknown kind, no colon, no number, a
  /// number out of range, an empty caller, no closing parenthesis) is
  /// invalid: file empty, line 0, wait None, caller empty. Tools then show
  /// the name as it is and read no source line for it, and `causal confirm`
  /// does not re-run it.
  bool valid = false;
  std::string file;
  uint32_t line = 0;
  WaitTargetKind wait = WaitTargetKind::None;
  /// The CALLER of FILE:LINE (via CALLER): a demangled function name as the
  /// paths sidecar names frames, or the fnmatch glob given to `causal run
  /// --path`; "" for any other name.
  std::string caller;

  bool isWait() const { return wait != WaitTargetKind::None; }
  /// A line in one calling context, FILE:LINE (via CALLER).
  bool isPath() const { return !caller.empty(); }
  /// FILE:LINE: the CPU line itself, the call site of a wait, the line of a
  /// per-caller curve; "" when invalid. The key of the profile's `samples`
  /// records.
  std::string location() const;
};

/// Splits a line's name. Never fails: an invalid name gives an invalid
/// LineName. The file may hold spaces, colons and parentheses; only the
/// last ':' (before a wait's suffix) ends it. In FILE:LINE (via CALLER) the
/// suffix starts at the first " (via " that directly follows a valid
/// FILE:LINE, and the name ends in ')': CALLER may hold parentheses, spaces
/// and " (via " itself (no tab or newline). A name that reads as a wait
/// target is one: "a.c:1 (via b.c:2 (timer wait)" is the timer wait of
/// line 2 of a file "a.c:1 (via b.c", not a caller "b.c:2 (timer wait".
LineName splitLineName(std::string_view name);

/// "FILE:LINE (KIND wait)" for a location and a kind; \p location itself
/// for None.
std::string waitTargetName(std::string_view location, WaitTargetKind kind);

/// "FILE:LINE (via CALLER)" for a location and a caller; \p location itself
/// for an empty caller.
std::string pathLineName(std::string_view location, std::string_view caller);

/// Names order by file, then line number ("f.c:12" before "f.c:100"), then
/// the CPU line, its per-caller lines (by caller), its waits (timer, disk,
/// network, other); invalid names after valid ones, by their text.
bool lineNameLess(std::string_view a, std::string_view b);

} // namespace causal::profile

#endif
