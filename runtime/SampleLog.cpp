//===- runtime/SampleLog.cpp - Per-address sample counts ------------------===//

#include "SampleLog.h"

#include "ModuleRegistry.h"
#include "Support.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

namespace causal::rt {

static constexpr uint64_t kOccupied = 1ull << 63;
static constexpr uint64_t kAddressMask = (1ull << 48) - 1;

bool SampleLog::init(uint32_t slots) {
  uint32_t size = 64;
  while (size < slots && size < (1u << 30))
    size <<= 1;
  bytes_ = size_t(size) * sizeof(Entry);
  void *memory = mmap(nullptr, bytes_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (memory == MAP_FAILED) {
    bytes_ = 0;
    return false;
  }
  entries_ = static_cast<Entry *>(memory);
  mask_ = size - 1;
  return true;
}

void SampleLog::add(uint32_t module, uint64_t link_address, uint64_t count) {
  if (!entries_)
    return;
  uint64_t key = kOccupied | (uint64_t(module & 0x7fff) << 48) | (link_address & kAddressMask);
  uint64_t hash = key * 0x9e3779b97f4a7c15ull;
  uint32_t index = uint32_t(hash >> 40) & mask_;
  for (unsigned probe = 0; probe < kMaxProbes; ++probe, index = (index + 1) & mask_) {
    Entry &e = entries_[index];
    uint64_t current = e.key.load(std::memory_order_acquire);
    if (current == 0) {
      uint64_t expected = 0;
      if (e.key.compare_exchange_strong(expected, key, std::memory_order_acq_rel))
        current = key;
      else
        current = expected; // another handler claimed it first
    }
    if (current == key) {
      e.count.fetch_add(count, std::memory_order_relaxed);
      return;
    }
  }
  overflow_.fetch_add(count, std::memory_order_relaxed);
}

char *SampleLog::render(const ModuleRegistry &registry, size_t *size) const {
  *size = 0;
  if (!entries_)
    return nullptr;
  size_t capacity = 0, used = 0;
  char *text = nullptr;
  for (uint32_t i = 0; i <= mask_; ++i) {
    uint64_t key = entries_[i].key.load(std::memory_order_acquire);
    uint64_t count = entries_[i].count.load(std::memory_order_relaxed);
    if (!key || !count)
      continue;
    uint32_t module = uint32_t((key >> 48) & 0x7fff);
    const char *path = registry.path(module);
    size_t needed = strlen(path) + 64;
    if (used + needed + 1 > capacity) {
      size_t grown = (capacity + needed + 1) * 2 + 4096;
      char *bigger = static_cast<char *>(realloc(text, grown));
      if (!bigger)
        break;
      text = bigger;
      capacity = grown;
    }
    used += formatTo(text + used, capacity - used, "%s %llx %llu\n", path,
                     (unsigned long long)(key & kAddressMask), (unsigned long long)count);
  }
  *size = used;
  return text;
}

void SampleLog::reset() {
  if (entries_)
    madvise(entries_, bytes_, MADV_DONTNEED);
  overflow_.store(0, std::memory_order_relaxed);
}

void SampleLog::destroy() {
  if (entries_)
    munmap(entries_, bytes_);
  entries_ = nullptr;
  bytes_ = 0;
  mask_ = 0;
}

} // namespace causal::rt
