//===- runtime/Attribution.cpp - Which program line a sample is charged to ===//

#include "Attribution.h"

#include "ThreadState.h"

#include <atomic>
#include <dlfcn.h>
#include <libunwind.h>
#include <link.h>
#include <sched.h>
#include <string.h>
#include <ucontext.h>

namespace causal::rt {

namespace {

AttributionSetup g_setup;
unw_addr_space_t g_remote_space = nullptr;
bool g_unwinding_ready = false;

// Fork gate. libunwind takes internal mutexes (its caches, its memory
// pool). A fork while another thread holds one would leave it locked
// forever in the child, so the pthread_atfork prepare handler closes the
// gate and waits until no handler is inside libunwind; handlers that find
// the gate closed skip unwinding for that sample (frame pointers only).
std::atomic<uint32_t> g_unwinders{0};
std::atomic<bool> g_fork_in_progress{false};

bool enterUnwinder() {
  g_unwinders.fetch_add(1, std::memory_order_seq_cst);
  if (g_fork_in_progress.load(std::memory_order_seq_cst)) {
    g_unwinders.fetch_sub(1, std::memory_order_seq_cst);
    return false;
  }
  return true;
}

void leaveUnwinder() { g_unwinders.fetch_sub(1, std::memory_order_seq_cst); }

// libunwind (nongnu, generic unw_* API) is loaded with dlopen(RTLD_LOCAL)
// when profiling starts rather than linked: its _Unwind_* exports then
// never enter the program's global symbol scope (where they could take
// C++ exception handling away from libgcc_s), and CAUSAL_DISABLE=1 does not
// pay for loading it. The names are the header's own macros.
#define CAUSAL_STRINGIFY_(x) #x
#define CAUSAL_STRINGIFY(x) CAUSAL_STRINGIFY_(x)
struct UnwindApi {
  decltype(&unw_tdep_getcontext) getcontext;
  decltype(&unw_init_local) init_local;
  decltype(&unw_init_remote) init_remote;
  decltype(&unw_step) step;
  decltype(&unw_get_reg) get_reg;
  decltype(&unw_is_signal_frame) is_signal_frame;
  decltype(&unw_create_addr_space) create_addr_space;
  decltype(&unw_set_caching_policy) set_caching_policy;
  decltype(&unw_flush_cache) flush_cache;
  decltype(&unw_get_accessors) get_accessors;
  unw_addr_space_t *local_addr_space;
  /// libunwind's binary search of an .eh_frame_hdr table (exported, not in
  /// its header): the lookup findProcInfo hands an image's table to.
  int (*search_unwind_table)(unw_addr_space_t, unw_word_t, unw_dyn_info_t *, unw_proc_info_t *, int,
                             void *);
};
UnwindApi g_api;

template <typename T> bool loadSymbol(void *library, const char *name, T *out) {
  *out = reinterpret_cast<T>(dlsym(library, name));
  return *out != nullptr;
}

bool loadUnwindApi(const char **problem) {
  void *library = dlopen(CAUSAL_LIBUNWIND_SONAME, RTLD_NOW | RTLD_LOCAL);
  if (!library) {
    *problem = dlerror();
    return false;
  }
  UnwindApi &a = g_api;
  bool ok = loadSymbol(library, CAUSAL_STRINGIFY(unw_tdep_getcontext), &a.getcontext) &&
            loadSymbol(library, CAUSAL_STRINGIFY(unw_init_local), &a.init_local) &&
            loadSymbol(library, CAUSAL_STRINGIFY(unw_init_remote), &a.init_remote) &&
            loadSymbol(library, CAUSAL_STRINGIFY(unw_step), &a.step) &&
            loadSymbol(library, CAUSAL_STRINGIFY(unw_get_reg), &a.get_reg) &&
            loadSymbol(library, CAUSAL_STRINGIFY(unw_is_signal_frame), &a.is_signal_frame) &&
            loadSymbol(library, CAUSAL_STRINGIFY(unw_create_addr_space), &a.create_addr_space) &&
            loadSymbol(library, CAUSAL_STRINGIFY(unw_set_caching_policy), &a.set_caching_policy) &&
            loadSymbol(library, CAUSAL_STRINGIFY(unw_flush_cache), &a.flush_cache) &&
            loadSymbol(library, CAUSAL_STRINGIFY(unw_get_accessors), &a.get_accessors) &&
            loadSymbol(library, CAUSAL_STRINGIFY(unw_local_addr_space), &a.local_addr_space) &&
            loadSymbol(library, CAUSAL_STRINGIFY(UNW_OBJ(dwarf_search_unwind_table)),
                       &a.search_unwind_table);
  if (!ok) {
    *problem = "a libunwind function is missing";
    dlclose(library);
    return false;
  }
  return true;
}

enum class FrameVerdict { Continue, Line, Outside, Overhead };

FrameVerdict classify(uintptr_t address, ResolvedAddress *out) {
  if (g_setup.registry->resolve(address, out))
    return FrameVerdict::Line;
  if (g_setup.thread_entry.contains(address))
    return FrameVerdict::Outside;
  if (g_setup.forwarding_code.contains(address))
    return FrameVerdict::Continue;
  if (g_setup.runtime_code.contains(address))
    return FrameVerdict::Overhead;
  return FrameVerdict::Continue;
}

SampleOutcome toOutcome(FrameVerdict verdict) {
  switch (verdict) {
  case FrameVerdict::Line:
    return SampleOutcome::Line;
  case FrameVerdict::Overhead:
    return SampleOutcome::Overhead;
  default:
    return SampleOutcome::Outside;
  }
}

// Steps |cursor| (positioned on the sampled frame, already classified)
// towards main until a frame decides. Continue = unwinding ended undecided.
FrameVerdict walkCallers(unw_cursor_t *cursor, ResolvedAddress *out) {
  bool previous_was_signal_frame = g_api.is_signal_frame(cursor) > 0;
  for (unsigned frame = 1; frame < g_setup.max_frames; ++frame) {
    if (g_api.step(cursor) <= 0)
      return FrameVerdict::Continue;
    unw_word_t ip = 0;
    if (g_api.get_reg(cursor, UNW_REG_IP, &ip) < 0 || ip == 0)
      return FrameVerdict::Continue;
    // Above a signal frame the IP is where the thread was interrupted, not
    // a return address.
    uintptr_t address = previous_was_signal_frame ? uintptr_t(ip) : uintptr_t(ip) - 1;
    FrameVerdict verdict = classify(address, out);
    if (verdict != FrameVerdict::Continue)
      return verdict;
    previous_was_signal_frame = g_api.is_signal_frame(cursor) > 0;
  }
  return FrameVerdict::Continue;
}

// ---- Remote accessors: the interrupted registers over the live stack ------

/// The registers a sample interrupted (from the signal's ucontext).
struct InterruptedRegisters {
  uint64_t ip = 0, sp = 0, bp = 0;
};

struct RemoteContext {
  InterruptedRegisters regs;
  ThreadState *thread; ///< the calling thread: the stack is its own, live
  /// The pages safeRead64 has found readable during this sample, and only
  /// this one: nothing this thread runs can unmap them while its handler
  /// runs, but its code can between two samples.
  ReadablePageCache readable_pages;
  /// The images findProcInfo has found mapped during this sample: libunwind
  /// reads their unwind rules (CFI) through accessMem, directly.
  static constexpr unsigned kMappedImages = 4;
  AddressRange mapped_images[kMappedImages];
  unsigned mapped_image_count = 0;

