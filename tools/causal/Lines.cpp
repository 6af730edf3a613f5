//===- Lines.cpp - `causal lines`: print or check the embedded line table ---===//
//
//   causal lines BINARY
//       prints the table causal-ld embedded in BINARY.
//   causal lines --check --dwarf BINARY_G BINARY [--samples LOG]
//                [--min-bytes PCT] [--min-samples PCT]
//       compares it with the DWARF line table of BINARY_G, a copy built with
//       the same command plus -g (its code bytes must equal BINARY's).
//
// The reference lookup is the DWARF line-table lookup llvm-symbolizer does
// without inlining (DWARFDebugLine::LineTable::lookupAddress: the row of the
// sequence containing the address), over the compile units in order, the
// first unit whose line table has a sequence containing the address winning.
// Sequences of code the linker discarded (not inside an executable section)
// are ignored, as in the table.
//
//===----------------------------------------------------------------------===//
#include "Commands.h"

#include "LineTable.h"

#include "causal/tunables.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/DebugInfo/DIContext.h"
#include "llvm/DebugInfo/DWARF/DWARFContext.h"
#include "llvm/DebugInfo/DWARF/DWARFDebugLine.h"
#include "llvm/DebugInfo/DWARF/DWARFUnit.h"
#include "llvm/Object/ObjectFile.h"
#include "llvm/Support/MemoryBuffer.h"

#include <algorithm>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

using namespace llvm;
using causal::linetable::ElfImage;

namespace {

const char *const Usage =
    "usage: causal lines BINARY\n"
    "       causal lines --functions BINARY\n"
    "       causal lines --check --dwarf BINARY_G BINARY [--samples LOG]\n"
    "                    [--min-bytes PCT] [--min-samples PCT]\n"
    "\n"
    "Prints the address -> file:line table causal-ld embedded in BINARY, or checks\n"
    "it against the DWARF line table of BINARY_G, the same program built with the\n"
    "same command plus -g (same code bytes). --check reports the share of code\n"
    "bytes whose file:line agrees, with --samples LOG (written by a run with\n"
    "CAUSAL_SAMPLE_LOG=LOG) the share of samples that agree and every DWARF line\n"
    "of a sampled function missing from the table. Exits 1 if a share is below\n"
    "its --min-* percentage or a line of a sampled function is missing.\n"
    "--functions prints each line of the table with its function (FILE:LINE, a tab,\n"
    "the demangled name, or <unknown>).\n";

int fail(const Twine &Message) {
  std::fprintf(stderr, "causal lines: error: %s\n", Message.str().c_str());
  return 1;
}

int usageError(const Twine &Message) {
  std::fprintf(stderr, "causal lines: error: %s\n%s", Message.str().c_str(), Usage);
  return 2;
}

std::string hex(uint64_t V) { return "0x" + utohexstr(V, /*LowerCase=*/true); }

// ---- printing ----------------------------------------------------------------

/// Opens \p Binary and reads the line table embedded in it: 0, or the exit
/// status after saying why not.
int openWithTable(const std::string &Binary, std::unique_ptr<ElfImage> &Image,
                  causal::linetable::EmbeddedTable &Table) {
  auto Opened = ElfImage::open(Binary);
  if (!Opened)
    return fail(toString(Opened.takeError()));
  Image = std::move(*Opened);
  auto Embedded = causal::linetable::readEmbeddedTable(*Image);
  if (!Embedded)
    return fail(toString(Embedded.takeError()));
  Table = std::move(*Embedded);
  return 0;
}

/// Each line of the table with its function name.
int printFunctions(const std::string &Binary) {
  std::unique_ptr<ElfImage> Image;
  causal::linetable::EmbeddedTable Embedded;
  if (int Status = openWithTable(Binary, Image, Embedded))
    return Status;
  const causal::linetable::TableView &T = Embedded.View;
  for (uint32_t I = 0; I < T.header().num_lines; ++I) {
    StringRef Function = T.function(I);
    std::printf("%s\t%s\n", T.describe(I).c_str(),
                Function.empty() ? "<unknown>" : Function.str().c_str());
  }
  return 0;
}

int printTable(const std::string &Binary) {
  std::unique_ptr<ElfImage> Image;
  causal::linetable::EmbeddedTable Embedded;
  if (int Status = openWithTable(Binary, Image, Embedded))
    return Status;
  const causal::linetable::TableView &T = Embedded.View;
  const causal_linetab_header &H = T.header();
  auto Rows = T.rows();
  uint64_t CodeEnd = H.code_vaddr + Rows.back().offset;
  std::printf("%s: line table version %u in section %s at %s (file offset %s), %u of %llu "
              "bytes used\n",
              Binary.c_str(), H.version, CAUSAL_LINETAB_SECTION, hex(H.table_vaddr).c_str(),
              hex(Embedded.Where.FileOffset).c_str(), H.total_size,
              (unsigned long long)Embedded.Where.Size);
  std::printf("code %s-%s: %u rows, %u lines, %u files\n", hex(H.code_vaddr).c_str(),
              hex(CodeEnd).c_str(), H.num_rows, H.num_lines, H.num_files);
  for (size_t I = 0; I + 1 < Rows.size(); ++I)
    std::printf("%s-%s %s\n", hex(H.code_vaddr + Rows[I].offset).c_str(),
                hex(H.code_vaddr + Rows[I + 1].offset).c_str(),
                T.describe(Rows[I].line_index).c_str());
  return 0;
}

// ---- the DWARF reference -----------------------------------------------------

// file:line as a number: (path id << 32) | line; 0 means no line.
using LineKey = uint64_t;

class PathIds {
public:
  uint32_t id(const std::string &Path) {
    auto It = Ids.emplace(Path, (uint32_t)Paths.size() + 1);
    if (It.second)
      Paths.push_back(Path);
    return It.first->second;
  }
  std::string describe(LineKey K) const {
    if (!K)
      return "<no line>";
    return Paths[(K >> 32) - 1] + ":" + std::to_string(K & 0xffffffffu);
  }

private:
  std::map<std::string, uint32_t> Ids;
  std::vector<std::string> Paths;
};

class DwarfReference {
public:
  DwarfReference(const ElfImage &Image, PathIds &Ids) : Image(Image), Ids(Ids) {}

