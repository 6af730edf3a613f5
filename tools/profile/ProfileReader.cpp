//===- ProfileReader.cpp - Read causal and Coz profiles -------------------===//
#include "ProfileReader.h"

#include "LineName.h"

#include "causal/profile_text.h"

#include "causal/profile_schema.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <initializer_list>
#include <memory>
#include <new>
#include <sys/mman.h>
#include <sys/stat.h>
#include <type_traits>
#include <unistd.h>
#include <unordered_map>

namespace causal::profile {

const char *pointKindName(PointKind kind) {
  return kind == PointKind::Throughput ? "throughput" : "latency";
}

std::string_view Profile::intern(std::string_view name) {
  auto found = names.find(name);
  if (found != names.end())
    return *found;
  return *names.insert(nameStore.emplace_back(name)).first;
}

// Blocks hold experiments and points as plain memory: constructed in place,
// never destroyed.
static_assert(std::is_trivially_destructible_v<Experiment> &&
              std::is_trivially_destructible_v<PointMeasurement>);

void TableBlockFree::operator()(void *block) const { std::free(block); }

TableBlock allocateTableBlock(size_t bytes) {
  size_t rounded = (bytes + kTableBlockBytes - 1) / kTableBlockBytes * kTableBlockBytes;
  void *block = std::aligned_alloc(kTableBlockBytes, rounded);
  if (!block)
    throw std::bad_alloc();
  madvise(block, rounded, MADV_HUGEPAGE); // a hint: without it, 4 KiB pages
  return TableBlock(block);
}

void PointStore::append(PointSpan &points, const PointMeasurement &point) {
  bool endsAtNext = !blocks.empty() && points.first + points.count == last() + used;
  if (points.count == 0 || !endsAtNext || used == capacity) {
    if (used + points.count + 1 > capacity) {
      // An experiment of more points than a block holds gets one of its own.
      capacity = std::max(kBlock, 2 * (points.count + 1));
      blocks.push_back(allocateTableBlock(capacity * sizeof(PointMeasurement)));
      used = 0;
    }
    PointMeasurement *to = last() + used;
    std::uninitialized_copy(points.first, points.first + points.count, to);
    points.first = to;
    used += points.count;
  }
  new (last() + used++) PointMeasurement(point);
  ++points.count;
}

void ExperimentList::push_back(Experiment experiment) {
  if (count % kBlock == 0)
    blocks.push_back(allocateTableBlock(kBlock * sizeof(Experiment)));
  new (&(*this)[count]) Experiment(std::move(experiment));
  ++count;
}

const std::string_view *Record::find(std::string_view key) const {
  for (const auto &field : fields)
    if (field.first == key)
      return &field.second;
  return nullptr;
}

bool parseNumber(std::string_view text, double &value) {
  if (text.empty() || text.size() > 64)
    return false;
  // Plain unsigned integers: exact, with Coz's size_t wrap-around read back as
  // the negative number it stands for.
  bool allDigits = true;
  for (char c : text)
    if (c < '0' || c > '9')
      allDigits = false;
  if (allDigits) {
    if (text.size() > 20)
      return false;
    uint64_t n = 0;
    for (char c : text) {
      uint64_t digit = uint64_t(c - '0');
      if (n > (UINT64_MAX - digit) / 10)
        return false;
      n = n * 10 + digit;
    }
    value = n >= (uint64_t(1) << 63) ? -double(~n + 1) : double(n);
    return true;
  }
  // Otherwise a decimal floating-point number, e.g. 0.35, -2, 1.5e3.
  // Most are [-]DIGITS.DIGITS of at most 15 digits (fixed-point fields):
  // the integer of the digits and the power of ten are both exact doubles,
  // so one division gives the correctly rounded value, the one strtod
  // gives (Clinger's fast path), at a tenth of its cost.
  {
    static constexpr double kPowersOfTen[] = {1e0, 1e1, 1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                              1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15};
    size_t at = text[0] == '-' ? 1 : 0;
    uint64_t digits = 0;
    int count = 0, fraction = -1; // fraction: digits after the point so far, -1 before it
    for (; at < text.size(); ++at) {
      char c = text[at];
      if (c >= '0' && c <= '9') {
        digits = digits * 10 + uint64_t(c - '0');
        ++count;
        if (fraction >= 0)
          ++fraction;
      } else if (c == '.' && fraction < 0) {
        fraction = 0;
      } else {
        break;
      }
    }
    if (at == text.size() && count > 0 && count <= 15) {
      double magnitude = double(digits) / kPowersOfTen[fraction > 0 ? fraction : 0];
      value = text[0] == '-' ? -magnitude : magnitude;
      return true;
    }
  }
  // Letters other than an exponent (nan, inf, 0x...) are not numbers here.
  for (char c : text)
    if (!((c >= '0' && c <= '9') || c == '.' || c == '-' || c == '+' || c == 'e' || c == 'E'))
      return false;
  char buffer[72];
  std::memcpy(buffer, text.data(), text.size());
  buffer[text.size()] = '\0';
  char *end = nullptr;
  errno = 0;
  double parsed = std::strtod(buffer, &end);
  if (end != buffer + text.size() || errno == ERANGE || !std::isfinite(parsed))
    return false;
  value = parsed;
  return true;
}

namespace {

using namespace causal::profile_schema;

/// The names of profile_schema.h as string_views, made once: comparing
/// them costs no strlen (a profile has millions of records).
struct SchemaNames {
  SchemaNames() {
    for (unsigned i = 0; i < kNumRecords; ++i) {
      records[i] = kRecords[i].name;
      for (unsigned f = 0; f < kRecords[i].numFields; ++f)
        keys[i].push_back(kRecords[i].fields[f].key);
    }
    for (const Alias &alias : kRecordAliases)
      recordAliases.emplace_back(alias.alias, alias.name);
    for (const Alias &alias : kKeyAliases)
      keyAliases.emplace_back(alias.alias, alias.name);
  }
  std::string_view records[kNumRecords];
  std::vector<std::string_view> keys[kNumRecords]; // of each record, in the order of its spec
  std::vector<std::pair<std::string_view, std::string_view>> recordAliases; // alias, name
  std::vector<std::pair<std::string_view, std::string_view>> keyAliases;    // alias, key
};

const SchemaNames kSchemaNames; // read often: a global, not a function's guarded static

/// Canonical record type for the spellings that exist (profile_records.def).
std::string_view canonicalType(std::string_view type) {
  for (const auto &[alias, name] : kSchemaNames.recordAliases)
    if (type == alias)
      return name;
  return type;
}

std::string_view canonicalKey(std::string_view type, std::string_view key) {
  for (const auto &[alias, name] : kSchemaNames.keyAliases)
    if (key == alias)
      return name;
  // The old progress-point record has its own "type" field (source,
  // breakpoint, sampled); keep it apart from the record type.
  if (key == "type" && type == "progress-point")
    return "point-type";
  return key;
}

/// The schema of a record type, or null for a type this reader does not know.
const RecordSpec *findRecord(std::string_view type) {
  for (unsigned i = 0; i < kNumRecords; ++i)
    if (type == kSchemaNames.records[i])
      return &kRecords[i];
  return nullptr;
}

bool knownKey(const RecordSpec &spec, std::string_view key) {
  for (std::string_view known : kSchemaNames.keys[unsigned(spec.id)])
    if (key == known)
      return true;
  return false;
}

void appendUtf8(std::string &out, uint32_t code) {
  if (code < 0x80) {
    out += char(code);
  } else if (code < 0x800) {
    out += char(0xC0 | (code >> 6));
    out += char(0x80 | (code & 0x3F));
  } else if (code < 0x10000) {
    out += char(0xE0 | (code >> 12));
    out += char(0x80 | ((code >> 6) & 0x3F));
    out += char(0x80 | (code & 0x3F));
  } else {
    out += char(0xF0 | (code >> 18));
    out += char(0x80 | ((code >> 12) & 0x3F));
    out += char(0x80 | ((code >> 6) & 0x3F));
    out += char(0x80 | (code & 0x3F));
  }
}

/// A minimal reader for one flat JSON object per line. Nested values of
/// unknown members are skipped (kept as raw text); they carry nothing the
/// profile format defines.
class JsonLineParser {
public:
  explicit JsonLineParser(std::string_view text) : text(text) {}