  bool inMappedImage(uintptr_t address) const {
    for (unsigned i = 0; i < mapped_image_count && i < kMappedImages; ++i)
      if (mapped_images[i].contains(address) && mapped_images[i].contains(address + 7))
        return true;
    return false;
  }
};

/// Reads a DWARF pointer-encoded value of .eh_frame_hdr's header (the sizes
/// linkers write: 4 or 8 bytes); false for any other encoding.
bool readEncodedSize(const uint8_t *&at, uint8_t encoding, uint64_t *value) {
  switch (encoding & 0x0f) {
  case 0x03: // udata4
  case 0x0b: // sdata4
    uint32_t v4;
    memcpy(&v4, at, 4);
    *value = v4;
    at += 4;
    return true;
  case 0x00: // absptr
  case 0x04: // udata8
  case 0x0c: // sdata8
    memcpy(value, at, 8);
    at += 8;
    return true;
  default:
    return false;
  }
}

// The loader's live r_debug, found as debuggers find it: through the main
// program's DT_DEBUG entry, which ld.so fills in. The symbol _r_debug is no
// substitute: a program that names it gets a copy of its own
// (R_X86_64_COPY), which ld.so never updates and the runtime's reference
// binds to.
const r_debug *g_loader_state = nullptr;

int findLoaderState(dl_phdr_info *info, size_t, void *data) {
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    if (info->dlpi_phdr[i].p_type != PT_DYNAMIC)
      continue;
    const auto *entry =
        reinterpret_cast<const ElfW(Dyn) *>(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
    for (; entry->d_tag != DT_NULL; ++entry)
      if (entry->d_tag == DT_DEBUG)
        *static_cast<const r_debug **>(data) = reinterpret_cast<const r_debug *>(entry->d_un.d_ptr);
  }
  return 1; // the first image is the main program
}

// True while the loader is adding or removing images (the r_debug state
// debuggers read, <link.h>), or when that state is unknown. dlclose unmaps
// an image before _dl_find_object forgets it, and says RT_DELETE from
// before the unmap until after; glibc sets it on the base namespace's
// r_debug (dlmopen namespaces have their own, not read here).
bool loaderChangingImages() {
  if (!g_loader_state)
    return true;
  const volatile auto &state = g_loader_state->r_state; // written by the loader, any thread
  return state != r_debug::RT_CONSISTENT;
}

// Finds the unwind rules of |ip|. libunwind's own lookup walks the loaded
// images with dl_iterate_phdr, which takes the loader's lock: a sample that
// interrupted a thread inside dlopen or dlclose while it held that lock (or
// was taking it) would wait for itself forever. glibc's _dl_find_object
// (2.35) finds the image and its PT_GNU_EH_FRAME without a lock and is
// async-signal-safe; libunwind then searches that image's table. Code
// registered at run time with libunwind's dynamic list (JIT) is not found.
//
// A sample that interrupted dlclose between its munmap and the update of
// _dl_find_object's data gets an image that is no longer mapped: a stale
// return address or a guessed frame into that image would read its
// unmapped table. While the loader is changing images, one safe read of the
// table's header proves the image is still mapped (dlclose unmaps an image
// with one munmap). The check is not made otherwise: it is a system call
// (about 2 us on the CI's VMs). Another thread's dlclose racing with a
// sample is not covered, as _dl_find_object's own contract does not.
int findProcInfo(unw_addr_space_t, unw_word_t ip, unw_proc_info_t *info, int need_unwind_info,
                 void *arg) {
  dl_find_object image;
  if (_dl_find_object(reinterpret_cast<void *>(ip), &image) != 0 || !image.dlfo_eh_frame)
    return -UNW_ENOINFO;
  auto *context = static_cast<RemoteContext *>(arg);
  uint64_t unused;
  if (loaderChangingImages() && !safeRead64(reinterpret_cast<uintptr_t>(image.dlfo_eh_frame),
                                            &unused, &context->readable_pages))
    return -UNW_ENOINFO;
  AddressRange mapped{reinterpret_cast<uintptr_t>(image.dlfo_map_start),
                      reinterpret_cast<uintptr_t>(image.dlfo_map_end)};
  if (!context->inMappedImage(mapped.begin))
    context->mapped_images[context->mapped_image_count++ % RemoteContext::kMappedImages] = mapped;
  // .eh_frame_hdr: version, the encodings of eh_frame_ptr, fde_count and
  // the table, then those values and the sorted table of (initial location,
  // FDE) pairs, relative to the header: the one layout libunwind searches.
  const auto *header = static_cast<const uint8_t *>(image.dlfo_eh_frame);
  constexpr uint8_t kDataRelSigned4 = 0x30 | 0x0b; // DW_EH_PE_datarel | DW_EH_PE_sdata4
  if (header[0] != 1 || header[3] != kDataRelSigned4)
    return -UNW_ENOINFO;
  const uint8_t *at = header + 4;
  uint64_t eh_frame = 0, fde_count = 0;
  if (!readEncodedSize(at, header[1], &eh_frame) || !readEncodedSize(at, header[2], &fde_count) ||
      fde_count == 0)
    return -UNW_ENOINFO;
  unw_dyn_info_t table;
  memset(&table, 0, sizeof(table));
  table.format = UNW_INFO_FORMAT_REMOTE_TABLE;
  table.start_ip = reinterpret_cast<unw_word_t>(image.dlfo_map_start);
  table.end_ip = reinterpret_cast<unw_word_t>(image.dlfo_map_end);
  table.u.rti.segbase = reinterpret_cast<unw_word_t>(header);
  table.u.rti.table_len = fde_count * 2 * sizeof(int32_t) / sizeof(unw_word_t);
  table.u.rti.table_data = reinterpret_cast<unw_word_t>(at);
  // The table is this process's memory: the local address space reads it
  // directly (no cursor: no validation).
  return g_api.search_unwind_table(*g_api.local_addr_space, ip, &table, info, need_unwind_info,
                                   nullptr);
}

void putUnwindInfo(unw_addr_space_t, unw_proc_info_t *info, void *) {
  unw_addr_space_t space = *g_api.local_addr_space;
  unw_accessors_t *local = g_api.get_accessors(space);
  local->put_unwind_info(space, info, nullptr);
}

int getDynInfoListAddr(unw_addr_space_t, unw_word_t *, void *) { return -UNW_ENOINFO; }

// The bound on stack reads: [sp, sp + stack_bytes) of the interrupted stack.
bool withinStackBound(const RemoteContext &context, uintptr_t address) {
  return address >= context.regs.sp && address - context.regs.sp + 8 <= g_setup.stack_bytes;
}

// Reads one word: the interrupted stack within its bound, directly where it
// is the calling thread's known stack; an image findProcInfo found mapped in
// this sample (its unwind rules) directly too; other memory (a stack whose
// range is unknown) through safeRead64. The thread's stack outside the
// bound (the handler's frames below the stack pointer, frames beyond the
// bound above it) is refused.
bool readWord(RemoteContext &context, uintptr_t address, uint64_t *value) {
  ThreadState *thread = context.thread;
  bool on_stack = thread && thread->stack.contains(address) && thread->stack.contains(address + 7);
  if (on_stack) {
    if (!withinStackBound(context, address))
      return false;
    *value = readUnchecked64(address);
    return true;
  }
  if (context.inMappedImage(address)) {
    *value = readUnchecked64(address);
    return true;
  }
  return safeRead64(address, value, &context.readable_pages);
}

int accessMem(unw_addr_space_t, unw_word_t address, unw_word_t *value, int write, void *arg) {
  if (write)
    return -UNW_EINVAL;
  uint64_t word;
  if (!readWord(*static_cast<RemoteContext *>(arg), uintptr_t(address), &word))
    return -UNW_EINVAL;
  *value = word;
  return 0;
}

int accessReg(unw_addr_space_t, unw_regnum_t reg, unw_word_t *value, int write, void *arg) {
  if (write)
    return -UNW_EREADONLYREG;
  const InterruptedRegisters &regs = static_cast<RemoteContext *>(arg)->regs;
  switch (reg) {
  case UNW_X86_64_RIP:
    *value = regs.ip;
    return 0;
  case UNW_X86_64_RSP:
    *value = regs.sp;
    return 0;
  case UNW_X86_64_RBP:
    *value = regs.bp;
    return 0;
  default:
    return -UNW_EBADREG;
  }
}

int accessFpreg(unw_addr_space_t, unw_regnum_t, unw_fpreg_t *, int, void *) { return -UNW_EBADREG; }

int resume(unw_addr_space_t, unw_cursor_t *, void *) { return -UNW_EINVAL; }

int getProcName(unw_addr_space_t, unw_word_t, char *, size_t, unw_word_t *, void *) {
  return -UNW_ENOINFO;
}

FrameVerdict unwindLiveStack(RemoteContext &context, ResolvedAddress *out) {
  if (!g_unwinding_ready || g_setup.stack_bytes < 8)
    return FrameVerdict::Continue;
  if (!enterUnwinder())
    return FrameVerdict::Continue;
  unw_cursor_t cursor;
  FrameVerdict verdict = FrameVerdict::Continue;
  if (g_api.init_remote(&cursor, g_remote_space, &context) >= 0)
    verdict = walkCallers(&cursor, out);
  leaveUnwinder();
  return verdict;
}

// The frame-pointer chain from the interrupted RBP, as the kernel's user
// callchain walks it: each frame holds the caller's RBP and the return
// address above it. Frames must lie above the stack pointer and grow
// towards the stack's base; the walk stops at the first that does not, at
// one that cannot be read, at a zero return address, or after max_frames.
// Frames on the thread's known stack are read directly, others (a stack of
// the program's own, such as a coroutine's) through safeRead64.
FrameVerdict walkFramePointers(RemoteContext &context, ResolvedAddress *out) {
  ReadablePageCache *cache = &context.readable_pages;
  const AddressRange *stack = context.thread ? &context.thread->stack : nullptr;
  uintptr_t frame = uintptr_t(context.regs.bp);
  uintptr_t lowest = uintptr_t(context.regs.sp);
  for (unsigned frames = 0; frames < g_setup.max_frames; ++frames) {
    if (frame < lowest || (frame & 7) != 0)
      break;
    uint64_t caller_frame = 0, return_address = 0;
    if (stack && stack->contains(frame) && stack->contains(frame + 15)) {
      caller_frame = readUnchecked64(frame);
      return_address = readUnchecked64(frame + 8);
    } else if (!safeRead64(frame, &caller_frame, cache) ||
               !safeRead64(frame + 8, &return_address, cache)) {
      break;
    }
    if (return_address == 0)
      break;
    FrameVerdict verdict = classify(uintptr_t(return_address) - 1, out);
    if (verdict != FrameVerdict::Continue)
      return verdict;
    lowest = frame + 16;
    frame = uintptr_t(caller_frame);
  }
  return FrameVerdict::Continue;
}

} // namespace

bool initUnwinding(const AttributionSetup &setup, const char **problem) {
  g_setup = setup;
  *problem = nullptr;
  if (!setup.load_unwinder)
    return false;
  if (!loadUnwindApi(problem))
    return false;
  // Run libunwind's one-time initialization now, outside any handler.
  unw_context_t context;
  unw_cursor_t cursor;
  if (g_api.getcontext(&context) < 0 || g_api.init_local(&cursor, &context) < 0) {
    *problem = "libunwind failed to initialize";
    return false;
  }
  const r_debug *loader_state = nullptr;
  dl_iterate_phdr(findLoaderState, &loader_state);
  g_loader_state = loader_state ? loader_state : &_r_debug;
  static unw_accessors_t accessors;
  memset(&accessors, 0, sizeof(accessors));
  accessors.find_proc_info = findProcInfo;
  accessors.put_unwind_info = putUnwindInfo;
  accessors.get_dyn_info_list_addr = getDynInfoListAddr;
  accessors.access_mem = accessMem;
  accessors.access_reg = accessReg;
  accessors.access_fpreg = accessFpreg;
  accessors.resume = resume;
  accessors.get_proc_name = getProcName;
  g_remote_space = g_api.create_addr_space(&accessors, 0);
  if (!g_remote_space) {
    *problem = "unw_create_addr_space failed";
    return false;
  }
  // No cache of unwind rules: samples unwind in signal handlers, and the
  // cache takes a mutex. A per-thread cache would not, but libunwind built
  // without __thread (Debian's) turns UNW_CACHE_PER_THREAD into the global
  // cache behind pthread_mutex_lock, called from the handler through the
  // PLT: our own interposed function, or the program's (the own-waits test
  // program's, which looks up its caller with the loader's lock, hung when
  // the sample interrupted it inside that lookup). The cost: a sample in
  // uninstrumented code unwinds in ~10 us instead of ~4-6 us. The local
  // address space, shared with the program's own libunwind calls, is only
  // read from (search_unwind_table, no cache) and keeps its policy.
  g_api.set_caching_policy(g_remote_space, UNW_CACHE_NONE);
  g_unwinding_ready = true;
  return true;
}

bool beginFork() {
  static std::atomic<uint32_t> abandoned{0};
  g_fork_in_progress.store(true, std::memory_order_seq_cst);
  return waitForReaders(g_unwinders, &abandoned);
}

void endFork() { g_fork_in_progress.store(false, std::memory_order_seq_cst); }

void flushUnwindCache() {
  if (g_remote_space)
    g_api.flush_cache(g_remote_space, 0, 0);
}

int unwindCallersOf(uintptr_t ip, uintptr_t sp, uintptr_t *out, unsigned max, bool *more) {
  *more = false;
  if (!g_unwinding_ready || !enterUnwinder())
    return -1;
  // The local address space (its lookups may take the loader's lock: this
  // is the program's context, not a signal handler).
  unw_context_t context;
  unw_cursor_t cursor;
  int stored = -1;
  if (g_api.getcontext(&context) >= 0 && g_api.init_local(&cursor, &context) >= 0) {
    unsigned n = 0;
    for (unsigned steps = 0; steps < 2 * g_setup.max_frames + max; ++steps) {
      unw_word_t frame_ip = 0, frame_sp = 0;
      g_api.get_reg(&cursor, UNW_REG_IP, &frame_ip);
      if (stored < 0) {
        g_api.get_reg(&cursor, UNW_REG_SP, &frame_sp);
        if (frame_ip == ip && frame_sp == sp)
          stored = 0;
      } else {
        if (frame_ip == 0)
          break;
        if (n == max) {
          *more = true;
          break;
        }
        out[n++] = uintptr_t(frame_ip);
      }
      if (g_api.step(&cursor) <= 0)
        break;
    }
    if (stored == 0)
      stored = int(n);
  }
  leaveUnwinder();
  return stored;
}

SampleOutcome attributeSignalContext(void *ucontext, ThreadState *thread, ResolvedAddress *out) {
  auto *uc = static_cast<ucontext_t *>(ucontext);
  RemoteContext context;
  context.regs.ip = uint64_t(uc->uc_mcontext.gregs[REG_RIP]);
  context.regs.sp = uint64_t(uc->uc_mcontext.gregs[REG_RSP]);
  context.regs.bp = uint64_t(uc->uc_mcontext.gregs[REG_RBP]);
  context.thread = thread;
  FrameVerdict verdict = classify(uintptr_t(context.regs.ip), out);
  if (verdict != FrameVerdict::Continue)
    return toOutcome(verdict);
  verdict = unwindLiveStack(context, out);
  if (verdict != FrameVerdict::Continue)
    return toOutcome(verdict);
  return toOutcome(walkFramePointers(context, out));
}

} // namespace causal::rt
