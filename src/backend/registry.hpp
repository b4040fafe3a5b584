#pragma once
// Picks a backend by name (`--backend cpu|cuda`) and reports what CUDA this build and machine offer
// (`attnlab doctor`). The only place outside backend/cuda/ that knows CUDA exists: the command line
// and the model reach it through here. Compiled into attnlab_backends, which links the CUDA library
// when the build has one.
#include <array>
#include <string>
#include <vector>

#include "backend/backend.hpp"

namespace attnlab::backend {

// The names --backend accepts, in the order `--help` lists them.
const std::vector<std::string>& backend_names();

// The float backend called `name`, created on first use and kept for the life of the process.
// InputError (exit 2) naming the option, what was asked and what to do instead when it cannot be
// had: an unknown name, "cuda" in a build without CUDA, or no usable device.
Ops<float>& backend_named(const std::string& name, const std::string& option = "--backend");

// For `attnlab bench --backend cuda --precision bf16`: seconds per call of the CUDA device's bf16
// product (m × k)·(k × n) with its operands stored as float32, as bf16 inputs with a float32 output,
// and all bf16, timed together (backend/cuda/matmul.hpp, bf16_storage_seconds). InputError in a build
// without CUDA.
std::array<double, 3> cuda_bf16_storage_seconds(int m, int n, int k, bool trans_b, int repeats);

// What `attnlab doctor` says about CUDA.
struct CudaReport {
  bool compiled = false;   // the build has the CUDA backend
  bool emulated = false;   // ... compiled as C++ and run by the CPU emulator (-DATTNLAB_CUDA=EMULATE)
  bool usable = false;     // a device answered
  bool gpu_present = false;  // not usable, yet the machine has an NVIDIA GPU (the driver is too old, say)
  std::string compiler;    // nvcc's version, or what the build used instead
  std::string device;      // "NVIDIA H100 80GB HBM3", or why there is none
  int cc_major = 0, cc_minor = 0, multiprocessors = 0;
  double memory_gib = 0;
  std::string driver, runtime;  // CUDA versions, "13.0"
};
CudaReport cuda_report();

}  // namespace attnlab::backend
