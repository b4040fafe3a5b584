#include "backend/cuda/device.hpp"

#include "backend/cuda/check.hpp"

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

}  // namespace attnlab::cuda