  Error load() {
    Ctx = DWARFContext::create(
        Image.object(), DWARFContext::ProcessDebugRelocations::Process, nullptr, "",
        [this](Error E) { noteProblem(std::move(E)); },
        [](Error E) { consumeError(std::move(E)); });
    for (const std::unique_ptr<DWARFUnit> &CU : Ctx->compile_units()) {
      auto LT = Ctx->getLineTableForUnit(CU.get(), [this](Error E) { noteProblem(std::move(E)); });
      if (!LT) {
        noteProblem(LT.takeError());
        continue;
      }
      if (!*LT)
        continue;
      Unit U;
      U.LT = *LT;
      const char *Dir = CU->getCompilationDir();
      U.CompDir = Dir ? Dir : "";
      for (const DWARFDebugLine::Sequence &Seq : U.LT->Sequences) {
        bool Valid = !Seq.Empty && Seq.LowPC < Seq.HighPC && Seq.LowPC != 0 &&
                     Image.executableSectionContaining(Seq.LowPC, Seq.HighPC);
        U.Sequences.push_back({Seq.FirstRowIndex, Seq.LastRowIndex, Valid});
        if (Valid) {
          U.Lo = std::min(U.Lo, Seq.LowPC);
          U.Hi = std::max(U.Hi, Seq.HighPC);
          for (unsigned I = Seq.FirstRowIndex; I < Seq.LastRowIndex && I < U.LT->Rows.size(); ++I)
            Boundaries.push_back(U.LT->Rows[I].Address.Address);
        }
      }
      std::sort(U.Sequences.begin(), U.Sequences.end(),
                [](const SeqRows &A, const SeqRows &B) { return A.First < B.First; });
      Units.push_back(std::move(U));
    }
    if (Units.empty())
      return createStringError(inconvertibleErrorCode(),
                               Image.path() + ": no DWARF line tables" +
                                   (FirstProblem.empty() ? "" : ": " + FirstProblem));
    return Error::success();
  }

