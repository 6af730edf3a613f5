//===- runtime/ThreadState.cpp - What the runtime keeps per thread ---------===//

#include "ThreadState.h"

#include <string.h>
#include <sys/mman.h>

namespace causal::rt {

static void resetState(ThreadState *state) {
  // Everything but |in_use|, which the caller owns.
  setThreadId(state, 0);
  state->kind = SamplerKind::None;
  state->perf_fd = -1;
  state->perf_fd_dev = state->perf_fd_ino = 0;
  memset(&state->timer, 0, sizeof(state->timer));
  state->timer_armed = false;
  state->first_period = false;
  state->in_handler = 0;
  state->cpu_base_user_ns = state->cpu_base_total_ns = 0;
  __atomic_store_n(&state->unsampled_ns, uint64_t(0), __ATOMIC_RELAXED); // the profiler reads it
  state->suspended_at_ns = 0;
  state->suspended_by_period = false;
  state->loss_window_samples = state->loss_window_user_ns = 0;
  state->loss_window_total_ns = state->loss_window_unsampled_ns = 0;
  state->switch_window_samples = state->switch_window_cpu_ns = state->switch_window_switches = 0;
  state->pause_switches = 0;
  state->unsampled_base_ns = 0;
  state->delay_scale_x1024 = 1024;
  state->stack = AddressRange{};
  state->sample_stack_floor = 0;
  __atomic_store_n(&state->samples, 0, __ATOMIC_RELAXED); // the profiler thread reads it
  state->samples_in_batch = state->batches = 0;
  // Distinct per slot; a reused slot goes on with its own sequence.
  state->choice_random += reinterpret_cast<uintptr_t>(state);
  state->local_delay_ns.store(0, std::memory_order_relaxed);
  state->blocking_calls.store(0, std::memory_order_relaxed);
  state->path_depth = 0; // the paths themselves were merged when the last owner ended
  state->path_blocked_ns = 0;
  state->path_block_since = 0;
  state->path_paused_ns = state->path_paused_cpu_ns = 0;
  state->excess_delay_ns = 0;
  __atomic_store_n(&state->window_runnable_ns, uint64_t(0), __ATOMIC_RELAXED); // profiler's too
  __atomic_store_n(&state->cpu_share_scale_x1024, 1024, __ATOMIC_RELAXED);
  state->sync_calls = 0;
  state->paused_ns = 0;
  state->coz_pre_block_global_ns = 0;
  state->selected_delay_ns = 0;
  state->sched = SchedStat();
  state->sched_read = false;
  state->competing = false;
  state->sched_next_samples = 0;
  state->recent_cpu_ns = state->recent_wait_ns = 0;
  // watch_stat and watch_unsampled_ns are the profiler thread's alone: it may
  // be reading the thread that just gave this state back (its schedstat
  // stays readable while it exits) and write them now. An epoch of 0 says
  // they are not this thread's: the next experiment counts it from birth.
  __atomic_store_n(&state->watch_epoch, 0, __ATOMIC_RELEASE);
}

// New states come from chunks of kStatesPerChunk, carved lock-free (a
// thread may fork while another carves): one mapping per state, as before,
// made every thread start a mapping and grew the memory map by one entry
// per live thread (docs/benchmarks.md, "Many threads: the cost of a
// thread").
ThreadState *ThreadRegistry::carve() {
  for (;;) {
    StateChunk *chunk = chunk_.load(std::memory_order_acquire);
    if (chunk) {
      uint32_t index = chunk->next.fetch_add(1, std::memory_order_relaxed);
      if (index < kStatesPerChunk)
        return &chunk->states[index];
    }
    void *memory = mmap(nullptr, sizeof(StateChunk), PROT_READ | PROT_WRITE,
                        MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (memory == MAP_FAILED)
      return nullptr;
    auto *fresh = static_cast<StateChunk *>(memory); // zero-filled
    fresh->next.store(1, std::memory_order_relaxed); // states[0] is ours
    if (chunk_.compare_exchange_strong(chunk, fresh, std::memory_order_acq_rel))
      return &fresh->states[0];
    munmap(memory, sizeof(StateChunk)); // another thread installed one first
  }
}

ThreadState *ThreadRegistry::acquire() {
  // Reuse a state whose thread has exited, if any was given back.
  uint32_t used = free_.load(std::memory_order_acquire) ? slotsUsed() : 0;
  for (uint32_t i = 0; i < used; ++i) {
    ThreadState *state = slot(i);
    if (!state)
      continue;
    uint32_t expected = 0;
    if (state->in_use.load(std::memory_order_relaxed) == 0 &&
        state->in_use.compare_exchange_strong(expected, 1, std::memory_order_acq_rel)) {
      // Not below 0: a state given back beyond kCapacity counts but is
      // never found here.
      uint32_t free = free_.load(std::memory_order_relaxed);
      while (free && !free_.compare_exchange_weak(free, free - 1, std::memory_order_relaxed)) {
      }
      resetState(state);
      return state;
    }
  }
  ThreadState *state = carve(); // zero-filled: a valid ThreadState
  if (!state)
    return nullptr;
  state->in_use.store(1, std::memory_order_relaxed);
  resetState(state);
  // Publish it in the first empty slot.
  for (;;) {
    uint32_t index = used_.load(std::memory_order_acquire);
    if (index >= kCapacity) {
      overflowed_.store(true, std::memory_order_relaxed);
      return state; // usable, just not enumerable
    }
    ThreadState *expected = nullptr;
    if (slots_[index].compare_exchange_strong(expected, state, std::memory_order_acq_rel)) {
      used_.compare_exchange_strong(index, index + 1, std::memory_order_acq_rel);
      return state;
    }
    // Someone filled |index|: help advance the count and retry.
    used_.compare_exchange_strong(index, index + 1, std::memory_order_acq_rel);
  }
}

void ThreadRegistry::release(ThreadState *state) {
  if (state) {
    state->in_use.store(0, std::memory_order_release);
    free_.fetch_add(1, std::memory_order_release);
  }
}

void ThreadRegistry::releaseAllBut(ThreadState *survivor) {
  uint32_t used = slotsUsed();
  uint32_t free = 0;
  for (uint32_t i = 0; i < used; ++i) {
    ThreadState *state = slot(i);
    if (state && state != survivor) {
      state->in_use.store(0, std::memory_order_release);
      ++free;
    }
  }
  free_.store(free, std::memory_order_release);
}

} // namespace causal::rt