  bool parseObject(std::vector<std::pair<std::string, std::string>> &members, std::string &error) {
    skipSpace();
    if (!consume('{'))
      return fail(error, "expected '{'");
    skipSpace();
    if (consume('}'))
      return finish(error);
    for (;;) {
      skipSpace();
      std::string key;
      if (!parseString(key))
        return fail(error, "expected a quoted member name");
      skipSpace();
      if (!consume(':'))
        return fail(error, "expected ':' after member name");
      skipSpace();
      std::string value;
      if (!parseValue(value, error))
        return false;
      members.emplace_back(std::move(key), std::move(value));
      skipSpace();
      if (consume(','))
        continue;
      if (consume('}'))
        return finish(error);
      return fail(error, "expected ',' or '}'");
    }
  }

private:
  std::string_view text;
  size_t pos = 0;

  bool fail(std::string &error, const char *what) {
    error = std::string("malformed JSON record: ") + what + " at column " + std::to_string(pos + 1);
    if (pos >= text.size())
      error += " (line truncated?)";
    return false;
  }
  bool finish(std::string &error) {
    skipSpace();
    if (pos != text.size())
      return fail(error, "unexpected text after the object");
    return true;
  }
  void skipSpace() {
    while (pos < text.size() &&
           (text[pos] == ' ' || text[pos] == '\t' || text[pos] == '\r' || text[pos] == '\n'))
      ++pos;
  }
  bool consume(char c) {
    if (pos < text.size() && text[pos] == c) {
      ++pos;
      return true;
    }
    return false;
  }
  bool hex4(uint32_t &code) {
    if (text.size() - pos < 4)
      return false;
    code = 0;
    for (int i = 0; i < 4; ++i) {
      char c = text[pos++];
      code <<= 4;
      if (c >= '0' && c <= '9')
        code |= uint32_t(c - '0');
      else if (c >= 'a' && c <= 'f')
        code |= uint32_t(c - 'a' + 10);
      else if (c >= 'A' && c <= 'F')
        code |= uint32_t(c - 'A' + 10);
      else
        return false;
    }
    return true;
  }
  bool parseString(std::string &out) {
    if (!consume('"'))
      return false;
    while (pos < text.size()) {
      char c = text[pos++];
      if (c == '"')
        return true;
      if (static_cast<unsigned char>(c) < 0x20)
        return false;
      if (c != '\\') {
        out += c;
        continue;
      }
      if (pos >= text.size())
        return false;
      char e = text[pos++];
      switch (e) {
      case '"':
      case '\\':
      case '/':
        out += e;
        break;
      case 'b':
        out += '\b';
        break;
      case 'f':
        out += '\f';
        break;
      case 'n':
        out += '\n';
        break;
      case 'r':
        out += '\r';
        break;
      case 't':
        out += '\t';
        break;
      case 'u': {
        uint32_t code;
        if (!hex4(code))
          return false;
        if (code >= 0xD800 && code < 0xDC00 && text.size() - pos >= 6 && text[pos] == '\\' &&
            text[pos + 1] == 'u') {
          size_t save = pos;
          pos += 2;
          uint32_t low;
          if (hex4(low) && low >= 0xDC00 && low < 0xE000)
            code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00);
          else
            pos = save;
        }
        appendUtf8(out, code);
        break;
      }
      default:
        return false;
      }
    }
    return false;
  }
  bool parseValue(std::string &out, std::string &error) {
    if (pos >= text.size())
      return fail(error, "missing value");
    char c = text[pos];
    if (c == '"') {
      if (!parseString(out))
        return fail(error, "bad string value");
      return true;
    }
    if (c == '{' || c == '[') {
      // Skip a nested value without recursion.
      size_t start = pos;
      std::vector<char> closers;
      while (pos < text.size()) {
        char d = text[pos];
        if (d == '"') {
          std::string ignored;
          if (!parseString(ignored))
            return fail(error, "bad string in nested value");
          continue;
        }
        ++pos;
        if (d == '{')
          closers.push_back('}');
        else if (d == '[')
          closers.push_back(']');
        else if (d == '}' || d == ']') {
          if (closers.empty() || closers.back() != d)
            return fail(error, "unbalanced nested value");
          closers.pop_back();
          if (closers.empty()) {
            out.assign(text.substr(start, pos - start));
            return true;
          }
        }
      }
      return fail(error, "unterminated nested value");
    }
    size_t start = pos;
    while (pos < text.size() && text[pos] != ',' && text[pos] != '}' && text[pos] != ' ' &&
           text[pos] != '\t' && text[pos] != '\r')
      ++pos;
    out.assign(text.substr(start, pos - start));
    if (out.empty())
      return fail(error, "missing value");
    if (out == "true" || out == "false" || out == "null")
      return true;
    double ignored;
    if (!parseNumber(out, ignored))
      return fail(error, "bad number");
    return true;
  }
};

} // namespace

