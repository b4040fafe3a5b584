// --backend cpu|cuda for the model commands, and the honest note when "cuda" is the emulator.
#include <iostream>

#include "backend/registry.hpp"
#include "cli/commands.hpp"

namespace attnlab::cli {

void add_backend_option(CLI::App& sub, std::string& name) {
  sub.add_option("--backend", name,
                 "Where the model runs: cpu, or cuda (an NVIDIA GPU; needs a build with CUDA, see `attnlab doctor`)")
      ->check(CLI::IsMember(backend::backend_names()))
      ->capture_default_str();
}

void add_precision_option(CLI::App& sub, std::string& name) {
  sub.add_option("--precision", name,
                 "Matrix products in fp32, or tf32 or bf16 on a GPU's tensor cores (inputs rounded, float32 "
                 "accumulation; weights, the optimizer and the residual stream stay fp32; at bf16 the logits and "
                 "the attention and feed-forward activations are stored in bf16)")
      ->check(CLI::IsMember({"fp32", "tf32", "bf16"}))
      ->capture_default_str();
}

// Whether the bf16 kernels (cuBLAS's FAST_16BF and bf16-storage products, the tensor-core attention
// in attention.cu, the bf16 loss head's ops) have
// passed their tests on a real GPU. Until the GPU kit's tests group has run them on one (docs/cuda.md),
// a bf16 run on a device says so.
constexpr bool kBf16TestedOnGpu = false;

void apply_precision(backend::Ops<float>& be, const std::string& name) {
  be.set_matmul_precision(backend::parse_precision(name));
  if (name == "bf16" && be.name() == "cuda" && !kBf16TestedOnGpu)
    std::cerr << "note: --precision bf16 runs kernels that have passed their tests only under the CPU emulator, never "
                 "yet on a GPU; `ctest -L cuda` in this build checks them on this one (docs/cuda.md)\n";
}

backend::Ops<float>& open_backend(const std::string& name) {
  backend::Ops<float>& be = backend::backend_named(name);
  if (be.name() != "cpu" && be.name() != "cuda") {
    std::cerr << "note: --backend " << name << " is " << be.name()
              << ": the GPU kernels run on the CPU emulator, for testing only (thousands of times slower than a GPU)\n";
  }
  return be;
}

}  // namespace attnlab::cli
