#include "backend/registry.hpp"

#include <memory>
#include <mutex>

#include "backend/cpu/cpu_backend.hpp"
#include "util/error.hpp"

#ifdef ATTNLAB_WITH_CUDA
#include "backend/cuda/cuda_backend.hpp"
#include "backend/cuda/device.hpp"
#include "backend/cuda/matmul.hpp"
#endif

namespace attnlab::backend {

const std::vector<std::string>& backend_names() {
  static const std::vector<std::string> names{"cpu", "cuda"};
  return names;
}

Ops<float>& backend_named(const std::string& name, const std::string& option) {
  if (name == "cpu") return cpu_backend<float>();
  if (name != "cuda") throw InputError(option + ": expected cpu or cuda, got \"" + name + "\"");
#ifdef ATTNLAB_WITH_CUDA
  // One device backend per process: its stream and cuBLAS handle are made once, and never destroyed:
  // at exit the CUDA runtime tears itself down in its own atexit handler, after which a destructor's
  // frees and cuBLAS calls could only fail. The process's end releases the device.
  static Ops<float>* cuda = nullptr;
  static std::mutex lock;
  const std::lock_guard<std::mutex> guard(lock);
  if (!cuda) cuda = make_cuda_backend().release();  // InputError when there is no usable device
  return *cuda;
#else
  throw InputError(option + ": expected a backend this build has (cpu), got cuda: attnlab was built without CUDA; "
                   "install the CUDA toolkit (nvcc) and rebuild with -DATTNLAB_CUDA=ON, or use --backend cpu");
#endif
}

std::array<double, 3> cuda_bf16_storage_seconds(int m, int n, int k, bool trans_b, int repeats) {
#ifdef ATTNLAB_WITH_CUDA
  const cuda::StorageSeconds s = cuda::bf16_storage_seconds(m, n, k, trans_b, repeats);
  return {s.fp32, s.bf16_inputs, s.bf16};
#else
  (void)m, (void)n, (void)k, (void)trans_b, (void)repeats;
  throw InputError("bf16 storage products: attnlab was built without CUDA");
#endif
}

CudaReport cuda_report() {
  CudaReport r;
#ifdef ATTNLAB_WITH_CUDA
  r.compiled = true;
  r.emulated = cuda::cuda_emulated();
#ifdef ATTNLAB_NVCC_VERSION
  r.compiler = ATTNLAB_NVCC_VERSION;
#endif
  std::string why;
  if (!cuda::cuda_device_available(&why)) {
    std::string gpu;
    r.gpu_present = cuda::nvidia_gpu_present(&gpu);
    r.device = r.gpu_present ? "a GPU is present (" + gpu + ") but CUDA cannot use it: " + why
                                              : "none: " + why;
    return r;
  }
  try {
    const cuda::DeviceInfo d = cuda::device_info();
    r.usable = true;
    r.device = d.name;
    r.cc_major = d.cc_major;
    r.cc_minor = d.cc_minor;
    r.multiprocessors = d.multiprocessors;
    r.memory_gib = static_cast<double>(d.memory_bytes) / (1024.0 * 1024.0 * 1024.0);
    auto version = [](int v) { return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10); };
    // The emulator answers every query with made-up figures; say what it is instead.
    r.driver = r.emulated ? "none (emulator)" : version(d.driver_version);
    r.runtime = r.emulated ? "none (emulator)" : version(d.runtime_version);
  } catch (const Error& e) {
    r.device = std::string("present, but its properties cannot be read: ") + e.what();
  }
#else
  r.compiler = "not found at configure time (or -DATTNLAB_CUDA=OFF)";
  r.device = "n/a";
#endif
  return r;
}

}  // namespace attnlab::backend
