#pragma once
// The CUDA emulator (-DATTNLAB_CUDA=EMULATE): runs the backend's unmodified .cu sources, compiled by
// the host C++ compiler, on the CPU. A test tool, never a product path: it exists so that CI, on
// machines without a GPU, executes every kernel the way a GPU would and catches the bugs a GPU would
// show (see docs/cuda.md, "The emulation build").
//
// Execution model
//   grid      blocks run one after another (blockIdx in order);
//   block     its threads are cooperative fibers, each with its own stack. A fiber runs until it
//             reaches a synchronisation point (__syncthreads*, __syncwarp, a warp shuffle/vote) or
//             ends; then the next runnable fiber runs. Between two synchronisation points a thread
//             therefore runs alone, so any order of threads is a legal GPU schedule;
//   schedules every launch runs twice from the same memory: threads in order, then in reverse
//             order. A missing barrier, or a read of shared memory another thread has not written
//             yet, makes the two disagree, and the launch fails naming the kernel and the first
//             differing byte. (Float atomics legitimately depend on the order: a word written by a
//             floating-point atomicAdd may differ by the bound of reordered summation,
//             2·n·eps·Σ|terms| over its n additions.)
//   memory    device allocations are host allocations (AddressSanitizer redzones around each, in the
//             emulation build always), filled with 0xFF bytes (NaN) when allocated; static __shared__
//             arrays live in one ELF section, refilled with 0xFF before every block and bounds-checked
//             by AddressSanitizer (-fsanitize-sections); dynamic shared memory is a heap buffer of
//             exactly the launch's size. Pointer arguments of a launch must point into a device
//             allocation (a host pointer passed to a kernel is an error, as it would fault on a GPU).
//   limits    a launch checks what a device checks: at most 1024 threads per block (x, y ≤ 1024,
//             z ≤ 64), grid x < 2^31, y and z ≤ 65535, dynamic shared memory ≤ 48 KB unless raised
//             with cudaFuncSetAttribute (at most 227 KB), and fails with the same error codes.
//   errors    a failure inside a kernel (deadlock at a barrier, a shuffle naming an exited lane or a
//             lane outside its mask, disagreeing schedules) is printed to stderr and becomes the
//             sticky error the next runtime call returns, as cudaErrorLaunchFailure does on a GPU;
//             cudaDeviceReset() clears it.
#include <math.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>

// ---- qualifiers and built-in types --------------------------------------------------------------
#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __launch_bounds__(...)
// One copy per running block: every static __shared__ array lives in this section, which the
// emulator refills with 0xFF before each block (uninitialised shared memory reads as NaN).
#define __shared__ static __attribute__((section("attnlab_emu_shared"), aligned(16)))

struct uint3 {
  unsigned x, y, z;
};
struct dim3 {
  unsigned x, y, z;
  constexpr dim3(unsigned vx = 1, unsigned vy = 1, unsigned vz = 1) : x(vx), y(vy), z(vz) {}
  constexpr dim3(uint3 v) : x(v.x), y(v.y), z(v.z) {}
};

struct CUstream_st;
struct CUevent_st;
typedef CUstream_st* cudaStream_t;
typedef CUevent_st* cudaEvent_t;

enum cudaError {
  cudaSuccess = 0,
  cudaErrorInvalidValue = 1,
  cudaErrorMemoryAllocation = 2,
  cudaErrorInitializationError = 3,
  cudaErrorInvalidConfiguration = 9,
  cudaErrorInvalidDevicePointer = 17,
  cudaErrorInvalidMemcpyDirection = 21,
  cudaErrorInsufficientDriver = 35,
  cudaErrorNoDevice = 100,
  cudaErrorInvalidDevice = 101,
  cudaErrorInvalidResourceHandle = 400,
  cudaErrorIllegalAddress = 700,
  cudaErrorLaunchOutOfResources = 701,
  cudaErrorLaunchFailure = 719,
  cudaErrorNotSupported = 801,
};
typedef cudaError cudaError_t;

