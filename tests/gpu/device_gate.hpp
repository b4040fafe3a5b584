#pragma once
// Whether a CUDA test program runs its device tests, skips, or fails:
//   0   a device is there (a GPU, or the emulator in an emulation build): run, after printing which;
//   77  no GPU on this machine (ctest's SKIP_RETURN_CODE): skip, with CUDA's reason in *why;
//   1   this machine has a GPU but the CUDA runtime cannot start (a driver older than the toolkit
//       needs, say): fail loudly, never "skipped".
#include <iostream>
#include <string>

#include "backend/cuda/device.hpp"

namespace attnlab::gputest {

inline int device_gate(std::string* why_out) {
  std::string why;
  if (cuda::cuda_device_available(&why)) {
    std::cout << "device: " << cuda::device_name()
              << (cuda::cuda_emulated() ? " — a pass here is not a pass on a GPU" : "")
              << std::endl;
    return 0;
  }
  std::string gpu;
  if (cuda::nvidia_gpu_present(&gpu)) {
    std::cout << "FAILED: this machine has a GPU (" << gpu << ") but the CUDA runtime cannot use it: " << why << std::endl;
    return 1;
  }
  if (why_out) *why_out = why;
  return 77;
}

}  // namespace attnlab::gputest
