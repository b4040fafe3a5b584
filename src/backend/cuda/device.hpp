#pragma once
// Device memory and streams for the CUDA kernels, from plain C++ (no CUDA header is included, so
// tests and, later, the model compile with the ordinary C++ compiler; only the .cu files go through
// nvcc).
//
// Conventions of every launcher in src/backend/cuda/ (layernorm.hpp, elementwise.hpp, embedding.hpp,
// cross_entropy.hpp, adamw.hpp, attention.hpp, matmul.hpp, linear.hpp):
//   - pointers are device pointers, row-major, float32 (token ids int32), laid out exactly as the CPU
//     op of backend/cpu/ops.hpp that the launcher mirrors;
//   - launches are asynchronous on `stream` (nullptr: the default stream); a bad launch throws
//     RuntimeError at once, an error inside a kernel at the next synchronising call;
//   - bad sizes throw ShapeError before anything is launched;
//   - gradients accumulate (+=) as on the CPU, so callers zero them once per step.
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "util/error.hpp"

struct CUstream_st;  // CUDA's stream type: cudaStream_t is CUstream_st*

namespace attnlab::cuda {

using Stream = CUstream_st*;

// Thin wrappers over the CUDA runtime; every failure throws RuntimeError (check.hpp).
void* device_malloc(std::size_t bytes);    // nullptr for 0 bytes
void device_free(void* p) noexcept;        // nullptr is fine; errors are dropped (destructors call it)
void copy_to_device(void* dst, const void* src, std::size_t bytes);
void copy_to_host(void* dst, const void* src, std::size_t bytes);
// On `stream`, ordered with the kernels launched there (nullptr: the default stream).
void device_memset(void* p, int byte, std::size_t bytes, Stream stream = nullptr);
void device_synchronize();                 // waits for all work; reports errors of kernels that ran
std::string device_name();                 // "NVIDIA H100 80GB HBM3 (sm_90, 132 SMs)"

// What `attnlab doctor` reports about the current device (backend/registry.hpp).
struct DeviceInfo {
  std::string name;                // "NVIDIA H100 80GB HBM3"
  int cc_major = 0, cc_minor = 0;  // compute capability
  int multiprocessors = 0;
  std::size_t memory_bytes = 0;
  int driver_version = 0, runtime_version = 0;  // CUDA's encoding: 1000·major + 10·minor
};
DeviceInfo device_info();

// True when the CUDA runtime can see at least one device. Otherwise false, with the reason in *why
// (when given): the runtime's error string if cudaGetDeviceCount failed (e.g. no driver installed),
// or a note that it found zero devices. Never throws and never aborts, so a program (or a test) can
// ask first and fall back to the CPU path cleanly on a machine without a GPU.
bool cuda_device_available(std::string* why = nullptr) noexcept;

// True when this machine has an NVIDIA GPU, whatever the CUDA runtime says (a /dev/nvidia<N> device
// node or an entry in /proc/driver/nvidia/gpus). With a GPU present, a runtime that cannot start (a
// driver older than the toolkit needs, say) is a failure to report loudly, not a reason to skip.
// `evidence` receives what was found.
bool nvidia_gpu_present(std::string* evidence = nullptr) noexcept;

// True in the emulation build (-DATTNLAB_CUDA=EMULATE): the "device" is the CPU emulator of
// src/backend/cuda/emulation/, for testing only; no speed it shows is a GPU's.
bool cuda_emulated() noexcept;

// One device array of n elements of T, freed on destruction. upload/download copy synchronously.
template <typename T>
class DeviceArray {
 public:
  DeviceArray() = default;
  explicit DeviceArray(std::size_t n) : n_(n), p_(static_cast<T*>(device_malloc(n * sizeof(T)))) {}
  explicit DeviceArray(const std::vector<T>& host) : DeviceArray(host.size()) { upload(host); }
  ~DeviceArray() { device_free(p_); }
  DeviceArray(const DeviceArray&) = delete;
  DeviceArray& operator=(const DeviceArray&) = delete;
  DeviceArray(DeviceArray&& o) noexcept : n_(std::exchange(o.n_, 0)), p_(std::exchange(o.p_, nullptr)) {}
  DeviceArray& operator=(DeviceArray&& o) noexcept {
    if (this != &o) {
      device_free(p_);
      n_ = std::exchange(o.n_, 0);
      p_ = std::exchange(o.p_, nullptr);
    }
    return *this;
  }

  T* get() { return p_; }
  const T* get() const { return p_; }
  std::size_t size() const { return n_; }

  void upload(const std::vector<T>& host) {
    if (host.size() != n_)
      throw ShapeError("DeviceArray::upload: " + std::to_string(host.size()) + " values for " + std::to_string(n_));
    copy_to_device(p_, host.data(), n_ * sizeof(T));
  }
  std::vector<T> download() const {
    std::vector<T> host(n_);
    copy_to_host(host.data(), p_, n_ * sizeof(T));
    return host;
  }
  // Every byte 0xFF: NaN as a float (and −1 as an int), so an element a kernel should have written
  // but did not is visible after download().
  // Both on `stream`, so they are ordered with the kernels launched there.
  void poison(Stream stream = nullptr) { device_memset(p_, 0xFF, n_ * sizeof(T), stream); }
  void zero(Stream stream = nullptr) { device_memset(p_, 0, n_ * sizeof(T), stream); }

 private:
  std::size_t n_ = 0;
  T* p_ = nullptr;
};

}  // namespace attnlab::cuda
