#pragma once
// Making sure OpenBLAS runs the right kernel for this CPU.
//
// Debian's OpenBLAS 0.3.21 (a DYNAMIC_ARCH build) picks its kernel when the library loads. On some
// AVX-512 Xeons it mis-detects the CPU as "Prescott" (a 2004 Pentium 4) and then runs sgemm 4–5×
// slower than the machine allows. The choice can only be overridden by OPENBLAS_CORETYPE, which is
// read at load time, i.e. before main() runs. So at start-up attnlab compares the kernel OpenBLAS
// chose with what the CPU supports and, when the kernel is a known-generic one and a better one
// fits, re-executes itself once with OPENBLAS_CORETYPE set. A user's own OPENBLAS_CORETYPE is
// always respected. The same restart sets OPENBLAS_THREAD_TIMEOUT (unless the user did), so that
// OpenBLAS's idle threads stop spinning soon after a product and leave the cores to attnlab's own
// parallel loops (backend/cpu/parallel.hpp).
#include <string>

namespace attnlab::cpu {

struct BlasInfo {
  std::string corename;     // the kernel OpenBLAS runs, e.g. "SkylakeX"
  std::string config;       // openblas_get_config()
  int threads = 0;
  std::string thread_timeout;  // OPENBLAS_THREAD_TIMEOUT in effect ("" = OpenBLAS's default, 2^28 cycles)
  std::string cpu_best;     // the kernel this CPU's features call for ("SkylakeX", "Haswell", or "")
  std::string detected;     // what OpenBLAS picked by itself before attnlab's re-exec (if one happened)
  bool user_override = false;  // OPENBLAS_CORETYPE was set by the user
  std::string verdict;      // one line for people: what was chosen and why
};

// Call first thing in main(). May not return (it re-executes the program) when the kernel is wrong.
void ensure_blas_kernel(char** argv);

BlasInfo blas_info();

}  // namespace attnlab::cpu
