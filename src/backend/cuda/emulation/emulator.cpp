// The CUDA emulator: fibers, barriers, warp exchanges, launches under two schedules, device memory,
// the runtime API and cuBLAS on the CPU. See emulator.hpp for the model.
#include "emulator.hpp"

#include "util/blas.hpp"
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <sstream>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "cublasLt.h"
#include "cublas_v2.h"
#include "cuda_bf16.h"
#include "cuda_runtime.h"

#if defined(__SANITIZE_ADDRESS__)
#define ATTNLAB_EMU_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ATTNLAB_EMU_ASAN 1
#endif
#endif
#ifdef ATTNLAB_EMU_ASAN
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#endif

#if !defined(__x86_64__)
#include <ucontext.h>
#endif

// Anchors the shared-memory section, so __start_/__stop_ exist even if no kernel declares __shared__.
__attribute__((section("attnlab_emu_shared"), used)) static char attnlab_emu_shared_anchor[16];
extern "C" char __start_attnlab_emu_shared[];
extern "C" char __stop_attnlab_emu_shared[];

namespace attnlab::cuda::emu {

ThreadInfo* g_thread = nullptr;
BlockInfo g_block;

namespace {

constexpr int kWarp = 32;
constexpr unsigned char kPoison = 0xFF;  // NaN as float and double, −1 as an integer
#ifdef ATTNLAB_EMU_ASAN
constexpr std::size_t kStackBytes = 256 * 1024;  // redzones make frames larger
#else
constexpr std::size_t kStackBytes = 64 * 1024;
#endif

[[noreturn]] void die(const std::string& what) {
  std::fprintf(stderr, "attnlab CUDA emulator: %s\n", what.c_str());
  std::abort();
}

// ---- device memory ------------------------------------------------------------------------------
struct Allocation {
  std::size_t size;
};
std::map<std::uintptr_t, Allocation> g_allocs;  // base address → allocation
std::recursive_mutex g_mutex;                   // one API call or launch at a time

// The allocation holding [p, p + bytes), or g_allocs.end(). One past the end counts for bytes = 0.
std::map<std::uintptr_t, Allocation>::iterator find_alloc(const void* p, std::size_t bytes) {
  const auto a = reinterpret_cast<std::uintptr_t>(p);
  auto it = g_allocs.upper_bound(a);
  if (it == g_allocs.begin()) return g_allocs.end();
  --it;
  if (a - it->first > it->second.size || bytes > it->second.size - (a - it->first)) return g_allocs.end();
  return it;
}

// ---- errors ---------------------------------------------------------------------------------------
cudaError_t g_sticky = cudaSuccess;  // an error inside a kernel: every later call returns it
cudaError_t g_last = cudaSuccess;    // the last non-sticky error, cleared by cudaGetLastError
std::string g_detail;                // what the emulator said about its last error
cudaError_t g_detail_code = cudaSuccess;

cudaError_t fail(cudaError_t code, const std::string& detail, bool sticky) {
  g_detail = detail;
  g_detail_code = code;
  std::fprintf(stderr, "attnlab CUDA emulator: %s\n", detail.c_str());
  if (sticky) g_sticky = code;
  else g_last = code;
  return code;
}

std::string hex(const void* p) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%p", p);
  return buf;
}

// ---- fibers ---------------------------------------------------------------------------------------
enum class State { Ready, WaitBlock, WaitWarp, Done, Failed };
enum class WarpOp { Sync, Exchange, Ballot };

}  // namespace

struct Fiber {
  ThreadInfo info;
  int linear = 0;
  State state = State::Ready;
  // at a block barrier
  BarrierOp bop = BarrierOp::Plain;
  int pred = 0, bresult = 0;
  // at a warp operation
  WarpOp wop = WarpOp::Sync;
  const char* what = "";
  unsigned mask = 0;
  std::uint64_t value = 0, out = 0;
  int src = 0;
  // context
  char* stack = nullptr;  // usable stack (a guard page below it)
  std::size_t stack_index = 0;
  void* sp = nullptr;
#if !defined(__x86_64__)
  ucontext_t ctx;
#endif
  void* fake_stack = nullptr;
};

