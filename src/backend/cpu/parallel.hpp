#pragma once
// attnlab's own loops on several cores: a tiny fork–join pool for the work between matrix products
// (softmaxes, the loss, layer norm, element-wise ops) and for attention's many small per-head products.
//
// Why not OpenMP: libgomp's idle threads spin for a while after each parallel region, and on a 2-core
// machine that spinning steals the core OpenBLAS needs for the very next sgemm. These workers sleep on a
// condition variable instead (a few microseconds to wake, against loops that take hundreds).
//
// Determinism: parallel_for splits [0, n) into contiguous chunks and every caller in attnlab makes each
// chunk's arithmetic independent of the split (rows, heads or columns, never a sum across chunks), so the
// results are bit-identical whatever the thread count. Where a reduction crosses rows (bias and gain
// gradients), the callers split by columns and keep the row order.
#include <cstddef>
#include <functional>

namespace attnlab::cpu {

// Threads parallel_for uses, the caller included. Defaults to OpenBLAS's thread count (which honours
// OPENBLAS_NUM_THREADS), so one knob sets both.
int threads();
// 1 … 256. `attnlab bench --threads K` sets this and OpenBLAS's count together.
void set_threads(int n);

// Calls fn(begin, end) on contiguous chunks covering [0, n), in parallel when n ≥ 2·min_chunk. The
// calling thread runs the first chunk. Nested calls (from inside fn) run serially. If fn throws, the
// first exception is rethrown here after every chunk finished.
void parallel_for(std::size_t n, std::size_t min_chunk, const std::function<void(std::size_t, std::size_t)>& fn);

// While alive, OpenBLAS runs single-threaded: for regions whose parallelism is our own (one head per
// thread), so that two threads' small products do not each also try to use every core.
class BlasSerial {
 public:
  BlasSerial();
  ~BlasSerial();
  BlasSerial(const BlasSerial&) = delete;
  BlasSerial& operator=(const BlasSerial&) = delete;

 private:
  int saved_ = 0;
};

}  // namespace attnlab::cpu