bool parseRecordLine(std::string_view line, Record &record, std::string &error) {
  record.type = {};
  record.fields.clear();
  record.escapedText = false;
  if (!line.empty() && line.back() == '\r')
    line.remove_suffix(1);
  size_t first = line.find_first_not_of(" \t");
  if (first != std::string_view::npos && line[first] == '{') {
    std::vector<std::pair<std::string, std::string>> &members = record.jsonMembers;
    members.clear();
    JsonLineParser parser(line);
    if (!parser.parseObject(members, error))
      return false;
    const std::string *rawType = nullptr;
    for (const auto &member : members)
      if (member.first == "type") {
        rawType = &member.second;
        break;
      }
    if (!rawType || rawType->empty()) {
      error = "JSON record has no \"type\" member";
      return false;
    }
    record.type = canonicalType(*rawType);
    for (const auto &member : members)
      if (&member.second != rawType)
        record.fields.emplace_back(canonicalKey(*rawType, member.first), member.second);
    return true;
  }
  // Tab-separated: type, then key=value fields, read in one pass.
  record.escapedText = true;
  size_t tab = line.find('\t');
  std::string_view rawType = line.substr(0, tab);
  if (rawType.empty()) {
    error = "record has no type";
    return false;
  }
  for (char c : rawType)
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
          c == '_')) {
      error = "record type '" + std::string(rawType.substr(0, 40)) + "' is not a word";
      return false;
    }
  record.type = canonicalType(rawType);
  for (size_t at = tab; at < line.size();) {
    size_t start = at + 1, equals = start;
    while (equals < line.size() && line[equals] != '=' && line[equals] != '\t')
      ++equals; // keys are short
    at = equals < line.size() && line[equals] == '=' ? line.find('\t', equals) : equals;
    if (at == std::string_view::npos)
      at = line.size();
    if (at == start)
      continue; // an empty field
    if (equals == at || equals == start) {
      error = "field '" + std::string(line.substr(start, std::min<size_t>(at - start, 40))) +
              "' is not key=value";
      return false;
    }
    record.fields.emplace_back(canonicalKey(rawType, line.substr(start, equals - start)),
                               line.substr(equals + 1, at - equals - 1));
  }
  return true;
}