namespace {

struct Scheduler {
  std::vector<Fiber> fibers;
  Fiber* current = nullptr;
  const std::function<void()>* body = nullptr;
  std::string error;  // a failure inside the block
  const char* kernel = "";
  void* sched_sp = nullptr;
#if !defined(__x86_64__)
  ucontext_t sched_ctx;
#endif
  const void* sched_stack_lo = nullptr;
  std::size_t sched_stack_size = 0;
  void* sched_fake = nullptr;
  struct AtomicWord {
    double count = 0, abs_sum = 0, eps = 0;
    std::size_t bytes = 4;
  };
  std::unordered_map<std::uintptr_t, AtomicWord> float_atomics;
  void* dyn_smem = nullptr;
};
Scheduler S;

#if defined(__x86_64__)
// Saves the callee-saved registers, MXCSR and the x87 control word on the current stack, stores the
// stack pointer in *save, switches to `load` and restores the same from there. A fresh stack is laid
// out (init_stack) so that this "returns" into fiber_entry.
extern "C" void attnlab_emu_switch(void** save, void* load);
asm(R"(
  .text
  .globl attnlab_emu_switch
  .type attnlab_emu_switch,@function
attnlab_emu_switch:
  pushq %rbp
  pushq %rbx
  pushq %r12
  pushq %r13
  pushq %r14
  pushq %r15
  subq $8, %rsp
  stmxcsr (%rsp)
  fnstcw 4(%rsp)
  movq %rsp, (%rdi)
  movq %rsi, %rsp
  ldmxcsr (%rsp)
  fldcw 4(%rsp)
  addq $8, %rsp
  popq %r15
  popq %r14
  popq %r13
  popq %r12
  popq %rbx
  popq %rbp
  ret
  .size attnlab_emu_switch, .-attnlab_emu_switch
)");
#endif

void asan_start(void** fake, const void* lo, std::size_t size) {
#ifdef ATTNLAB_EMU_ASAN
  __sanitizer_start_switch_fiber(fake, lo, size);
#else
  (void)fake, (void)lo, (void)size;
#endif
}
void asan_finish(void* fake, const void** lo, std::size_t* size) {
#ifdef ATTNLAB_EMU_ASAN
  __sanitizer_finish_switch_fiber(fake, lo, size);
#else
  (void)fake, (void)lo, (void)size;
#endif
}

// Stack shadow to clean before a stack's next fiber: AddressSanitizer's redzones of the frames a
// fiber abandoned when it left (fiber_entry's, and a failed thread's whole call chain) stay poisoned.
// Frames that returned normally cleaned up after themselves, so only [lowest point left, top) needs
// unpoisoning, not the whole 256 KiB (which cost 32 KiB of shadow writes per emulated thread).
std::vector<char*> g_stack_dirty_from;  // per stack: the lowest address a fiber may have left poisoned
__attribute__((noinline)) void note_stack_left(Fiber& f) {
  volatile char here = 0;
  // Margin for the frames below this one until the switch (asan_start, the context switch itself).
  const auto at = reinterpret_cast<std::uintptr_t>(&here), base = reinterpret_cast<std::uintptr_t>(f.stack);
  char* low = at - base > 4096 ? f.stack + (at - base - 4096) : f.stack;
  if (f.stack_index < g_stack_dirty_from.size()) g_stack_dirty_from[f.stack_index] = low;
}

// The fiber's last act: back to the scheduler for good. Not declared [[noreturn]] on purpose: before a
// call to a noreturn function AddressSanitizer inserts __asan_handle_no_return, which unpoisons the
// whole stack it believes current and asks the kernel for the signal stack (a system call) — per
// emulated thread, that was half of the emulator's time. The next fiber on this stack unpoisons it
// anyway (init_fiber).
void leave_for_good(Fiber& f) {
  note_stack_left(f);
  asan_start(nullptr, S.sched_stack_lo, S.sched_stack_size);
#if defined(__x86_64__)
  attnlab_emu_switch(&f.sp, S.sched_sp);
#else
  swapcontext(&f.ctx, &S.sched_ctx);
#endif
  die("a finished fiber was resumed");
}

// kernel_error()'s exception (below): it unwinds the kernel's frames, so the strings they built
// for the message are freed (thread_error's jump out of the fiber would leak them).
struct KernelError {
  std::string what;
};

void fiber_entry() {
  Fiber& f = *S.current;
  asan_finish(nullptr, &S.sched_stack_lo, &S.sched_stack_size);
  try {
    (*S.body)();
    f.state = State::Done;
  } catch (const KernelError& e) {
    if (S.error.empty()) S.error = e.what;
    f.state = State::Failed;
  } catch (const std::exception& e) {
    S.error = std::string("thread threw an exception: ") + e.what();
    f.state = State::Failed;
  } catch (...) {
    S.error = "thread threw an exception";
    f.state = State::Failed;
  }
  // Through a volatile pointer: GCC would otherwise infer that leave_for_good never returns and put
  // AddressSanitizer's __asan_handle_no_return before the call (see leave_for_good).
  void (*volatile leave)(Fiber&) = leave_for_good;
  leave(f);
}

// Yields from the running fiber to the scheduler; returns when the scheduler resumes it.
void yield(Fiber& f) {
  asan_start(&f.fake_stack, S.sched_stack_lo, S.sched_stack_size);
#if defined(__x86_64__)
  attnlab_emu_switch(&f.sp, S.sched_sp);
#else
  swapcontext(&f.ctx, &S.sched_ctx);
#endif
  asan_finish(f.fake_stack, &S.sched_stack_lo, &S.sched_stack_size);
}

void resume(Fiber& f) {
  S.current = &f;
  g_thread = &f.info;
  asan_start(&S.sched_fake, f.stack, kStackBytes);
#if defined(__x86_64__)
  attnlab_emu_switch(&S.sched_sp, f.sp);
#else
  swapcontext(&S.sched_ctx, &f.ctx);
#endif
  asan_finish(S.sched_fake, nullptr, nullptr);
  S.current = nullptr;
  g_thread = nullptr;
}

std::vector<char*> g_stacks;  // reused across blocks and launches
char* stack_for(std::size_t i) {
  while (g_stacks.size() <= i) {
    const long page = sysconf(_SC_PAGESIZE);
    void* m = mmap(nullptr, kStackBytes + static_cast<std::size_t>(page), PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (m == MAP_FAILED) die("cannot map a fiber stack");
    mprotect(m, static_cast<std::size_t>(page), PROT_NONE);  // a stack overflow faults, not corrupts
    g_stacks.push_back(static_cast<char*>(m) + page);
  }
  return g_stacks[i];
}

void init_fiber(Fiber& f, std::size_t i) {
  f.stack = stack_for(i);
  f.stack_index = i;
#ifdef ATTNLAB_EMU_ASAN
  // Frames a previous thread left behind (note_stack_left); a new stack is clean from its base.
  if (g_stack_dirty_from.size() <= i) g_stack_dirty_from.resize(i + 1, nullptr);
  char* from = g_stack_dirty_from[i] ? g_stack_dirty_from[i] : f.stack;
  __asan_unpoison_memory_region(from, static_cast<std::size_t>(f.stack + kStackBytes - from));
  // Until this fiber leaves through leave_for_good, the whole stack counts as dirty: a block that
  // fails stops its other threads wherever they stand, deep frames and all.
  g_stack_dirty_from[i] = f.stack;
#endif
  f.state = State::Ready;
  f.fake_stack = nullptr;
#if defined(__x86_64__)
  auto top = reinterpret_cast<std::uintptr_t>(f.stack + kStackBytes) & ~std::uintptr_t{15};
  auto* sp = reinterpret_cast<std::uint64_t*>(top);
  *--sp = 0;  // where fiber_entry's return address would be: keeps the ABI's 16-byte alignment
  *--sp = reinterpret_cast<std::uint64_t>(&fiber_entry);
  for (int r = 0; r < 6; ++r) *--sp = 0;  // rbp rbx r12 r13 r14 r15
  std::uint32_t mxcsr;
  std::uint16_t fpucw;
  asm volatile("stmxcsr %0" : "=m"(mxcsr));
  asm volatile("fnstcw %0" : "=m"(fpucw));
  *--sp = static_cast<std::uint64_t>(mxcsr) | (static_cast<std::uint64_t>(fpucw) << 32);
  f.sp = sp;
#else
  getcontext(&f.ctx);
  f.ctx.uc_stack.ss_sp = f.stack;
  f.ctx.uc_stack.ss_size = kStackBytes;
  f.ctx.uc_link = nullptr;
  makecontext(&f.ctx, &fiber_entry, 0);
#endif
}

Fiber& running(const char* what) {
  if (!S.current) die(std::string(what) + " called outside a kernel");
  return *S.current;
}

// Ends the running thread with an error: the scheduler abandons the block.
[[noreturn]] void thread_error(Fiber& f, const std::string& what) {
  if (S.error.empty()) S.error = what;
  f.state = State::Failed;
  leave_for_good(f);
  __builtin_unreachable();
}

std::string thread_name(const Fiber& f) {
  std::ostringstream s;
  s << "thread (" << f.info.idx.x << "," << f.info.idx.y << "," << f.info.idx.z << ")";
  return s.str();
}

// Byte by byte through a volatile pointer: the compiler would otherwise turn the loop into memset,
// whose AddressSanitizer interceptor rightly objects to writing the redzones between the arrays.
// Eight bytes at a time through the aligned middle (per block, this loop was a tenth of the emulator's
// time when it went byte by byte).
__attribute__((no_sanitize_address)) void poison_static_shared() {
  volatile char* p = __start_attnlab_emu_shared;
  volatile char* const end = __stop_attnlab_emu_shared;
  for (; p < end && reinterpret_cast<std::uintptr_t>(p) % 8 != 0; ++p) *p = static_cast<char>(kPoison);
  std::uint64_t word = 0;
  std::memset(&word, kPoison, sizeof word);
  for (; p + 8 <= end; p += 8) *reinterpret_cast<volatile std::uint64_t*>(p) = word;
  for (; p < end; ++p) *p = static_cast<char>(kPoison);
}

// Releases the lanes of one warp whose operation can complete; false if none can. Sets S.error for
// an operation that can never complete correctly.
bool resolve_warps() {
  const int n = static_cast<int>(S.fibers.size());
  bool released = false;
  for (int w = 0; w * kWarp < n; ++w) {
    const int base = w * kWarp, lanes = std::min(kWarp, n - base);
    for (int l = 0; l < lanes; ++l) {
      Fiber& f = S.fibers[static_cast<std::size_t>(base + l)];
      if (f.state != State::WaitWarp) continue;
      const unsigned mask = f.mask;
      bool ready = true;
      for (int m = 0; m < kWarp; ++m) {
        if (!(mask >> m & 1u)) continue;
        if (m >= lanes) {
          S.error = std::string(f.what) + " in warp " + std::to_string(w) + " names lane " + std::to_string(m) +
                    " in its mask, but the block has only " + std::to_string(lanes) + " threads in that warp";
          return false;
        }
        const Fiber& g = S.fibers[static_cast<std::size_t>(base + m)];
        if (g.state == State::Done) {
          S.error = std::string(f.what) + " in warp " + std::to_string(w) + " (mask " + hex(reinterpret_cast<void*>(static_cast<std::uintptr_t>(mask))) +
                    ") waits for lane " + std::to_string(m) + ", which has exited: it never arrives (a hang on a GPU)";
          return false;
        }
        if (g.state != State::WaitWarp) {
          ready = false;
          break;
        }
        if (g.mask != mask || g.wop != f.wop || std::strcmp(g.what, f.what) != 0) {
          S.error = "lanes of warp " + std::to_string(w) + " meet at different warp operations: lane " + std::to_string(l) +
                    " at " + f.what + " (mask " + hex(reinterpret_cast<void*>(static_cast<std::uintptr_t>(mask))) + "), lane " +
                    std::to_string(m) + " at " + g.what + " (mask " + hex(reinterpret_cast<void*>(static_cast<std::uintptr_t>(g.mask))) + ")";
          return false;
        }
      }
      if (!ready) continue;
      unsigned ballot = 0;
      for (int m = 0; m < kWarp; ++m)
        if ((mask >> m & 1u) && S.fibers[static_cast<std::size_t>(base + m)].pred) ballot |= 1u << m;
      for (int m = 0; m < kWarp; ++m) {
        if (!(mask >> m & 1u)) continue;
        Fiber& g = S.fibers[static_cast<std::size_t>(base + m)];
        if (g.wop == WarpOp::Exchange) {
          if (g.src < 0 || g.src >= kWarp || !(mask >> g.src & 1u)) {
            S.error = std::string(g.what) + ": lane " + std::to_string(m) + " of warp " + std::to_string(w) + " reads lane " +
                      std::to_string(g.src) + ", which is not in the mask " +
                      hex(reinterpret_cast<void*>(static_cast<std::uintptr_t>(mask))) + " (an undefined value on a GPU)";
            return false;
          }
          g.out = S.fibers[static_cast<std::size_t>(base + g.src)].value;
        } else if (g.wop == WarpOp::Ballot) {
          g.out = ballot;
        }
        g.state = State::Ready;
      }
      released = true;
    }
  }
  return released;
}

bool resolve_block() {
  bool any_waiting = false;
  int count = 0, live = 0;
  for (const Fiber& f : S.fibers) {
    if (f.state == State::Done) continue;
    if (f.state != State::WaitBlock) return false;
    any_waiting = true;
    ++live;
    count += f.pred != 0;
  }
  if (!any_waiting) return false;
  const BarrierOp op = [&] {
    for (const Fiber& f : S.fibers)
      if (f.state == State::WaitBlock) return f.bop;
    return BarrierOp::Plain;
  }();
  for (const Fiber& f : S.fibers) {
    if (f.state == State::WaitBlock && f.bop != op) {
      S.error = "threads of one block wait at different kinds of __syncthreads (" + thread_name(f) +
                " among them): a barrier inside divergent code";
      return false;
    }
  }
  const int result = op == BarrierOp::Or ? count > 0 : op == BarrierOp::And ? count == live : count;
  for (Fiber& f : S.fibers) {
    if (f.state != State::WaitBlock) continue;
    f.bresult = result;
    f.state = State::Ready;
  }
  return true;
}

std::string deadlock_report() {
  std::ostringstream s;
  s << "deadlock: no thread can go on.";
  int shown = 0;
  for (const Fiber& f : S.fibers) {
    if (f.state == State::Done) continue;
    if (shown++ == 4) {
      s << " …";
      break;
    }
    s << ' ' << thread_name(f) << (f.state == State::WaitBlock ? " waits at __syncthreads" : " waits at ")
      << (f.state == State::WaitWarp ? f.what : "") << ';';
  }
  s << " (a barrier or warp operation that not every thread reaches hangs a GPU)";
  return s.str();
}

// Runs one block with its threads resumed in `order`; false (S.error set) on failure.
bool run_block(const std::vector<int>& order) {
  const std::size_t n = S.fibers.size();
  const dim3 bd = g_block.dim;
  for (std::size_t i = 0; i < n; ++i) {
    Fiber& f = S.fibers[i];
    f.linear = static_cast<int>(i);
    const unsigned u = static_cast<unsigned>(i);
    f.info.idx = {u % bd.x, (u / bd.x) % bd.y, u / (bd.x * bd.y)};
    init_fiber(f, i);
  }
  poison_static_shared();
  for (;;) {
    for (int i : order) {
      Fiber& f = S.fibers[static_cast<std::size_t>(i)];
      if (f.state != State::Ready) continue;
      resume(f);
      if (!S.error.empty()) return false;
    }
    bool done = true;
    for (const Fiber& f : S.fibers) done = done && f.state == State::Done;
    if (done) return true;
    if (resolve_warps()) continue;
    if (!S.error.empty()) return false;
    if (resolve_block()) continue;
    if (!S.error.empty()) return false;
    S.error = deadlock_report();
    return false;
  }
}

// ---- launches -------------------------------------------------------------------------------------
std::unordered_map<const void*, int> g_max_dynamic_smem;  // per kernel, from cudaFuncSetAttribute
std::set<CUstream_st*> g_streams;
std::map<CUevent_st*, bool> g_events;  // whether each has been recorded
constexpr std::size_t kDefaultDynamicSmem = 48 * 1024, kMaxDynamicSmemOptin = 232448;  // sm_90

int schedules() {
  static const int n = [] {
    const char* e = std::getenv("ATTNLAB_EMU_SCHEDULES");
    return e && std::string(e) == "1" ? 1 : 2;
  }();
  return n;
}

struct Region {
  std::uintptr_t base;
  std::size_t size;
  std::vector<unsigned char> saved;
};

bool run_grid(const char* name, dim3 grid, dim3 block, std::size_t smem, const std::function<void()>& body,
              bool reversed) {
  const std::size_t threads = static_cast<std::size_t>(block.x) * block.y * block.z;
  S.fibers.assign(threads, Fiber{});
  std::vector<int> order(threads);
  for (std::size_t i = 0; i < threads; ++i) order[i] = static_cast<int>(reversed ? threads - 1 - i : i);
  S.body = &body;
  S.kernel = name;
  const std::size_t blocks = static_cast<std::size_t>(grid.x) * grid.y * grid.z;
  for (std::size_t bi = 0; bi < blocks; ++bi) {
    const std::size_t b = reversed ? blocks - 1 - bi : bi;
    const unsigned x = static_cast<unsigned>(b % grid.x), y = static_cast<unsigned>((b / grid.x) % grid.y),
                   z = static_cast<unsigned>(b / (static_cast<std::size_t>(grid.x) * grid.y));
    g_block.idx = {x, y, z};
    g_block.dim = block;
    g_block.grid = grid;
    // Dynamic shared memory: exactly the launch's size, so AddressSanitizer sees any access past it.
    S.dyn_smem = std::malloc(smem ? smem : 1);
    if (!S.dyn_smem) die("out of host memory for shared memory");
    std::memset(S.dyn_smem, kPoison, smem ? smem : 1);
    const bool ok = run_block(order);
    std::free(S.dyn_smem);
    S.dyn_smem = nullptr;
    if (!ok) {
      std::ostringstream s;
      s << "kernel " << name << ", block (" << x << "," << y << "," << z << ")"
        << (reversed ? " (threads and blocks in reverse order)" : "") << ": " << S.error;
      S.error = s.str();
      return false;
    }
  }
  return true;
}

// Two orders of the same floating-point additions: within the reordered-summation bound. (The
// counts and sums cover both schedules' runs, so the bound used is twice the two-order bound.)
template <typename T>
bool atomic_word_close(const unsigned char* a, const unsigned char* b, const Scheduler::AtomicWord& w) {
  T x, y;
  std::memcpy(&x, a, sizeof x);
  std::memcpy(&y, b, sizeof y);
  if (std::isnan(x) || std::isnan(y)) return std::isnan(x) && std::isnan(y);
  return std::fabs(static_cast<double>(x) - static_cast<double>(y)) <= w.count * w.eps * w.abs_sum;
}

}  // namespace

const ThreadInfo& current_thread() {
  if (!g_thread) die("threadIdx read outside a kernel");
  return *g_thread;
}

int lane_id() { return running("a warp intrinsic").linear % kWarp; }

int block_barrier(BarrierOp op, int predicate) {
  Fiber& f = running("__syncthreads");
  f.bop = op;
  f.pred = predicate;
  f.state = State::WaitBlock;
  yield(f);
  return f.bresult;
}

namespace {
std::uint64_t warp_op(const char* what, WarpOp op, unsigned mask, std::uint64_t value, int src, int pred) {
  Fiber& f = running(what);
  const int lane = f.linear % kWarp;
  if (!(mask >> lane & 1u)) {
    thread_error(f, std::string(what) + ": " + thread_name(f) + " (lane " + std::to_string(lane) +
                        ") calls it with mask " + hex(reinterpret_cast<void*>(static_cast<std::uintptr_t>(mask))) +
                        ", which does not include itself (undefined on a GPU)");
  }
  f.wop = op;
  f.what = what;
  f.mask = mask;
  f.value = value;
  f.src = src;
  f.pred = pred;
  f.state = State::WaitWarp;
  yield(f);
  return f.out;
}
}  // namespace

void warp_barrier(unsigned mask) { (void)warp_op("__syncwarp", WarpOp::Sync, mask, 0, 0, 0); }

std::uint64_t warp_exchange(const char* what, unsigned mask, std::uint64_t value, int src_lane) {
  return warp_op(what, WarpOp::Exchange, mask, value, src_lane, 0);
}

unsigned warp_ballot(const char* what, unsigned mask, int predicate) {
  return static_cast<unsigned>(warp_op(what, WarpOp::Ballot, mask, 0, 0, predicate != 0));
}

void note_float_atomic(const void* addr, double old_abs, double add_abs, double eps) {
  auto& w = S.float_atomics[reinterpret_cast<std::uintptr_t>(addr)];
  if (w.count == 0) w.abs_sum = old_abs;
  w.count += 1;
  w.abs_sum += add_abs;
  w.eps = eps;
  w.bytes = eps < 1e-10 ? 8 : 4;
}

void kernel_error(const std::string& what) {
  Fiber& f = running("a kernel error");
  throw KernelError{what + ": " + thread_name(f)};
}

void* dynamic_shared_memory() {
  (void)running("dynamic shared memory");
  return S.dyn_smem;
}

std::string last_error_detail() { return g_detail; }

bool is_device_pointer(const void* p) {
  std::lock_guard lock(g_mutex);
  return find_alloc(p, 0) != g_allocs.end();
}

cudaError_t launch(const char* name, const void* kernel_id, dim3 grid, dim3 block, std::size_t smem,
                   cudaStream_t stream, const std::function<void()>& body, const PointerArg* ptrs, int nptrs) {
  std::lock_guard lock(g_mutex);
  if (S.current) die(std::string("kernel ") + name + " launched from inside a kernel");
  if (g_sticky != cudaSuccess) return g_sticky;
  const std::string k = std::string("launch of ") + name + ": ";
  auto dims = [](dim3 d) {
    return "(" + std::to_string(d.x) + ", " + std::to_string(d.y) + ", " + std::to_string(d.z) + ")";
  };
  const unsigned long long threads = 1ull * block.x * block.y * block.z;
  if (block.x == 0 || block.y == 0 || block.z == 0 || block.x > 1024 || block.y > 1024 || block.z > 64 ||
      threads > 1024)
    return fail(cudaErrorInvalidConfiguration,
                k + "block " + dims(block) + " (" + std::to_string(threads) +
                    " threads); a device allows at most 1024 threads, x and y ≤ 1024, z ≤ 64, none 0",
                false);
  if (grid.x == 0 || grid.y == 0 || grid.z == 0 || grid.x > 0x7fffffffu || grid.y > 65535 || grid.z > 65535)
    return fail(cudaErrorInvalidConfiguration,
                k + "grid " + dims(grid) + "; a device allows x < 2^31, y and z ≤ 65535, none 0", false);
  const auto lim = g_max_dynamic_smem.find(kernel_id);
  const std::size_t smem_limit = lim == g_max_dynamic_smem.end() ? kDefaultDynamicSmem : static_cast<std::size_t>(lim->second);
  if (smem > smem_limit)
    return fail(cudaErrorInvalidValue,
                k + std::to_string(smem) + " bytes of dynamic shared memory; the limit is " + std::to_string(smem_limit) +
                    (lim == g_max_dynamic_smem.end()
                         ? " without cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, n)"
                         : " set by cudaFuncSetAttribute"),
                false);
  if (stream && !g_streams.count(stream))
    return fail(cudaErrorInvalidResourceHandle, k + "stream " + hex(stream) + " was not created (or was destroyed)", false);
  // Every pointer argument must be device memory: a host pointer faults on a GPU.
  std::vector<Region> regions;
  for (int i = 0; i < nptrs; ++i) {
    const auto it = find_alloc(ptrs[i].p, 0);
    if (it == g_allocs.end())
      return fail(cudaErrorIllegalAddress,
                  k + "argument " + std::to_string(ptrs[i].index + 1) + " (" + hex(ptrs[i].p) +
                      ") is not device memory (a host pointer, or freed): it would fault on a GPU",
                  true);
    if (std::none_of(regions.begin(), regions.end(), [&](const Region& r) { return r.base == it->first; }))
      regions.push_back({it->first, it->second.size, {}});
  }
  const int runs = schedules();
  if (runs > 1)
    for (Region& r : regions) r.saved.assign(reinterpret_cast<unsigned char*>(r.base), reinterpret_cast<unsigned char*>(r.base) + r.size);
  S.float_atomics.clear();
  S.error.clear();
  if (!run_grid(name, grid, block, smem, body, false)) return fail(cudaErrorLaunchFailure, S.error, true);
  if (runs == 1) return cudaSuccess;
  // Second schedule from the same starting memory; keep the first result to compare with.
  std::vector<std::vector<unsigned char>> first;
  for (Region& r : regions) {
    auto* p = reinterpret_cast<unsigned char*>(r.base);
    first.emplace_back(p, p + r.size);
    std::memcpy(p, r.saved.data(), r.size);
  }
  if (!run_grid(name, grid, block, smem, body, true)) return fail(cudaErrorLaunchFailure, S.error, true);
  for (std::size_t ri = 0; ri < regions.size(); ++ri) {
    const auto* p = reinterpret_cast<const unsigned char*>(regions[ri].base);
    const auto& a = first[ri];
    if (std::memcmp(p, a.data(), a.size()) == 0) continue;
    for (std::size_t off = 0; off < a.size(); ++off) {
      if (p[off] == a[off]) continue;
      const std::size_t word = off & ~std::size_t{3}, dword = off & ~std::size_t{7};
      if (const auto it = S.float_atomics.find(regions[ri].base + word);
          it != S.float_atomics.end() && it->second.bytes == 4 && word + 4 <= a.size() &&
          atomic_word_close<float>(p + word, a.data() + word, it->second)) {
        off = word + 3;
        continue;
      }
      if (const auto it = S.float_atomics.find(regions[ri].base + dword);
          it != S.float_atomics.end() && it->second.bytes == 8 && dword + 8 <= a.size() &&
          atomic_word_close<double>(p + dword, a.data() + dword, it->second)) {
        off = dword + 7;
        continue;
      }
      float x = 0, y = 0;
      if (word + 4 <= a.size()) {
        std::memcpy(&x, a.data() + word, 4);
        std::memcpy(&y, p + word, 4);
      }
      std::ostringstream s;
      s << "kernel " << name << ": the result depends on the thread schedule: byte " << off
        << " of the device allocation at " << hex(p) << " (" << a.size() << " bytes) differs between threads in order ("
        << x << " as a float) and threads and blocks in reverse order (" << y
        << "): a missing __syncthreads/__syncwarp, a read of shared or device memory another thread has not "
           "written yet, or two threads writing one element";
      return fail(cudaErrorLaunchFailure, s.str(), true);
    }
  }
  return cudaSuccess;
}

}  // namespace attnlab::cuda::emu

