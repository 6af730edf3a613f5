//===- LineTableTest.cpp - Rules, serialization and validation of the table -===//
#include "LineTable.h"

#include "causal/abi.h"

#include "gtest/gtest.h"

#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <unistd.h>
#include <vector>

using namespace causal::linetable;

namespace {

Table build(const std::vector<LineRange> &Ranges, BuildStats *Stats = nullptr) {
  auto T = buildTableFromRanges(Ranges, Stats);
  EXPECT_TRUE(bool(T)) << (T ? "" : llvm::toString(T.takeError()));
  return T ? std::move(*T) : Table();
}

// "file:line" the serialized table gives for an address (the runtime lookup).
std::string at(const TableView &V, uint64_t Address) { return V.describe(V.lookup(Address)); }

TableView roundTrip(const Table &T, uint64_t TableVaddr = 0x5000) {
  auto Bytes = serialize(T, TableVaddr);
  EXPECT_TRUE(bool(Bytes));
  auto View = TableView::fromBytes(*Bytes);
  EXPECT_TRUE(bool(View)) << (View ? "" : llvm::toString(View.takeError()));
  return std::move(*View);
}

TEST(LineTableRules, MergesAdjacentRangesOfTheSameLine) {
  Table T = build({{0x1000, 0x1004, "/src/a.c", 3},
                   {0x1004, 0x1008, "/src/a.c", 3},
                   {0x1008, 0x1010, "/src/a.c", 4}});
  ASSERT_EQ(T.Rows.size(), 3u); // line 3, line 4, terminator
  EXPECT_EQ(T.CodeVaddr, 0x1000u);
  EXPECT_EQ(T.Rows[0].offset, 0u);
  EXPECT_EQ(T.Rows[1].offset, 8u);
  EXPECT_EQ(T.Rows[2].offset, 0x10u);
  EXPECT_EQ(T.Rows[2].line_index, CAUSAL_NO_LINE);
  EXPECT_EQ(T.Lines.size(), 2u);
}

TEST(LineTableRules, GapsAndLineZeroBecomeNoLine) {
  Table T = build({{0x1000, 0x1004, "/src/a.c", 3},
                   {0x1004, 0x1006, "", 0}, // line 0
                   {0x1006, 0x1008, "/src/a.c", 3},
                   {0x1010, 0x1014, "/src/a.c", 9}}); // gap 0x1008-0x1010
  TableView V = roundTrip(T);
  EXPECT_EQ(at(V, 0x1000), "/src/a.c:3");
  EXPECT_EQ(at(V, 0x1003), "/src/a.c:3");
  EXPECT_EQ(at(V, 0x1004), "<no line>");
  EXPECT_EQ(at(V, 0x1006), "/src/a.c:3");
  EXPECT_EQ(at(V, 0x1008), "<no line>");
  EXPECT_EQ(at(V, 0x100f), "<no line>");
  EXPECT_EQ(at(V, 0x1010), "/src/a.c:9");
  EXPECT_EQ(at(V, 0x1013), "/src/a.c:9");
  EXPECT_EQ(at(V, 0x1014), "<no line>"); // terminator
  EXPECT_EQ(at(V, 0xfff), "<no line>");  // before the table
  EXPECT_EQ(at(V, 0), "<no line>");
  EXPECT_EQ(at(V, ~0ull), "<no line>");
}

TEST(LineTableRules, NoLineAtEitherEndIsTrimmed) {
  Table T = build({{0x2000, 0x2010, "", 0}, {0x2010, 0x2020, "/a.c", 1}, {0x2020, 0x2030, "", 0}});
  EXPECT_EQ(T.CodeVaddr, 0x2010u);
  ASSERT_EQ(T.Rows.size(), 2u);
  EXPECT_EQ(T.Rows[1].offset, 0x10u);
}

TEST(LineTableRules, FirstRangeWinsWhereRangesOverlap) {
  BuildStats Stats;
  Table T = build({{0x1000, 0x1010, "/first.c", 1},
                   {0x1008, 0x1020, "/second.c", 2}, // overlaps the end of the first
                   {0x0ff0, 0x1004, "/third.c", 3}}, // overlaps its start
                  &Stats);
  TableView V = roundTrip(T);
  EXPECT_EQ(at(V, 0x0ff0), "/third.c:3");
  EXPECT_EQ(at(V, 0x0fff), "/third.c:3");
  EXPECT_EQ(at(V, 0x1000), "/first.c:1");
  EXPECT_EQ(at(V, 0x100f), "/first.c:1");
  EXPECT_EQ(at(V, 0x1010), "/second.c:2");
  EXPECT_EQ(at(V, 0x101f), "/second.c:2");
  EXPECT_EQ(at(V, 0x1020), "<no line>");
  EXPECT_EQ(Stats.BytesOverlapped, 8u + 4u);
}

TEST(LineTableRules, LinesOnlyOverlappedAwayAreNotKept) {
  Table T = build({{0x1000, 0x1010, "/kept.c", 1}, {0x1000, 0x1010, "/folded.c", 2}});
  ASSERT_EQ(T.Files.size(), 1u);
  EXPECT_EQ(T.Files[0], "/kept.c");
  EXPECT_EQ(T.Lines.size(), 1u);
}

TEST(LineTableRules, LaterRangeFillsAHoleInsideAnEarlierOne) {
  Table T = build(
      {{0x1000, 0x1004, "/a.c", 1}, {0x1008, 0x100c, "/a.c", 2}, {0x1000, 0x1010, "/b.c", 7}});
  TableView V = roundTrip(T);
  EXPECT_EQ(at(V, 0x1002), "/a.c:1");
  EXPECT_EQ(at(V, 0x1004), "/b.c:7");
  EXPECT_EQ(at(V, 0x1009), "/a.c:2");
  EXPECT_EQ(at(V, 0x100c), "/b.c:7");
}

TEST(LineTableRules, EmptyAndReversedRangesAreIgnored) {
  Table T = build({{0x1000, 0x1000, "/a.c", 1}, {0x1010, 0x1008, "/a.c", 2}});
  EXPECT_TRUE(T.Rows.empty());
  Table OnlyNoLine = build({{0x1000, 0x1010, "", 0}});
  EXPECT_TRUE(OnlyNoLine.Rows.empty());
}

TEST(LineTableRules, FilesAndLinesAreSortedIndependentlyOfAddresses) {
  Table A = build({{0x1000, 0x1004, "/z.c", 5}, {0x1004, 0x1008, "/a.c", 9}});
  Table B = build({{0x3000, 0x3004, "/a.c", 9}, {0x3004, 0x3008, "/z.c", 5}});
  ASSERT_EQ(A.Files, B.Files);
  EXPECT_EQ(A.Files[0], "/a.c");
  ASSERT_EQ(A.Lines.size(), 2u);
  EXPECT_EQ(A.Lines[0].file_index, 0u);
  EXPECT_EQ(A.Lines[0].line, 9u);
  EXPECT_EQ(A.serializedSize(), B.serializedSize());
}

TEST(LineTableRules, MoreThan4GiBOfCodeIsAnError) {
  std::vector<LineRange> Ranges{{0x1000, 0x1004, "/a.c", 1},
                                {0x1000 + (1ull << 32), 0x1008 + (1ull << 32), "/a.c", 2}};
  auto T = buildTableFromRanges(Ranges);
  ASSERT_FALSE(bool(T));
  EXPECT_NE(llvm::toString(T.takeError()).find("4 GiB"), std::string::npos);
}

TEST(LineTableFormat, SizeDependsOnlyOnCountsAndPaths) {
  Table T = build({{0x1000, 0x1004, "/src/a.c", 1}, {0x1004, 0x1008, "/src/b.c", 2}});
  auto Bytes = serialize(T, 0x4000);
  ASSERT_TRUE(bool(Bytes));
  EXPECT_EQ(Bytes->size(), T.serializedSize());
  EXPECT_EQ(Bytes->size() % 8, 0u);
  // Same counts at other addresses: same size.
  Table Moved = build({{0x9000, 0x9004, "/src/a.c", 1}, {0x9004, 0x9008, "/src/b.c", 2}});
  EXPECT_EQ(Moved.serializedSize(), T.serializedSize());
  // Padding to a larger placeholder keeps the table valid.
  auto Padded = serialize(T, 0x4000, T.serializedSize() + 64);
  ASSERT_TRUE(bool(Padded));
  EXPECT_EQ(Padded->size(), T.serializedSize() + 64);
  EXPECT_TRUE(bool(TableView::fromBytes(*Padded)));
}

TEST(LineTableFormat, HeaderFieldsAndRuntimeValidation) {
  Table T = build({{0x1100, 0x1108, "/src/a.c", 12}});
  auto Bytes = serialize(T, 0x4000);
  ASSERT_TRUE(bool(Bytes));
  std::vector<uint64_t> Aligned((Bytes->size() + 7) / 8);
  std::memcpy(Aligned.data(), Bytes->data(), Bytes->size());
  const char *Start = reinterpret_cast<const char *>(Aligned.data());
  const causal_linetab_header *H = causal_linetab_validate(Start, Start + Bytes->size());
  ASSERT_NE(H, nullptr);
  EXPECT_EQ(std::memcmp(H->magic, CAUSAL_LINETAB_MAGIC, 8), 0);
  EXPECT_EQ(H->version, CAUSAL_LINETAB_VERSION);
  EXPECT_EQ(H->table_vaddr, 0x4000u);
  EXPECT_EQ(H->code_vaddr, 0x1100u);
  EXPECT_EQ(H->num_rows, 2u);
  EXPECT_EQ(H->num_lines, 1u);
  EXPECT_EQ(H->num_files, 1u);
  EXPECT_STREQ(causal_linetab_file(H, 0), "/src/a.c");
  EXPECT_EQ(causal_linetab_file(H, 1), nullptr);
  EXPECT_EQ(causal_linetab_lookup(H, 0x1104), 0u);
  EXPECT_EQ(causal_linetab_lookup(H, 0x1108), CAUSAL_NO_LINE);
}

TEST(LineTableFormat, NothingToSerializeIsAnError) {
  EXPECT_FALSE(bool(serialize(Table(), 0)));
  Table NoTerminator;
  NoTerminator.Rows.push_back({0, 0});
  NoTerminator.Lines.push_back({0, 1});
  NoTerminator.Files.push_back("/a.c");
  auto R = serialize(NoTerminator, 0);
  ASSERT_FALSE(bool(R));
  EXPECT_NE(llvm::toString(R.takeError()).find("terminator"), std::string::npos);
}

// A valid table, then one field broken at a time.
class CorruptTable : public ::testing::Test {
protected:
  void SetUp() override {
    Table T = build({{0x1000, 0x1004, "/src/a.c", 1},
                     {0x1004, 0x1008, "/src/b.c", 2},
                     {0x1010, 0x1018, "/src/a.c", 3}});
    auto B = serialize(T, 0x4000);
    ASSERT_TRUE(bool(B));
    Bytes = *B;
  }
  causal_linetab_header &header() {
    return *reinterpret_cast<causal_linetab_header *>(Bytes.data());
  }
  std::string rejection() {
    // Every rejection must also be a rejection by the runtime's validator
    // or by the stricter checks; none may crash.
    auto V = TableView::fromBytes(Bytes);
    if (V)
      return "";
    return llvm::toString(V.takeError());
  }
  std::vector<uint8_t> Bytes;
};

TEST_F(CorruptTable, ValidBaseline) { EXPECT_EQ(rejection(), ""); }

TEST_F(CorruptTable, BadMagic) {
  Bytes[0] = 'X';
  EXPECT_NE(rejection().find("magic"), std::string::npos);
}

TEST_F(CorruptTable, AllZeroPlaceholder) {
  std::fill(Bytes.begin(), Bytes.end(), 0);
  EXPECT_NE(rejection().find("placeholder"), std::string::npos);
}

TEST_F(CorruptTable, OtherVersion) {
  header().version = CAUSAL_LINETAB_VERSION + 1;
  EXPECT_NE(rejection().find("version"), std::string::npos);
}

TEST_F(CorruptTable, Truncated) {
  Bytes.resize(Bytes.size() - 8);
  EXPECT_NE(rejection(), "");
  Bytes.resize(10);
  EXPECT_NE(rejection().find("too small"), std::string::npos);
}

TEST_F(CorruptTable, RowsPastTheEnd) {
  header().num_rows = 1000000;
  EXPECT_NE(rejection(), "");
  header().num_rows = 0;
  EXPECT_NE(rejection(), "");
}

TEST_F(CorruptTable, HugeOffsetsDoNotOverflow) {
  header().rows_offset = 0xfffffff8u;
  EXPECT_NE(rejection(), "");
  SetUp();
  header().strings_offset = 0xffffffffu;
  EXPECT_NE(rejection(), "");
  SetUp();
  header().files_offset = 0xfffffffcu;
  header().num_files = 0x40000000u;
  EXPECT_NE(rejection(), "");
}

TEST_F(CorruptTable, RowRefersToMissingLine) {
  auto *Rows = reinterpret_cast<causal_linetab_row *>(Bytes.data() + header().rows_offset);
  Rows[0].line_index = header().num_lines;
  EXPECT_NE(rejection().find("refers to line"), std::string::npos);
}

TEST_F(CorruptTable, LineRefersToMissingFile) {
  auto *Lines = reinterpret_cast<causal_linetab_line *>(Bytes.data() + header().lines_offset);
  Lines[0].file_index = 7;
  EXPECT_NE(rejection().find("refers to file"), std::string::npos);
}

TEST_F(CorruptTable, UnsortedRows) {
  auto *Rows = reinterpret_cast<causal_linetab_row *>(Bytes.data() + header().rows_offset);
  std::swap(Rows[0].offset, Rows[1].offset);
  EXPECT_NE(rejection().find("sorted"), std::string::npos);
}

TEST_F(CorruptTable, MissingTerminator) {
  auto *Rows = reinterpret_cast<causal_linetab_row *>(Bytes.data() + header().rows_offset);
  Rows[header().num_rows - 1].line_index = 0;
  EXPECT_NE(rejection().find("terminator"), std::string::npos);
}

TEST_F(CorruptTable, UnterminatedStrings) {
  Bytes[header().strings_offset + header().strings_size - 1] = 'x';
  EXPECT_NE(rejection(), "");
}

TEST_F(CorruptTable, RandomDamageIsRejectedOrSafe) {
  std::mt19937 Rng(12345);
  std::vector<uint8_t> Good = Bytes;
  for (int Trial = 0; Trial < 3000; ++Trial) {
    Bytes = Good;
    int Flips = 1 + Rng() % 4;
    for (int F = 0; F < Flips; ++F)
      Bytes[Rng() % Bytes.size()] ^= (uint8_t)(1u << (Rng() % 8));
    auto V = TableView::fromBytes(Bytes);
    if (!V) {
      llvm::consumeError(V.takeError());
      continue;
    }
    // Accepted: every lookup must stay in bounds and describe something.
    for (uint64_t A = 0xff0; A < 0x1020; ++A) {
      uint32_t L = V->lookup(A);
      ASSERT_TRUE(L == CAUSAL_NO_LINE || L < V->header().num_lines);
      ASSERT_FALSE(V->describe(L).empty());
    }
  }
}

TEST(ElfImageErrors, NonElfAndMissingFiles) {
  char Path[] = "/tmp/causal-linetable-test-XXXXXX";
  int Fd = mkstemp(Path);
  ASSERT_GE(Fd, 0);
  const char Text[] = "not an ELF file at all\n";
  ASSERT_EQ(write(Fd, Text, sizeof(Text)), (ssize_t)sizeof(Text));
  close(Fd);
  auto Image = ElfImage::open(Path);
  ASSERT_FALSE(bool(Image));
  EXPECT_NE(llvm::toString(Image.takeError()).find("not an ELF file"), std::string::npos);

  // A 32-bit ELF header.
  FILE *F = std::fopen(Path, "wb");
  unsigned char Elf32[64] = {0x7f, 'E', 'L', 'F', 1, 1, 1};
  std::fwrite(Elf32, 1, sizeof(Elf32), F);
  std::fclose(F);
  Image = ElfImage::open(Path);
  ASSERT_FALSE(bool(Image));
  EXPECT_NE(llvm::toString(Image.takeError()).find("x86-64"), std::string::npos);
  unlink(Path);

  Image = ElfImage::open("/nonexistent/causal/binary");
  ASSERT_FALSE(bool(Image));
  EXPECT_NE(llvm::toString(Image.takeError()).find("cannot open"), std::string::npos);
}

TEST(NormalizePath, RemovesDotsAndDuplicateSlashes) {
  EXPECT_EQ(normalizePath("/a/./b/../c.c"), "/a/c.c");
  EXPECT_EQ(normalizePath("/a//b/c.h"), "/a/b/c.h");
  EXPECT_EQ(normalizePath("/usr/include/x86_64-linux-gnu/../stdio.h"), "/usr/include/stdio.h");
}

} // namespace

