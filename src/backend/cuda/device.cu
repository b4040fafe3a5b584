#include "backend/cuda/device.hpp"

#include "backend/cuda/check.hpp"

#include <filesystem>
#include <string>

namespace attnlab::cuda {

void* device_malloc(std::size_t bytes) {
  if (bytes == 0) return nullptr;
  void* p = nullptr;
  CUDA_CHECK(cudaMalloc(&p, bytes));
  return p;
}

void device_free(void* p) noexcept {
  if (p) (void)cudaFree(p);  // a failure here can only follow an error already being reported
}

void copy_to_device(void* dst, const void* src, std::size_t bytes) {
  if (bytes) CUDA_CHECK(cudaMemcpy(dst, src, bytes, cudaMemcpyHostToDevice));
}

void copy_to_host(void* dst, const void* src, std::size_t bytes) {
  if (bytes) CUDA_CHECK(cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToHost));
}

void device_memset(void* p, int byte, std::size_t bytes, Stream stream) {
  if (bytes) CUDA_CHECK(cudaMemsetAsync(p, byte, bytes, stream));
}

void device_synchronize() { CUDA_CHECK(cudaDeviceSynchronize()); }

std::string device_name() {
  int dev = 0;
  CUDA_CHECK(cudaGetDevice(&dev));
  cudaDeviceProp prop{};
  CUDA_CHECK(cudaGetDeviceProperties(&prop, dev));
  return std::string(prop.name) + " (sm_" + std::to_string(prop.major) + std::to_string(prop.minor) + ", " +
         std::to_string(prop.multiProcessorCount) + " SMs)";
}

DeviceInfo device_info() {
  int dev = 0;
  CUDA_CHECK(cudaGetDevice(&dev));
  cudaDeviceProp prop{};
  CUDA_CHECK(cudaGetDeviceProperties(&prop, dev));
  DeviceInfo d;
  d.name = prop.name;
  d.cc_major = prop.major;
  d.cc_minor = prop.minor;
  d.multiprocessors = prop.multiProcessorCount;
  d.memory_bytes = prop.totalGlobalMem;
  CUDA_CHECK(cudaDriverGetVersion(&d.driver_version));
  CUDA_CHECK(cudaRuntimeGetVersion(&d.runtime_version));
  return d;
}

bool cuda_device_available(std::string* why) noexcept {
  int count = 0;
  const cudaError_t err = cudaGetDeviceCount(&count);
  try {
    if (err != cudaSuccess) {
      // Clear the runtime's last-error state, so a later cudaGetLastError() after a launch does not
      // report this old failure as its own.
      (void)cudaGetLastError();
      // (Without any NVIDIA driver installed, CUDA reports cudaErrorInsufficientDriver here.)
      if (why)
        *why = std::string("cudaGetDeviceCount failed: ") + cudaGetErrorString(err) + " (" +
               cudaGetErrorName(err) + ")";
      return false;
    }
    if (count <= 0) {
      if (why) *why = "cudaGetDeviceCount found 0 devices";
      return false;
    }
  } catch (...) {  // only an allocation failure while writing *why; the answer itself stands
    return false;
  }
  return true;
}

bool nvidia_gpu_present(std::string* evidence) noexcept {
  try {
    namespace fs = std::filesystem;
    std::error_code ec;
    for (const char* dir : {"/proc/driver/nvidia/gpus"}) {
      for (const auto& e : fs::directory_iterator(dir, ec)) {
        if (evidence) *evidence = e.path().string();
        return true;
      }
    }
    for (int i = 0; i < 16; ++i) {
      const std::string node = "/dev/nvidia" + std::to_string(i);
      if (fs::exists(node, ec)) {
        if (evidence) *evidence = node;
        return true;
      }
    }
  } catch (...) {
  }
  return false;
}

bool cuda_emulated() noexcept {
#ifdef ATTNLAB_CUDA_EMULATED
  return true;
#else
  return false;
#endif
}

}  // namespace attnlab::cuda