bool startsLikeProfile(std::string_view head) {
  while (!head.empty()) {
    size_t newline = head.find('\n');
    std::string_view line = head.substr(0, newline);
    if (line.find_first_not_of(" \t\r") != std::string_view::npos) {
      Record record;
      std::string error;
      return line.find('\0') == std::string_view::npos && parseRecordLine(line, record, error) &&
             findRecord(record.type);
    }
    if (newline == std::string_view::npos)
      break;
    head.remove_prefix(newline + 1);
  }
  return false;
}

namespace {

// ---- Records as profile_records.def describes them ------------------------

/// What a field holds once read: numbers as double (-1 when absent, the
/// convention of Experiment and Run), text as is ("" when absent).
template <FieldType> struct ReadValue {
  using Type = double;
  static Type unset() { return -1; }
};
template <> struct ReadValue<FieldType::Text> {
  using Type = std::string;
  static Type unset() { return {}; }
};
template <> struct ReadValue<FieldType::Location> : ReadValue<FieldType::Text> {};

/// One struct per record type, a member per field: records::Experiment etc.
namespace records {
#define CAUSAL_PROFILE_FIELD(member, key, type, presence, check, since)                            \
  ReadValue<FieldType::type>::Type member = ReadValue<FieldType::type>::unset();
#define CAUSAL_PROFILE_RECORD(Id, name, since, role, ...)                                          \
  struct Id {                                                                                      \
    __VA_ARGS__                                                                                    \
  };
#include "causal/profile_records.def"
} // namespace records

bool fail(std::string &error, std::string message) {
  error = std::move(message);
  return false;
}

bool missingField(const char *type, const char *key, std::string &error) {
  return fail(error, std::string(type) + " record has no '" + key + "' field");
}

/// Finds a record's fields as its spec lists them. Writers write them in
/// that order, so the field after the last one found is tried first; the
/// fields before it are keys of spec fields already read, other keys, so
/// it is also the first field of its key, which Record::find returns.
class FieldCursor {
public:
  FieldCursor(const Record &record, const RecordSpec &spec)
      : record(record), spec(spec), keys(kSchemaNames.keys[unsigned(spec.id)]) {}
  const RecordSpec &recordSpec() const { return spec; }
  bool escapedText() const { return record.escapedText; }

  /// The value of the \p field th field of the spec, or null.
  const std::string_view *find(unsigned field) {
    std::string_view key = keys[field];
    if (next < record.fields.size() && record.fields[next].first == key)
      return &record.fields[next++].second;
    return record.find(key);
  }
  /// Whether every field of the record was found in order: none is unknown.
  bool allFoundInOrder() const { return next == record.fields.size(); }

private:
  const Record &record;
  const RecordSpec &spec;
  const std::vector<std::string_view> &keys;
  size_t next = 0;
};

/// Reads a numeric field, the \p field th of the record's spec: parses it
/// and applies its check.
bool readField(FieldCursor &fields, unsigned field, double &value, std::string &error) {
  const FieldSpec &spec = fields.recordSpec().fields[field];
  const char *type = fields.recordSpec().name;
  const std::string_view *text = fields.find(field);
  if (!text)
    return spec.presence != Presence::Required || missingField(type, spec.key, error);
  if (!parseNumber(*text, value))
    return fail(error, std::string("field '") + spec.key + "' has value '" +
                           std::string(text->substr(0, 40)) + "', which is not a number");
  auto subject = [&] { return std::string(type) + " " + spec.key; };
  switch (spec.check) {
  case Check::Any:
    return true;
  case Check::NonNegative:
    return value >= 0 || fail(error, subject() + " is negative");
  case Check::Fraction:
    return (value >= 0 && value <= 1) ||
           fail(error, subject() + " " + std::string(*text) + " is outside 0..1");
  case Check::Positive:
    return value > 0 || fail(error, subject() + " is not positive");
  }
  return true;
}

/// Reads a text field; a required one must not be empty.
bool readField(FieldCursor &fields, unsigned field, std::string &value, std::string &error) {
  const FieldSpec &spec = fields.recordSpec().fields[field];
  const std::string_view *text = fields.find(field);
  if (spec.presence == Presence::Required && (!text || text->empty()))
    return missingField(fields.recordSpec().name, spec.key, error);
  if (!text)
    return true;
  if (!fields.escapedText() || text->find('\\') == std::string_view::npos) {
    value.assign(*text); // nothing escaped
    return true;
  }
  value.clear();
  profile_text::unescape(text->data(), text->size(), [&value](char c) { value.push_back(c); });
  return true;
}

/// readFields(record, out, allKnown, error): every field of the record's
/// type, in the order of profile_records.def; false with \p error at the
/// first bad one. \p allKnown: the record has no field the spec lacks.
#define CAUSAL_PROFILE_FIELD(member, key, type, presence, check, since)                            \
  &&readField(fields, field++, out.member, error)
#define CAUSAL_PROFILE_RECORD(Id, name, since, role, ...)                                          \
  bool readFields(const Record &record, records::Id &out, bool &allKnown, std::string &error) {    \
    FieldCursor fields(record, recordSpec(RecordId::Id));                                          \
    unsigned field = 0;                                                                            \
    bool ok = true __VA_ARGS__;                                                                    \
    allKnown = fields.allFoundInOrder();                                                           \
    return ok;                                                                                     \
  }
#include "causal/profile_records.def"

class ProfileBuilder {
public:
  ProfileBuilder(Profile &profile, const std::string &fileName)
      : profile(profile), fileName(fileName) {}

