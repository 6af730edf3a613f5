//===- LineTable.h - Build, serialize and read the embedded line table ----===//
//
// The exact address -> file:line table of a linked x86-64 ELF image, in the
// layout of causal/abi.h. causal-ld builds it from the DWARF line tables of
// the image it just linked and patches it into the image's causal_lines
// section; `causal lines` reads it back.
//
// Rules used to build the rows (docs/precision.md explains why):
//   * every valid DWARF line sequence of every compile unit contributes the
//     ranges [row.address, next row.address) with the row's file:line; file
//     paths are made absolute (comp_dir / include dir / name) and normalized
//     lexically (no "." or ".." components);
//   * line 0 means "no line" (CAUSAL_NO_LINE);
//   * sequences not lying inside one allocated executable (SHF_EXECINSTR)
//     section are dropped: code the linker discarded (COMDAT copies,
//     --gc-sections) has its addresses resolved to 0 or a tombstone;
//   * where sequences overlap, the first one (compile-unit order, then the
//     line table's sequence order) wins, like the reference lookup of
//     `causal lines --check`;
//   * address gaps between sequences become CAUSAL_NO_LINE rows, adjacent
//     rows with the same line are merged, and a terminator row ends the
//     table;
//   * a line's function is the innermost function at the line's lowest
//     address: an inlined function's DWARF name, else the symbol table's
//     function demangled; control characters dropped, cut to
//     CAUSAL_LINETAB_MAX_FUNCTION_NAME bytes; the same with and without -g.
//
//===----------------------------------------------------------------------===//
#ifndef CAUSAL_TOOLS_LINETABLE_LINETABLE_H
#define CAUSAL_TOOLS_LINETABLE_LINETABLE_H

#include "causal/abi.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace llvm {
namespace object {
class ObjectFile;
template <class ELFT> class ELFObjectFile;
} // namespace object
} // namespace llvm

namespace causal {
namespace linetable {

/// One allocated section of an image, as the tools need it.
struct Section {
  std::string Name;
  uint64_t Address = 0;
  uint64_t FileOffset = 0;
  uint64_t Size = 0;
  bool Executable = false;     // SHF_ALLOC and SHF_EXECINSTR
  bool HasFileContents = true; // not SHT_NOBITS
};

/// A linked x86-64 ELF image opened for reading. Opening checks the format
/// and the architecture and says clearly what is wrong otherwise.
class ElfImage {
public:
  static llvm::Expected<std::unique_ptr<ElfImage>> open(llvm::StringRef Path);
  ~ElfImage();

  const std::string &path() const { return Path; }
  const llvm::object::ObjectFile &object() const;
  const std::vector<Section> &sections() const { return Sections; }
  const Section *findSection(llvm::StringRef Name) const;
  /// The executable section containing [Lo, Hi), or null.
  const Section *executableSectionContaining(uint64_t Lo, uint64_t Hi) const;
  /// Contents of a section with file contents (empty for SHT_NOBITS).
  llvm::Expected<llvm::ArrayRef<uint8_t>> contents(const Section &S) const;
  bool hasDebugLine() const { return findSection(".debug_line") != nullptr; }
  /// Whether the dynamic string table (.dynstr) holds \p Name as a whole
  /// string: the image imports or exports that symbol, or needs that library.
  bool dynamicStringsContain(llvm::StringRef Name) const;

  /// Functions of the symbol table (STT_FUNC with a size), sorted by address.
  struct Function {
    uint64_t Address;
    uint64_t Size;
    std::string Name;
  };
  std::vector<Function> functions() const;

private:
  ElfImage() = default;
  struct Impl;
  std::unique_ptr<Impl> Storage;
  std::string Path;
  std::vector<Section> Sections;
};

/// The table in memory. Rows count from CodeVaddr and end with a terminator.
struct Table {
  uint64_t CodeVaddr = 0;
  std::vector<causal_linetab_row> Rows;
  std::vector<causal_linetab_line> Lines;
  std::vector<std::string> Files;
  /// Function name of each line (parallel to Lines; empty: unknown). May be
  /// empty as a whole: no names.
  std::vector<std::string> Functions;