namespace attnlab::cuda::emu {

// ---- the running thread, for the built-in variables ----------------------------------------------
struct Fiber;
struct BlockInfo {
  uint3 idx{0, 0, 0};
  dim3 dim{1, 1, 1};
  dim3 grid{1, 1, 1};
};
struct ThreadInfo {
  uint3 idx{0, 0, 0};
};
extern ThreadInfo* g_thread;  // the running fiber's thread (null outside a kernel)
extern BlockInfo g_block;

const ThreadInfo& current_thread();  // aborts with a message outside a kernel

// ---- synchronisation (each may switch to another fiber) ------------------------------------------
enum class BarrierOp { Plain, Or, And, Count };
int block_barrier(BarrierOp op, int predicate);
void warp_barrier(unsigned mask);
// Every lane of `mask` posts `value` and names the lane it reads (or its own lane); returns that
// lane's value. `what` names the intrinsic for error messages.
std::uint64_t warp_exchange(const char* what, unsigned mask, std::uint64_t value, int src_lane);
// Ballot over the lanes of `mask`: bit l set when lane l's predicate is non-zero.
unsigned warp_ballot(const char* what, unsigned mask, int predicate);
int lane_id();
// Ends the running kernel thread with `what` (a misuse the hardware would fault on); the launch
// fails with it, as with any other error inside a kernel.
[[noreturn]] void kernel_error(const std::string& what);
// A floating-point atomicAdd at addr (|old|, |value|, the type's epsilon): the word's final value
// depends on the order of the additions, within (additions)·eps·Σ|terms| of any other order.
void note_float_atomic(const void* addr, double old_abs, double add_abs, double eps);

// ---- launching -----------------------------------------------------------------------------------
struct PointerArg {
  const void* p;
  int index;
};
// Runs `body` (the kernel with its arguments bound) over the grid, under every schedule. Returns
// the launch's error (configuration errors at once; execution errors also become sticky).
cudaError_t launch(const char* name, const void* kernel_id, dim3 grid, dim3 block, std::size_t smem,
                   cudaStream_t stream, const std::function<void()>& body, const PointerArg* ptrs, int nptrs);
void* dynamic_shared_memory();  // the running block's dynamic shared memory (launch's size)
std::string last_error_detail();
bool is_device_pointer(const void* p);

template <typename T>
std::uint64_t to_bits(T v) {
  static_assert(sizeof(T) <= 8 && std::is_trivially_copyable_v<T>);
  std::uint64_t b = 0;
  std::memcpy(&b, &v, sizeof v);
  return b;
}
template <typename T>
T from_bits(std::uint64_t b) {
  T v;
  std::memcpy(&v, &b, sizeof v);
  return v;
}

template <typename... P>
struct Launcher {
  void (*kernel)(P...);
  const char* name;
  dim3 grid, block;
  std::size_t smem;
  cudaStream_t stream;
  template <typename... A>
  void operator()(A&&... a) const {
    // The arguments are converted to the kernel's parameter types once, like a launch copies them.
    std::tuple<std::decay_t<P>...> args(std::forward<A>(a)...);
    PointerArg ptrs[sizeof...(P) + 1];
    int n = 0, i = 0;
    std::apply([&](auto&... v) { ((collect(v, ptrs, n, i++)), ...); }, args);
    auto k = kernel;
    launch(name, reinterpret_cast<const void*>(kernel), grid, block, smem, stream, [&] { std::apply(k, args); }, ptrs,
           n);
  }
  template <typename T>
  static void collect(const T& v, PointerArg* out, int& n, int i) {
    if constexpr (std::is_pointer_v<T>) {
      if (v) out[n++] = {static_cast<const void*>(v), i};
    }
  }
};

template <typename... P>
Launcher<P...> make_launcher(void (*kernel)(P...), const char* name, dim3 grid, dim3 block, std::size_t smem,
                             cudaStream_t stream) {
  return Launcher<P...>{kernel, name, grid, block, smem, stream};
}

}  // namespace attnlab::cuda::emu

// ---- built-in variables --------------------------------------------------------------------------
#define threadIdx (static_cast<const uint3&>(::attnlab::cuda::emu::current_thread().idx))
#define blockIdx (static_cast<const uint3&>(::attnlab::cuda::emu::g_block.idx))
#define blockDim (static_cast<const dim3&>(::attnlab::cuda::emu::g_block.dim))
#define gridDim (static_cast<const dim3&>(::attnlab::cuda::emu::g_block.grid))
constexpr int warpSize = 32;

// ---- barriers, warp intrinsics, atomics ----------------------------------------------------------
inline void __syncthreads() { (void)::attnlab::cuda::emu::block_barrier(::attnlab::cuda::emu::BarrierOp::Plain, 0); }
inline int __syncthreads_or(int p) { return ::attnlab::cuda::emu::block_barrier(::attnlab::cuda::emu::BarrierOp::Or, p); }
inline int __syncthreads_and(int p) { return ::attnlab::cuda::emu::block_barrier(::attnlab::cuda::emu::BarrierOp::And, p); }
inline int __syncthreads_count(int p) { return ::attnlab::cuda::emu::block_barrier(::attnlab::cuda::emu::BarrierOp::Count, p); }
inline void __syncwarp(unsigned mask = 0xffffffffu) { ::attnlab::cuda::emu::warp_barrier(mask); }