  /// Applies one record; returns false with \p error for a record that does
  /// not make sense (missing or bad field, point without experiment).
  bool apply(const Record &record, size_t lineNo, std::string &error) {
    const RecordSpec *spec = findRecord(record.type);
    if (!spec)
      return unknownRecord(record, lineNo, error);
    if (spec->role == Role::InExperiment && currentExperiment == SIZE_MAX) {
      error = std::string(record.type) + (afterSkippedLine
                                              ? " record follows a skipped line, not an experiment"
                                              : " record before any experiment record");
      return false;
    }
    if (!dispatch(spec->id, record, lineNo, error))
      return false;
    if (spec->role == Role::OpensRun || spec->role == Role::InRun)
      currentExperiment = SIZE_MAX; // the experiment's block ends
    if (!fieldsKnown)
      warnUnknownFields(*spec, record, lineNo);
    return true;
  }

  /// A line was skipped (lenient mode). If it may have been an experiment
  /// record, the point records that follow may belong to that dropped
  /// experiment: they must not be charged to the previous one.
  void skipped(std::string_view type) {
    // Unparseable lines and bad known records may have been an experiment;
    // a point record or a well-formed record of an unknown type is not one.
    const RecordSpec *spec = findRecord(type);
    if (type.empty() || (spec && spec->role != Role::InExperiment)) {
      currentExperiment = SIZE_MAX;
      afterSkippedLine = true;
    }
  }

private:
  Profile &profile;
  const std::string &fileName;
  bool afterSkippedLine = false;
  bool fieldsKnown = false; // the last record read has no field its spec lacks
  size_t currentRun = 0;
  bool haveRun = false;
  size_t currentExperiment = SIZE_MAX;
  std::vector<std::string> warnedNames;      // unknown types and fields, warned once per file
  std::map<std::string, size_t> runsInParts; // run= of runs written in parts, their index
  /// The samples per FILE:LINE (the last count written) of the runs not yet
  /// folded into Profile::samples, by run index: the current run, and runs
  /// written in parts whose last part has not been read (their parts may
  /// come between other runs' records).
  struct OpenSamples {
    std::vector<double> count;   // by line slot; -1: none written in this run
    std::vector<uint32_t> slots; // the slots written, in the order first written
  };
  std::map<size_t, OpenSamples> openRunSamples;
  /// A slot per FILE:LINE of a samples record, by the address of its name
  /// in Profile::names (one copy of each name: no text compared), and its
  /// entry in Profile::samples once there (a map's entries stay in place).
  std::unordered_map<const char *, uint32_t> slotOfName;
  std::vector<std::string_view> nameOfSlot;
  std::vector<SampleTotals *> totalsOfSlot;

  /// The caller of a slot's name, FILE:LINE (via CALLER), a view into the
  /// name ("": none).
  std::vector<std::string_view> callerOfSlot;

  uint32_t slotOf(std::string_view name) {
    auto [found, added] = slotOfName.emplace(name.data(), uint32_t(nameOfSlot.size()));
    if (added) {
      nameOfSlot.push_back(name);
      totalsOfSlot.push_back(nullptr);
      LineName split = splitLineName(name);
      callerOfSlot.push_back(
          split.isPath() ? name.substr(name.size() - 1 - split.caller.size(), split.caller.size())
                         : std::string_view());
    }
    return found->second;
  }
  /// The fields of the record being read, one struct per type: reused from
  /// record to record, with the storage of their strings.
#define CAUSAL_PROFILE_RECORD(Id, name, since, role, ...) records::Id Id##Fields;
#include "causal/profile_records.def"

  /// Folds run \p index's samples into the profile's per-line totals, now
  /// that the run's runtime, sample period and kind are known.
  void finishRun(size_t index) {
    auto open = openRunSamples.find(index);
    if (open == openRunSamples.end())
      return;
    Run &run = profile.runs[index];
    double period = run.samplePeriodNs > 0 ? run.samplePeriodNs : kDefaultSamplePeriodNs;
    bool timed = run.runtimeNs > 0;
    for (uint32_t slot : open->second.slots) {
      double count = open->second.count[slot];
      SampleTotals *&entry = totalsOfSlot[slot];
      if (!entry)
        entry = &profile.samples[nameOfSlot[slot]];
      SampleTotals &totals = *entry;
      totals.all += count;
      std::string_view caller = callerOfSlot[slot];
      if (!caller.empty() &&
          std::find(run.contexts.begin(), run.contexts.end(), caller) == run.contexts.end())
        run.contexts.push_back(caller);
      if (run.abRun)
        continue;
      totals.ordinary += count;
      if (timed) {
        totals.ordinaryTimed += count;
        totals.ordinaryTimedNs += count * period;
      }
    }
    run.sampledLines = open->second.slots.size();
    openRunSamples.erase(open);
  }

