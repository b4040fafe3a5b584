#include "backend/cpu/blas_setup.hpp"

#include <cblas.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>

namespace attnlab::cpu {

namespace {

constexpr const char* kReexecVar = "ATTNLAB_BLAS_DETECTED";    // the kernel OpenBLAS picked before a fix
constexpr const char* kRestartedVar = "ATTNLAB_BLAS_RESTARTED";  // set on the one restart: never loop
// OpenBLAS's idle threads keep spinning (sched_yield) for 2^28 TSC cycles, about 0.1 s, after every
// product before they sleep. attnlab's own loops between products (backend/cpu/parallel.hpp: the loss, softmaxes,
// layer norm) need those cores, and measured 2× slower against the spinning. 2^18 cycles (about 0.1 ms)
// still keeps the threads awake across back-to-back products. Only settable before OpenBLAS loads.
constexpr const char* kThreadTimeout = "18";

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

std::string best_kernel_for_cpu() {
#if defined(__x86_64__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl"))
    return "SkylakeX";
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return "Haswell";
#endif
  return "";
}

// Kernels that predate AVX2: running one of them on an AVX2/AVX-512 CPU means detection failed.
bool is_generic(const std::string& core) {
  static const char* old[] = {"prescott", "core2", "penryn", "dunnington", "nehalem", "atom", "katmai",
                              "coppermine", "northwood", "banias", "generic", "sandybridge", "barcelona"};
  const std::string c = lower(core);
  for (const char* o : old)
    if (c == o) return true;
  return false;
}

}  // namespace

void ensure_blas_kernel(char** argv) {
  if (std::getenv(kRestartedVar) || std::getenv(kReexecVar)) return;
  // Test hook: pretend OpenBLAS detected this kernel, to exercise the restart on any machine.
  const char* pretend = std::getenv("ATTNLAB_BLAS_PRETEND_DETECTED");
  const std::string core = pretend && *pretend ? pretend : openblas_get_corename();
  const std::string best = best_kernel_for_cpu();
  const bool fix_kernel = !std::getenv("OPENBLAS_CORETYPE") && !best.empty() && is_generic(core);
  // The spin timeout matters only with several BLAS threads; a user's own setting is kept.
  const bool fix_timeout = !std::getenv("OPENBLAS_THREAD_TIMEOUT") && openblas_get_num_threads() > 1;
  if (!fix_kernel && !fix_timeout) return;
  if (fix_kernel) {
    ::setenv("OPENBLAS_CORETYPE", best.c_str(), 1);
    ::setenv(kReexecVar, core.c_str(), 1);
  }
  if (fix_timeout) ::setenv("OPENBLAS_THREAD_TIMEOUT", kThreadTimeout, 1);
  ::setenv(kRestartedVar, "1", 1);
  ::execv("/proc/self/exe", argv);
  // exec failed: carry on as we are (a slow kernel is said once; the timeout only costs some speed).
  if (fix_kernel) {
    std::fprintf(stderr, "attnlab: warning: OpenBLAS runs the slow \"%s\" kernel on a CPU that supports \"%s\", and "
                         "restarting with OPENBLAS_CORETYPE=%s failed; set it yourself for 4-5x faster matrix products\n",
                 core.c_str(), best.c_str(), best.c_str());
    ::unsetenv("OPENBLAS_CORETYPE");
    ::unsetenv(kReexecVar);
  }
  ::unsetenv("OPENBLAS_THREAD_TIMEOUT");
  ::unsetenv(kRestartedVar);
}

BlasInfo blas_info() {
  BlasInfo b;
  b.corename = openblas_get_corename();
  b.config = openblas_get_config();
  b.threads = openblas_get_num_threads();
  const char* timeout = std::getenv("OPENBLAS_THREAD_TIMEOUT");
  b.thread_timeout = timeout ? timeout : "";
  b.cpu_best = best_kernel_for_cpu();
  const char* detected = std::getenv(kReexecVar);
  const char* user = std::getenv("OPENBLAS_CORETYPE");
  if (detected) {
    b.detected = detected;
    b.verdict = "OpenBLAS detected \"" + b.detected + "\" (a generic kernel); attnlab restarted itself with OPENBLAS_CORETYPE=" +
                b.corename + " to match this CPU";
  } else if (user) {
    b.user_override = true;
    b.verdict = std::string("OPENBLAS_CORETYPE=") + user + " set by the user; OpenBLAS runs \"" + b.corename + "\"";
  } else if (!b.cpu_best.empty() && is_generic(b.corename)) {
    b.verdict = "OpenBLAS runs the generic \"" + b.corename + "\" kernel although this CPU supports \"" + b.cpu_best + "\"";
  } else {
    b.verdict = "OpenBLAS detected \"" + b.corename + "\" by itself" +
                (b.cpu_best.empty() ? std::string() : " (the CPU's best match is \"" + b.cpu_best + "\")");
  }
  return b;
}

}  // namespace attnlab::cpu