// ---- the runtime API ------------------------------------------------------------------------------
using namespace attnlab::cuda::emu;

namespace {
cudaError_t sticky() { return g_sticky; }
constexpr std::size_t kFakeMemory = 16ull << 30;  // what the fake device reports (not a limit)
std::size_t g_allocated = 0;
}  // namespace

cudaError_t cudaMalloc(void** p, std::size_t bytes) {
  std::lock_guard lock(g_mutex);
  if (!p) return fail(cudaErrorInvalidValue, "cudaMalloc: the result pointer is null", false);
  *p = nullptr;
  if (sticky()) return sticky();
  if (bytes == 0) return cudaSuccess;
  void* m = nullptr;
  // 256-byte alignment like the CUDA allocator; exactly `bytes` long, so AddressSanitizer's redzone
  // starts at the first byte past the end.
  if (posix_memalign(&m, 256, bytes) != 0 || !m)
    return fail(cudaErrorMemoryAllocation, "cudaMalloc: out of (host) memory for " + std::to_string(bytes) + " bytes", false);
  std::memset(m, kPoison, bytes);  // uninitialised device memory reads as NaN
  g_allocs[reinterpret_cast<std::uintptr_t>(m)] = {bytes};
  g_allocated += bytes;
  *p = m;
  return cudaSuccess;
}

