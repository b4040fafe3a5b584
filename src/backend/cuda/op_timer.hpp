#pragma once
// Device time per op, for CudaBackend's start_op_timing / stop_op_timing (backend/backend.hpp) and so
// for `attnlab bench`'s breakdown on a GPU.
//
// Why events and not a host clock: a launch returns before its kernel runs, so a host timer around an
// op measures the launch (microseconds), not the work. Instead each op is bracketed by two CUDA events
// recorded on the backend's stream; the GPU stamps them as the stream reaches them, so the interval
// is the device time of everything the op enqueued (its kernels, cuBLAS's, its copies). Nothing is
// read back until stop(): recording an event does not wait. Ops run one after another on the one
// stream, so the intervals do not overlap, and what they do not cover (the device waiting for the
// host to launch the next op, or for a download) is the wall time minus their sum.
//
// Under the emulator the events exist and must be recorded before use, but elapse as 0 ms: emulated
// kernels run on the CPU, and no emulated run may report a device time. Calls and FLOPs still count.
#include <cstdint>
#include <string>
#include <vector>

#include "backend/backend.hpp"
#include "backend/cuda/device.hpp"

struct CUevent_st;  // cudaEvent_t is CUevent_st*

namespace attnlab::cuda {

class OpTimer {
 public:
  explicit OpTimer(Stream stream) : stream_(stream) {}
  ~OpTimer();
  OpTimer(const OpTimer&) = delete;
  OpTimer& operator=(const OpTimer&) = delete;

  // Clears the totals and starts recording.
  void start();
  bool on() const { return on_; }
  // Brackets one op; nested calls (an op that calls another through the backend) count for the
  // outermost only. open() returns whether it recorded, and then close() must follow.
  // flops and bytes: as backend::OpTime counts them; shape: "" for an op without products (no
  // per-shape row).
  bool open(const char* op, double flops, double bytes, const std::string& shape = {});
  void close() noexcept;
  // More bytes for the op now open (one that learns its traffic as it runs); ignored when nothing
  // was recorded.
  void add_bytes(double bytes);
  // For an op that learns part of its traffic only on the device (the embedding backward's distinct
  // ids): a device int for its kernels to set, read back when the intervals are added up, so that
  // nothing waits for it now; count · bytes_each then joins the op's bytes. One per op call; null
  // when nothing was recorded (timing off, a nested op), and then the kernels must not write it.
  int* deferred_count(double bytes_each);
  // Waits for the stream, adds up and stops recording: one row per op, in the order first called.
  std::vector<backend::OpTime> stop();

 private:
  struct Interval {
    int op;     // index into totals_
    int shape;  // index into totals_[op].shapes, or −1
    std::size_t first_event;
  };
  CUevent_st* event(std::size_t i);  // the pool's i-th event, created on first use
  void add_bytes_to(const Interval& iv, double bytes);  // to its op's totals and its shape's
  void fold();                       // waits, adds the recorded intervals to totals_, reuses their events

  Stream stream_;
  bool on_ = false, failed_ = false;
  int depth_ = 0;
  std::vector<CUevent_st*> events_;  // kept between runs: two per interval
  std::vector<Interval> intervals_;  // recorded, not yet added up
  struct Deferred {
    std::size_t interval;  // index into intervals_
    double bytes_each;
  };
  std::vector<Deferred> deferred_;  // one slot of counts_ each, in order, for the intervals_ above
  DeviceArray<int> counts_;         // made by the first start(), one slot per interval a fold can hold
  std::vector<backend::OpTime> totals_;
  std::vector<const char*> names_;  // the op-name literals of totals_, for a pointer lookup first
};

// RAII bracket: `TimedOp t(timer, "relu_forward", bytes);` at the top of an op (bytes: what its
// contract moves, backend::OpTime); an op that multiplies matrices adds its FLOPs and a function
// giving its shape's name (called only while timing is on).
class TimedOp {
 public:
  TimedOp(OpTimer& t, const char* op, double bytes) : t_(t.on() && t.open(op, 0.0, bytes) ? &t : nullptr) {}
  template <typename ShapeName>
  TimedOp(OpTimer& t, const char* op, double flops, double bytes, ShapeName&& shape)
      : t_(t.on() && t.open(op, flops, bytes, shape()) ? &t : nullptr) {}
  ~TimedOp() {
    if (t_) t_->close();
  }
  void add_bytes(double bytes) {
    if (t_) t_->add_bytes(bytes);
  }
  int* deferred_count(double bytes_each) { return t_ ? t_->deferred_count(bytes_each) : nullptr; }
  TimedOp(const TimedOp&) = delete;
  TimedOp& operator=(const TimedOp&) = delete;

 private:
  OpTimer* t_;
};

}  // namespace attnlab::cuda
