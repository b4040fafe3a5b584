#include "backend/cuda/kernel_choice.hpp"

#include <cstdlib>
#include <cstring>
#include <mutex>

namespace attnlab::cuda {

namespace {

bool env_is(const char* name, const char* value) {
  const char* e = std::getenv(name);
  return e && std::strcmp(e, value) == 0;
}

KernelChoice from_environment() {
  KernelChoice c;
  if (env_is("ATTNLAB_BF16_ATTENTION", "wmma")) c.attention = AttentionVariant::Wmma;
  if (env_is("ATTNLAB_BF16_ATTENTION", "rf1")) c.attention = AttentionVariant::OneTile;
  if (env_is("ATTNLAB_CUBLASLT", "0")) c.cublaslt_epilogue = false;
  if (env_is("ATTNLAB_EMBEDDING_GROUPS", "host")) c.embedding_groups_on_device = false;
  return c;
}

std::mutex g_mutex;
bool g_read = false;
KernelChoice g_choice;

}  // namespace

KernelChoice kernel_choice() {
  std::lock_guard<std::mutex> lock(g_mutex);
  if (!g_read) {
    g_choice = from_environment();
    g_read = true;
  }
  return g_choice;
}

void set_kernel_choice(const KernelChoice& c) {
  std::lock_guard<std::mutex> lock(g_mutex);
  g_choice = c;
  g_read = true;
}

}  // namespace attnlab::cuda
