// attnlab doctor: what attnlab runs on — compiler, BLAS library and kernel, threads, CUDA — so a slow
// or broken setup can be diagnosed in one command.
#include <iostream>
#include <memory>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <xtensor/xtensor_config.hpp>

#include "cli/commands.hpp"
#include "backend/cpu/blas_setup.hpp"
#include "backend/cpu/buffers.hpp"
#include "util/error.hpp"
#include "util/paths.hpp"
#include "backend/registry.hpp"
#include "exercises/sandbox.hpp"

namespace attnlab::cli {

struct DoctorOptions {
  std::string format = "text";
};

namespace {

void run_doctor(const DoctorOptions& o) {
  const cpu::BlasInfo b = cpu::blas_info();
  nlohmann::ordered_json j;
  j["attnlab"] = ATTNLAB_VERSION;
  j["compiler"] = std::string(
#if defined(__clang__)
      "clang "
#elif defined(__GNUC__)
      "g++ "
#endif
      __VERSION__);
  j["cxx_standard"] = static_cast<long>(__cplusplus);
  j["xtensor"] = fmt::format("{}.{}.{}", XTENSOR_VERSION_MAJOR, XTENSOR_VERSION_MINOR, XTENSOR_VERSION_PATCH);
  j["blas"] = {{"library", b.config}, {"kernel", b.corename}, {"cpu_best_kernel", b.cpu_best},
               {"threads", b.threads}, {"verdict", b.verdict},
               {"thread_timeout", b.thread_timeout.empty() ? "OpenBLAS default (2^28 cycles)" : "2^" + b.thread_timeout + " cycles"}};
  std::string root;
  try {
    root = project_root();
  } catch (const Error& e) {
    root = std::string("not found: ") + e.what();
  }
  j["data_dir"] = root;
  const std::string thp = cpu::kernel_thp_mode();
  const std::string thp_shown = thp.empty() ? "unavailable" : thp;
  j["huge_pages"] = {{"kernel_mode", thp_shown}, {"attnlab_asks", cpu::huge_pages_wanted()}};
  const backend::CudaReport cuda = backend::cuda_report();
  j["cuda"] = {{"compiled", cuda.compiled}, {"nvcc", cuda.compiler}, {"device", cuda.device}, {"emulated", cuda.emulated},
               {"usable", cuda.usable}};
  if (cuda.usable) {
    j["cuda"]["compute_capability"] = fmt::format("{}.{}", cuda.cc_major, cuda.cc_minor);
    j["cuda"]["multiprocessors"] = cuda.multiprocessors;
    j["cuda"]["memory_gib"] = cuda.memory_gib;
    j["cuda"]["driver"] = cuda.driver;
    j["cuda"]["runtime"] = cuda.runtime;
  }
  if (cuda.emulated) j["cuda"]["note"] = "CUDA: emulated on the CPU, for testing only";
  const exercises::Sandbox& box = exercises::sandbox();
  j["check_sandbox"] = {{"available", box.available}, {"program", box.program}};
  if (!box.available) j["check_sandbox"]["why_not"] = box.why_not;
  if (o.format == "json") {
    std::cout << j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
    return;
  }
  std::cout << fmt::format("attnlab {}\n", ATTNLAB_VERSION);
  std::cout << fmt::format("  compiler      {} (C++ {})\n", j["compiler"].get<std::string>(), static_cast<long>(__cplusplus));
  std::cout << fmt::format("  xtensor       {}\n", j["xtensor"].get<std::string>());
  std::cout << fmt::format("  BLAS          {}\n", b.config);
  std::cout << fmt::format("  BLAS kernel   {} ({} thread{})\n", b.corename, b.threads, b.threads == 1 ? "" : "s");
  std::cout << fmt::format("                {}\n", b.verdict);
  std::cout << fmt::format("  BLAS spin     {}\n", b.thread_timeout.empty() ? "OpenBLAS default (2^28 cycles)"
                                                    : "2^" + b.thread_timeout + " cycles before idle threads sleep (OPENBLAS_THREAD_TIMEOUT)");
  std::cout << fmt::format("  data folder   {}\n", root);
  std::cout << fmt::format("  huge pages    kernel mode {}; {}\n", thp_shown,
                           !cpu::huge_pages_wanted() ? "attnlab does not ask for them (ATTNLAB_HUGE_PAGES=0)"
                           : thp == "never" || thp.empty() ? "attnlab asks for them for large buffers, but the kernel gives none"
                                                            : "attnlab asks for them for buffers of 4 MiB and more");
  if (j["cuda"].value("emulated", false)) {
    std::cout << fmt::format("  CUDA          emulated on the CPU, for testing only (an -DATTNLAB_CUDA=EMULATE build: no GPU is used, "
                             "and no speed it shows is a GPU's); device: {}\n", j["cuda"]["device"].get<std::string>());
  } else {
    std::cout << fmt::format("  CUDA          compiled: {}; nvcc: {}; device: {}\n", cuda.compiled ? "yes" : "no", cuda.compiler,
                             cuda.device);
    if (cuda.usable)
      std::cout << fmt::format("                compute capability {}.{}, {} SMs, {:.1f} GiB; driver CUDA {}, runtime CUDA {}\n",
                               cuda.cc_major, cuda.cc_minor, cuda.multiprocessors, cuda.memory_gib, cuda.driver, cuda.runtime);
  }
  std::cout << fmt::format("  check sandbox {}\n", box.available ? "bubblewrap (" + box.program +
                                                                       "): learner code is compiled and graded inside it"
                                                                 : "none: " + box.why_not);
}

}  // namespace

void setup_doctor(CLI::App& app) {
  auto opts = std::make_shared<DoctorOptions>();
  CLI::App* sub = app.add_subcommand("doctor", "Report the compiler, BLAS library and kernel, threads, huge pages, CUDA compiler and device, the check sandbox");
  add_format_option(*sub, opts->format);
  sub->callback([opts] { run_doctor(*opts); });
}

}  // namespace attnlab::cli
