//===- runtime/ModuleRegistry.h - Line tables of the loaded images --------===//
//
// One slot per registered image (executable or DSO): its validated line
// table (causal/abi.h), load bias, runtime code range, image path and one
// sample counter per table line. Writers (register/unregister, called from
// image constructors/destructors) serialize on a spin lock; the signal
// handler reads without locks: a slot is filled, then published with a
// release store of its state, and readers load the state with acquire.
//
//===----------------------------------------------------------------------===//
#ifndef CAUSAL_RUNTIME_MODULEREGISTRY_H
#define CAUSAL_RUNTIME_MODULEREGISTRY_H

#include "SpinLock.h"
#include "Support.h"

#include "causal/abi.h"
#include "causal/tunables.h"

#include <atomic>
#include <stddef.h>
#include <stdint.h>

namespace causal::rt {

/// A sample's place: module slot, line index in its table, link-time address.
struct ResolvedAddress {
  uint32_t module = 0;
  uint32_t line = CAUSAL_NO_LINE;
  uint64_t link_address = 0;
};

class ModuleRegistry {
public:
  static constexpr uint32_t kCapacity = CAUSAL_MAX_MODULES;
  static constexpr size_t kPathSize = 512;

  enum class RegisterResult {
    Registered,        ///< new module published
    Reloaded,          ///< an image unloaded before, loaded again: its slot reused
    AlreadyRegistered, ///< same table start seen before: nothing done
    NoTable,           ///< null bounds (image linked without causal-ld)
    InvalidTable,      ///< bounds given but causal_linetab_validate failed
    Full,              ///< kCapacity modules already registered
    OutOfMemory,       ///< counter allocation failed
  };

  /// Registers the table in [start, stop). |image_path| names the image
  /// (null: found from |start| with dladdr, "/proc/self/exe" for the main
  /// program). O(1) in the table size: counters are mmap'd (zero on first
  /// touch). Not signal-safe.
  RegisterResult registerModule(const void *start, const void *stop, const char *image_path);

  /// Retires the module whose table starts at |start|: its non-zero counts
  /// are rendered as profile lines (the table will be unmapped by dlclose)
  /// and it is no longer resolved. Returns false if unknown. Waits for
  /// signal handlers that are resolving addresses to finish (the grace
  /// period after which no sample in flight refers to the table). The slot
  /// and its counts stay with the image: registering the same image again
  /// (same path and table, wherever it is mapped) reuses them, so a
  /// library loaded and unloaded any number of times takes one slot and its
  /// lines' counts keep growing. The wait is bounded (waitForReaders):
  /// |*gave_up_waiting| (if given) tells whether a handler was still counted
  /// after CAUSAL_GRACE_PERIOD_WAIT_NS.
  bool unregisterModule(const void *start, bool *gave_up_waiting = nullptr);

  /// Signal-safe: maps a runtime address to (module, line). False when no
  /// registered module has a line for it.
  bool resolve(uintptr_t address, ResolvedAddress *out) const;

  /// Signal-safe: adds |count| samples to a resolved line.
  void addSamples(const ResolvedAddress &where, uint64_t count) const;

  /// Signal handlers bracket their resolve() calls with these so that
  /// unregisterModule() can wait until no handler reads a retired table.
  void beginRead() const { readers_.fetch_add(1, std::memory_order_seq_cst); }
  void endRead() const { readers_.fetch_sub(1, std::memory_order_release); }

  /// Zeroes every counter (fork child). Not signal-safe.
  void resetCounts();

  // ---- Inspection (profile writer, tests, verbose output) ----------------
  uint32_t slotsUsed() const { return used_.load(std::memory_order_acquire); }
  bool isActive(uint32_t slot) const;
  /// Grows at every change of the set of active modules (a registration, a
  /// reload, an unregistration): what was learned of an address's module
  /// (runtime/Paths.cpp caches it) holds while it stays the same.
  uint32_t changes() const { return changes_.load(std::memory_order_acquire); }
  const causal_linetab_header *table(uint32_t slot) const;
  uint64_t lineCount(uint32_t slot, uint32_t line) const;
  /// The profile writer's view (signal-safe; one writer at a time): the
  /// line's count if it changed since the last call for it (which it
  /// records), else 0. A run written in parts writes a line again only when
  /// its count changed; a run written whole writes every line with samples.
  uint64_t takeCountToWrite(uint32_t slot, uint32_t line) const;
  /// A part could not be written: the next one writes every line again.
  void forgetWrittenCounts() const;
  const char *path(uint32_t slot) const;
  AddressRange codeRange(uint32_t slot) const;
  uintptr_t bias(uint32_t slot) const;
  /// Profile text ("samples\t..." lines) kept from a retired module, or null.
  const char *retiredText(uint32_t slot) const;

  /// Releases every mapping (tests only: the process-wide registry is never
  /// torn down, handlers may still run while the process exits).
  void destroyForTesting();

private:
  enum SlotState : uint32_t { Free = 0, Active = 2, Retired = 3 };
  struct Module {
    std::atomic<uint32_t> state;
    const void *key;
    const causal_linetab_header *table;
    // The table's shape, kept after it is unmapped: a reload is the same
    // image if its path and shape match (sameImage).
    uint64_t table_vaddr, code_vaddr;
    uint32_t num_rows, num_lines, num_files;
    uintptr_t bias;
    AddressRange code;
    std::atomic<uint64_t> *counts;
    size_t counts_bytes;
    uint64_t *written; // counts last written (takeCountToWrite), after |counts|
    char *retired_text;
    // The text of the unload before the last one: a profile writer may have
    // read retired_text just before a reload and unload replaced it; freed
    // one unload later.
    char *stale_text;
    char path[kPathSize];
  };

  /// Points |m| at |table| (its key, bias, code range, shape).
  static void setPlace(Module &m, const void *start, const causal_linetab_header *table);
  static bool sameImage(const Module &m, const causal_linetab_header *table,
                        const char *image_path);

  Module modules_[kCapacity] = {};
  std::atomic<uint32_t> used_{0};
  std::atomic<uint32_t> changes_{0};
  SpinLock writer_lock_;
  mutable std::atomic<uint32_t> readers_{0};
  std::atomic<uint32_t> abandoned_readers_{0}; // readers given up on (waitForReaders)
};

/// Counts the calling thread as a reader of |registry|'s tables for the
/// scope (beginRead/endRead): unregisterModule, and with it a dlclose, waits
/// until the scope ends before the table it reads is unmapped. Signal-safe.
class ModuleTablesRead {
public:
  explicit ModuleTablesRead(const ModuleRegistry &registry) : registry_(registry) {
    registry_.beginRead();
  }
  ~ModuleTablesRead() { registry_.endRead(); }
  ModuleTablesRead(const ModuleTablesRead &) = delete;
  ModuleTablesRead &operator=(const ModuleTablesRead &) = delete;

private:
  const ModuleRegistry &registry_;
};

} // namespace causal::rt

#endif // CAUSAL_RUNTIME_MODULEREGISTRY_H