cudaError_t cudaFree(void* p) {
  std::lock_guard lock(g_mutex);
  if (!p) return cudaSuccess;
  const auto it = g_allocs.find(reinterpret_cast<std::uintptr_t>(p));
  if (it == g_allocs.end())
    return fail(cudaErrorInvalidValue, "cudaFree(" + hex(p) + "): not the start of a live device allocation (freed twice, or a host pointer)", false);
  g_allocated -= it->second.size;
  g_allocs.erase(it);
  std::free(p);
  return sticky();
}

namespace {
cudaError_t check_range(const char* call, const char* which, const void* p, std::size_t bytes) {
  if (find_alloc(p, bytes) != g_allocs.end()) return cudaSuccess;
  const auto it = find_alloc(p, 0);
  return fail(cudaErrorInvalidValue,
              std::string(call) + ": " + which + " " + hex(p) + ", " + std::to_string(bytes) + " bytes: " +
                  (it == g_allocs.end() ? "not device memory"
                                        : "runs past the end of its " + std::to_string(it->second.size) + "-byte device allocation"),
              false);
}
}  // namespace

cudaError_t cudaMemcpy(void* dst, const void* src, std::size_t bytes, cudaMemcpyKind kind) {
  std::lock_guard lock(g_mutex);
  if (sticky()) return sticky();
  if (bytes == 0) return cudaSuccess;
  if (kind == cudaMemcpyDefault)
    kind = find_alloc(dst, 0) != g_allocs.end() ? (find_alloc(src, 0) != g_allocs.end() ? cudaMemcpyDeviceToDevice : cudaMemcpyHostToDevice)
                                                 : (find_alloc(src, 0) != g_allocs.end() ? cudaMemcpyDeviceToHost : cudaMemcpyHostToHost);
  if (kind == cudaMemcpyHostToDevice || kind == cudaMemcpyDeviceToDevice)
    if (const cudaError_t e = check_range("cudaMemcpy", "destination", dst, bytes)) return e;
  if (kind == cudaMemcpyDeviceToHost || kind == cudaMemcpyDeviceToDevice)
    if (const cudaError_t e = check_range("cudaMemcpy", "source", src, bytes)) return e;
  if (kind < cudaMemcpyHostToHost || kind > cudaMemcpyDefault)
    return fail(cudaErrorInvalidMemcpyDirection, "cudaMemcpy: invalid direction " + std::to_string(kind), false);
  std::memmove(dst, src, bytes);
  return cudaSuccess;
}

cudaError_t cudaMemcpyAsync(void* dst, const void* src, std::size_t bytes, cudaMemcpyKind kind, cudaStream_t s) {
  {
    std::lock_guard lock(g_mutex);
    if (s && !g_streams.count(s)) return fail(cudaErrorInvalidResourceHandle, "cudaMemcpyAsync: unknown stream", false);
  }
  return cudaMemcpy(dst, src, bytes, kind);
}

cudaError_t cudaMemset(void* p, int value, std::size_t bytes) {
  std::lock_guard lock(g_mutex);
  if (sticky()) return sticky();
  if (bytes == 0) return cudaSuccess;
  if (const cudaError_t e = check_range("cudaMemset", "destination", p, bytes)) return e;
  std::memset(p, value, bytes);
  return cudaSuccess;
}

cudaError_t cudaMemsetAsync(void* p, int value, std::size_t bytes, cudaStream_t s) {
  {
    std::lock_guard lock(g_mutex);
    if (s && !g_streams.count(s)) return fail(cudaErrorInvalidResourceHandle, "cudaMemsetAsync: unknown stream", false);
  }
  return cudaMemset(p, value, bytes);
}

cudaError_t cudaDeviceSynchronize() { return sticky(); }

cudaError_t cudaDeviceReset() {
  std::lock_guard lock(g_mutex);
  for (auto& [base, a] : g_allocs) std::free(reinterpret_cast<void*>(base));
  g_allocs.clear();
  g_allocated = 0;
  g_sticky = g_last = cudaSuccess;
  g_max_dynamic_smem.clear();
  return cudaSuccess;
}

cudaError_t cudaGetLastError() {
  std::lock_guard lock(g_mutex);
  if (g_sticky) return g_sticky;
  const cudaError_t e = g_last;
  g_last = cudaSuccess;
  return e;
}

cudaError_t cudaPeekAtLastError() { return g_sticky ? g_sticky : g_last; }

