#include "util/memory.hpp"

#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>

namespace attnlab {

std::string human_size(double b) {
  char buf[64];
  const double kib = 1024.0, mib = kib * 1024, gib = mib * 1024;
  if (b >= gib) std::snprintf(buf, sizeof buf, "%.1f GiB", b / gib);
  else if (b >= mib) std::snprintf(buf, sizeof buf, "%.0f MiB", b / mib);
  else if (b >= kib) std::snprintf(buf, sizeof buf, "%.0f KiB", b / kib);
  else std::snprintf(buf, sizeof buf, "%.0f bytes", b);
  return buf;
}

MemoryBudget memory_budget() {
  MemoryBudget m;
  const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGE_SIZE);
  if (pages > 0 && page > 0) {
    const double have = static_cast<double>(pages) * static_cast<double>(page);
    m.bytes = 0.8 * have;
    m.what = "80 % of this machine's " + human_size(have) + " of memory";
  }
  rlimit as{};
  if (::getrlimit(RLIMIT_AS, &as) == 0 && as.rlim_cur != RLIM_INFINITY) {
    // The address space already taken (the program, its libraries, OpenBLAS's buffers) counts too.
    double used = 0;
    std::ifstream statm("/proc/self/statm");
    long vm_pages = 0;
    if (statm >> vm_pages && page > 0) used = static_cast<double>(vm_pages) * static_cast<double>(page);
    const double left = static_cast<double>(as.rlim_cur) - used;
    if (m.bytes == 0 || left < m.bytes) {
      m.bytes = left > 0 ? left : 1;
      m.what = "the " + human_size(m.bytes) + " left under the address-space limit (ulimit -v) of " +
               human_size(static_cast<double>(as.rlim_cur));
    }
  }
  return m;
}

}  // namespace attnlab
