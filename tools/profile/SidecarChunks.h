//===- SidecarChunks.h - The framing of the binary sidecars -----*- C++ -*-===//
//
// The readers of PROFILE.waits (WaitsReader) and PROFILE.paths (PathsReader)
// share their framing (causal/sidecar_format.h): a file header with the
// format's magic and version, then chunks. This walks it once for both: the
// checks and the messages of a damaged file are the same for every sidecar.
//
//===----------------------------------------------------------------------===//
#ifndef CAUSAL_TOOLS_PROFILE_SIDECARCHUNKS_H
#define CAUSAL_TOOLS_PROFILE_SIDECARCHUNKS_H

#include "causal/sidecar_format.h"

#include <cstdint>
#include <cstring>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace causal::profile {

/// What a sidecar's header must say, and how messages name it.
struct SidecarFormat {
  const char *what; // "waits", "paths"
  const char (&magic)[8];
  uint32_t version;       // the newest this reader knows
  const char *recordFlag; // the `causal run` option that records it: "--waits"
};

/// A chunk's header, its payload and the offset of the header in the file.
/// Returns false with the error set to stop reading.
using SidecarChunkFn =
    std::function<bool(const sidecar_format::ChunkHeader &chunk, std::string_view payload,
                       uint64_t offset, std::string &error)>;

/// Checks the header of the sidecar in |bytes| (|name| in messages) against
/// |format|, sets |version| to its version, and hands every chunk to |chunk|,
/// in the file's order. False at the first error, with |error| set to
/// "NAME: offset N: what is wrong" (or to what |chunk| set).
bool readSidecarChunks(std::string_view bytes, const std::string &name, const SidecarFormat &format,
                       uint32_t &version, const SidecarChunkFn &chunk, std::string &error);

/// "NAME: offset N: MESSAGE", the form of every framing and record error.
std::string sidecarError(const std::string &name, uint64_t offset, const std::string &message);

/// A record of type T read from |at| (no alignment needed).
template <class T> T loadRecord(const char *at) {
  T value;
  std::memcpy(&value, at, sizeof(T));
  return value;
}

/// |value| as "0x..." (0 as "0").
std::string hexNumber(uint64_t value);

/// Reads the whole file at |path| into |bytes|. False with |error| set to
/// "PATH: STRERROR" (then |missingHint| when there is no such file), to
/// "PATH: cannot read it: STRERROR", or, for a directory, a FIFO, a device
/// (anything but a regular file: a sidecar is a file causal run wrote, and
/// /dev/zero or a FIFO would never end), to "PATH: is a ..., not a sidecar
/// file".
bool readSidecarFile(const std::string &path, std::string &bytes, std::string &error,
                     const char *missingHint = nullptr);

/// What the record readers of the sidecars share: the messages, the run a
/// chunk names, fixed chunk sizes, String chunks, chunks of unknown types
/// and the runs' program names. |Run| has `std::map<uint32_t, std::string>
/// strings`, `pid`, `program` and `text(id)`; |runs| and |warnings| are the
/// file's.
template <class Run> class SidecarRecords {
public:
  using TypeNameFn = const char *(*)(uint32_t type);
  SidecarRecords(const std::string &name, std::vector<Run> &runs,
                 std::vector<std::string> &warnings, TypeNameFn typeName)
      : name(name), runs(runs), warnings(warnings), typeName(typeName) {}

  bool fail(std::string &error, uint64_t offset, const std::string &message) const {
    error = sidecarError(name, offset, message);
    return false;
  }
  void warn(const std::string &message) { warnings.push_back(name + ": " + message); }

  bool fixedSize(const sidecar_format::ChunkHeader &chunk, size_t expected, uint64_t at,
                 std::string &error) const {
    if (chunk.size == expected)
      return true;
    return fail(error, at,
                std::string(typeName(chunk.type)) + " chunk of " + std::to_string(chunk.size) +
                    " bytes; it has " + std::to_string(expected));
  }

  /// The run a chunk names; an error when no RunBegin opened it.
  Run *runOf(const sidecar_format::ChunkHeader &chunk, uint64_t at, std::string &error) {
    auto found = runIndex.find(chunk.run);
    if (found == runIndex.end()) {
      fail(error, at,
           std::string(typeName(chunk.type)) + " chunk of run " + hexNumber(chunk.run) +
               ", which no RunBegin chunk before it opened");
      return nullptr;
    }
    return &runs[found->second];
  }

  bool knownString(const Run &run, uint32_t id, const std::string &what, uint64_t at,
                   std::string &error) const {
    if (id == 0 || run.strings.count(id))
      return true;
    return fail(error, at,
                what + " uses string id " + std::to_string(id) +
                    ", which no String chunk of its run defined before");
  }

  /// A String chunk: its text under its id, in the run it names.
  bool readString(const sidecar_format::ChunkHeader &chunk, std::string_view payload, uint64_t at,
                  std::string &error) {
    namespace sf = sidecar_format;
    Run *run = runOf(chunk, at, error);
    if (!run)
      return false;
    if (payload.size() < sizeof(sf::StringHead))
      return fail(error, at, "String chunk of " + std::to_string(payload.size()) + " bytes");
    auto head = loadRecord<sf::StringHead>(payload.data());
    if (head.length != payload.size() - sizeof(sf::StringHead))
      return fail(error, at,
                  "String chunk says " + std::to_string(head.length) + " bytes of text, holds " +
                      std::to_string(payload.size() - sizeof(sf::StringHead)));
    if (head.id == 0)
      return fail(error, at, "String chunk defines id 0, which means \"no text\"");
    std::string text(payload.substr(sizeof(sf::StringHead)));
    auto [where, inserted] = run->strings.emplace(head.id, text);
    if (!inserted && where->second != text)
      return fail(error, at,
                  "String id " + std::to_string(head.id) + " defined twice with different text");
    return true;
  }

  /// A chunk of a type this reader does not know: skipped, said once a type.
  bool skipUnknown(const sidecar_format::ChunkHeader &chunk, uint64_t at) {
    std::string type = std::to_string(chunk.type);
    if (unknownTypesWarned.insert(type).second)
      warn("skipped chunks of unknown type " + type + " (first at offset " + std::to_string(at) +
           "; written by a newer causal?)");
    return true;
  }

  /// "run N (pid P)": how the messages of the end name the run at |index|.
  static std::string runLabel(size_t index, const Run &run) {
    return "run " + std::to_string(index + 1) + " (pid " + std::to_string(run.pid) + ")";
  }

  /// The program name of the run at |index| (|label|), from the string id its
  /// RunBegin gave (pendingProgram), once its strings are all read; said when
  /// the id is never defined.
  void resolveProgram(size_t index, Run &run, const std::string &label) {
    if (auto found = pendingProgram.find(index); found != pendingProgram.end()) {
      run.program = run.text(found->second);
      if (run.program.empty())
        warn(label + ": its program name (string id " + std::to_string(found->second) +
             ") is never defined");
    }
  }

  const std::string &name;
  std::map<uint64_t, size_t> runIndex;       // RunId -> index in runs
  std::map<size_t, uint32_t> pendingProgram; // run index -> program name id

private:
  std::vector<Run> &runs;
  std::vector<std::string> &warnings;
  TypeNameFn typeName;
  std::set<std::string> unknownTypesWarned;
};

} // namespace causal::profile

#endif