const char* cudaGetErrorName(cudaError_t err) {
  switch (err) {
    case cudaSuccess: return "cudaSuccess";
    case cudaErrorInvalidValue: return "cudaErrorInvalidValue";
    case cudaErrorMemoryAllocation: return "cudaErrorMemoryAllocation";
    case cudaErrorInitializationError: return "cudaErrorInitializationError";
    case cudaErrorInvalidConfiguration: return "cudaErrorInvalidConfiguration";
    case cudaErrorInvalidDevicePointer: return "cudaErrorInvalidDevicePointer";
    case cudaErrorInvalidMemcpyDirection: return "cudaErrorInvalidMemcpyDirection";
    case cudaErrorInsufficientDriver: return "cudaErrorInsufficientDriver";
    case cudaErrorNoDevice: return "cudaErrorNoDevice";
    case cudaErrorInvalidDevice: return "cudaErrorInvalidDevice";
    case cudaErrorInvalidResourceHandle: return "cudaErrorInvalidResourceHandle";
    case cudaErrorIllegalAddress: return "cudaErrorIllegalAddress";
    case cudaErrorLaunchOutOfResources: return "cudaErrorLaunchOutOfResources";
    case cudaErrorLaunchFailure: return "cudaErrorLaunchFailure";
    case cudaErrorNotSupported: return "cudaErrorNotSupported";
  }
  return "cudaErrorUnknown";
}

const char* cudaGetErrorString(cudaError_t err) {
  // The emulator's own account of its last error says more than CUDA's fixed strings.
  if (err != cudaSuccess && err == g_detail_code && !g_detail.empty()) return g_detail.c_str();
  switch (err) {
    case cudaSuccess: return "no error";
    case cudaErrorInvalidValue: return "invalid argument";
    case cudaErrorMemoryAllocation: return "out of memory";
    case cudaErrorInvalidConfiguration: return "invalid configuration argument";
    case cudaErrorNoDevice: return "no CUDA-capable device is detected";
    case cudaErrorIllegalAddress: return "an illegal memory access was encountered";
    case cudaErrorLaunchFailure: return "unspecified launch failure";
    default: return cudaGetErrorName(err);
  }
}

cudaError_t cudaGetDeviceCount(int* count) {
  if (!count) return cudaErrorInvalidValue;
  *count = 1;
  return cudaSuccess;
}
cudaError_t cudaGetDevice(int* dev) {
  if (!dev) return cudaErrorInvalidValue;
  *dev = 0;
  return sticky();
}
cudaError_t cudaSetDevice(int dev) { return dev == 0 ? sticky() : fail(cudaErrorInvalidDevice, "cudaSetDevice(" + std::to_string(dev) + "): the emulator has one device, 0", false); }

cudaError_t cudaGetDeviceProperties(cudaDeviceProp* prop, int dev) {
  if (!prop) return cudaErrorInvalidValue;
  if (dev != 0) return fail(cudaErrorInvalidDevice, "cudaGetDeviceProperties: the emulator has one device, 0", false);
  *prop = cudaDeviceProp{};
  std::snprintf(prop->name, sizeof prop->name, "%s", "attnlab CUDA emulator (on the CPU, for testing only)");
  prop->totalGlobalMem = kFakeMemory;
  prop->sharedMemPerBlock = 48 * 1024;
  prop->sharedMemPerBlockOptin = kMaxDynamicSmemOptin;
  prop->warpSize = 32;
  prop->maxThreadsPerBlock = 1024;
  prop->maxThreadsDim[0] = prop->maxThreadsDim[1] = 1024;
  prop->maxThreadsDim[2] = 64;
  prop->maxGridSize[0] = 0x7fffffff;
  prop->maxGridSize[1] = prop->maxGridSize[2] = 65535;
  prop->major = 9;  // the limits above are sm_90's (H100/H200)
  prop->minor = 0;
  prop->multiProcessorCount = 1;
  return sticky();
}

cudaError_t cudaRuntimeGetVersion(int* v) {
  if (v) *v = 13000;
  return cudaSuccess;
}
cudaError_t cudaDriverGetVersion(int* v) {
  if (v) *v = 13000;
  return cudaSuccess;
}
cudaError_t cudaMemGetInfo(std::size_t* free_bytes, std::size_t* total_bytes) {
  std::lock_guard lock(g_mutex);
  if (total_bytes) *total_bytes = kFakeMemory;
  if (free_bytes) *free_bytes = g_allocated < kFakeMemory ? kFakeMemory - g_allocated : 0;
  return sticky();
}

cudaError_t cudaStreamCreate(cudaStream_t* s) {
  std::lock_guard lock(g_mutex);
  if (!s) return cudaErrorInvalidValue;
  *s = reinterpret_cast<cudaStream_t>(new char);
  g_streams.insert(*s);
  return sticky();
}
cudaError_t cudaStreamDestroy(cudaStream_t s) {
  std::lock_guard lock(g_mutex);
  if (!g_streams.erase(s)) return fail(cudaErrorInvalidResourceHandle, "cudaStreamDestroy: unknown stream", false);
  delete reinterpret_cast<char*>(s);
  return cudaSuccess;
}
cudaError_t cudaStreamSynchronize(cudaStream_t s) {
  std::lock_guard lock(g_mutex);
  if (s && !g_streams.count(s)) return fail(cudaErrorInvalidResourceHandle, "cudaStreamSynchronize: unknown stream", false);
  return sticky();
}
cudaError_t cudaEventCreate(cudaEvent_t* e) {
  std::lock_guard lock(g_mutex);
  if (!e) return cudaErrorInvalidValue;
  *e = reinterpret_cast<cudaEvent_t>(new char);
  g_events[*e] = false;
  return sticky();
}
cudaError_t cudaEventDestroy(cudaEvent_t e) {
  std::lock_guard lock(g_mutex);
  if (!g_events.erase(e)) return fail(cudaErrorInvalidResourceHandle, "cudaEventDestroy: unknown event", false);
  delete reinterpret_cast<char*>(e);
  return cudaSuccess;
}
cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t) {
  std::lock_guard lock(g_mutex);
  const auto it = g_events.find(e);
  if (it == g_events.end()) return fail(cudaErrorInvalidResourceHandle, "cudaEventRecord: unknown event", false);
  it->second = true;
  return sticky();
}
cudaError_t cudaEventSynchronize(cudaEvent_t e) {
  std::lock_guard lock(g_mutex);
  return g_events.count(e) ? sticky() : fail(cudaErrorInvalidResourceHandle, "cudaEventSynchronize: unknown event", false);
}
cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t a, cudaEvent_t b) {
  std::lock_guard lock(g_mutex);
  if (!ms || !g_events.count(a) || !g_events.count(b)) return cudaErrorInvalidValue;
  // As CUDA: an event never recorded has no time.
  if (!g_events[a] || !g_events[b]) return cudaErrorInvalidResourceHandle;
  *ms = 0.0f;
  return sticky();
}
cudaError_t cudaFuncSetAttribute(const void* kernel, cudaFuncAttribute attr, int value) {
  std::lock_guard lock(g_mutex);
  if (attr != cudaFuncAttributeMaxDynamicSharedMemorySize)
    return fail(cudaErrorNotSupported, "cudaFuncSetAttribute: the emulator knows only cudaFuncAttributeMaxDynamicSharedMemorySize", false);
  if (value < 0 || static_cast<std::size_t>(value) > kMaxDynamicSmemOptin)
    return fail(cudaErrorInvalidValue,
                "cudaFuncSetAttribute: " + std::to_string(value) + " bytes of dynamic shared memory; sm_90 allows at most " +
                    std::to_string(kMaxDynamicSmemOptin),
                false);
  g_max_dynamic_smem[kernel] = value;
  return sticky();
}

// ---- cuBLAS ---------------------------------------------------------------------------------------
struct cublasContext {
  cudaStream_t stream = nullptr;
  cublasMath_t math = CUBLAS_DEFAULT_MATH;
};

