// Fused attention (see attention.hpp): the entry points, and which kernel each runs. The kernels are
// in three files, one per generation (their shared parts in attention_common.cuh):
//   attention_simt.cu   float32, the SIMT kernels below (forward, dK/dV, dQ, weights)
//   attention_wmma.cu   bf16 products as wmma tiles, S and O in shared memory
//   attention_mma.cu    bf16 products through mma.sync, S, O and the gradients in registers
//
// The float32 kernels, each a block of 4 warps:
//
//   forward    one block per (batch, head, tile of 16 queries); each warp owns 4 query rows. Keys
//              come in tiles of 32 through shared memory, one key per lane for the scores (lane j
//              computes q_i · k_j over d), then the online softmax per row: with m the running max
//              and l the running normaliser,  m' = max(m, max_j s_j),  l ← l·e^(m−m') + Σ_j e^(s_j−m'),
//              o ← o·e^(m−m') + Σ_j e^(s_j−m')·v_j  (lane c owns the output columns c, c+32, c+64, c+96).
//              At the end o ← o / l and lse = m + log l.
//   dK, dV     one block per (batch, head, tile of 32 keys), looping over the queries in rounds of 4
//              (one per warp): each warp recomputes p_ij = exp(s_ij − lse_i) and
//              ds_ij = p_ij·(dout_i·v_j − D_i) for its query and the 32 keys; then all 128 threads add
//              Σ_i p_ij·dout_i to dV_j and Σ_i ds_ij·q_i to dK_j, each thread owning 32 fixed elements of
//              the 32 × d tile in registers, so no two threads (or blocks) write the same element.
//   dQ         one block per (batch, head, tile of 8 queries), like the forward: dq_i += Σ_j ds_ij·k_j.
//   weights    one warp per query row, lane j computing exp(s_ij − lse_i) for keys j, j + 32, …
//              straight from global memory (a lessons-only op: no tiles).
//   forward, bf16 tensor cores (attention_forward_bf16): FlashAttention-2's loop with Q·Kᵀ and P·V
//              on tensor cores, in two kernels: with S and O in registers through PTX mma.sync for
//              d = 32, 64, 128, and with wmma tiles (S and O in shared memory) for the other
//              multiples of 16; see their own comments below.
//   dK/dV and dQ, bf16 tensor cores (attention_backward_bf16): the same two kernels' work with the
//              five products on tensor cores, as wmma tiles or (d = 32, 64) mma.sync with S, dP and
//              the gradients in registers; see their comments below.
//
// Rows are found through a Layout (the resolved backend::AttentionShape): row r of batch b of q starts
// at q + b·qb + r·ldq, and so on for k, v and out; the gradients share the strides of their inputs.
//
// Shared-memory tiles that lanes read one row each (lane j reads row j) have a padded row stride of
#include "backend/cuda/attention.hpp"

#include <string>

#include "backend/cuda/attention_common.cuh"

