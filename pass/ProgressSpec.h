//===- ProgressSpec.h - Progress points named at build time -----*- C++ -*-===//
//
// Parses the progress point specifications of the driver flags and plugin
// arguments (docs/progress-points.md). Header-only and standard C++ only: the
// driver (no LLVM), the front-end plugin (no pass code) and the pass all use
// it, so a spec is accepted or rejected by the same rules everywhere.
//
//   -fcausal-progress=FILE:LINE[=NAME]       throughput, each entry of the line
//   -fcausal-progress-fn=FUNC                throughput, each return of FUNC
//   -fcausal-latency=NAME:BEGIN:END          latency; BEGIN and END are each
//                                            a location: FILE:LINE or fn:FUNC
//
// FILE may not contain ':' and NAME (of a latency point) may not contain
// ':'. FUNC after "fn:" in a latency spec may contain ':' only as "::". A
// location starting with "fn:" is a function (a file named "fn" is written
// "./fn:LINE"). The split of BEGIN:END is the only one that makes both sides
// valid locations; a spec with no such split, or several, is rejected.
//
//===----------------------------------------------------------------------===//
#ifndef CAUSAL_PASS_PROGRESSSPEC_H
#define CAUSAL_PASS_PROGRESSSPEC_H

#include "causal/abi.h"

#include <cstdint>
#include <string>
#include <vector>

namespace causal {

/// Where a progress point is: a source line, or a function.
struct CodeLocationSpec {
  std::string File;     // a line: path or path suffix of the source file
  uint32_t Line = 0;    // a line: 1-based
  std::string Function; // a function: demangled qualified name or symbol