// Source lanes follow the CUDA Programming Guide: lanes are grouped by `width`; a source outside the
// caller's group (xor, down: a later group; up: an earlier one) gives the caller its own value.
template <typename T>
T __shfl_sync(unsigned mask, T var, int src, int width = warpSize) {
  const int lane = ::attnlab::cuda::emu::lane_id(), base = lane & ~(width - 1);
  return ::attnlab::cuda::emu::from_bits<T>(::attnlab::cuda::emu::warp_exchange("__shfl_sync", mask, ::attnlab::cuda::emu::to_bits(var),
                                                                    base + (src & (width - 1))));
}
template <typename T>
T __shfl_xor_sync(unsigned mask, T var, int lane_mask, int width = warpSize) {
  const int lane = ::attnlab::cuda::emu::lane_id(), base = lane & ~(width - 1), src = lane ^ lane_mask;
  return ::attnlab::cuda::emu::from_bits<T>(::attnlab::cuda::emu::warp_exchange(
      "__shfl_xor_sync", mask, ::attnlab::cuda::emu::to_bits(var), src >= base + width ? lane : src));
}
template <typename T>
T __shfl_down_sync(unsigned mask, T var, unsigned delta, int width = warpSize) {
  const int lane = ::attnlab::cuda::emu::lane_id(), base = lane & ~(width - 1), src = lane + static_cast<int>(delta);
  return ::attnlab::cuda::emu::from_bits<T>(::attnlab::cuda::emu::warp_exchange(
      "__shfl_down_sync", mask, ::attnlab::cuda::emu::to_bits(var), src >= base + width ? lane : src));
}
template <typename T>
T __shfl_up_sync(unsigned mask, T var, unsigned delta, int width = warpSize) {
  const int lane = ::attnlab::cuda::emu::lane_id(), base = lane & ~(width - 1), src = lane - static_cast<int>(delta);
  return ::attnlab::cuda::emu::from_bits<T>(
      ::attnlab::cuda::emu::warp_exchange("__shfl_up_sync", mask, ::attnlab::cuda::emu::to_bits(var), src < base ? lane : src));
}
inline unsigned __ballot_sync(unsigned mask, int p) { return ::attnlab::cuda::emu::warp_ballot("__ballot_sync", mask, p); }
inline int __any_sync(unsigned mask, int p) { return ::attnlab::cuda::emu::warp_ballot("__any_sync", mask, p) != 0; }
inline int __all_sync(unsigned mask, int p) {
  return (::attnlab::cuda::emu::warp_ballot("__all_sync", mask, p) & mask) == mask;
}

// Fibers switch only at synchronisation points, so a read-modify-write here is atomic.
inline float atomicAdd(float* a, float v) {
  ::attnlab::cuda::emu::note_float_atomic(a, std::fabs(*a), std::fabs(v), 1.0 / (1 << 23));
  const float old = *a;
  *a = old + v;
  return old;
}
inline double atomicAdd(double* a, double v) {
  ::attnlab::cuda::emu::note_float_atomic(a, std::fabs(*a), std::fabs(v), 0x1p-52);
  const double old = *a;
  *a = old + v;
  return old;
}
template <typename T>
T atomicAdd(T* a, T v) {
  const T old = *a;
  *a = old + v;
  return old;
}
template <typename T>
T atomicMax(T* a, T v) {
  const T old = *a;
  *a = old < v ? v : old;
  return old;
}
template <typename T>
T atomicMin(T* a, T v) {
  const T old = *a;
  *a = v < old ? v : old;
  return old;
}
template <typename T>
T atomicExch(T* a, T v) {
  const T old = *a;
  *a = v;
  return old;
}
template <typename T>
T atomicCAS(T* a, T compare, T v) {
  const T old = *a;
  if (old == compare) *a = v;
  return old;
}

// ---- math and bit casts the kernels use -----------------------------------------------------------
inline int min(int a, int b) { return a < b ? a : b; }
inline int max(int a, int b) { return a < b ? b : a; }
inline unsigned min(unsigned a, unsigned b) { return a < b ? a : b; }
inline unsigned max(unsigned a, unsigned b) { return a < b ? b : a; }
inline long long min(long long a, long long b) { return a < b ? a : b; }
inline long long max(long long a, long long b) { return a < b ? b : a; }
inline float __int_as_float(int i) { return ::attnlab::cuda::emu::from_bits<float>(static_cast<std::uint32_t>(i)); }
inline float __uint_as_float(unsigned u) { return ::attnlab::cuda::emu::from_bits<float>(u); }
inline int __float_as_int(float f) { return static_cast<int>(static_cast<std::uint32_t>(::attnlab::cuda::emu::to_bits(f))); }
inline double __longlong_as_double(long long i) { return ::attnlab::cuda::emu::from_bits<double>(static_cast<std::uint64_t>(i)); }
inline long long __double_as_longlong(double d) { return static_cast<long long>(::attnlab::cuda::emu::to_bits(d)); }
inline float __fdividef(float a, float b) { return a / b; }
// A product rounded on its own, never fused into a following add (the volatile keeps the host
// compiler from contracting it into an FMA, as __fmul_rn does nvcc).
inline float __fmul_rn(float a, float b) {
  volatile float p = a * b;
  return p;
}
inline float rsqrtf(float x) { return 1.0f / sqrtf(x); }
using std::isinf;
using std::isnan;
