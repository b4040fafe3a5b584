#pragma once
// The GPU's peak matrix-product rate for a precision, from NVIDIA's datasheets, so that `attnlab
// bench --backend cuda` can say what fraction of the hardware a model step reaches (model FLOPs
// utilisation), next to the fraction of the device's own measured gemm ceiling.
//
// Dense rates (the datasheets print the tensor-core rates "with sparsity", twice these): fp32 is the
// CUDA cores' FMA rate (what CUBLAS_COMPUTE_32F runs on), tf32 and bf16 the tensor cores'. A device
// whose name is not in the table gets no peak (the report says so) rather than a guess; neither does
// the emulator.
#include <optional>
#include <string>

namespace attnlab::bench {

struct Peak {
  double tflops = 0.0;  // dense, at the datasheet's boost clock
  std::string part;     // the part the figure belongs to, e.g. "H100 SXM5"
};

// `device` as cuda::device_name() gives it ("NVIDIA H100 80GB HBM3 (sm_90, 132 SMs)"); `precision`
// "fp32", "tf32" or "bf16". Empty when the part or the precision is not in the table.
std::optional<Peak> datasheet_peak(const std::string& device, const std::string& precision);

}  // namespace attnlab::bench
