//===- LineTableFormat.cpp - Serialize and read the table of causal/abi.h ---===//
#include "LineTable.h"

#include "llvm/ADT/Twine.h"

#include <cstddef>
#include <cstring>
#include <map>

using namespace llvm;

namespace causal {
namespace linetable {

namespace {

Error formatError(const Twine &What) { return createStringError(inconvertibleErrorCode(), What); }

uint64_t alignTo8(uint64_t N) { return (N + 7) & ~uint64_t(7); }

static_assert(offsetof(causal_linetab_header, functions_offset) == CAUSAL_LINETAB_V1_HEADER_SIZE,
              "version 1 headers end where version 2 adds functions_offset");

struct Layout {
  uint64_t RowsOffset, LinesOffset, FilesOffset, FunctionsOffset, StringsOffset, StringsSize,
      TotalSize;
  // Offset in strings of each distinct function name (names are shared by
  // many lines).
  std::map<std::string, uint32_t> FunctionStrings;
};

Layout layoutOf(const Table &T) {
  Layout L;
  L.RowsOffset = sizeof(causal_linetab_header);
  L.LinesOffset = L.RowsOffset + T.Rows.size() * sizeof(causal_linetab_row);
  L.FilesOffset = L.LinesOffset + T.Lines.size() * sizeof(causal_linetab_line);
  L.FunctionsOffset = L.FilesOffset + T.Files.size() * sizeof(uint32_t);
  L.StringsOffset = L.FunctionsOffset + T.Lines.size() * sizeof(uint32_t);
  L.StringsSize = 0;
  for (const std::string &F : T.Files)
    L.StringsSize += F.size() + 1;
  for (const std::string &Name : T.Functions)
    if (!Name.empty() && L.FunctionStrings.emplace(Name, (uint32_t)L.StringsSize).second)
      L.StringsSize += Name.size() + 1;
  L.TotalSize = alignTo8(L.StringsOffset + L.StringsSize);
  return L;
}

} // namespace

uint64_t Table::serializedSize() const { return layoutOf(*this).TotalSize; }

Expected<std::vector<uint8_t>> serialize(const Table &T, uint64_t TableVaddr, uint64_t MinSize) {
  static_assert(sizeof(causal_linetab_header) % 8 == 0, "rows must stay aligned");
  if (T.Rows.empty())
    return formatError("cannot serialize a line table with no rows");
  if (T.Rows.back().line_index != CAUSAL_NO_LINE)
    return formatError("line table does not end with a terminator row");
  Layout L = layoutOf(T);
  if (L.TotalSize > 0xffffffffull)
    return formatError("line table too large (" + Twine(L.TotalSize) + " bytes)");
  if (!T.Functions.empty() && T.Functions.size() != T.Lines.size())
    return formatError("line table has " + Twine(T.Functions.size()) + " function names for " +
                       Twine(T.Lines.size()) + " lines");
  for (const causal_linetab_line &Line : T.Lines)
    if (Line.file_index >= T.Files.size())
      return formatError("line refers to file " + Twine(Line.file_index) + " of " +
                         Twine(T.Files.size()));
  for (const causal_linetab_row &Row : T.Rows)
    if (Row.line_index != CAUSAL_NO_LINE && Row.line_index >= T.Lines.size())
      return formatError("row refers to line " + Twine(Row.line_index) + " of " +
                         Twine(T.Lines.size()));

  std::vector<uint8_t> Out(std::max<uint64_t>(L.TotalSize, MinSize), 0);
  causal_linetab_header H;
  std::memset(&H, 0, sizeof(H));
  std::memcpy(H.magic, CAUSAL_LINETAB_MAGIC, CAUSAL_LINETAB_MAGIC_SIZE);
  H.version = CAUSAL_LINETAB_VERSION;
  H.header_size = sizeof(causal_linetab_header);
  H.table_vaddr = TableVaddr;
  H.code_vaddr = T.CodeVaddr;
  H.num_rows = (uint32_t)T.Rows.size();
  H.num_lines = (uint32_t)T.Lines.size();
  H.num_files = (uint32_t)T.Files.size();
  H.strings_size = (uint32_t)L.StringsSize;
  H.rows_offset = (uint32_t)L.RowsOffset;
  H.lines_offset = (uint32_t)L.LinesOffset;
  H.files_offset = (uint32_t)L.FilesOffset;
  H.strings_offset = (uint32_t)L.StringsOffset;
  H.total_size = (uint32_t)L.TotalSize;
  H.flags = 0;
  H.functions_offset = (uint32_t)L.FunctionsOffset;
  H.reserved = 0;
  std::memcpy(Out.data(), &H, sizeof(H));
  if (!T.Rows.empty())
    std::memcpy(Out.data() + L.RowsOffset, T.Rows.data(),
                T.Rows.size() * sizeof(causal_linetab_row));
  if (!T.Lines.empty())
    std::memcpy(Out.data() + L.LinesOffset, T.Lines.data(),
                T.Lines.size() * sizeof(causal_linetab_line));
  uint32_t StringOffset = 0;
  for (size_t I = 0; I < T.Files.size(); ++I) {
    std::memcpy(Out.data() + L.FilesOffset + I * sizeof(uint32_t), &StringOffset, sizeof(uint32_t));
    const std::string &F = T.Files[I];
    std::memcpy(Out.data() + L.StringsOffset + StringOffset, F.c_str(), F.size() + 1);
    StringOffset += (uint32_t)F.size() + 1;
  }
  for (size_t I = 0; I < T.Lines.size(); ++I) {
    uint32_t NameOffset = CAUSAL_NO_FUNCTION;
    if (I < T.Functions.size() && !T.Functions[I].empty())
      NameOffset = L.FunctionStrings.find(T.Functions[I])->second;
    std::memcpy(Out.data() + L.FunctionsOffset + I * sizeof(uint32_t), &NameOffset,
                sizeof(uint32_t));
  }
  for (const auto &[Name, Offset] : L.FunctionStrings)
    std::memcpy(Out.data() + L.StringsOffset + Offset, Name.c_str(), Name.size() + 1);
  return Out;
}

Expected<TableView> TableView::fromBytes(ArrayRef<uint8_t> Bytes) {
  TableView V;
  if (Bytes.size() < CAUSAL_LINETAB_V1_HEADER_SIZE)
    return formatError("line table too small (" + Twine(Bytes.size()) +
                       " bytes, the header alone is " + Twine(CAUSAL_LINETAB_V1_HEADER_SIZE) + ")");
  V.Storage.assign((Bytes.size() + 7) / 8, 0);
  std::memcpy(V.Storage.data(), Bytes.data(), Bytes.size());
  const char *Start = reinterpret_cast<const char *>(V.Storage.data());
  const auto *H = reinterpret_cast<const causal_linetab_header *>(Start);

  // Specific reasons first (the runtime only gets yes/no from
  // causal_linetab_validate, a person deserves to know why).
  if (std::memcmp(H->magic, CAUSAL_LINETAB_MAGIC, CAUSAL_LINETAB_MAGIC_SIZE) != 0) {
    bool AllZero = true;
    for (uint8_t B : Bytes.take_front(64))
      AllZero &= B == 0;
    if (AllZero)
      return formatError("line table is all zeros: the placeholder was never filled in");
    return formatError("bad line table magic (not a causal line table)");
  }
  if (H->version != CAUSAL_LINETAB_VERSION && H->version != CAUSAL_LINETAB_VERSION_1)
    return formatError("line table version " + Twine(H->version) + ", this tool reads versions " +
                       Twine(CAUSAL_LINETAB_VERSION_1) + " to " + Twine(CAUSAL_LINETAB_VERSION));
  unsigned ExpectedHeader = H->version == CAUSAL_LINETAB_VERSION_1
                                ? CAUSAL_LINETAB_V1_HEADER_SIZE
                                : (unsigned)sizeof(causal_linetab_header);
  if (H->header_size != ExpectedHeader || Bytes.size() < ExpectedHeader)
    return formatError("line table header size " + Twine(H->header_size) + ", expected " +
                       Twine(ExpectedHeader));
  if (H->total_size > Bytes.size())
    return formatError("line table claims " + Twine(H->total_size) + " bytes, section has " +
                       Twine(Bytes.size()));
  if ((H->rows_offset | H->lines_offset | H->files_offset) % 4 != 0)
    return formatError("line table arrays are not 4-byte aligned");
  if (H->lines_offset < H->header_size || H->files_offset < H->header_size ||
      H->strings_offset < H->header_size)
    return formatError("line table arrays overlap its header");
  if (!causal_linetab_validate(Start, Start + Bytes.size()))
    return formatError("corrupt line table (offsets or counts out of bounds)");

  auto Rows = V.rows();
  auto Lines = V.lines();
  if (Rows.back().line_index != CAUSAL_NO_LINE)
    return formatError("corrupt line table: last row is not a terminator");
  for (size_t I = 0; I < Rows.size(); ++I) {
    if (I && Rows[I].offset <= Rows[I - 1].offset)
      return formatError("corrupt line table: rows not sorted (row " + Twine(I) + ")");
    if (Rows[I].line_index != CAUSAL_NO_LINE && Rows[I].line_index >= H->num_lines)
      return formatError("corrupt line table: row " + Twine(I) + " refers to line " +
                         Twine(Rows[I].line_index) + " of " + Twine(H->num_lines));
  }
  for (size_t I = 0; I < Lines.size(); ++I)
    if (Lines[I].file_index >= H->num_files)
      return formatError("corrupt line table: line " + Twine(I) + " refers to file " +
                         Twine(Lines[I].file_index) + " of " + Twine(H->num_files));
  for (uint32_t I = 0; I < H->num_files; ++I)
    if (!causal_linetab_file(H, I))
      return formatError("corrupt line table: path of file " + Twine(I) + " out of bounds");
  if (H->version == CAUSAL_LINETAB_VERSION) {
    const auto *Functions = reinterpret_cast<const uint32_t *>(Start + H->functions_offset);
    for (uint32_t I = 0; I < H->num_lines; ++I)
      if (Functions[I] != CAUSAL_NO_FUNCTION && Functions[I] >= H->strings_size)
        return formatError("corrupt line table: function name of line " + Twine(I) +
                           " out of bounds");
  }
  return std::move(V);
}

ArrayRef<causal_linetab_row> TableView::rows() const {
  return ArrayRef<causal_linetab_row>(causal_linetab_rows(headerPtr()), headerPtr()->num_rows);
}

ArrayRef<causal_linetab_line> TableView::lines() const {
  return ArrayRef<causal_linetab_line>(causal_linetab_lines(headerPtr()), headerPtr()->num_lines);
}

StringRef TableView::file(uint32_t Index) const {
  const char *Path = causal_linetab_file(headerPtr(), Index);
  return Path ? StringRef(Path) : StringRef("<bad file index>");
}

StringRef TableView::function(uint32_t LineIndex) const {
  const char *Name = causal_linetab_function(headerPtr(), LineIndex);
  return Name ? StringRef(Name) : StringRef();
}

uint32_t TableView::lookup(uint64_t Vaddr) const {
  return causal_linetab_lookup(headerPtr(), Vaddr);
}

std::string TableView::describe(uint32_t LineIndex) const {
  if (LineIndex == CAUSAL_NO_LINE || LineIndex >= headerPtr()->num_lines)
    return "<no line>";
  const causal_linetab_line &L = lines()[LineIndex];
  return (file(L.file_index) + ":" + Twine(L.line)).str();
}

Expected<EmbeddedTable> readEmbeddedTable(const ElfImage &Image) {
  const Section *S = Image.findSection(CAUSAL_LINETAB_SECTION);
  if (!S) {
    // Instrumented modules' constructors import the runtime's registration.
    if (Image.dynamicStringsContain(CAUSAL_REGISTER_MODULE_FN))
      return formatError(Image.path() + ": no " CAUSAL_LINETAB_SECTION
                                        " section: its code was compiled with -fcausal-profile "
                                        "but not linked by causal-ld (link with causal-clang "
                                        "-fcausal-profile too)");
    return formatError(Image.path() + ": no " CAUSAL_LINETAB_SECTION
                                      " section: none of its code was compiled with "
                                      "-fcausal-profile (compile, not only link, with "
                                      "causal-clang -fcausal-profile)");
  }
  if (!S->HasFileContents)
    return formatError(Image.path() + ": section " CAUSAL_LINETAB_SECTION " has no contents");
  Expected<ArrayRef<uint8_t>> Bytes = Image.contents(*S);
  if (!Bytes)
    return Bytes.takeError();
  Expected<TableView> View = TableView::fromBytes(*Bytes);
  if (!View)
    return formatError(Image.path() + ": section " CAUSAL_LINETAB_SECTION ": " +
                       toString(View.takeError()));
  if (View->header().table_vaddr != S->Address)
    return formatError(Image.path() + ": section " CAUSAL_LINETAB_SECTION " is at 0x" +
                       Twine::utohexstr(S->Address) + " but its table says 0x" +
                       Twine::utohexstr(View->header().table_vaddr) +
                       " (the image was changed after causal-ld patched it)");
  return EmbeddedTable{*S, std::move(*View)};
}

} // namespace linetable
} // namespace causal
