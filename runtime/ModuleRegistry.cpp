//===- runtime/ModuleRegistry.cpp - Line tables of the loaded images ------===//

#include "ModuleRegistry.h"

#include "ProfileWriter.h"

#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

namespace causal::rt {

void ModuleRegistry::setPlace(Module &m, const void *start, const causal_linetab_header *table) {
  const causal_linetab_row *rows = causal_linetab_rows(table);
  m.key = start;
  m.table = table;
  m.bias = reinterpret_cast<uintptr_t>(table) - uintptr_t(table->table_vaddr);
  m.code.begin = uintptr_t(table->code_vaddr) + rows[0].offset + m.bias;
  m.code.end = uintptr_t(table->code_vaddr) + rows[table->num_rows - 1].offset + m.bias;
  m.table_vaddr = table->table_vaddr;
  m.code_vaddr = table->code_vaddr;
  m.num_rows = table->num_rows;
  m.num_lines = table->num_lines;
  m.num_files = table->num_files;
}

bool ModuleRegistry::sameImage(const Module &m, const causal_linetab_header *table,
                               const char *image_path) {
  // The retired table is unmapped: compare what was kept of it. Same path
  // and same table shape: the same build of the library (a rebuilt one of
  // the same shape has the same lines, in all likelihood, at the same
  // indexes; its counts would merge, which is what its samples mean).
  return strcmp(m.path, image_path) == 0 && m.num_lines == table->num_lines &&
         m.num_rows == table->num_rows && m.num_files == table->num_files &&
         m.table_vaddr == table->table_vaddr && m.code_vaddr == table->code_vaddr;
}

ModuleRegistry::RegisterResult ModuleRegistry::registerModule(const void *start, const void *stop,
                                                              const char *image_path) {
  if (!start || !stop)
    return RegisterResult::NoTable;
  const causal_linetab_header *table = causal_linetab_validate(start, stop);
  if (!table)
    return RegisterResult::InvalidTable;

  char new_path[kPathSize];
  if (image_path)
    formatTo(new_path, sizeof(new_path), "%s", image_path);
  else
    imagePathOf(start, new_path, sizeof(new_path));

  writer_lock_.lock();
  uint32_t used = used_.load(std::memory_order_relaxed);
  Module *unloaded_before = nullptr;
  for (uint32_t i = 0; i < used; ++i) {
    Module &m = modules_[i];
    uint32_t state = m.state.load(std::memory_order_relaxed);
    if (m.key == start && state == SlotState::Active) {
      writer_lock_.unlock();
      return RegisterResult::AlreadyRegistered;
    }
    if (state == SlotState::Retired && !unloaded_before && sameImage(m, table, new_path))
      unloaded_before = &m;
  }
  if (unloaded_before) {
    // The same image again (dlopen after dlclose): same lines, same counts.
    // Handlers skip the slot until the state says Active; those that read
    // it before it was retired are gone (unregisterModule waited).
    Module &m = *unloaded_before;
    setPlace(m, start, table);
    m.state.store(SlotState::Active, std::memory_order_release);
    changes_.fetch_add(1, std::memory_order_release);
    writer_lock_.unlock();
    return RegisterResult::Reloaded;
  }
  if (used == kCapacity) {
    writer_lock_.unlock();
    return RegisterResult::Full;
  }

  Module &m = modules_[used];
  size_t bytes = (size_t(table->num_lines) * sizeof(uint64_t) + 4095) & ~size_t(4095);
  void *counts = nullptr;
  if (bytes) {
    // Anonymous mappings are zero-filled on first touch: registering a
    // large table costs no time proportional to its size. The second half
    // holds the counts last written to the profile (takeCountToWrite).
    counts = mmap(nullptr, 2 * bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (counts == MAP_FAILED) {
      writer_lock_.unlock();
      return RegisterResult::OutOfMemory;
    }
  }
  setPlace(m, start, table);
  m.counts = static_cast<std::atomic<uint64_t> *>(counts);
  m.counts_bytes = bytes;
  m.written = bytes ? reinterpret_cast<uint64_t *>(static_cast<char *>(counts) + bytes) : nullptr;
  m.retired_text = nullptr;
  m.stale_text = nullptr;
  memcpy(m.path, new_path, sizeof(m.path));
  m.state.store(SlotState::Active, std::memory_order_release);
  used_.store(used + 1, std::memory_order_release);
  changes_.fetch_add(1, std::memory_order_release);
  writer_lock_.unlock();
  return RegisterResult::Registered;
}

bool ModuleRegistry::unregisterModule(const void *start, bool *gave_up_waiting) {
  if (!start)
    return false;
  writer_lock_.lock();
  uint32_t used = used_.load(std::memory_order_relaxed);
  Module *found = nullptr;
  for (uint32_t i = 0; i < used; ++i)
    if (modules_[i].key == start &&
        modules_[i].state.load(std::memory_order_relaxed) == SlotState::Active)
      found = &modules_[i];
  if (!found) {
    writer_lock_.unlock();
    return false;
  }
  found->state.store(SlotState::Retired, std::memory_order_seq_cst);
  changes_.fetch_add(1, std::memory_order_seq_cst);
  // A handler that loaded the state before the store may still be reading
  // the table: wait until every handler in flight has finished (one that
  // never will is given up on after CAUSAL_GRACE_PERIOD_WAIT_NS).
  bool waited = waitForReaders(readers_, &abandoned_readers_);
  if (gave_up_waiting)
    *gave_up_waiting = !waited;

  // Render the counts now: the table (file names, lines) goes away with
  // the image. Counts that arrive later are not attributed to it anyway.
  TextBuffer text;
  writeSamples(text, found->table,
               [&](uint32_t line) { return found->counts[line].load(std::memory_order_relaxed); });
  free(found->stale_text);
  found->stale_text = found->retired_text;
  found->retired_text = text.release();
  found->table = nullptr;
  writer_lock_.unlock();
  return true;
}

bool ModuleRegistry::resolve(uintptr_t address, ResolvedAddress *out) const {
  uint32_t used = used_.load(std::memory_order_acquire);
  for (uint32_t i = 0; i < used; ++i) {
    const Module &m = modules_[i];
    if (m.state.load(std::memory_order_acquire) != SlotState::Active)
      continue;
    if (!m.code.contains(address))
      continue;
    uint64_t link_address = uint64_t(address - m.bias);
    uint32_t line = causal_linetab_lookup(m.table, link_address);
    if (line == CAUSAL_NO_LINE)
      continue; // a gap in this table; another image cannot overlap, but be exact
    out->module = i;
    out->line = line;
    out->link_address = link_address;
    return true;
  }
  return false;
}

void ModuleRegistry::addSamples(const ResolvedAddress &where, uint64_t count) const {
  const Module &m = modules_[where.module];
  if (m.counts && where.line < m.counts_bytes / sizeof(uint64_t))
    m.counts[where.line].fetch_add(count, std::memory_order_relaxed);
}

void ModuleRegistry::resetCounts() {
  uint32_t used = used_.load(std::memory_order_acquire);
  for (uint32_t i = 0; i < used; ++i) {
    Module &m = modules_[i];
    if (m.counts)
      madvise(m.counts, 2 * m.counts_bytes, MADV_DONTNEED); // private anonymous: reads back zero
    free(m.retired_text);
    free(m.stale_text);
    m.retired_text = nullptr;
    m.stale_text = nullptr;
  }
}

bool ModuleRegistry::isActive(uint32_t slot) const {
  return slot < slotsUsed() &&
         modules_[slot].state.load(std::memory_order_acquire) == SlotState::Active;
}

const causal_linetab_header *ModuleRegistry::table(uint32_t slot) const {
  return isActive(slot) ? modules_[slot].table : nullptr;
}

uint64_t ModuleRegistry::lineCount(uint32_t slot, uint32_t line) const {
  if (slot >= slotsUsed())
    return 0;
  const Module &m = modules_[slot];
  if (!m.counts || line >= m.counts_bytes / sizeof(uint64_t))
    return 0;
  return m.counts[line].load(std::memory_order_relaxed);
}

uint64_t ModuleRegistry::takeCountToWrite(uint32_t slot, uint32_t line) const {
  if (slot >= slotsUsed() || line >= modules_[slot].counts_bytes / sizeof(uint64_t))
    return 0;
  uint64_t count = lineCount(slot, line);
  uint64_t *written = modules_[slot].written;
  if (!written || count == written[line])
    return 0;
  written[line] = count;
  return count;
}

void ModuleRegistry::forgetWrittenCounts() const {
  uint32_t used = used_.load(std::memory_order_acquire);
  for (uint32_t i = 0; i < used; ++i)
    if (modules_[i].written)
      madvise(modules_[i].written, modules_[i].counts_bytes, MADV_DONTNEED);
}

const char *ModuleRegistry::path(uint32_t slot) const {
  return slot < slotsUsed() ? modules_[slot].path : "";
}

AddressRange ModuleRegistry::codeRange(uint32_t slot) const {
  return slot < slotsUsed() ? modules_[slot].code : AddressRange{};
}

uintptr_t ModuleRegistry::bias(uint32_t slot) const {
  return slot < slotsUsed() ? modules_[slot].bias : 0;
}

const char *ModuleRegistry::retiredText(uint32_t slot) const {
  if (slot >= slotsUsed() ||
      modules_[slot].state.load(std::memory_order_acquire) != SlotState::Retired)
    return nullptr;
  return modules_[slot].retired_text;
}

void ModuleRegistry::destroyForTesting() {
  uint32_t used = used_.load(std::memory_order_acquire);
  for (uint32_t i = 0; i < used; ++i) {
    Module &m = modules_[i];
    if (m.counts)
      munmap(m.counts, 2 * m.counts_bytes);
    free(m.retired_text);
    free(m.stale_text);
    m.counts = nullptr;
    m.retired_text = nullptr;
    m.stale_text = nullptr;
    m.state.store(SlotState::Free, std::memory_order_relaxed);
  }
  used_.store(0, std::memory_order_release);
}

} // namespace causal::rt