namespace attnlab::cuda {

using attn::Layout;

// ---- which kernel runs ----------------------------------------------------------------------------------

namespace {

// The kernels of the bf16 entry points and when each runs, first match wins (docs/cuda.md, "Which
// attention kernel runs"). The float32 entry points always run the SIMT kernels (head widths up to 128).
enum class Kernel { Mma, Wmma, None };
enum class Pass { Forward, Backward };
struct Rule {
  Pass pass;
  Kernel kernel;
  bool bf16_storage;  // the kernel also reads and writes bf16 storage (the _storage entry points)
  int widths[4];      // the head widths it takes (0: none further), or
  int multiple_of, max_width;  // every multiple of this up to max_width (0: use widths)
};
constexpr Rule kRules[] = {
    {Pass::Forward, Kernel::Mma, true, {32, 64, 128, 0}, 0, 0},
    {Pass::Forward, Kernel::Wmma, false, {0}, 16, kAttentionMaxHead},
    {Pass::Backward, Kernel::Mma, true, {32, 64, 0}, 0, 0},
    {Pass::Backward, Kernel::Wmma, false, {0}, 16, 64},  // 64: the shared memory (108 KB a dK/dV block at d = 64)
};

bool takes(const Rule& r, int d) {
  if (r.multiple_of) return d % r.multiple_of == 0 && d <= r.max_width;
  for (int w : r.widths)
    if (w == d) return true;
  return false;
}

// The kernel for a bf16 pass at head width d (None: no kernel takes it). AttentionVariant::Wmma
// skips the mma rules, so the wmma kernels run at every width they take.
Kernel choose(Pass pass, int d, bool bf16_storage) {
  const bool wmma_only = kernel_choice().attention == AttentionVariant::Wmma;
  for (const Rule& r : kRules) {
    if (r.pass != pass || (bf16_storage && !r.bf16_storage) || (wmma_only && r.kernel == Kernel::Mma)) continue;
    if (takes(r, d)) return r.kernel;
  }
  return Kernel::None;
}

int head_width(const backend::AttentionShape& s) { return s.H > 0 && s.C % s.H == 0 ? s.C / s.H : 0; }

bool one_tile() { return kernel_choice().attention == AttentionVariant::OneTile; }

}  // namespace

// ---- the entry points -------------------------------------------------------------------------------------

void attention_forward(float* out, float* lse, const float* q, const float* k, const float* v,
                       const backend::AttentionShape& s, Stream stream) {
  const Layout L = attn::check_shape("cuda::attention_forward", s);
  if (s.B == 0 || s.Tq == 0) return;
  attn::simt_forward(out, lse, q, k, v, s, L, stream);
}

void attention_forward_bf16(float* out, float* lse, const float* q, const float* k, const float* v,
                            const backend::AttentionShape& s, Stream stream) {
  const Layout L = attn::check_shape("cuda::attention_forward_bf16", s);
  const int d = s.C / s.H;
  const Kernel kernel = choose(Pass::Forward, d, false);
  if (kernel == Kernel::None)
    throw ShapeError("cuda::attention_forward_bf16: head width d = " + std::to_string(d) +
                     " is not a multiple of 16 (the tensor cores' tile); use attention_forward (float32)");
  if (s.B == 0 || s.Tq == 0) return;
  if (kernel == Kernel::Mma) attn::mma_forward(out, lse, q, k, v, s, L, one_tile(), stream);
  else attn::wmma_forward(out, lse, q, k, v, s, L, stream);
}

bool attention_forward_bf16_storage_takes(const backend::AttentionShape& s) {
  const int d = head_width(s);
  return d > 0 && choose(Pass::Forward, d, true) != Kernel::None;
}

void attention_forward_bf16_storage(std::uint16_t* out, float* lse, const std::uint16_t* q, const std::uint16_t* k,
                                    const std::uint16_t* v, const backend::AttentionShape& s, Stream stream) {
  const Layout L = attn::check_shape("cuda::attention_forward_bf16 (bf16 storage)", s);
  if (s.B == 0 || s.Tq == 0) return;
  if (choose(Pass::Forward, s.C / s.H, true) == Kernel::None)
    throw ShapeError("cuda::attention_forward_bf16 (bf16 storage): head width d = " + std::to_string(s.C / s.H) +
                     " is not 32, 64 or 128, or the wmma kernels were asked for (check attention_forward_bf16_storage_takes first)");
  attn::mma_forward(out, lse, q, k, v, s, L, one_tile(), stream);
}

bool attention_backward_bf16_storage_takes(const backend::AttentionShape& s) {
  const int d = head_width(s);
  return d > 0 && choose(Pass::Backward, d, true) != Kernel::None;
}

void attention_backward_bf16_storage(std::uint16_t* dq, std::uint16_t* dk, std::uint16_t* dv,
                                     const std::uint16_t* dout, const std::uint16_t* out, const float* lse,
                                     const std::uint16_t* q, const std::uint16_t* k, const std::uint16_t* v,
                                     const backend::AttentionShape& s, backend::GradMode mode, Stream stream) {
  const char* what = "cuda::attention_backward_bf16 (bf16 storage)";
  const Layout L = attn::check_shape(what, s);
  attn::check_batch_strides(what, s, L);
  if (choose(Pass::Backward, s.C / s.H, true) == Kernel::None)
    throw ShapeError(std::string(what) + ": head width d = " + std::to_string(s.C / s.H) +
                     " is not 32 or 64, or the wmma kernels were asked for (check attention_backward_bf16_storage_takes first)");
  attn::mma_backward(dq, dk, dv, dout, out, lse, q, k, v, s, L, mode == backend::GradMode::Add, stream);
}

void attention_backward(float* dq, float* dk, float* dv, const float* dout, const float* out, const float* lse,
                        const float* q, const float* k, const float* v, const backend::AttentionShape& s,
                        backend::GradMode mode, Stream stream) {
  const Layout L = attn::check_shape("cuda::attention_backward", s);
  attn::check_batch_strides("cuda::attention_backward", s, L);
  // No query, or no key: every gradient is zero, so Add has nothing to do, and Write still runs the
  // kernels that own the other side's rows (their loops over the empty side store zeros).
  attn::simt_backward(dq, dk, dv, dout, out, lse, q, k, v, s, L, mode == backend::GradMode::Add, stream);
}

void attention_backward_bf16(float* dq, float* dk, float* dv, const float* dout, const float* out, const float* lse,
                             const float* q, const float* k, const float* v, const backend::AttentionShape& s,
                             backend::GradMode mode, Stream stream) {
  const Layout L = attn::check_shape("cuda::attention_backward_bf16", s);
  const int d = s.C / s.H;
  const Kernel kernel = choose(Pass::Backward, d, false);
  if (kernel == Kernel::None)
    throw ShapeError("cuda::attention_backward_bf16: head width d = " + std::to_string(d) +
                     " is not a multiple of 16 up to 64; use attention_backward (float32)");
  attn::check_batch_strides("cuda::attention_backward_bf16", s, L);
  const bool add = mode == backend::GradMode::Add;  // no query or no key: as attention_backward
  if (kernel == Kernel::Mma) attn::mma_backward(dq, dk, dv, dout, out, lse, q, k, v, s, L, add, stream);
  else attn::wmma_backward(dq, dk, dv, dout, out, lse, q, k, v, s, L, add, stream);
}

void attention_weights(float* att, const float* lse, const float* q, const float* k, const backend::AttentionShape& s,
                       Stream stream) {
  const Layout L = attn::check_shape("cuda::attention_weights", s);
  if (s.B == 0 || s.Tq == 0 || s.Tk == 0) return;
  attn::simt_weights(att, lse, q, k, s, L, stream);
}

}  // namespace attnlab::cuda