TEST(LineTableFormat, FunctionNamesRoundTrip) {
  Table T = build({{0x1100, 0x1108, "/src/a.c", 12},
                   {0x1108, 0x1110, "/src/a.c", 13},
                   {0x1110, 0x1118, "/src/b.c", 7}});
  ASSERT_EQ(T.Lines.size(), 3u);
  T.Functions = {"ns::f(int)", "", "ns::f(int)"};
  auto Bytes = serialize(T, 0x4000);
  ASSERT_TRUE(bool(Bytes));
  EXPECT_EQ(Bytes->size(), T.serializedSize());
  auto View = TableView::fromBytes(*Bytes);
  ASSERT_TRUE(bool(View)) << toString(View.takeError());
  EXPECT_EQ(View->function(0), "ns::f(int)");
  EXPECT_EQ(View->function(1), "");
  EXPECT_EQ(View->function(2), "ns::f(int)");
  EXPECT_EQ(View->function(3), ""); // out of range
  // One copy of a name shared by several lines.
  std::string Text(Bytes->begin(), Bytes->end());
  EXPECT_EQ(Text.find("ns::f(int)"), Text.rfind("ns::f(int)"));
  // More names than lines is a bug of the caller, not a table.
  T.Functions.push_back("extra");
  EXPECT_FALSE(bool(serialize(T, 0x4000)));
}