  /// The records that follow belong to another run: the current one ends
  /// unless it was written in parts (a later part may still come).
  void leaveCurrentRun() {
    if (haveRun && profile.runs[currentRun].partsId.empty())
      finishRun(currentRun);
  }

  /// Reads the record's fields as its schema says and applies them.
  bool dispatch(RecordId id, const Record &record, size_t lineNo, std::string &error) {
    switch (id) {
#define CAUSAL_PROFILE_RECORD(Id, name, since, role, ...)                                          \
  case RecordId::Id: {                                                                             \
    records::Id &fields = Id##Fields;                                                              \
    fields = records::Id{}; /* its strings keep their storage */                                   \
    return readFields(record, fields, fieldsKnown, error) && applyRecord(fields, lineNo, error);   \
  }
#include "causal/profile_records.def"
    }
    return false;
  }

  // ---- What each record means: one applyRecord per profile_records.def entry

  bool applyRecord(const records::Startup &fields, size_t lineNo, std::string &) {
    leaveCurrentRun();
    Run run;
    run.place = {fileName, lineNo};
    run.hasStartup = true;
    run.writtenByCausal = fields.profiler == "causal";
    run.samplePeriodNs = fields.sample_period;
    run.startupTimeNs = fields.time;
    run.partsId = fields.run;
    profile.runs.push_back(std::move(run));
    currentRun = profile.runs.size() - 1;
    haveRun = true;
    if (!fields.run.empty())
      runsInParts[fields.run] = currentRun;
    return true;
  }

  bool applyRecord(const records::Experiment &fields, size_t lineNo, std::string &) {
    Experiment experiment;
    experiment.selected = profile.intern(fields.selected);
    experiment.speedup = fields.speedup;
    experiment.durationNs = fields.duration;
    experiment.selectedSamples = fields.selected_samples;
    experiment.delayNs = fields.delay;
    experiment.cpus = fields.cpus;
    experiment.running = fields.running;
    experiment.waiting = fields.waiting;
    experiment.idle = fields.idle;
    experiment.sharedCpuDelayNs = fields.shared_cpu_delay;
    experiment.abSpeedup = fields.ab_speedup;
    experiment.run = runIndex(lineNo);
    if (experiment.abSpeedup > 0)
      profile.runs[experiment.run].abRun = true;
    profile.experiments.push_back(std::move(experiment));
    currentExperiment = profile.experiments.size() - 1;
    afterSkippedLine = false;
    return true;
  }

  bool applyRecord(const records::ThroughputPoint &fields, size_t, std::string &error) {
    PointMeasurement point;
    point.name = profile.intern(fields.name);
    point.kind = PointKind::Throughput;
    point.delta = fields.delta;
    if (fields.span > 0 && fields.gap_squares >= 0) {
      point.spanNs = fields.span;
      point.gapSquaresUs2 = fields.gap_squares;
      point.timedVisits = fields.timed_visits >= 2 ? fields.timed_visits : fields.delta;
    }
    return addPoint(std::move(point), error);
  }

  bool applyRecord(const records::LatencyPoint &fields, size_t, std::string &error) {
    PointMeasurement point;
    point.name = profile.intern(fields.name);
    point.kind = PointKind::Latency;
    point.arrivals = fields.arrivals;
    point.departures = fields.departures;
    // causal's exact time-averaged count where written (schema 4), else the
    // `difference` Coz and older causal builds wrote.
    point.difference = fields.in_flight != -1 ? fields.in_flight : fields.difference;
    return addPoint(std::move(point), error);
  }

  bool applyRecord(const records::Runtime &fields, size_t lineNo, std::string &) {
    if (!fields.run.empty())
      continueRun(fields.run, lineNo);
    Run &run = profile.runs[runIndex(lineNo)];
    run.runtimeNs = fields.time;
    if (fields.samples_outside != -1)
      run.samplesOutside = fields.samples_outside;
    if (fields.samples_expected != -1 && fields.samples_arrived != -1) {
      run.samplesExpected = fields.samples_expected;
      run.samplesArrived = fields.samples_arrived;
      run.samplesExpectedSpread =
          fields.samples_expected_spread != -1 ? fields.samples_expected_spread : 0;
    }
    if (fields.timer_samples != -1)
      run.timerSamples = fields.timer_samples;
    return true;
  }

  bool applyRecord(const records::Samples &fields, size_t lineNo, std::string &) {
    // Cumulative counts: the last one written counts.
    uint32_t slot = slotOf(profile.intern(fields.location));
    OpenSamples &open = openRunSamples[runIndex(lineNo)];
    if (open.count.empty()) { // the run's first: room for as many lines as the last one
      open.count.assign(nameOfSlot.size(), -1);
      open.slots.reserve(nameOfSlot.size());
    }
    if (open.count.size() <= slot)
      open.count.resize(nameOfSlot.size(), -1);
    if (open.count[slot] < 0)
      open.slots.push_back(slot);
    open.count[slot] = fields.count;
    if (!fields.function.empty())
      profile.functions[fields.location] = fields.function;
    return true;
  }