  LineKey lookup(uint64_t Address) {
    for (Unit &U : Units) {
      if (Address < U.Lo || Address >= U.Hi)
        continue;
      uint32_t Row = U.LT->lookupAddress({Address, object::SectionedAddress::UndefSection});
      if (Row == U.LT->UnknownRowIndex || Row >= U.LT->Rows.size())
        continue;
      auto It = std::upper_bound(U.Sequences.begin(), U.Sequences.end(), Row,
                                 [](uint32_t R, const SeqRows &S) { return R < S.First; });
      if (It == U.Sequences.begin() || !std::prev(It)->Valid || Row >= std::prev(It)->Last)
        continue;
      const DWARFDebugLine::Row &R = U.LT->Rows[Row];
      if (R.Line == 0)
        return 0;
      auto Cached = U.FileIds.find(R.File);
      uint32_t PathId;
      if (Cached != U.FileIds.end()) {
        PathId = Cached->second;
      } else {
        std::string Name;
        if (U.LT->Prologue.getFileNameByIndex(
                R.File, U.CompDir, DILineInfoSpecifier::FileLineInfoKind::AbsoluteFilePath, Name))
          PathId = Ids.id(causal::linetable::normalizePath(Name));
        else
          PathId = 0;
        U.FileIds[R.File] = PathId;
      }
      return PathId ? ((LineKey)PathId << 32) | R.Line : 0;
    }
    return 0;
  }

