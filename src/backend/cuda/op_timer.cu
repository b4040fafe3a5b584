// Device time per op (see op_timer.hpp).
#include "backend/cuda/op_timer.hpp"

#include <cstring>
#include <vector>

#include "backend/cuda/check.hpp"
#include "backend/cuda/launch.cuh"

namespace attnlab::cuda {

namespace {
// Intervals kept before they are added up: bounds the events alive (two per interval) for long runs.
// A training step of Transformer-base makes about 1,500; a fold waits for the stream, which leaves
// the device idle while the host catches up, so it happens rarely.
constexpr std::size_t kFoldAfter = 16384;
}  // namespace

OpTimer::~OpTimer() {
  for (CUevent_st* e : events_) (void)cudaEventDestroy(e);
}

CUevent_st* OpTimer::event(std::size_t i) {
  // Two at a time: open() takes an interval's first event, and close() (which must not throw, so
  // cannot create one) its second.
  while (events_.size() <= (i | 1)) {
    cudaEvent_t e = nullptr;
    CUDA_CHECK(cudaEventCreate(&e));
    events_.push_back(e);
  }
  return events_[i];
}

void OpTimer::start() {
  // deferred_count's slots, made now: an allocation may wait for the device, so not inside an op.
  if (counts_.size() == 0) counts_ = DeviceArray<int>(kFoldAfter);  // intervals_ never holds more
  failed_ = false;
  intervals_.clear();
  deferred_.clear();
  totals_.clear();
  names_.clear();
  depth_ = 0;
  on_ = true;
}

bool OpTimer::open(const char* op, double flops, double bytes, const std::string& shape) {
  if (!on_) return false;
  if (depth_ > 0) {  // inside another op: counted so that close() balances, not recorded
    ++depth_;
    return true;
  }
  if (intervals_.size() == kFoldAfter) fold();
  int index = -1;
  for (std::size_t i = 0; i < names_.size() && index < 0; ++i)
    if (names_[i] == op || std::strcmp(names_[i], op) == 0) index = static_cast<int>(i);
  if (index < 0) {
    index = static_cast<int>(totals_.size());
    names_.push_back(op);
    totals_.push_back(backend::OpTime{op, 0, 0.0, 0.0, 0.0, {}});
  }
  backend::OpTime& t = totals_[static_cast<std::size_t>(index)];
  int shape_index = -1;
  if (!shape.empty()) {
    for (std::size_t i = 0; i < t.shapes.size() && shape_index < 0; ++i)
      if (t.shapes[i].shape == shape) shape_index = static_cast<int>(i);
    if (shape_index < 0) {
      shape_index = static_cast<int>(t.shapes.size());
      t.shapes.push_back(backend::OpShapeTime{shape, 0, 0.0, 0.0, 0.0});
    }
  }
  const std::size_t first = 2 * intervals_.size();
  CUDA_CHECK(cudaEventRecord(event(first), stream_));  // may throw: nothing is counted yet
  intervals_.push_back(Interval{index, shape_index, first});
  ++t.calls;
  t.flops += flops;
  t.bytes += bytes;
  if (shape_index >= 0) {
    backend::OpShapeTime& st = t.shapes[static_cast<std::size_t>(shape_index)];
    ++st.calls;
    st.flops += flops;
    st.bytes += bytes;
  }
  depth_ = 1;
  return true;
}

void OpTimer::close() noexcept {
  if (depth_ == 0 || --depth_ > 0) return;
  // Called from TimedOp's destructor, so it must not throw: a failure is reported by stop().
  if (cudaEventRecord(events_[intervals_.back().first_event + 1], stream_) != cudaSuccess) {
    (void)cudaGetLastError();
    failed_ = true;
  }
}

void OpTimer::add_bytes(double bytes) {
  if (!on_ || depth_ != 1 || intervals_.empty()) return;  // a nested op's bytes are the outer op's to count
  add_bytes_to(intervals_.back(), bytes);
}

void OpTimer::add_bytes_to(const Interval& iv, double bytes) {
  backend::OpTime& t = totals_[static_cast<std::size_t>(iv.op)];
  t.bytes += bytes;
  if (iv.shape >= 0) t.shapes[static_cast<std::size_t>(iv.shape)].bytes += bytes;
}

int* OpTimer::deferred_count(double bytes_each) {
  if (!on_ || depth_ != 1 || intervals_.empty()) return nullptr;
  const std::size_t interval = intervals_.size() - 1;
  if (!deferred_.empty() && deferred_.back().interval == interval) return nullptr;  // one per call
  deferred_.push_back(Deferred{interval, bytes_each});
  return counts_.get() + (deferred_.size() - 1);
}

void OpTimer::fold() {
  if (intervals_.empty()) return;
  CUDA_CHECK(cudaEventSynchronize(event(intervals_.back().first_event + 1)));
  if (!deferred_.empty()) {  // the stream has passed every op recorded, so their counts are written
    std::vector<int> counts(deferred_.size());
    copy_to_host(counts.data(), counts_.get(), counts.size() * sizeof(int));
    for (std::size_t i = 0; i < deferred_.size(); ++i)
      add_bytes_to(intervals_[deferred_[i].interval], counts[i] * deferred_[i].bytes_each);
    deferred_.clear();
  }
  for (const Interval& iv : intervals_) {
    float ms = 0.0f;
    CUDA_CHECK(cudaEventElapsedTime(&ms, event(iv.first_event), event(iv.first_event + 1)));
    backend::OpTime& t = totals_[static_cast<std::size_t>(iv.op)];
    t.seconds += 1e-3 * ms;
    if (iv.shape >= 0) t.shapes[static_cast<std::size_t>(iv.shape)].seconds += 1e-3 * ms;
  }
  intervals_.clear();
}

std::vector<backend::OpTime> OpTimer::stop() {
  if (!on_) return {};
  on_ = false;
  depth_ = 0;
  if (failed_) {
    failed_ = false;
    intervals_.clear();
    deferred_.clear();
    throw RuntimeError("op timing: recording a CUDA event after an op failed");
  }
  fold();
  std::vector<backend::OpTime> out = std::move(totals_);
  totals_.clear();
  names_.clear();
  return out;
}

}  // namespace attnlab::cuda
