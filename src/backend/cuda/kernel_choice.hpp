#pragma once
// Which of the CUDA backend's kernel variants run: the one switch for timing variants against each
// other (bench/gpu.sh) and for tests, instead of environment lookups scattered through the kernels.
// The defaults are what the backend runs; each field's variant computes the same op (bit for bit for
// OneTile and the embedding grouping; within the op's tolerance for the others).
//
// A process starts from the environment, read once, at the first kernel_choice():
//   ATTNLAB_BF16_ATTENTION=wmma|rf1   attention: AttentionVariant::Wmma or OneTile (attention.hpp)
//   ATTNLAB_CUBLASLT=0                cublaslt_epilogue = false: the bias of a linear layer added in a
//                                     pass of its own instead of by cuBLASLt's epilogue (matmul.hpp)
//   ATTNLAB_EMBEDDING_GROUPS=host     embedding_groups_on_device = false: the embedding backward groups
//                                     its rows by token id on the host (cuda_backend.cu)
// set_kernel_choice() replaces it for the whole process (tests); a backend or cuBLAS handle reads the
// fields it needs when it is made, the attention entry points at every call.

namespace attnlab::cuda {

enum class AttentionVariant { Default = 0, Wmma = 1, OneTile = 2 };

struct KernelChoice {
  AttentionVariant attention = AttentionVariant::Default;
  bool cublaslt_epilogue = true;
  bool embedding_groups_on_device = true;
};

KernelChoice kernel_choice();
void set_kernel_choice(const KernelChoice& c);

}  // namespace attnlab::cuda