namespace {
std::set<cublasContext*> g_handles;

bool valid(cublasHandle_t h) { return h && g_handles.count(h); }

// TF32: 10 explicit mantissa bits, round to nearest with ties away from zero (the tensor cores'
// cvt.rna.tf32.f32). Infinities and NaN pass unchanged; a value that rounds past the largest float
// becomes infinity, as the conversion does.
float to_tf32(float x) {
  std::uint32_t b;
  std::memcpy(&b, &x, 4);
  if ((b & 0x7f800000u) == 0x7f800000u) return x;
  b = (b + 0x1000u) & 0xffffe000u;
  std::memcpy(&x, &b, 4);
  return x;
}

// bfloat16: the top 16 bits of a float (8 exponent bits, 7 explicit mantissa bits), rounded to
// nearest with ties to even (as __float2bfloat16_rn; cuBLAS does not document the rounding of its
// FAST_16BF down-conversion, and the tests' bounds hold for truncation too). NaN stays NaN (the
// rounding carry must not turn a NaN's low payload into infinity), infinities pass unchanged.
float to_bf16(float x) {
  std::uint32_t b;
  std::memcpy(&b, &x, 4);
  if ((b & 0x7f800000u) == 0x7f800000u) {
    if (b & 0x007fffffu) b |= 0x00400000u;  // quiet NaN, keeping the sign
    b &= 0xffff0000u;
  } else {
    b = (b + 0x7fffu + ((b >> 16) & 1u)) & 0xffff0000u;
  }
  std::memcpy(&x, &b, 4);
  return x;
}

// How a product's float32 inputs are rounded before the float32 accumulation.
enum class Rounding { None, Tf32, Bf16 };

// Elements a column-major rows × cols operand with leading dimension ld spans.
std::size_t span(int rows, int cols, int ld) {
  if (rows == 0 || cols == 0) return 0;
  return static_cast<std::size_t>(cols - 1) * static_cast<std::size_t>(ld) + static_cast<std::size_t>(rows);
}

cublasStatus_t illegal(const std::string& what) {
  fail(cudaErrorIllegalAddress, what + ": it would fault on a GPU", true);
  return CUBLAS_STATUS_EXECUTION_FAILED;
}

// How a product's operands are stored: A and B float32 (rounded as `Rounding` says) or both bfloat16
// (read exactly: a bf16 is a float's top half); C float32, or bfloat16 (the float32 result rounded to
// nearest, ties to even, as cuBLAS writes a bf16 output). bf16 storage is the cublasGemmEx combination
// "A, B CUDA_R_16BF; C CUDA_R_16BF or CUDA_R_32F; CUBLAS_COMPUTE_32F".
struct Storage {
  cudaDataType_t ab = CUDA_R_32F, c = CUDA_R_32F;
};
std::size_t element_bytes(cudaDataType_t t) { return t == CUDA_R_16BF ? 2 : 4; }
const char* element_name(cudaDataType_t t) { return t == CUDA_R_16BF ? " bf16 values" : " floats"; }
// n bf16 values from p, widened to float (exactly).
void widen_bf16(std::vector<float>& out, const void* p, std::size_t n) {
  const auto* h = static_cast<const __nv_bfloat16*>(p);
  out.resize(n);
  for (std::size_t i = 0; i < n; ++i) out[i] = __bfloat162float(h[i]);
}

cublasStatus_t gemm_batched(const char* call, cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n,
                            int k, const float* alpha, const void* A, int lda, long long sa, const void* B, int ldb,
                            long long sb, const float* beta, void* C, int ldc, long long sc, int batch,
                            Rounding rounding,
                            bool lt_call = false,  // from cublasLtMatmul, which checked its own handle; h unused
                            Storage storage = {},
                            // cuBLASLt's epilogue: run on each float32 result (column-major, ld = ldc)
                            // before a bf16 C is rounded
                            const std::function<void(float*, int)>* epilogue = nullptr) {
  std::lock_guard lock(g_mutex);
  if (!lt_call && !valid(h)) return CUBLAS_STATUS_NOT_INITIALIZED;
  if (g_sticky) return CUBLAS_STATUS_EXECUTION_FAILED;
  // The argument checks cuBLAS makes (its documented CUBLAS_STATUS_INVALID_VALUE cases).
  if ((ta != CUBLAS_OP_N && ta != CUBLAS_OP_T) || (tb != CUBLAS_OP_N && tb != CUBLAS_OP_T) || m < 0 || n < 0 || k < 0 ||
      batch < 0 || !alpha || !beta)
    return CUBLAS_STATUS_INVALID_VALUE;
  const int a_rows = ta == CUBLAS_OP_N ? m : k, a_cols = ta == CUBLAS_OP_N ? k : m;
  const int b_rows = tb == CUBLAS_OP_N ? k : n, b_cols = tb == CUBLAS_OP_N ? n : k;
  if (lda < std::max(1, a_rows) || ldb < std::max(1, b_rows) || ldc < std::max(1, m)) return CUBLAS_STATUS_INVALID_VALUE;
  if (m == 0 || n == 0 || batch == 0) return CUBLAS_STATUS_SUCCESS;
  const std::size_t na = k ? span(a_rows, a_cols, lda) : 0, nb = k ? span(b_rows, b_cols, ldb) : 0, nc = span(m, n, ldc);
  const std::size_t ab_bytes = element_bytes(storage.ab), c_bytes = element_bytes(storage.c);
  const bool bf16_in = storage.ab == CUDA_R_16BF, bf16_out = storage.c == CUDA_R_16BF;
  std::vector<float> ra, rb, rc;
  for (int i = 0; i < batch; ++i) {
    const void* a_at = static_cast<const char*>(A) + i * sa * static_cast<long long>(ab_bytes);
    const void* b_at = static_cast<const char*>(B) + i * sb * static_cast<long long>(ab_bytes);
    void* c_at = static_cast<char*>(C) + i * sc * static_cast<long long>(c_bytes);
    if (na && find_alloc(a_at, na * ab_bytes) == g_allocs.end())
      return illegal(std::string(call) + ": A of batch " + std::to_string(i) + " (" + std::to_string(na) +
                     element_name(storage.ab) + " from " + hex(a_at) + ") is not inside one device allocation");
    if (nb && find_alloc(b_at, nb * ab_bytes) == g_allocs.end())
      return illegal(std::string(call) + ": B of batch " + std::to_string(i) + " (" + std::to_string(nb) +
                     element_name(storage.ab) + " from " + hex(b_at) + ") is not inside one device allocation");
    if (find_alloc(c_at, nc * c_bytes) == g_allocs.end())
      return illegal(std::string(call) + ": C of batch " + std::to_string(i) + " (" + std::to_string(nc) +
                     element_name(storage.c) + " from " + hex(c_at) + ") is not inside one device allocation");
    const float* a = static_cast<const float*>(a_at);
    const float* b = static_cast<const float*>(b_at);
    float* c = static_cast<float*>(c_at);
    if (bf16_in && k) {
      widen_bf16(ra, a_at, na);
      widen_bf16(rb, b_at, nb);
      a = ra.data();
      b = rb.data();
    } else if (rounding != Rounding::None && k) {
      ra.assign(a, a + na);
      rb.assign(b, b + nb);
      float (*round)(float) = rounding == Rounding::Tf32 ? &to_tf32 : &to_bf16;
      for (float& x : ra) x = round(x);
      for (float& x : rb) x = round(x);
      a = ra.data();
      b = rb.data();
    }
    if (bf16_out) {  // computed in float32 (C widened for beta), then every element of its span rounded
      widen_bf16(rc, c_at, nc);
      c = rc.data();
    }
    // cuBLAS is column-major: C = op(A)·op(B) there is, read row-major, Cᵀ = op(B)ᵀ·op(A)ᵀ, so the
    // one BLAS call (util/blas.hpp, row-major) gets the operands swapped, with the caller's transposes
    // and leading dimensions (what CblasColMajor does inside OpenBLAS, the same products).
    attnlab::blas::gemm(tb != CUBLAS_OP_N, ta != CUBLAS_OP_N, n, m, k, *alpha, b, ldb, a, lda, *beta, c, ldc);
    if (epilogue) (*epilogue)(c, ldc);
    if (bf16_out) {
      auto* out = static_cast<__nv_bfloat16*>(c_at);
      for (std::size_t e = 0; e < nc; ++e) out[e] = __float2bfloat16_rn(rc[e]);
    }
  }
  return CUBLAS_STATUS_SUCCESS;
}

// cuBLASLt and cublasGemmEx in the emulator: float32 operands with float32, TF32 or bf16 compute ...
bool float32_only(cudaDataType_t at, cudaDataType_t bt, cudaDataType_t ct, cublasComputeType_t compute) {
  return at == CUDA_R_32F && bt == CUDA_R_32F && ct == CUDA_R_32F &&
         (compute == CUBLAS_COMPUTE_32F || compute == CUBLAS_COMPUTE_32F_FAST_TF32 ||
          compute == CUBLAS_COMPUTE_32F_FAST_16BF);
}
// ... and for cublasGemmEx also bf16 A and B with a bf16 or float32 C, computed in float32 (what
// `storage` is then set to). Anything else is CUBLAS_STATUS_NOT_SUPPORTED.
bool supported_ex(cudaDataType_t at, cudaDataType_t bt, cudaDataType_t ct, cublasComputeType_t compute,
                  Storage& storage) {
  if (float32_only(at, bt, ct, compute)) return true;
  if (at != CUDA_R_16BF || bt != CUDA_R_16BF || (ct != CUDA_R_16BF && ct != CUDA_R_32F) ||
      compute != CUBLAS_COMPUTE_32F)
    return false;
  storage = {CUDA_R_16BF, ct};
  return true;
}

Rounding rounding_for(cublasHandle_t h, cublasComputeType_t ct) {
  if (ct == CUBLAS_COMPUTE_32F_FAST_16BF) return Rounding::Bf16;
  if (ct == CUBLAS_COMPUTE_32F_FAST_TF32 || (ct == CUBLAS_COMPUTE_32F && h && h->math == CUBLAS_TF32_TENSOR_OP_MATH))
    return Rounding::Tf32;
  return Rounding::None;
}
}  // namespace