  /// Bytes the serialized table takes (depends only on the counts and the
  /// file path lengths).
  uint64_t serializedSize() const;
};

/// What the builder did, for messages and tests.
struct BuildStats {
  unsigned CompileUnits = 0;
  unsigned SequencesUsed = 0;
  unsigned SequencesDropped = 0; // not inside an executable section
  uint64_t BytesOverlapped = 0;  // bytes of later sequences lost to earlier ones
};

/// One address range of a DWARF line sequence, before the table rules are
/// applied. Exposed so the rules can be unit-tested without an ELF file.
struct LineRange {
  uint64_t Lo;
  uint64_t Hi;
  std::string File; // normalized absolute path; empty with Line == 0
  uint32_t Line;    // 0: no line
};

/// Applies the merge/gap/overlap/terminator rules to ranges given in
/// priority order (earlier wins where they overlap). Fails if the ranges span
/// more than 4 GiB (row offsets are 32-bit).
llvm::Expected<Table> buildTableFromRanges(llvm::ArrayRef<LineRange> Ranges,
                                           BuildStats *Stats = nullptr);

/// Builds the table from the DWARF line tables of a linked image. An image
/// with no .debug_line section is an error naming the problem; an image
/// whose line tables cover no code gives a table with no rows (check
/// Table::Rows.empty()).
llvm::Expected<Table> buildTableFromDwarf(const ElfImage &Image, BuildStats *Stats = nullptr);

/// Serializes per causal/abi.h. TableVaddr is the link-time address the
/// table will live at. The result is padded with zeros to MinSize if larger.
llvm::Expected<std::vector<uint8_t>> serialize(const Table &T, uint64_t TableVaddr,
                                               uint64_t MinSize = 0);

/// A validated serialized table (owned, aligned copy).
class TableView {
public:
  /// Validates with causal_linetab_validate and checks every row and line
  /// reference, so lookups never read out of bounds.
  static llvm::Expected<TableView> fromBytes(llvm::ArrayRef<uint8_t> Bytes);

  const causal_linetab_header &header() const { return *headerPtr(); }
  llvm::ArrayRef<causal_linetab_row> rows() const;
  llvm::ArrayRef<causal_linetab_line> lines() const;
  /// Path of file Index (validated, never null).
  llvm::StringRef file(uint32_t Index) const;
  /// Function of line LineIndex, or "" (unknown, or a version 1 table).
  llvm::StringRef function(uint32_t LineIndex) const;
  /// Line index for a link-time address, or CAUSAL_NO_LINE (the runtime's
  /// lookup from abi.h).
  uint32_t lookup(uint64_t Vaddr) const;
  /// "file:line" of a line index, or "<no line>".
  std::string describe(uint32_t LineIndex) const;

private:
  const causal_linetab_header *headerPtr() const {
    return reinterpret_cast<const causal_linetab_header *>(Storage.data());
  }
  std::vector<uint64_t> Storage; // 8-byte aligned copy of the section (copyable)
};

/// The table embedded in an image's causal_lines section.
struct EmbeddedTable {
  Section Where;
  TableView View;
};
llvm::Expected<EmbeddedTable> readEmbeddedTable(const ElfImage &Image);

/// A function name as the table stores it: control characters dropped, cut
/// to CAUSAL_LINETAB_MAX_FUNCTION_NAME bytes (ending with "...").
std::string tableFunctionName(llvm::StringRef Name);

/// Makes a path lexically normal (removes "." and ".." components, duplicate
/// slashes) without touching the file system.
std::string normalizePath(llvm::StringRef Path);

} // namespace linetable
} // namespace causal

#endif