  const std::vector<uint64_t> &boundaries() const { return Boundaries; }

private:
  void noteProblem(Error E) {
    std::string Msg = toString(std::move(E));
    if (FirstProblem.empty())
      FirstProblem = Msg;
  }
  struct SeqRows {
    uint32_t First, Last;
    bool Valid;
  };
  struct Unit {
    const DWARFDebugLine::LineTable *LT = nullptr;
    std::string CompDir;
    std::vector<SeqRows> Sequences;
    uint64_t Lo = UINT64_MAX, Hi = 0;
    std::map<uint64_t, uint32_t> FileIds;
  };
  const ElfImage &Image;
  PathIds &Ids;
  std::unique_ptr<DWARFContext> Ctx;
  std::vector<Unit> Units;
  std::vector<uint64_t> Boundaries;
  std::string FirstProblem;
};

// ---- checking ----------------------------------------------------------------

struct Segment {
  uint64_t Lo, Hi;
  LineKey Ours, Dwarf;
};

std::string realPathOf(const std::string &Path) {
  char Buf[PATH_MAX];
  return realpath(Path.c_str(), Buf) ? std::string(Buf) : Path;
}

// Code bytes of both images must be identical for the comparison to mean
// anything. Returns an empty string if they are, else the difference.
std::string compareCode(const ElfImage &A, const ElfImage &B) {
  auto ExecNames = [](const ElfImage &I) {
    std::set<std::string> Names;
    for (const auto &S : I.sections())
      if (S.Executable)
        Names.insert(S.Name);
    return Names;
  };
  if (ExecNames(A) != ExecNames(B))
    return "they have different executable sections";
  // Layout first (a size difference explains any content difference), then
  // contents.
  for (const auto &SA : A.sections()) {
    if (!SA.Executable)
      continue;
    const auto *SB = B.findSection(SA.Name);
    if (SB->Address != SA.Address || SB->Size != SA.Size)
      return "section " + SA.Name + " is at " + hex(SA.Address) + " (" + std::to_string(SA.Size) +
             " bytes) in one and at " + hex(SB->Address) + " (" + std::to_string(SB->Size) +
             " bytes) in the other";
  }
  for (const auto &SA : A.sections()) {
    if (!SA.Executable)
      continue;
    const auto *SB = B.findSection(SA.Name);
    auto CA = A.contents(SA);
    auto CB = B.contents(*SB);
    if (!CA || !CB) {
      consumeError(CA.takeError());
      consumeError(CB.takeError());
      return "cannot read section " + SA.Name;
    }
    if (*CA != *CB) {
      size_t I = 0;
      while (I < CA->size() && (*CA)[I] == (*CB)[I])
        ++I;
      return "code bytes of section " + SA.Name + " differ (first at " + hex(SA.Address + I) + ")";
    }
  }
  return {};
}

double percent(uint64_t Part, uint64_t Whole) { return Whole ? 100.0 * Part / Whole : 0.0; }

/// The embedded table's line of an address, as a LineKey (0: none).
using LineOf = std::function<LineKey(uint64_t)>;

/// Where the table and DWARF say the same, byte by byte.
struct ByteAgreement {
  std::vector<Segment> Segments; // sorted by address
  uint64_t CodeBytes = 0, LineBytes = 0, AgreeBytes = 0;
  unsigned ExecSections = 0;
};

/// Cuts the executable sections of \p Image into segments over which both
/// lookups are constant (between the table's row starts and the DWARF
/// rows' addresses) and counts the bytes on which they agree.
ByteAgreement compareBytes(const ElfImage &Image, const causal::linetable::TableView &T,
                           DwarfReference &Ref, const LineOf &Ours) {
  std::vector<uint64_t> Bounds = Ref.boundaries();
  const causal_linetab_header &H = T.header();
  for (const causal_linetab_row &R : T.rows())
    Bounds.push_back(H.code_vaddr + R.offset);
  ByteAgreement Out;
  for (const auto &S : Image.sections()) {
    if (!S.Executable || !S.Size)
      continue;
    ++Out.ExecSections;
    Out.CodeBytes += S.Size;
    std::vector<uint64_t> Points{S.Address, S.Address + S.Size};
    for (uint64_t B : Bounds)
      if (B > S.Address && B < S.Address + S.Size)
        Points.push_back(B);
    std::sort(Points.begin(), Points.end());
    Points.erase(std::unique(Points.begin(), Points.end()), Points.end());
    for (size_t I = 0; I + 1 < Points.size(); ++I) {
      Segment Seg{Points[I], Points[I + 1], Ours(Points[I]), Ref.lookup(Points[I])};
      uint64_t Len = Seg.Hi - Seg.Lo;
      if (Seg.Ours || Seg.Dwarf) {
        Out.LineBytes += Len;
        if (Seg.Ours == Seg.Dwarf)
          Out.AgreeBytes += Len;
      }
      Out.Segments.push_back(Seg);
    }
  }
  std::sort(Out.Segments.begin(), Out.Segments.end(),
            [](const Segment &A, const Segment &B) { return A.Lo < B.Lo; });
  return Out;
}

/// Prints the byte agreement and a few differences; false below \p MinBytes.
bool printByteAgreement(const ByteAgreement &Bytes, const PathIds &Ids, double MinBytes) {
  double BytePercent = percent(Bytes.AgreeBytes, Bytes.LineBytes);
  std::printf("code bytes: %llu in %u executable sections, %llu with a source line\n",
              (unsigned long long)Bytes.CodeBytes, Bytes.ExecSections,
              (unsigned long long)Bytes.LineBytes);
  std::printf("bytes agreeing: %llu of %llu (%.2f %%)\n", (unsigned long long)Bytes.AgreeBytes,
              (unsigned long long)Bytes.LineBytes, BytePercent);
  bool Ok = true;
  if (MinBytes >= 0 && (Bytes.LineBytes == 0 || BytePercent + 1e-9 < MinBytes)) {
    std::printf("FAIL: bytes agreeing below %.2f %%\n", MinBytes);
    Ok = false;
  }
  if (Bytes.AgreeBytes < Bytes.LineBytes) {
    unsigned Shown = 0;
    for (const Segment &S : Bytes.Segments)
      if (S.Ours != S.Dwarf && (S.Ours || S.Dwarf) && Shown++ < 5)
        std::printf("  differs: %s-%s table %s, DWARF %s\n", hex(S.Lo).c_str(), hex(S.Hi).c_str(),
                    Ids.describe(S.Ours).c_str(), Ids.describe(S.Dwarf).c_str());
  }
  return Ok;
}

/// The samples of a sample log ("<module path> <address hex> <count>" lines).
struct SampleCounts {
  uint64_t Samples = 0, OtherSamples = 0; // of Binary, of other modules
  std::map<uint64_t, uint64_t> ByAddress; // of Binary
};

/// Reads \p SampleLog, keeping the samples of \p Binary; 0, or the exit
/// status after saying what is wrong.
int readSampleLog(const std::string &SampleLog, const std::string &Binary, SampleCounts &Out) {
  auto Buffer = MemoryBuffer::getFile(SampleLog);
  if (!Buffer)
    return fail(SampleLog + ": cannot read: " + Buffer.getError().message());
  std::string Self = realPathOf(Binary);
  std::map<std::string, bool> IsSelf;
  StringRef Rest = (*Buffer)->getBuffer();
  unsigned LineNo = 0;
  while (!Rest.empty()) {
    StringRef Line;
    std::tie(Line, Rest) = Rest.split('\n');
    ++LineNo;
    Line = Line.trim();
    if (Line.empty() || Line.starts_with("#"))
      continue;
    size_t CountSep = Line.find_last_of(" \t");
    size_t AddrSep =
        CountSep == StringRef::npos ? StringRef::npos : Line.find_last_of(" \t", CountSep - 1);
    uint64_t Address = 0, Count = 0;
    if (AddrSep == StringRef::npos || AddrSep == 0 ||
        Line.substr(CountSep + 1).getAsInteger(10, Count))
      return fail(SampleLog + ":" + Twine(LineNo) +
                  ": expected '<module path> <address hex> <count>', got '" + Line + "'");
    StringRef AddrText = Line.slice(AddrSep + 1, CountSep).trim();
    AddrText.consume_front("0x");
    if (AddrText.getAsInteger(16, Address))
      return fail(SampleLog + ":" + Twine(LineNo) + ": bad address '" + AddrText + "'");
    std::string Module = Line.substr(0, AddrSep).rtrim().str();
    auto Known = IsSelf.find(Module);
    if (Known == IsSelf.end())
      Known = IsSelf.emplace(Module, Module == Binary || realPathOf(Module) == Self).first;
    if (!Known->second) {
      Out.OtherSamples += Count;
      continue;
    }
    Out.Samples += Count;
    Out.ByAddress[Address] += Count;
  }
  return 0;
}

/// Prints how many samples the table and DWARF charge to the same line;
/// false below \p MinSamples.
bool printSampleAgreement(const SampleCounts &Counts, const std::string &Binary, const LineOf &Ours,
                          DwarfReference &Ref, double MinSamples) {
  uint64_t AgreeSamples = 0, NoLineSamples = 0;
  for (const auto &[Address, Count] : Counts.ByAddress) {
    LineKey O = Ours(Address), D = Ref.lookup(Address);
    if (O == D)
      AgreeSamples += Count;
    if (!D)
      NoLineSamples += Count;
  }
  double SamplePercent = percent(AgreeSamples, Counts.Samples);
  std::printf("samples: %llu for %s (%llu with no DWARF line), %llu for other modules ignored\n",
              (unsigned long long)Counts.Samples, Binary.c_str(), (unsigned long long)NoLineSamples,
              (unsigned long long)Counts.OtherSamples);
  std::printf("samples agreeing: %llu of %llu (%.2f %%)\n", (unsigned long long)AgreeSamples,
              (unsigned long long)Counts.Samples, SamplePercent);
  if (MinSamples >= 0 && (Counts.Samples == 0 || SamplePercent + 1e-9 < MinSamples)) {
    std::printf("FAIL: samples agreeing below %.2f %%\n", MinSamples);
    return false;
  }
  return true;
}

/// Every DWARF line (covering at least one byte) of a sampled function must
/// be selectable in the table. Prints what is missing; false if any is.
bool checkSampledFunctions(const ElfImage &ImageG, const SampleCounts &Counts,
                           const std::vector<Segment> &Segments, const PathIds &Ids) {
  std::vector<ElfImage::Function> Functions = ImageG.functions();
  std::set<size_t> Sampled;
  for (const auto &Entry : Counts.ByAddress) {
    auto It =
        std::upper_bound(Functions.begin(), Functions.end(), Entry.first,
                         [](uint64_t A, const ElfImage::Function &F) { return A < F.Address; });
    if (It == Functions.begin())
      continue;
    --It;
    if (Entry.first < It->Address + It->Size)
      Sampled.insert(It - Functions.begin());
  }
  uint64_t DwarfLines = 0, Missing = 0;
  std::vector<std::string> MissingShown;
  for (size_t FI : Sampled) {
    const ElfImage::Function &F = Functions[FI];
    std::set<LineKey> Want, Have;
    auto It = std::upper_bound(Segments.begin(), Segments.end(), F.Address,
                               [](uint64_t A, const Segment &S) { return A < S.Lo; });
    if (It != Segments.begin())
      --It;
    for (; It != Segments.end() && It->Lo < F.Address + F.Size; ++It) {
      if (It->Hi <= F.Address)
        continue;
      if (It->Dwarf)
        Want.insert(It->Dwarf);
      if (It->Ours)
        Have.insert(It->Ours);
    }
    DwarfLines += Want.size();
    for (LineKey K : Want)
      if (!Have.count(K)) {
        ++Missing;
        if (MissingShown.size() < 10)
          MissingShown.push_back(Ids.describe(K) + " (in " + F.Name + ")");
      }
  }
  std::printf("sampled functions: %zu, DWARF lines in them: %llu, missing from the table: %llu\n",
              Sampled.size(), (unsigned long long)DwarfLines, (unsigned long long)Missing);
  for (const std::string &M : MissingShown)
    std::printf("  missing: %s\n", M.c_str());
  if (Missing) {
    std::printf("FAIL: lines of sampled functions missing from the table\n");
    return false;
  }
  return true;
}

int checkTable(const std::string &Binary, const std::string &BinaryG, const std::string &SampleLog,
               double MinBytes, double MinSamples) {
  std::unique_ptr<ElfImage> Image;
  causal::linetable::EmbeddedTable Embedded;
  if (int Status = openWithTable(Binary, Image, Embedded))
    return Status;
  auto ImageG = ElfImage::open(BinaryG);
  if (!ImageG)
    return fail(toString(ImageG.takeError()));
  if (!(*ImageG)->hasDebugLine())
    return fail(BinaryG + ": no DWARF line table (.debug_line): build it with -g");
  std::string Difference = compareCode(*Image, **ImageG);
  if (!Difference.empty())
    return fail(Binary + " and " + BinaryG + " are not comparable: " + Difference +
                " (build both with the same command, one with -g added)");

  const causal::linetable::TableView &T = Embedded.View;
  PathIds Ids;
  std::vector<LineKey> OurKeyOfLine(T.lines().size());
  for (size_t I = 0; I < OurKeyOfLine.size(); ++I)
    OurKeyOfLine[I] =
        ((LineKey)Ids.id(T.file(T.lines()[I].file_index).str()) << 32) | T.lines()[I].line;
  LineOf Ours = [&](uint64_t Address) -> LineKey {
    uint32_t L = T.lookup(Address);
    return L == CAUSAL_NO_LINE ? 0 : OurKeyOfLine[L];
  };
  DwarfReference Ref(**ImageG, Ids);
  if (Error E = Ref.load())
    return fail(toString(std::move(E)));

  ByteAgreement Bytes = compareBytes(*Image, T, Ref, Ours);
  bool Ok = printByteAgreement(Bytes, Ids, MinBytes);
  if (SampleLog.empty()) {
    if (MinSamples >= 0)
      return usageError("--min-samples needs --samples LOG");
    return Ok ? 0 : 1;
  }
  SampleCounts Counts;
  if (int Status = readSampleLog(SampleLog, Binary, Counts))
    return Status;
  Ok = printSampleAgreement(Counts, Binary, Ours, Ref, MinSamples) && Ok;
  Ok = checkSampledFunctions(**ImageG, Counts, Bytes.Segments, Ids) && Ok;
  return Ok ? 0 : 1;
}

bool parsePercent(const std::string &Text, double &Out) {
  char *End = nullptr;
  Out = std::strtod(Text.c_str(), &End);
  return !Text.empty() && End && *End == '\0' && Out >= 0 && Out <= 100;
}

} // namespace

