//===- causal/profile_schema.h - The profile's records as a table ---------===//
//
// profile_records.def as constexpr data, for the writer (runtime) and the
// reader (tools): each record's type name, role, version and fields (key,
// type, presence, check, version), and the other spellings of names and keys.
// C++17, header only, no library: the runtime includes it.
//
//===----------------------------------------------------------------------===//
#ifndef CAUSAL_PROFILE_SCHEMA_H
#define CAUSAL_PROFILE_SCHEMA_H

namespace causal::profile_schema {

/// The newest `since` in profile_records.def: bump it with every record or
/// field added, or format change (5: text values escaped as
/// causal/profile_text.h says; function=, run=, samples-expected/arrived=;
/// 6: a throughput point's span= and gap-squares=; 7: an experiment's idle=;
/// 8: runtime timer-samples=; 9: runtime samples-expected-spread=).
inline constexpr unsigned kSchemaVersion = 9;

/// The kinds of a wait target as its name spells them, "FILE:LINE (KIND
/// wait)" (docs/report.md, "Wait targets"), by number: 0 is no wait (a
/// line's code). The runtime's WaitTarget and the tools' WaitTargetKind
/// number them the same way.
inline constexpr const char *kWaitTargetKinds[] = {nullptr, "timer", "disk", "network", "other"};
inline constexpr unsigned kWaitTargetKindCount = 5;

enum class FieldType { Count, Fixed2, Fixed4, Text, Location };
enum class Presence { Required, Optional, IfSet };
enum class Check { Any, NonNegative, Fraction, Positive };
enum class Role { OpensRun, OpensExperiment, InExperiment, InRun };

enum class RecordId {
#define CAUSAL_PROFILE_RECORD(Id, name, since, role, ...) Id,
#include "causal/profile_records.def"
};

struct FieldSpec {
  const char *key;
  FieldType type;
  Presence presence;
  Check check;
  unsigned since;
};

struct RecordSpec {
  RecordId id;
  const char *name;
  unsigned since;
  Role role;
  const FieldSpec *fields;
  unsigned numFields;
};

struct Alias {
  const char *alias;
  const char *name;
};

namespace detail {
#define CAUSAL_PROFILE_FIELD(member, key, type, presence, check, since)                            \
  FieldSpec{key, FieldType::type, Presence::presence, Check::check, since},
#define CAUSAL_PROFILE_RECORD(Id, name, since, role, ...)                                          \
  inline constexpr FieldSpec k##Id##Fields[] = {__VA_ARGS__};
#include "causal/profile_records.def"
} // namespace detail

inline constexpr RecordSpec kRecords[] = {
#define CAUSAL_PROFILE_RECORD(Id, name, since, role, ...)                                          \
  {RecordId::Id,                                                                                   \
   name,                                                                                           \
   since,                                                                                          \
   Role::role,                                                                                     \
   detail::k##Id##Fields,                                                                          \
   unsigned(sizeof(detail::k##Id##Fields) / sizeof(FieldSpec))},
#include "causal/profile_records.def"
};
inline constexpr unsigned kNumRecords = unsigned(sizeof(kRecords) / sizeof(kRecords[0]));

/// Other spellings of record types, with the type they stand for.
inline constexpr Alias kRecordAliases[] = {
#define CAUSAL_PROFILE_RECORD_ALIAS(Id, alias) {alias, kRecords[unsigned(RecordId::Id)].name},
#include "causal/profile_records.def"
};

/// Other spellings of field keys, with the key they stand for.
inline constexpr Alias kKeyAliases[] = {
#define CAUSAL_PROFILE_KEY_ALIAS(alias, key) {alias, key},
#include "causal/profile_records.def"
};

constexpr const RecordSpec &recordSpec(RecordId id) { return kRecords[unsigned(id)]; }

} // namespace causal::profile_schema

#endif // CAUSAL_PROFILE_SCHEMA_H