  bool applyRecord(const records::Shutdown &fields, size_t lineNo, std::string &) {
    Run &run = profile.runs[runIndex(lineNo)];
    if (fields.samples != -1)
      run.shutdownSamples = fields.samples;
    run.shutdownSeen = true;
    if (!run.partsId.empty())
      finishRun(currentRun); // the last part of a run in parts
    return true;
  }

  // ---- Helpers

  /// A later part of a run written in parts: its records belong to the run
  /// its first part opened, wherever other runs' blocks came in between.
  void continueRun(const std::string &id, size_t lineNo) {
    leaveCurrentRun();
    auto found = runsInParts.find(id);
    if (found == runsInParts.end()) {
      warnOnce("run " + id, lineNo,
               "a part of run " + id.substr(0, 40) +
                   ", whose first part (its startup record) is not in this file: read as a run "
                   "of its own");
      Run run;
      run.place = {fileName, lineNo};
      run.partsId = id;
      profile.runs.push_back(std::move(run));
      found = runsInParts.emplace(id, profile.runs.size() - 1).first;
    }
    currentRun = found->second;
    haveRun = true;
  }

public:
  /// The end of the reading: the runs still open end. A run written in
  /// parts without its last part (the process was killed, or still runs) is
  /// used up to its last part.
  void finish() {
    while (!openRunSamples.empty())
      finishRun(openRunSamples.begin()->first);
    for (const auto &[id, index] : runsInParts) {
      const Run &run = profile.runs[index];
      if (run.shutdownSeen)
        continue;
      std::string pid = id.substr(0, id.find('-'));
      char seconds[32];
      std::snprintf(seconds, sizeof(seconds), "%.1f", run.runtimeNs / 1e9);
      profile.notes.push_back(
          run.place.file + ":" + std::to_string(run.place.line) + ": the run of process " + pid +
          " has no end record (the process was killed, e.g. by SIGKILL, or still runs): its " +
          "profile up to its last periodic write, " + seconds + " s into the run, is used");
    }
  }

private:
  bool addPoint(PointMeasurement point, std::string &error) {
    Experiment &experiment = profile.experiments[currentExperiment];
    for (const PointMeasurement &existing : experiment.points)
      if (existing.name == point.name) {
        error = "progress point '" + std::string(point.name) + "' appears twice in one experiment";
        return false;
      }
    profile.pointStore.append(experiment.points, point);
    return true;
  }

  size_t runIndex(size_t lineNo) {
    if (!haveRun) {
      Run run;
      run.place = {fileName, lineNo};
      profile.runs.push_back(std::move(run));
      currentRun = profile.runs.size() - 1;
      haveRun = true;
    }
    return currentRun;
  }

  /// Whether records from a newer causal may follow: the current run was
  /// written by causal. Elsewhere (Coz, no startup) an unknown type is an error.
  bool forwardCompatible() const { return haveRun && profile.runs[currentRun].writtenByCausal; }

  /// Warns about \p name once per file.
  void warnOnce(const std::string &name, size_t lineNo, const std::string &message) {
    for (const std::string &warned : warnedNames)
      if (warned == name)
        return;
    warnedNames.push_back(name);
    profile.warnings.push_back(fileName + ":" + std::to_string(lineNo) + ": " + message);
  }

  bool unknownRecord(const Record &record, size_t lineNo, std::string &error) {
    std::string type(record.type.substr(0, 40));
    if (!forwardCompatible()) {
      error = "unknown record type '" + type + "'";
      return false;
    }
    warnOnce(std::string(record.type), lineNo,
             "record type '" + type + "' is newer than this reader (profile schema " +
                 std::to_string(kSchemaVersion) + "): such records are skipped");
    return true;
  }

  void warnUnknownFields(const RecordSpec &spec, const Record &record, size_t lineNo) {
    if (!forwardCompatible())
      return; // Coz's viewer and this reader ignore unknown keys of other writers
    for (const auto &field : record.fields)
      if (!knownKey(spec, field.first))
        warnOnce(std::string(record.type) + " " + std::string(field.first), lineNo,
                 "field '" + std::string(field.first.substr(0, 40)) + "' of " +
                     std::string(record.type) +
                     " records is newer than this reader (profile schema " +
                     std::to_string(kSchemaVersion) + "): it is ignored");
  }
};

/// Feeds lines, one at a time, to a ProfileBuilder: what reading a text and
/// reading a file in chunks share.
class ProfileLines {
public:
  ProfileLines(Profile &into, const std::string &fileName, const ReadOptions &options)
      : into(into), fileName(fileName), options(options), builder(into, fileName) {
    into.files.push_back(fileName);
  }

  /// One line without its newline; false (and \p error) ends the reading.
  bool consume(std::string_view line, bool lastWithoutNewline, std::string &error) {
    ++lineNo;
    if (line.find_first_not_of(" \t\r") == std::string_view::npos)
      return true;
    std::string problem;
    record.type = {};
    if (line.find('\0') != std::string_view::npos)
      problem = "line contains a NUL byte";
    else if (parseRecordLine(line, record, problem)) {
      if (line[line.find_first_not_of(" \t")] == '{')
        ++into.jsonRecords;
      else
        ++into.tabRecords;
      if (builder.apply(record, lineNo, problem)) {
        if (findRecord(record.type))
          sawKnownRecord = true;
        return true;
      }
    }
    std::string message = fileName + ":" + std::to_string(lineNo) + ": " + problem;
    if (lastWithoutNewline) {
      // A writer cut off mid-record (killed, disk full): the records before
      // it are whole and count; strict mode too.
      into.warnings.push_back(message +
                              " (the last line has no newline: a record cut off); line skipped");
      return true;
    }
    if (!options.lenient) {
      error = message;
      return false;
    }
    into.warnings.push_back(message + "; line skipped");
    builder.skipped(record.type);
    return true;
  }

