//===- LineTableBuilder.cpp - DWARF line tables -> causal line table ------===//
#include "LineTable.h"

#include "llvm/DebugInfo/DIContext.h"
#include "llvm/DebugInfo/DWARF/DWARFContext.h"
#include "llvm/DebugInfo/DWARF/DWARFDebugLine.h"
#include "llvm/DebugInfo/DWARF/DWARFUnit.h"
#include "llvm/Demangle/Demangle.h"
#include "llvm/Object/ObjectFile.h"
#include "llvm/Support/Path.h"

#include <algorithm>
#include <map>
#include <set>
#include <unordered_map>
#include <utility>

using namespace llvm;

namespace causal {
namespace linetable {

std::string normalizePath(StringRef Path) {
  SmallString<256> Result(Path);
  sys::path::remove_dots(Result, /*remove_dot_dot=*/true, sys::path::Style::posix);
  if (Result.empty())
    return Path.str();
  return std::string(Result);
}

std::string tableFunctionName(StringRef Name) {
  std::string Clean;
  Clean.reserve(Name.size());
  for (char C : Name)
    if ((unsigned char)C >= 0x20 && C != 0x7f)
      Clean.push_back(C);
  if (Clean.size() > CAUSAL_LINETAB_MAX_FUNCTION_NAME) {
    Clean.resize(CAUSAL_LINETAB_MAX_FUNCTION_NAME - 3);
    // Do not cut a UTF-8 sequence in two.
    while (!Clean.empty() && ((unsigned char)Clean.back() & 0xc0) == 0x80)
      Clean.pop_back();
    if (!Clean.empty() && ((unsigned char)Clean.back() & 0x80))
      Clean.pop_back();
    Clean += "...";
  }
  return Clean;
}

namespace {

// The interval set filled in priority order: a later range only fills
// addresses no earlier range covers.
class FirstWinsCoverage {
public:
  struct Piece {
    uint64_t Hi;
    uint32_t Key;
  };

  // Returns the number of bytes of [Lo, Hi) already covered.
  uint64_t insert(uint64_t Lo, uint64_t Hi, uint32_t Key) {
    uint64_t Lost = 0;
    auto It = Pieces.upper_bound(Lo);
    if (It != Pieces.begin()) {
      auto Prev = std::prev(It);
      if (Prev->second.Hi > Lo) {
        uint64_t NewLo = std::min(Prev->second.Hi, Hi);
        Lost += NewLo - Lo;
        Lo = NewLo;
      }
    }
    while (Lo < Hi) {
      It = Pieces.lower_bound(Lo);
      uint64_t FreeEnd = (It == Pieces.end()) ? Hi : std::min(Hi, It->first);
      if (Lo < FreeEnd)
        Pieces.emplace_hint(It, Lo, Piece{FreeEnd, Key});
      if (It == Pieces.end() || It->first >= Hi)
        break;
      uint64_t Next = std::min(Hi, It->second.Hi);
      Lost += Next - It->first;
      Lo = Next;
    }
    return Lost;
  }