int causal::linesCommand(const Args &args) {
  bool Check = false, Functions = false;
  std::string Binary, BinaryG, SampleLog;
  double MinBytes = -1, MinSamples = -1;
  for (size_t I = 0; I < args.size(); ++I) {
    std::string A = args[I];
    std::string Value;
    bool HasValue = false;
    size_t Eq = A.find('=');
    if (A.compare(0, 2, "--") == 0 && Eq != std::string::npos) {
      Value = A.substr(Eq + 1);
      A = A.substr(0, Eq);
      HasValue = true;
    }
    auto TakeValue = [&](const char *Name) -> bool {
      if (HasValue)
        return true;
      if (I + 1 >= args.size())
        return false;
      Value = args[++I];
      (void)Name;
      return true;
    };
    if (A == "--help" || A == "-h") {
      std::fputs(Usage, stdout);
      return 0;
    } else if (A == "--check") {
      Check = true;
    } else if (A == "--functions") {
      Functions = true;
    } else if (A == "--dwarf") {
      if (!TakeValue("--dwarf"))
        return usageError("--dwarf needs a file");
      BinaryG = Value;
    } else if (A == "--samples") {
      if (!TakeValue("--samples"))
        return usageError("--samples needs a file");
      SampleLog = Value;
    } else if (A == "--min-bytes" || A == "--min-samples") {
      if (!TakeValue(A.c_str()))
        return usageError(A + " needs a percentage");
      double P;
      if (!parsePercent(Value, P))
        return usageError(A + " needs a percentage from 0 to 100, got '" + Value + "'");
      (A == "--min-bytes" ? MinBytes : MinSamples) = P;
    } else if (!A.empty() && A[0] == '-') {
      return usageError("unknown option '" + A + "'");
    } else if (Binary.empty()) {
      Binary = A;
    } else {
      return usageError("more than one BINARY ('" + Binary + "', '" + A + "')");
    }
  }
  if (Binary.empty())
    return usageError("no BINARY given");
  if (Functions && Check)
    return usageError("--functions does not go with --check");
  if (Functions)
    return printFunctions(Binary);
  if (!Check) {
    if (!BinaryG.empty() || !SampleLog.empty() || MinBytes >= 0 || MinSamples >= 0)
      return usageError("--dwarf, --samples and --min-* need --check");
    return printTable(Binary);
  }
  if (BinaryG.empty())
    return usageError("--check needs --dwarf BINARY_G (a copy built with -g)");
  return checkTable(Binary, BinaryG, SampleLog, MinBytes, MinSamples);
}