  bool isFunction() const { return !Function.empty(); }
};

/// One counter update site: a line entry increments at each entry of the
/// line; a function increments at entry (CAUSAL_COUNTER_BEGIN) or at each
/// return (throughput and CAUSAL_COUNTER_END).
struct ProgressPointSpec {
  uint32_t Kind = CAUSAL_COUNTER_THROUGHPUT;
  std::string Name;
  CodeLocationSpec Where;
  std::string Origin; // the option as written, for diagnostics
};

namespace spec_detail {

inline bool isDecimal(const std::string &S) {
  if (S.empty() || S.size() > 9)
    return false;
  for (char C : S)
    if (C < '0' || C > '9')
      return false;
  return true;
}

/// FILE:LINE with FILE non-empty and free of ':' and LINE a positive number.
inline bool parseLine(const std::string &Text, CodeLocationSpec &Out) {
  size_t Colon = Text.find(':');
  if (Colon == std::string::npos || Colon == 0)
    return false;
  std::string Number = Text.substr(Colon + 1);
  if (!isDecimal(Number) || std::stoul(Number) == 0)
    return false;
  Out.File = Text.substr(0, Colon);
  Out.Line = static_cast<uint32_t>(std::stoul(Number));
  Out.Function.clear();
  return true;
}

/// A function name inside a latency spec: non-empty, ':' only as "::", not
/// starting or ending with ':'.
inline bool isLatencyFunctionName(const std::string &Name) {
  if (Name.empty() || Name.front() == ':' || Name.back() == ':')
    return false;
  for (size_t I = 0; I < Name.size(); ++I) {
    if (Name[I] != ':')
      continue;
    if (I + 1 >= Name.size() || Name[I + 1] != ':')
      return false;
    ++I; // skip the second ':' of "::"
    if (I + 1 < Name.size() && Name[I + 1] == ':')
      return false; // ":::"
  }
  return true;
}

/// A location of a latency spec: fn:FUNC or FILE:LINE.
inline bool parseLocation(const std::string &Text, CodeLocationSpec &Out) {
  if (Text.compare(0, 3, "fn:") == 0) {
    std::string Name = Text.substr(3);
    if (!isLatencyFunctionName(Name))
      return false;
    Out = CodeLocationSpec();
    Out.Function = Name;
    return true;
  }
  return parseLine(Text, Out);
}

} // namespace spec_detail

/// -fcausal-progress=FILE:LINE[=NAME]. The name defaults to "FILE:LINE" as
/// written. Returns false and sets Error on a malformed spec.
inline bool parseProgressLineSpec(const std::string &Value, std::vector<ProgressPointSpec> &Out,
                                  std::string &Error) {
  ProgressPointSpec Spec;
  Spec.Origin = "-fcausal-progress=" + Value;
  size_t Colon = Value.find(':');
  size_t Equals = Colon == std::string::npos ? std::string::npos : Value.find('=', Colon);
  std::string Location = Value.substr(0, Equals);
  if (!spec_detail::parseLine(Location, Spec.Where)) {
    Error = "invalid progress point '" + Value +
            "': expected FILE:LINE[=NAME] (FILE without ':', LINE a positive number)";
    return false;
  }
  Spec.Name = Equals == std::string::npos ? Location : Value.substr(Equals + 1);
  if (Spec.Name.empty()) {
    Error = "invalid progress point '" + Value + "': empty NAME after '='";
    return false;
  }
  Out.push_back(Spec);
  return true;
}

/// -fcausal-progress-fn=FUNC: each return of FUNC is a visit of throughput
/// point FUNC.
inline bool parseProgressFunctionSpec(const std::string &Value, std::vector<ProgressPointSpec> &Out,
                                      std::string &Error) {
  if (Value.empty()) {
    Error = "invalid progress function '': expected a function name";
    return false;
  }
  ProgressPointSpec Spec;
  Spec.Origin = "-fcausal-progress-fn=" + Value;
  Spec.Name = Value;
  Spec.Where.Function = Value;
  Out.push_back(Spec);
  return true;
}

/// -fcausal-latency=NAME:BEGIN:END: adds the begin and the end point.
inline bool parseLatencySpec(const std::string &Value, std::vector<ProgressPointSpec> &Out,
                             std::string &Error) {
  const std::string Expected = "invalid latency point '" + Value +
                               "': expected NAME:BEGIN:END with BEGIN and END each FILE:LINE or "
                               "fn:FUNC (NAME and FILE without ':')";
  size_t Colon = Value.find(':');
  if (Colon == std::string::npos || Colon == 0) {
    Error = Expected;
    return false;
  }
  std::string Name = Value.substr(0, Colon);
  std::string Rest = Value.substr(Colon + 1);
  CodeLocationSpec Begin, End;
  unsigned Splits = 0;
  for (size_t At = Rest.find(':'); At != std::string::npos; At = Rest.find(':', At + 1)) {
    CodeLocationSpec B, E;
    if (spec_detail::parseLocation(Rest.substr(0, At), B) &&
        spec_detail::parseLocation(Rest.substr(At + 1), E)) {
      Begin = B;
      End = E;
      ++Splits;
    }
  }
  if (Splits != 1) {
    Error = Splits == 0 ? Expected
                        : "ambiguous latency point '" + Value +
                              "': BEGIN:END can be split in more than one way";
    return false;
  }
  ProgressPointSpec Spec;
  Spec.Origin = "-fcausal-latency=" + Value;
  Spec.Name = Name;
  Spec.Kind = CAUSAL_COUNTER_BEGIN;
  Spec.Where = Begin;
  Out.push_back(Spec);
  Spec.Kind = CAUSAL_COUNTER_END;
  Spec.Where = End;
  Out.push_back(Spec);
  return true;
}

/// The build-time progress point options, by option name without the
/// "-fcausal-" / "-fplugin-arg-causal-" prefix.
struct ProgressOptionParser {
  const char *Name; // "progress", "progress-fn", "latency"
  bool (*Parse)(const std::string &Value, std::vector<ProgressPointSpec> &Out, std::string &Error);
};

inline const ProgressOptionParser *progressOptionParsers(size_t &Count) {
  static const ProgressOptionParser Parsers[] = {
      {"progress", &parseProgressLineSpec},
      {"progress-fn", &parseProgressFunctionSpec},
      {"latency", &parseLatencySpec},
  };
  Count = sizeof(Parsers) / sizeof(Parsers[0]);
  return Parsers;
}

/// Parses "OPTION=VALUE" (OPTION one of progressOptionParsers()). Returns
/// false if OPTION is not a progress option (Error empty) or the value is
/// malformed (Error set).
inline bool parseProgressOption(const std::string &Arg, std::vector<ProgressPointSpec> &Out,
                                std::string &Error) {
  Error.clear();
  size_t Equals = Arg.find('=');
  if (Equals == std::string::npos)
    return false;
  std::string Option = Arg.substr(0, Equals);
  size_t Count = 0;
  const ProgressOptionParser *Parsers = progressOptionParsers(Count);
  for (size_t I = 0; I < Count; ++I)
    if (Option == Parsers[I].Name)
      return Parsers[I].Parse(Arg.substr(Equals + 1), Out, Error);
  return false;
}

} // namespace causal

#endif // CAUSAL_PASS_PROGRESSSPEC_H
