// NVIDIA datasheet peaks (see peaks.hpp).
#include "bench/peaks.hpp"

#include <array>

namespace attnlab::bench {

namespace {

struct Part {
  const char* match;  // a substring of the CUDA device name; the first row that matches wins
  const char* part;
  double fp32, tf32, bf16;  // dense TFLOP/s
};

// More specific names first: "H100 NVL" and "H100 PCIe" before the SXM part's "H100 80GB HBM3".
// Sources: the NVIDIA H100, H200 and A100 datasheets (tensor-core rates halved: they are printed
// with 2:4 sparsity).
constexpr std::array<Part, 8> kParts{{
    {"H200 NVL", "H200 NVL", 60.0, 417.5, 835.5},
    {"H200", "H200 SXM", 67.0, 494.7, 989.4},
    {"H100 NVL", "H100 NVL", 60.0, 417.5, 835.5},
    {"H100 PCIe", "H100 PCIe", 51.2, 378.0, 756.5},
    {"H100 80GB HBM3", "H100 SXM5", 67.0, 494.7, 989.4},
    {"H100 SXM", "H100 SXM5", 67.0, 494.7, 989.4},
    {"A100-SXM", "A100 SXM4", 19.5, 156.0, 312.0},
    {"A100", "A100 PCIe", 19.5, 156.0, 312.0},
}};

}  // namespace

std::optional<Peak> datasheet_peak(const std::string& device, const std::string& precision) {
  for (const Part& p : kParts) {
    if (device.find(p.match) == std::string::npos) continue;
    if (precision == "fp32") return Peak{p.fp32, p.part};
    if (precision == "tf32") return Peak{p.tf32, p.part};
    if (precision == "bf16") return Peak{p.bf16, p.part};
    return std::nullopt;
  }
  return std::nullopt;
}

}  // namespace attnlab::bench