TEST(LineTableFormat, ReadsVersion1Tables) {
  // A version 1 table: the header ends before functions_offset, no names.
  Table T = build({{0x1100, 0x1108, "/src/a.c", 12}});
  auto Bytes = serialize(T, 0x4000);
  ASSERT_TRUE(bool(Bytes));
  const size_t Cut = sizeof(causal_linetab_header) - CAUSAL_LINETAB_V1_HEADER_SIZE;
  std::vector<uint8_t> V1(Bytes->begin(), Bytes->begin() + CAUSAL_LINETAB_V1_HEADER_SIZE);
  V1.insert(V1.end(), Bytes->begin() + sizeof(causal_linetab_header), Bytes->end());
  causal_linetab_header H;
  std::memcpy(&H, Bytes->data(), sizeof(H));
  H.version = CAUSAL_LINETAB_VERSION_1;
  H.header_size = CAUSAL_LINETAB_V1_HEADER_SIZE;
  H.rows_offset -= Cut;
  H.lines_offset -= Cut;
  H.files_offset -= Cut;
  H.strings_offset -= Cut;
  H.total_size -= Cut;
  std::memcpy(V1.data(), &H, CAUSAL_LINETAB_V1_HEADER_SIZE);
  auto View = TableView::fromBytes(V1);
  ASSERT_TRUE(bool(View)) << toString(View.takeError());
  EXPECT_EQ(View->describe(View->lookup(0x1104)), "/src/a.c:12");
  EXPECT_EQ(View->function(0), "");
  const char *Start = reinterpret_cast<const char *>(V1.data());
  std::vector<uint64_t> Aligned((V1.size() + 7) / 8);
  std::memcpy(Aligned.data(), V1.data(), V1.size());
  Start = reinterpret_cast<const char *>(Aligned.data());
  const causal_linetab_header *Valid = causal_linetab_validate(Start, Start + V1.size());
  ASSERT_NE(Valid, nullptr);
  EXPECT_EQ(causal_linetab_function(Valid, 0), nullptr);
}

TEST(LineTableFormat, FunctionNamesAreCleanedAndCut) {
  EXPECT_EQ(tableFunctionName("f\tg\n(int)"), "fg(int)");
  std::string Long(1000, 'x');
  std::string Cut = tableFunctionName(Long);
  EXPECT_EQ(Cut.size(), CAUSAL_LINETAB_MAX_FUNCTION_NAME);
  EXPECT_EQ(Cut.substr(Cut.size() - 3), "...");
}
