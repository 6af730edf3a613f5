//===- test/unit/runtime/TestLineTable.h - Line tables built in memory ----===//
//
// Builds a table in the causal/abi.h format in a heap buffer, with
// table_vaddr = the buffer's own address (load bias 0), so a table can
// describe real code of the test process: code_vaddr = a function's address.
//
//===----------------------------------------------------------------------===//
#ifndef CAUSAL_TEST_UNIT_RUNTIME_TESTLINETABLE_H
#define CAUSAL_TEST_UNIT_RUNTIME_TESTLINETABLE_H

#include "causal/abi.h"

#include <stdint.h>
#include <string.h>

#include <string>
#include <utility>
#include <vector>

namespace causal::test {

struct LineTableSpec {
  uint64_t code_vaddr = 0;
  /// (offset from code_vaddr, line index or CAUSAL_NO_LINE), sorted; the
  /// last one must be the terminator (CAUSAL_NO_LINE).
  std::vector<std::pair<uint32_t, uint32_t>> rows;
  /// (file index, line number)
  std::vector<std::pair<uint32_t, uint32_t>> lines;
  std::vector<std::string> files;
  /// Function name of each line (empty: unknown); may be shorter than lines.
  std::vector<std::string> functions;
  /// Extra zero bytes after the table inside the "section".
  uint32_t padding = 0;
};

class InMemoryLineTable {
public:
  explicit InMemoryLineTable(const LineTableSpec &spec) {
    uint32_t header_size = sizeof(causal_linetab_header);
    uint32_t rows_offset = header_size;
    uint32_t lines_offset = rows_offset + uint32_t(spec.rows.size() * 8);
    uint32_t files_offset = lines_offset + uint32_t(spec.lines.size() * 8);
    uint32_t functions_offset = files_offset + uint32_t(spec.files.size() * 4);
    uint32_t strings_offset = functions_offset + uint32_t(spec.lines.size() * 4);
    std::string strings;
    std::vector<uint32_t> file_offsets;
    for (const std::string &f : spec.files) {
      file_offsets.push_back(uint32_t(strings.size()));
      strings += f;
      strings.push_back('\0');
    }
    std::vector<uint32_t> function_offsets(spec.lines.size(), CAUSAL_NO_FUNCTION);
    for (size_t i = 0; i < spec.functions.size() && i < spec.lines.size(); ++i) {
      if (spec.functions[i].empty())
        continue;
      function_offsets[i] = uint32_t(strings.size());
      strings += spec.functions[i];
      strings.push_back('\0');
    }
    uint32_t total = strings_offset + uint32_t(strings.size());
    total = (total + 7) & ~7u;
    size_ = total + spec.padding;
    storage_.assign((size_ + 7) / 8, 0);
    char *base = reinterpret_cast<char *>(storage_.data());

    causal_linetab_header h;
    memset(&h, 0, sizeof(h));
    memcpy(h.magic, CAUSAL_LINETAB_MAGIC, CAUSAL_LINETAB_MAGIC_SIZE);
    h.version = CAUSAL_LINETAB_VERSION;
    h.header_size = header_size;
    h.table_vaddr = reinterpret_cast<uintptr_t>(base);
    h.code_vaddr = spec.code_vaddr;
    h.num_rows = uint32_t(spec.rows.size());
    h.num_lines = uint32_t(spec.lines.size());
    h.num_files = uint32_t(spec.files.size());
    h.strings_size = uint32_t(strings.size());
    h.rows_offset = rows_offset;
    h.lines_offset = lines_offset;
    h.files_offset = files_offset;
    h.strings_offset = strings_offset;
    h.functions_offset = functions_offset;
    h.total_size = total;
    memcpy(base, &h, sizeof(h));
    for (size_t i = 0; i < spec.rows.size(); ++i) {
      causal_linetab_row row = {spec.rows[i].first, spec.rows[i].second};
      memcpy(base + rows_offset + 8 * i, &row, 8);
    }
    for (size_t i = 0; i < spec.lines.size(); ++i) {
      causal_linetab_line line = {spec.lines[i].first, spec.lines[i].second};
      memcpy(base + lines_offset + 8 * i, &line, 8);
    }
    if (!file_offsets.empty())
      memcpy(base + files_offset, file_offsets.data(), 4 * file_offsets.size());
    if (!function_offsets.empty())
      memcpy(base + functions_offset, function_offsets.data(), 4 * function_offsets.size());
    if (!strings.empty())
      memcpy(base + strings_offset, strings.data(), strings.size());
  }

  /// A table covering [code, code + size) with one line: file:line.
  static LineTableSpec singleLine(const void *code, uint32_t size, const std::string &file,
                                  uint32_t line) {
    LineTableSpec spec;
    spec.code_vaddr = reinterpret_cast<uintptr_t>(code);
    spec.rows = {{0, 0}, {size, CAUSAL_NO_LINE}};
    spec.lines = {{0, line}};
    spec.files = {file};
    return spec;
  }

  const void *start() const { return storage_.data(); }
  const void *stop() const { return reinterpret_cast<const char *>(storage_.data()) + size_; }
  causal_linetab_header *header() {
    return reinterpret_cast<causal_linetab_header *>(storage_.data());
  }
  char *bytes() { return reinterpret_cast<char *>(storage_.data()); }

private:
  std::vector<uint64_t> storage_; // 8-byte aligned
  size_t size_ = 0;
};

} // namespace causal::test

#endif // CAUSAL_TEST_UNIT_RUNTIME_TESTLINETABLE_H
