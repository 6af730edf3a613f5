//===- PathSpec.h - Functions chosen for call-path profiling ----*- C++ -*-===//
//
// Parses the lists of functions chosen for call-path profiling (docs/paths.md,
// "Choosing functions"): the value of -fcausal-paths=NAME,... and the file of
// -fcausal-paths-file=FILE. Header-only and standard C++ only, like
// ProgressSpec.h: the driver, the front-end plugin and the pass accept and
// reject lists by the same rules.
//
//   -fcausal-paths=NAME[,NAME]...   NAME: a symbol, a demangled name with or
//                                   without parameters, or an fnmatch glob of
//                                   one. The list is split at the commas that
//                                   are outside (), <> and [], so
//                                   "f(int, int),g" is two names.
//   -fcausal-paths-file=FILE        one NAME a line; '#' starts a comment,
//                                   blanks around a name and blank lines are
//                                   ignored. A name is never split at commas.
//
//===----------------------------------------------------------------------===//
#ifndef CAUSAL_PASS_PATHSPEC_H
#define CAUSAL_PASS_PATHSPEC_H

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace causal {

namespace path_spec_detail {

inline std::string trim(const std::string &S) {
  const char *Blanks = " \t\r\n\f\v";
  size_t Begin = S.find_first_not_of(Blanks);
  if (Begin == std::string::npos)
    return {};
  return S.substr(Begin, S.find_last_not_of(Blanks) - Begin + 1);
}

} // namespace path_spec_detail

/// Splits the value of -fcausal-paths= into names (appended to Out). Returns
/// false and sets Error when the list or one of its names is empty.
inline bool splitPathPatterns(const std::string &List, std::vector<std::string> &Out,
                              std::string &Error) {
  std::vector<std::string> Names;
  std::string Current;
  int Depth = 0;
  for (char C : List) {
    if (C == '(' || C == '<' || C == '[')
      ++Depth;
    else if ((C == ')' || C == '>' || C == ']') && Depth > 0)
      --Depth;
    if (C == ',' && Depth == 0) {
      Names.push_back(path_spec_detail::trim(Current));
      Current.clear();
      continue;
    }
    Current += C;
  }
  Names.push_back(path_spec_detail::trim(Current));
  for (const std::string &Name : Names)
    if (Name.empty()) {
      Error = "invalid function list '" + List + "': expected NAME[,NAME]... without empty names";
      return false;
    }
  Out.insert(Out.end(), Names.begin(), Names.end());
  return true;
}

/// The names of a -fcausal-paths-file's text (appended to Out).
inline void parsePathPatternsText(const std::string &Text, std::vector<std::string> &Out) {
  std::istringstream Lines(Text);
  std::string Line;
  while (std::getline(Lines, Line)) {
    size_t Hash = Line.find('#');
    if (Hash != std::string::npos)
      Line.erase(Hash);
    std::string Name = path_spec_detail::trim(Line);
    if (!Name.empty())
      Out.push_back(Name);
  }
}

/// Reads the names of file Path (appended to Out). Returns false and sets
/// Error, which names the file and the reason, when it cannot be read.
inline bool readPathPatternsFile(const std::string &Path, std::vector<std::string> &Out,
                                 std::string &Error) {
  std::ifstream File(Path);
  if (!File) {
    int Saved = errno;
    Error = "cannot read the function list file '" + Path +
            "': " + (Saved ? std::strerror(Saved) : "unreadable");
    return false;
  }
  std::stringstream Text;
  Text << File.rdbuf();
  if (File.bad()) {
    Error = "cannot read the function list file '" + Path + "'";
    return false;
  }
  parsePathPatternsText(Text.str(), Out);
  return true;
}

} // namespace causal

#endif // CAUSAL_PASS_PATHSPEC_H