cublasStatus_t cublasCreate(cublasHandle_t* handle) {
  std::lock_guard lock(g_mutex);
  if (!handle) return CUBLAS_STATUS_INVALID_VALUE;
  *handle = new cublasContext;
  g_handles.insert(*handle);
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasDestroy(cublasHandle_t handle) {
  std::lock_guard lock(g_mutex);
  if (!g_handles.erase(handle)) return CUBLAS_STATUS_NOT_INITIALIZED;
  delete handle;
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasSetStream(cublasHandle_t handle, cudaStream_t stream) {
  std::lock_guard lock(g_mutex);
  if (!valid(handle)) return CUBLAS_STATUS_NOT_INITIALIZED;
  if (stream && !g_streams.count(stream)) return CUBLAS_STATUS_INVALID_VALUE;
  handle->stream = stream;
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasGetStream(cublasHandle_t handle, cudaStream_t* stream) {
  std::lock_guard lock(g_mutex);
  if (!valid(handle)) return CUBLAS_STATUS_NOT_INITIALIZED;
  if (stream) *stream = handle->stream;
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasSetMathMode(cublasHandle_t handle, cublasMath_t mode) {
  std::lock_guard lock(g_mutex);
  if (!valid(handle)) return CUBLAS_STATUS_NOT_INITIALIZED;
  handle->math = mode;
  return CUBLAS_STATUS_SUCCESS;
}
const char* cublasGetStatusString(cublasStatus_t s) {
  switch (s) {
    case CUBLAS_STATUS_SUCCESS: return "CUBLAS_STATUS_SUCCESS";
    case CUBLAS_STATUS_NOT_INITIALIZED: return "CUBLAS_STATUS_NOT_INITIALIZED";
    case CUBLAS_STATUS_ALLOC_FAILED: return "CUBLAS_STATUS_ALLOC_FAILED";
    case CUBLAS_STATUS_INVALID_VALUE: return "CUBLAS_STATUS_INVALID_VALUE";
    case CUBLAS_STATUS_ARCH_MISMATCH: return "CUBLAS_STATUS_ARCH_MISMATCH";
    case CUBLAS_STATUS_MAPPING_ERROR: return "CUBLAS_STATUS_MAPPING_ERROR";
    case CUBLAS_STATUS_EXECUTION_FAILED: return "CUBLAS_STATUS_EXECUTION_FAILED";
    case CUBLAS_STATUS_INTERNAL_ERROR: return "CUBLAS_STATUS_INTERNAL_ERROR";
    case CUBLAS_STATUS_NOT_SUPPORTED: return "CUBLAS_STATUS_NOT_SUPPORTED";
  }
  return "CUBLAS_STATUS_UNKNOWN";
}

cublasStatus_t cublasGemmEx(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k,
                            const void* alpha, const void* A, cudaDataType_t at, int lda, const void* B,
                            cudaDataType_t bt, int ldb, const void* beta, void* C, cudaDataType_t ct, int ldc,
                            cublasComputeType_t compute, cublasGemmAlgo_t) {
  Storage storage;
  if (!supported_ex(at, bt, ct, compute, storage)) return CUBLAS_STATUS_NOT_SUPPORTED;
  return gemm_batched("cublasGemmEx", h, ta, tb, m, n, k, static_cast<const float*>(alpha), A, lda, 0, B, ldb, 0,
                      static_cast<const float*>(beta), C, ldc, 0, 1, rounding_for(h, compute), false, storage);
}

cublasStatus_t cublasGemmStridedBatchedEx(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n,
                                          int k, const void* alpha, const void* A, cudaDataType_t at, int lda,
                                          long long sa, const void* B, cudaDataType_t bt, int ldb, long long sb,
                                          const void* beta, void* C, cudaDataType_t ct, int ldc, long long sc,
                                          int batch, cublasComputeType_t compute, cublasGemmAlgo_t) {
  Storage storage;
  if (!supported_ex(at, bt, ct, compute, storage)) return CUBLAS_STATUS_NOT_SUPPORTED;
  return gemm_batched("cublasGemmStridedBatchedEx", h, ta, tb, m, n, k, static_cast<const float*>(alpha), A, lda, sa, B,
                      ldb, sb, static_cast<const float*>(beta), C, ldc, sc, batch, rounding_for(h, compute), false,
                      storage);
}

cublasStatus_t cublasSgemm(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k,
                           const float* alpha, const float* A, int lda, const float* B, int ldb, const float* beta,
                           float* C, int ldc) {
  return gemm_batched("cublasSgemm", h, ta, tb, m, n, k, alpha, A, lda, 0, B, ldb, 0, beta, C, ldc, 0, 1,
                      h && h->math == CUBLAS_TF32_TENSOR_OP_MATH ? Rounding::Tf32 : Rounding::None);
}

// ---- cuBLASLt (cublasLt.h): the matmul with a bias epilogue ----------------------------------------
struct cublasLtContext {};
struct cublasLtMatmulDescOpaque_t {
  cublasComputeType_t compute = CUBLAS_COMPUTE_32F;
  cudaDataType_t scale = CUDA_R_32F;
  cublasOperation_t ta = CUBLAS_OP_N, tb = CUBLAS_OP_N;
  cublasLtEpilogue_t epilogue = CUBLASLT_EPILOGUE_DEFAULT;
  const void* bias = nullptr;
  std::int32_t bias_type = -1;  // a cudaDataType_t, or -1: D's type
};
struct cublasLtMatrixLayoutOpaque_t {
  cudaDataType type = CUDA_R_32F;
  std::uint64_t rows = 0, cols = 0;
  std::int64_t ld = 0;
};
struct cublasLtMatmulPreferenceOpaque_t {
  std::size_t workspace = 0;
  std::uint32_t align[4] = {256, 256, 256, 256};  // A, B, C, D: cuBLASLt's default
};

namespace {
std::set<cublasLtContext*> g_lt_handles;

// Copies `bytes` of an attribute value into `out` when the size is right.
template <typename T>
bool attribute(T& out, const void* buf, std::size_t bytes) {
  if (!buf || bytes != sizeof(T)) return false;
  std::memcpy(&out, buf, sizeof(T));
  return true;
}

// The product's m, n, k from the layouts, and whether they fit the operation (CUBLAS_STATUS_INVALID_VALUE
// otherwise, as cuBLASLt answers).
bool lt_shape(const cublasLtMatmulDescOpaque_t& op, const cublasLtMatrixLayoutOpaque_t& a,
              const cublasLtMatrixLayoutOpaque_t& b, const cublasLtMatrixLayoutOpaque_t& c,
              const cublasLtMatrixLayoutOpaque_t& d, int& m, int& n, int& k) {
  const std::uint64_t am = op.ta == CUBLAS_OP_N ? a.rows : a.cols, ak = op.ta == CUBLAS_OP_N ? a.cols : a.rows;
  const std::uint64_t bk = op.tb == CUBLAS_OP_N ? b.rows : b.cols, bn = op.tb == CUBLAS_OP_N ? b.cols : b.rows;
  if (ak != bk || d.rows != am || d.cols != bn || c.rows != d.rows || c.cols != d.cols) return false;
  for (const auto* l : {&a, &b, &c, &d})
    if (l->ld < static_cast<std::int64_t>(std::max<std::uint64_t>(1, l->rows)) || l->rows > 0x7fffffffu || l->cols > 0x7fffffffu)
      return false;
  m = static_cast<int>(am);
  n = static_cast<int>(bn);
  k = static_cast<int>(ak);
  return true;
}

// The bias's element type: D's unless the descriptor names one.
cudaDataType_t lt_bias_type(const cublasLtMatmulDescOpaque_t& op, const cublasLtMatrixLayoutOpaque_t& d) {
  return op.bias_type < 0 ? d.type : static_cast<cudaDataType_t>(op.bias_type);
}

// Float32 A, B, C and D (float32, TF32 or bf16 compute), or bf16 A and B with C and D both bf16 or
// both float32 (CUBLAS_COMPUTE_32F); the bias float32 or D's type.
bool lt_supported(const cublasLtMatmulDescOpaque_t& op, const cublasLtMatrixLayoutOpaque_t& a,
                  const cublasLtMatrixLayoutOpaque_t& b, const cublasLtMatrixLayoutOpaque_t& c,
                  const cublasLtMatrixLayoutOpaque_t& d) {
  const bool types = (float32_only(a.type, b.type, c.type, op.compute) && d.type == CUDA_R_32F) ||
                     (a.type == CUDA_R_16BF && b.type == CUDA_R_16BF && c.type == d.type &&
                      (d.type == CUDA_R_16BF || d.type == CUDA_R_32F) && op.compute == CUBLAS_COMPUTE_32F);
  const cudaDataType_t bias = lt_bias_type(op, d);
  return op.scale == CUDA_R_32F && types && (bias == CUDA_R_32F || bias == d.type) &&
         (op.epilogue == CUBLASLT_EPILOGUE_DEFAULT || op.epilogue == CUBLASLT_EPILOGUE_BIAS ||
          op.epilogue == CUBLASLT_EPILOGUE_RELU || op.epilogue == CUBLASLT_EPILOGUE_RELU_BIAS) &&
         (op.ta == CUBLAS_OP_N || op.ta == CUBLAS_OP_T) && (op.tb == CUBLAS_OP_N || op.tb == CUBLAS_OP_T);
}
}  // namespace

cublasStatus_t cublasLtCreate(cublasLtHandle_t* handle) {
  std::lock_guard lock(g_mutex);
  if (!handle) return CUBLAS_STATUS_INVALID_VALUE;
  *handle = new cublasLtContext;
  g_lt_handles.insert(*handle);
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasLtDestroy(cublasLtHandle_t handle) {
  std::lock_guard lock(g_mutex);
  if (!g_lt_handles.erase(handle)) return CUBLAS_STATUS_NOT_INITIALIZED;
  delete handle;
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasLtMatmulDescCreate(cublasLtMatmulDesc_t* desc, cublasComputeType_t compute, cudaDataType_t scale) {
  if (!desc) return CUBLAS_STATUS_INVALID_VALUE;
  *desc = new cublasLtMatmulDescOpaque_t;
  (*desc)->compute = compute;
  (*desc)->scale = scale;
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasLtMatmulDescDestroy(cublasLtMatmulDesc_t desc) {
  delete desc;
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasLtMatmulDescSetAttribute(cublasLtMatmulDesc_t desc, cublasLtMatmulDescAttributes_t attr,
                                              const void* buf, std::size_t bytes) {
  if (!desc) return CUBLAS_STATUS_INVALID_VALUE;
  bool ok = false;
  switch (attr) {
    case CUBLASLT_MATMUL_DESC_TRANSA: ok = attribute(desc->ta, buf, bytes); break;
    case CUBLASLT_MATMUL_DESC_TRANSB: ok = attribute(desc->tb, buf, bytes); break;
    case CUBLASLT_MATMUL_DESC_EPILOGUE: ok = attribute(desc->epilogue, buf, bytes); break;
    case CUBLASLT_MATMUL_DESC_BIAS_POINTER: ok = attribute(desc->bias, buf, bytes); break;
    case CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE: ok = attribute(desc->bias_type, buf, bytes); break;
  }
  return ok ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_INVALID_VALUE;
}
cublasStatus_t cublasLtMatrixLayoutCreate(cublasLtMatrixLayout_t* layout, cudaDataType type, std::uint64_t rows,
                                          std::uint64_t cols, std::int64_t ld) {
  if (!layout) return CUBLAS_STATUS_INVALID_VALUE;
  *layout = new cublasLtMatrixLayoutOpaque_t{type, rows, cols, ld};
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasLtMatrixLayoutDestroy(cublasLtMatrixLayout_t layout) {
  delete layout;
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasLtMatmulPreferenceCreate(cublasLtMatmulPreference_t* pref) {
  if (!pref) return CUBLAS_STATUS_INVALID_VALUE;
  *pref = new cublasLtMatmulPreferenceOpaque_t;
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasLtMatmulPreferenceDestroy(cublasLtMatmulPreference_t pref) {
  delete pref;
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasLtMatmulPreferenceSetAttribute(cublasLtMatmulPreference_t pref,
                                                    cublasLtMatmulPreferenceAttributes_t attr, const void* buf,
                                                    std::size_t bytes) {
  if (!pref) return CUBLAS_STATUS_INVALID_VALUE;
  if (attr == CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES) {
    std::uint64_t w = 0;
    if (!attribute(w, buf, bytes)) return CUBLAS_STATUS_INVALID_VALUE;
    pref->workspace = static_cast<std::size_t>(w);
    return CUBLAS_STATUS_SUCCESS;
  }
  if (attr >= CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES && attr <= CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES) {
    std::uint32_t a = 0;
    if (!attribute(a, buf, bytes)) return CUBLAS_STATUS_INVALID_VALUE;
    pref->align[attr - CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES] = a;
    return CUBLAS_STATUS_SUCCESS;
  }
  return CUBLAS_STATUS_INVALID_VALUE;
}
cublasStatus_t cublasLtMatmulAlgoGetHeuristic(cublasLtHandle_t handle, cublasLtMatmulDesc_t desc,
                                              cublasLtMatrixLayout_t a, cublasLtMatrixLayout_t b,
                                              cublasLtMatrixLayout_t c, cublasLtMatrixLayout_t d,
                                              cublasLtMatmulPreference_t pref, int requested,
                                              cublasLtMatmulHeuristicResult_t results[], int* returned) {
  {
    std::lock_guard lock(g_mutex);
    if (!g_lt_handles.count(handle)) return CUBLAS_STATUS_NOT_INITIALIZED;
  }
  if (!desc || !a || !b || !c || !d || !pref || requested < 1 || !results || !returned) return CUBLAS_STATUS_INVALID_VALUE;
  int m = 0, n = 0, k = 0;
  if (!lt_shape(*desc, *a, *b, *c, *d, m, n, k)) return CUBLAS_STATUS_INVALID_VALUE;
  *returned = 0;
  if (!lt_supported(*desc, *a, *b, *c, *d)) return CUBLAS_STATUS_NOT_SUPPORTED;
  results[0] = cublasLtMatmulHeuristicResult_t{};
  results[0].algo.data[0] = 1;  // the emulator's one algorithm, for pointers aligned as the preference said
  for (int i = 0; i < 4; ++i) results[0].algo.data[1 + i] = pref->align[i];
  results[0].state = CUBLAS_STATUS_SUCCESS;
  results[0].wavesCount = 1.0f;
  *returned = 1;
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasLtMatmul(cublasLtHandle_t handle, cublasLtMatmulDesc_t desc, const void* alpha, const void* A,
                              cublasLtMatrixLayout_t a, const void* B, cublasLtMatrixLayout_t b, const void* beta,
                              const void* C, cublasLtMatrixLayout_t c, void* D, cublasLtMatrixLayout_t d,
                              const cublasLtMatmulAlgo_t* algo, void* workspace, std::size_t workspace_bytes,
                              cudaStream_t stream) {
  {
    std::lock_guard lock(g_mutex);
    if (!g_lt_handles.count(handle)) return CUBLAS_STATUS_NOT_INITIALIZED;
    if (stream && !g_streams.count(stream)) return CUBLAS_STATUS_INVALID_VALUE;
    if (workspace_bytes && (!workspace || find_alloc(workspace, workspace_bytes) == g_allocs.end()))
      return illegal("cublasLtMatmul: the workspace is not inside one device allocation");
  }
  if (!desc || !a || !b || !c || !d || !alpha || !beta || !algo || algo->data[0] != 1) return CUBLAS_STATUS_INVALID_VALUE;
  int m = 0, n = 0, k = 0;
  if (!lt_shape(*desc, *a, *b, *c, *d, m, n, k)) return CUBLAS_STATUS_INVALID_VALUE;
  if (!lt_supported(*desc, *a, *b, *c, *d)) return CUBLAS_STATUS_NOT_SUPPORTED;
  // The algorithm was chosen for pointers at least this aligned.
  const void* ptrs[4] = {A, B, C, D};
  for (int i = 0; i < 4; ++i)
    if (algo->data[1 + i] > 1 && reinterpret_cast<std::uintptr_t>(ptrs[i]) % algo->data[1 + i] != 0)
      return CUBLAS_STATUS_INVALID_VALUE;
  // D = alpha·op(A)·op(B) + beta·C: in place when C is D, else C is copied into D first (same leading
  // dimension only: all the backend needs).
  const std::size_t d_bytes = element_bytes(d->type);
  if (C != D && *static_cast<const float*>(beta) != 0.0f) {
    if (c->ld != d->ld) return CUBLAS_STATUS_NOT_SUPPORTED;
    std::lock_guard lock(g_mutex);
    const std::size_t nc = span(m, n, static_cast<int>(d->ld));
    if (find_alloc(C, nc * d_bytes) == g_allocs.end() || find_alloc(D, nc * d_bytes) == g_allocs.end())
      return illegal("cublasLtMatmul: C or D is not inside one device allocation");
    std::memmove(D, C, nc * d_bytes);
  }
  const bool bias = desc->epilogue == CUBLASLT_EPILOGUE_BIAS || desc->epilogue == CUBLASLT_EPILOGUE_RELU_BIAS;
  const bool relu = desc->epilogue == CUBLASLT_EPILOGUE_RELU || desc->epilogue == CUBLASLT_EPILOGUE_RELU_BIAS;
  // The bias, widened to float32 (exact for a bf16 one).
  std::vector<float> bias_values;
  if (bias) {
    const cudaDataType_t bt = lt_bias_type(*desc, *d);
    std::lock_guard lock(g_mutex);
    if (!desc->bias || find_alloc(desc->bias, static_cast<std::size_t>(m) * element_bytes(bt)) == g_allocs.end())
      return illegal("cublasLtMatmul: the bias (" + std::to_string(m) + element_name(bt) + " from " + hex(desc->bias) +
                     ") is not inside one device allocation");
    if (bt == CUDA_R_16BF)
      widen_bf16(bias_values, desc->bias, static_cast<std::size_t>(m));
    else
      bias_values.assign(static_cast<const float*>(desc->bias), static_cast<const float*>(desc->bias) + m);
  }
  // On the float32 result: the BIAS epilogue (bias[i] added to row i of the column-major m × n
  // result, every column), then ReLU element by element (NaN to 0, as max(x, 0) gives).
  const std::function<void(float*, int)> epilogue = [&](float* r, int ld) {
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < m; ++i) {
        float& x = r[static_cast<std::size_t>(j) * ld + i];
        if (bias) x += bias_values[static_cast<std::size_t>(i)];
        if (relu) x = x > 0.0f ? x : 0.0f;
      }
  };
  // The compute type alone decides the rounding (cuBLASLt has no math mode); bf16 operands are read
  // as they are.
  const Storage storage = a->type == CUDA_R_16BF ? Storage{CUDA_R_16BF, d->type} : Storage{};
  return gemm_batched("cublasLtMatmul", nullptr, desc->ta, desc->tb, m, n, k, static_cast<const float*>(alpha), A,
                      static_cast<int>(a->ld), 0, B, static_cast<int>(b->ld), 0, static_cast<const float*>(beta), D,
                      static_cast<int>(d->ld), 0, 1, rounding_for(nullptr, desc->compute), true, storage,
                      bias || relu ? &epilogue : nullptr);
}