  /// The end of the text: the runs still open end.
  void finish() { builder.finish(); }
  size_t lines() const { return lineNo; }
  bool knownRecordSeen() const { return sawKnownRecord; }

private:
  Profile &into;
  const std::string &fileName;
  const ReadOptions &options;
  ProfileBuilder builder;
  Record record;
  size_t lineNo = 0;
  bool sawKnownRecord = false;
};

} // namespace

bool readProfileText(std::string_view text, const std::string &fileName, Profile &into,
                     const ReadOptions &options, std::string &error) {
  ProfileLines lines(into, fileName, options);
  size_t pos = 0;
  while (pos < text.size()) {
    size_t newline = text.find('\n', pos);
    bool lastWithoutNewline = newline == std::string_view::npos;
    std::string_view line =
        text.substr(pos, lastWithoutNewline ? std::string_view::npos : newline - pos);
    pos = lastWithoutNewline ? text.size() : newline + 1;
    if (!lines.consume(line, lastWithoutNewline, error))
      return false;
  }
  lines.finish();
  return true;
}

namespace {

constexpr size_t kMaxProfileLine = size_t(1) << 20; // longer lines are not records
constexpr size_t kLinesBeforeVerdict = 1000;        // lenient: a record among these

/// Reads \p fd line by line into \p lines, holding one line at a time, and
/// refuses early what cannot be a profile, so that /dev/zero, a binary or an
/// endless stream of text that is not one fails at once instead of filling
/// memory: a NUL byte, a line over kMaxProfileLine, or no record of a known
/// type among the first kLinesBeforeVerdict lines (strict mode fails at the
/// first line that is not one anyway).
bool readProfileLines(int fd, const std::string &name, ProfileLines &lines, std::string &error) {
  const std::string notProfile = ": not a causal or Coz profile";
  char chunk[1 << 16];
  std::string partial; // the line being read
  uint64_t offset = 0;
  for (;;) {
    ssize_t got = read(fd, chunk, sizeof(chunk));
    if (got < 0 && errno == EINTR)
      continue;
    if (got < 0) {
      error = name + ": read error: " + std::strerror(errno);
      return false;
    }
    if (got == 0) {
      if (!partial.empty() && !lines.consume(partial, /*lastWithoutNewline=*/true, error))
        return false;
      if (!lines.knownRecordSeen()) {
        error = name + (offset ? ": no profile record in it" : ": empty") +
                ": not a causal or Coz profile (a profile is written when the profiled "
                "program ends)";
        return false;
      }
      lines.finish();
      return true;
    }
    if (const void *nul = memchr(chunk, 0, size_t(got))) {
      error = name + ": binary data (a NUL byte at offset " +
              std::to_string(offset + uint64_t(static_cast<const char *>(nul) - chunk)) + ")" +
              notProfile;
      return false;
    }
    offset += uint64_t(got);
    std::string_view rest(chunk, size_t(got));
    for (size_t newline; (newline = rest.find('\n')) != std::string_view::npos;
         rest.remove_prefix(newline + 1)) {
      bool ok;
      if (partial.empty()) {
        ok = lines.consume(rest.substr(0, newline), false, error);
      } else {
        partial.append(rest.substr(0, newline));
        ok = lines.consume(partial, false, error);
        partial.clear();
      }
      if (!ok) {
        if (!lines.knownRecordSeen())
          error += notProfile + "?";
        return false;
      }
      if (!lines.knownRecordSeen() && lines.lines() >= kLinesBeforeVerdict) {
        error = name + ": no record in the first " + std::to_string(kLinesBeforeVerdict) +
                " lines" + notProfile;
        return false;
      }
    }
    partial.append(rest);
    if (partial.size() > kMaxProfileLine) {
      error = name + ":" + std::to_string(lines.lines() + 1) + ": line longer than " +
              std::to_string(kMaxProfileLine >> 20) + " MiB" + notProfile;
      return false;
    }
  }
}

} // namespace

bool readProfileFile(const std::string &path, Profile &into, const ReadOptions &options,
                     std::string &error) {
  if (path == "-") {
    ProfileLines lines(into, "<stdin>", options);
    return readProfileLines(0, "<stdin>", lines, error);
  }
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    error = path + ": cannot open: " + std::strerror(errno);
    return false;
  }
  struct stat info;
  if (fstat(fd, &info) == 0 && S_ISDIR(info.st_mode)) {
    close(fd);
    error = path + ": is a directory, not a profile (profiles are files such as profile.coz)";
    return false;
  }
  ProfileLines lines(into, path, options);
  bool ok = readProfileLines(fd, path, lines, error);
  close(fd);
  return ok;
}

} // namespace causal::profile
