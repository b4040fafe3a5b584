// The datasheet peaks behind `attnlab bench --backend cuda`'s "of peak" column (bench/peaks.hpp).
#include <doctest/doctest.h>

#include "bench/peaks.hpp"

using attnlab::bench::datasheet_peak;

TEST_CASE("datasheet peaks: the names CUDA gives, dense rates, nothing for unknown parts or precisions") {
  // The H100 SXM5 as CUDA names it, and the device tool's H200.
  const auto h100 = datasheet_peak("NVIDIA H100 80GB HBM3 (sm_90, 132 SMs)", "bf16");
  REQUIRE(h100);
  CHECK(h100->part == "H100 SXM5");
  CHECK(h100->tflops == doctest::Approx(989.4));
  CHECK(datasheet_peak("NVIDIA H100 80GB HBM3", "tf32")->tflops == doctest::Approx(494.7));
  CHECK(datasheet_peak("NVIDIA H100 80GB HBM3", "fp32")->tflops == doctest::Approx(67.0));
  CHECK(datasheet_peak("NVIDIA H200 (sm_90, 132 SMs)", "bf16")->part == "H200 SXM");
  // The more specific parts win over the family name.
  CHECK(datasheet_peak("NVIDIA H200 NVL", "bf16")->part == "H200 NVL");
  CHECK(datasheet_peak("NVIDIA H100 PCIe", "bf16")->tflops == doctest::Approx(756.5));
  CHECK(datasheet_peak("NVIDIA H100 NVL", "bf16")->part == "H100 NVL");
  CHECK(datasheet_peak("NVIDIA A100-SXM4-80GB", "bf16")->part == "A100 SXM4");
  CHECK(datasheet_peak("NVIDIA A100 80GB PCIe", "tf32")->tflops == doctest::Approx(156.0));
  // tf32 is half of bf16 on every tensor-core part; fp32 far below both.
  for (const char* d : {"NVIDIA H200", "NVIDIA H100 PCIe", "NVIDIA A100-PCIE-40GB"}) {
    INFO(d);
    CHECK(datasheet_peak(d, "tf32")->tflops * 2 == doctest::Approx(datasheet_peak(d, "bf16")->tflops).epsilon(0.01));
    CHECK(datasheet_peak(d, "fp32")->tflops < datasheet_peak(d, "tf32")->tflops / 5);
  }
  // No guesses: an unlisted part, the emulator, an unknown precision.
  CHECK_FALSE(datasheet_peak("NVIDIA GeForce RTX 4090", "bf16"));
  CHECK_FALSE(datasheet_peak("attnlab CPU emulator", "fp32"));
  CHECK_FALSE(datasheet_peak("NVIDIA H100 80GB HBM3", "fp16"));
}