  const std::map<uint64_t, Piece> &pieces() const { return Pieces; }

private:
  std::map<uint64_t, Piece> Pieces;
};

Error tableError(const Twine &What) { return createStringError(inconvertibleErrorCode(), What); }

} // namespace

namespace {

// A range with its file given as an index into a name list (the builder's
// fast path: no string per range).
struct IndexedRange {
  uint64_t Lo;
  uint64_t Hi;
  uint32_t File; // index into the names; ignored when Line == 0
  uint32_t Line; // 0: no line
};

Expected<Table> buildTable(const std::vector<std::string> &Names,
                           const std::vector<IndexedRange> &Ranges, BuildStats *Stats) {
  // Distinct (file, line) pairs get dense keys in order of first
  // appearance; the table numbers them in sorted order at the end so it does
  // not depend on addresses.
  std::unordered_map<uint64_t, uint32_t> KeyOf;
  std::vector<uint64_t> KeyList; // (name index << 32) | line
  const uint32_t NoKey = CAUSAL_NO_LINE;

  FirstWinsCoverage Coverage;
  uint64_t Lost = 0;
  for (const IndexedRange &R : Ranges) {
    if (R.Hi <= R.Lo)
      continue;
    uint32_t Key = NoKey;
    if (R.Line != 0) {
      uint64_t Packed = ((uint64_t)R.File << 32) | R.Line;
      auto Ins = KeyOf.emplace(Packed, (uint32_t)KeyList.size());
      if (Ins.second)
        KeyList.push_back(Packed);
      Key = Ins.first->second;
    }
    Lost += Coverage.insert(R.Lo, R.Hi, Key);
  }
  if (Stats)
    Stats->BytesOverlapped += Lost;

  Table T;
  const auto &Pieces = Coverage.pieces();
  if (Pieces.empty())
    return T;

  // Only lines some address maps to (ranges that lost every byte to an
  // earlier one leave nothing behind).
  std::vector<bool> Used(KeyList.size(), false);
  for (const auto &P : Pieces)
    if (P.second.Key != NoKey)
      Used[P.second.Key] = true;

  // Files: the names used, sorted (one entry per distinct path).
  std::map<std::string, uint32_t> FileIndex;
  for (uint32_t K = 0; K < KeyList.size(); ++K)
    if (Used[K])
      FileIndex.emplace(Names[KeyList[K] >> 32], 0);
  for (auto &Entry : FileIndex) {
    Entry.second = (uint32_t)T.Files.size();
    T.Files.push_back(Entry.first);
  }
  // Lines: sorted by (file index, line).
  std::vector<std::pair<uint64_t, uint32_t>> Sorted; // ((file index << 32) | line, key)
  Sorted.reserve(KeyList.size());
  for (uint32_t K = 0; K < KeyList.size(); ++K)
    if (Used[K])
      Sorted.push_back(
          {((uint64_t)FileIndex[Names[KeyList[K] >> 32]] << 32) | (KeyList[K] & 0xffffffffu), K});
  std::sort(Sorted.begin(), Sorted.end());
  std::vector<uint32_t> LineOfKey(KeyList.size());
  for (const auto &Entry : Sorted) {
    causal_linetab_line Line{(uint32_t)(Entry.first >> 32), (uint32_t)Entry.first};
    if (T.Lines.empty() || T.Lines.back().file_index != Line.file_index ||
        T.Lines.back().line != Line.line)
      T.Lines.push_back(Line); // two names may normalize to one path
    LineOfKey[Entry.second] = (uint32_t)T.Lines.size() - 1;
  }

  // The table spans from the first to the end of the last range that has a
  // line; no-line ranges at either end add nothing.
  auto First = Pieces.begin();
  while (First != Pieces.end() && First->second.Key == NoKey)
    ++First;
  if (First == Pieces.end())
    return Table();
  auto Last = std::prev(Pieces.end());
  while (Last->second.Key == NoKey)
    --Last;
  uint64_t Base = First->first;
  uint64_t End = Last->second.Hi;
  if (End - Base > 0xffffffffull)
    return tableError("code spans more than 4 GiB (0x" + Twine::utohexstr(Base) + " to 0x" +
                      Twine::utohexstr(End) + "); the table's row offsets are 32-bit");
  T.CodeVaddr = Base;
  // Row starts strictly increase below, so merging only has to compare with
  // the previous row.
  auto Push = [&](uint64_t Addr, uint32_t LineIndex) {
    if (!T.Rows.empty() && T.Rows.back().line_index == LineIndex)
      return; // the same line continues
    T.Rows.push_back({(uint32_t)(Addr - Base), LineIndex});
  };
  uint64_t PrevHi = Base;
  for (auto It = First, Stop = std::next(Last); It != Stop; ++It) {
    if (It->first > PrevHi)
      Push(PrevHi, CAUSAL_NO_LINE); // gap between sequences
    Push(It->first, It->second.Key == NoKey ? CAUSAL_NO_LINE : LineOfKey[It->second.Key]);
    PrevHi = It->second.Hi;
  }
  T.Rows.push_back({(uint32_t)(End - Base), CAUSAL_NO_LINE}); // terminator
  return T;
}

} // namespace

Expected<Table> buildTableFromRanges(ArrayRef<LineRange> Ranges, BuildStats *Stats) {
  std::vector<std::string> Names;
  std::unordered_map<std::string, uint32_t> NameIndex;
  std::vector<IndexedRange> Indexed;
  Indexed.reserve(Ranges.size());
  for (const LineRange &R : Ranges) {
    uint32_t File = 0, Line = R.Line;
    if (Line != 0 && !R.File.empty()) {
      auto Ins = NameIndex.emplace(R.File, (uint32_t)Names.size());
      if (Ins.second)
        Names.push_back(R.File);
      File = Ins.first->second;
    } else {
      Line = 0;
    }
    Indexed.push_back({R.Lo, R.Hi, File, Line});
  }
  return buildTable(Names, Indexed, Stats);
}

namespace {

// Each line's function: for code inlined at the line's lowest address, the
// inlined function's name from DWARF (its DW_AT_name: line-tables-only DWARF
// has no linkage names); otherwise the symbol table's function containing
// it, demangled (line-tables-only DWARF has no subprogram for a function
// without inlined code; llvm-symbolizer uses the symbol too). The names are
// the same with and without -g, so a -g copy of a program keeps its layout
// (`causal lines --check`). Names are demangled once each.
void addFunctionNames(DWARFContext &Ctx, const ElfImage &Image, Table &T) {
  if (T.Lines.empty())
    return;
  std::vector<uint64_t> FirstAddress(T.Lines.size(), UINT64_MAX);
  for (const causal_linetab_row &Row : T.Rows)
    if (Row.line_index != CAUSAL_NO_LINE && FirstAddress[Row.line_index] == UINT64_MAX)
      FirstAddress[Row.line_index] = T.CodeVaddr + Row.offset;
  DILineInfoSpecifier Spec(DILineInfoSpecifier::FileLineInfoKind::None,
                           DILineInfoSpecifier::FunctionNameKind::ShortName);
  std::vector<ElfImage::Function> Symbols = Image.functions();
  auto SymbolAt = [&](uint64_t Address) -> const std::string * {
    auto It =
        std::upper_bound(Symbols.begin(), Symbols.end(), Address,
                         [](uint64_t A, const ElfImage::Function &F) { return A < F.Address; });
    if (It == Symbols.begin())
      return nullptr;
    --It;
    return Address < It->Address + It->Size ? &It->Name : nullptr;
  };
  std::unordered_map<std::string, std::string> Demangled;
  T.Functions.assign(T.Lines.size(), std::string());
  for (size_t I = 0; I < T.Lines.size(); ++I) {
    if (FirstAddress[I] == UINT64_MAX)
      continue;
    object::SectionedAddress Address{FirstAddress[I], object::SectionedAddress::UndefSection};
    std::string Name;
    DIInliningInfo Frames = Ctx.getInliningInfoForAddress(Address, Spec);
    if (Frames.getNumberOfFrames() > 1)
      Name = Frames.getFrame(0).FunctionName;
    if (Name.empty() || Name == DILineInfo::BadString) {
      const std::string *Symbol = SymbolAt(FirstAddress[I]);
      if (Symbol)
        Name = *Symbol;
      else if (Frames.getNumberOfFrames() == 1)
        Name = Frames.getFrame(0).FunctionName;
    }
    if (Name.empty() || Name == DILineInfo::BadString)
      continue;
    auto It = Demangled.find(Name);
    if (It == Demangled.end())
      It = Demangled.emplace(Name, tableFunctionName(llvm::demangle(Name))).first;
    T.Functions[I] = It->second;
  }
}

} // namespace

Expected<Table> buildTableFromDwarf(const ElfImage &Image, BuildStats *Stats) {
  if (!Image.hasDebugLine())
    return tableError(Image.path() +
                      ": no DWARF line table (.debug_line); compile with -g or "
                      "-gline-tables-only (causal-clang -fcausal-profile does this)");

  std::string FirstProblem;
  auto Recoverable = [&](Error E) {
    std::string Msg = toString(std::move(E));
    if (FirstProblem.empty())
      FirstProblem = Msg;
  };
  std::unique_ptr<DWARFContext> Ctx = DWARFContext::create(
      Image.object(), DWARFContext::ProcessDebugRelocations::Process, nullptr, "",
      [&](Error E) { Recoverable(std::move(E)); }, [](Error E) { consumeError(std::move(E)); });

  BuildStats LocalStats;
  BuildStats &S = Stats ? *Stats : LocalStats;
  std::vector<IndexedRange> Ranges;
  std::set<const DWARFDebugLine::LineTable *> Seen;
  std::vector<std::string> Names; // normalized paths
  std::unordered_map<std::string, uint32_t> NameIndex;
  const uint32_t NoName = UINT32_MAX;

  for (const std::unique_ptr<DWARFUnit> &CU : Ctx->compile_units()) {
    Expected<const DWARFDebugLine::LineTable *> LTOrErr =
        Ctx->getLineTableForUnit(CU.get(), [&](Error E) { Recoverable(std::move(E)); });
    if (!LTOrErr) {
      Recoverable(LTOrErr.takeError());
      continue;
    }
    const DWARFDebugLine::LineTable *LT = *LTOrErr;
    if (!LT || !Seen.insert(LT).second)
      continue;
    ++S.CompileUnits;
    const char *CompDirC = CU->getCompilationDir();
    StringRef CompDir = CompDirC ? CompDirC : "";
    std::unordered_map<uint64_t, uint32_t> FileCache; // DWARF file index -> name index
    auto FileName = [&](uint64_t Index) -> uint32_t {
      auto It = FileCache.find(Index);
      if (It != FileCache.end())
        return It->second;
      std::string Name;
      uint32_t Id = NoName;
      if (LT->Prologue.getFileNameByIndex(
              Index, CompDir, DILineInfoSpecifier::FileLineInfoKind::AbsoluteFilePath, Name)) {
        auto Ins = NameIndex.emplace(normalizePath(Name), (uint32_t)Names.size());
        if (Ins.second)
          Names.push_back(Ins.first->first);
        Id = Ins.first->second;
      }
      FileCache.emplace(Index, Id);
      return Id;
    };

    for (const DWARFDebugLine::Sequence &Seq : LT->Sequences) {
      if (Seq.Empty || Seq.LowPC >= Seq.HighPC || Seq.FirstRowIndex >= Seq.LastRowIndex ||
          Seq.LastRowIndex > LT->Rows.size())
        continue;
      if (Seq.LowPC == 0 || !Image.executableSectionContaining(Seq.LowPC, Seq.HighPC)) {
        ++S.SequencesDropped;
        continue;
      }
      ++S.SequencesUsed;
      for (unsigned I = Seq.FirstRowIndex; I + 1 < Seq.LastRowIndex; ++I) {
        const DWARFDebugLine::Row &Row = LT->Rows[I];
        uint64_t Lo = Row.Address.Address;
        uint64_t Hi = std::min(LT->Rows[I + 1].Address.Address, Seq.HighPC);
        if (Lo < Seq.LowPC || Hi <= Lo)
          continue;
        IndexedRange R{Lo, Hi, 0, Row.Line};
        if (Row.Line != 0) {
          R.File = FileName(Row.File);
          if (R.File == NoName)
            R.Line = 0;
        }
        Ranges.push_back(R);
      }
    }
  }
  Expected<Table> T = buildTable(Names, Ranges, &S);
  if (!T)
    return tableError(Image.path() + ": " + toString(T.takeError()));
  addFunctionNames(*Ctx, Image, *T);
  if (T->Rows.empty() && !FirstProblem.empty())
    return tableError(Image.path() + ": cannot read the DWARF line table: " + FirstProblem);
  return T;
}

} // namespace linetable
} // namespace causal
