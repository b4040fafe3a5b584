#pragma once
// The transformer's operations, each as a forward/backward pair of plain functions on flat row-major
// buffers (the llm.c style). They are templates instantiated for float (the model) and double (the
// finite-difference gradient checks, where float's 7 digits are too few to check anything tightly).
//
// Shape legend:
//   B  batch (sequences)          T  tokens per sequence (padded)   N = B·T rows of activations
//   C  channels (d_model)         H  heads, each of width C / H     F  feed-forward width (d_ff)
//   V  vocabulary size            Tq, Tk  query and key lengths in attention (cross-attention: Tk = S)
// Activations are N × C matrices, one token per row. Linear layers use the row-vector convention of
// the lessons: out = inp · W + b with W of shape IC × OC.
//
// Every backward function *accumulates* into its gradient outputs (+=), so a tensor used twice (a
// residual, tied embeddings) collects both contributions; callers zero gradients once per step.
// A null gradient pointer means "not needed".
#include <cstdint>
#include <vector>

#include "backend/backend.hpp"

namespace attnlab::cpu {

// C = alpha · op(A) · op(B) + beta · C on row-major buffers with explicit leading dimensions
// (so heads can be addressed as column blocks of an N × C activation without copying).
template <typename T>
void gemm(bool trans_a, bool trans_b, int m, int n, int k, T alpha, const T* a, int lda, const T* b,
          int ldb, T beta, T* c, int ldc);

// ---- embeddings and positions -------------------------------------------------------------------

// out[b,t,:] = wte[tokens[b,t], :] · scale + pe[t, :]      (scale = √C in the paper)
template <typename T>
void embedding_forward(T* out, const int* tokens, const T* wte, const T* pe, int B, int Tn, int C, T scale);
// dwte[tokens[b,t], :] += dout[b,t,:] · scale
template <typename T>
void embedding_backward(T* dwte, const T* dout, const int* tokens, int B, int Tn, int C, T scale);

// ---- linear ---------------------------------------------------------------------------------------

// out (N × OC) = inp (N × IC) · w (IC × OC) + bias (OC, may be null)
template <typename T>
void linear_forward(T* out, const T* inp, const T* w, const T* bias, int N, int IC, int OC);
// dinp += dout · wᵀ (= with dinp_mode Write);  dw += inpᵀ · dout;  dbias += column sums of dout (both =
// with param_mode Write)
template <typename T>
void linear_backward(T* dinp, T* dw, T* dbias, const T* dout, const T* inp, const T* w, int N, int IC, int OC,
                     backend::GradMode dinp_mode = backend::GradMode::Add,
                     backend::GradMode param_mode = backend::GradMode::Add);

// ---- layer norm -----------------------------------------------------------------------------------

// Normalises each row over its C channels: out = (x − mean) / √(var + eps) · gamma + beta.
// mean and rstd (N each) are saved for the backward pass. eps sits inside the square root.
template <typename T>
void layernorm_forward(T* out, T* mean, T* rstd, const T* inp, const T* gamma, const T* beta, int N, int C, T eps);
// dinp += (or =, mode) the input's gradient; dgamma, dbeta += (or =, param_mode) theirs.
template <typename T>
void layernorm_backward(T* dinp, T* dgamma, T* dbeta, const T* dout, const T* inp, const T* gamma,
                        const T* mean, const T* rstd, int N, int C, backend::GradMode mode = backend::GradMode::Add,
                        backend::GradMode param_mode = backend::GradMode::Add);

// ---- element-wise ---------------------------------------------------------------------------------

// out = max(inp, 0); out may be inp (in place).
template <typename T>
void relu_forward(T* out, const T* inp, std::size_t n);
// dinp += (or =, mode) dout where x > 0. x may be ReLU's input or its output: both are > 0 at the same
// places, so the forward can run in place and keep only its output.
template <typename T>
void relu_backward(T* dinp, const T* dout, const T* x, std::size_t n, backend::GradMode mode = backend::GradMode::Add);

// out = a + b
template <typename T>
void add_forward(T* out, const T* a, const T* b, std::size_t n);
// dst += src (the backward of a residual connection, for each of its two inputs)
template <typename T>
void accumulate(T* dst, const T* src, std::size_t n);

// ---- attention ------------------------------------------------------------------------------------

// Multi-head scaled dot-product attention on already-projected Q (B·Tq × C) and K, V (B·Tk × C):
// head h owns the contiguous column block [h·C/H, (h+1)·C/H). For each batch b and head h:
//   att = softmax(mask(Q_bh · K_bhᵀ / √(C/H))),  out_bh = att · V_bh.
// Masking: key j is visible to query i iff j < key_len[b] (key_len may be null: all visible) and,
// when causal, j ≤ i. A row with no visible key gets all-zero weights. att (B × H × Tq × Tk) is
// saved for the backward pass.
template <typename T>
void attention_forward(T* out, T* att, const T* q, const T* k, const T* v, const int* key_len, bool causal,
                       int B, int Tq, int Tk, int C, int H);
// Given dout (B·Tq × C): dq, dk, dv accumulate. scratch needs attention_backward_scratch(Tq, Tk)
// elements (Tq·Tk per thread of backend/cpu/parallel.hpp: heads run in parallel).
// Softmax backward: dscores = att ⊙ (datt − Σ_j att·datt), which is zero wherever att was zero
// (masked keys), so masks need no special treatment here.
template <typename T>
std::size_t attention_backward_scratch(int Tq, int Tk);
template <typename T>
void attention_backward(T* dq, T* dk, T* dv, T* scratch, const T* dout, const T* att, const T* q, const T* k,
                        const T* v, int B, int Tq, int Tk, int C, int H);

// ---- attention, the backend contract (backend/backend.hpp) ----------------------------------------
//
// The same computation as attention_forward, on rows addressed through s's strides (a fused Q/K/V
// buffer, the key/value cache), saving lse (B × H × Tq) instead of the weights. The backward and
// attention_weights_recompute recompute each head's weights exactly as the forward computed them
// (same products, same maximum, same sums), so they agree with the forward bit for bit and training
// gives the same numbers as when the weights were stored. scratch needs attention_lse_scratch(Tq, Tk).
template <typename T>
std::size_t attention_lse_scratch(int Tq, int Tk);
template <typename T>
void attention_forward_lse(T* out, T* lse, T* scratch, const T* q, const T* k, const T* v,
                           const backend::AttentionShape& s);
template <typename T>
void attention_backward_lse(T* dq, T* dk, T* dv, T* scratch, const T* dout, const T* q, const T* k, const T* v,
                            const backend::AttentionShape& s);
// att: B × H × Tq × Tk.
template <typename T>
void attention_weights_recompute(T* att, const T* q, const T* k, const backend::AttentionShape& s);

// ---- dropout with the counter-based generator (backend/dropout_hash.hpp) ---------------------------
// Inverted dropout: keep each element with probability 1 − p and scale it by 1 / (1 − p), so the
// expected activation is unchanged and inference needs no rescaling; fused with the residual add after
// it: out = residual + inp ⊙ mask (residual null: out = inp ⊙ mask). Element i's draw depends on
// (seed, i) alone, so every backend drops the same elements, and the backward recomputes the mask
// from (seed, p) instead of storing it. ShapeError unless 0 ≤ p < 1.
template <typename T>
void dropout_forward_hashed(T* out, const T* inp, const T* residual, std::size_t n, float p, std::uint64_t seed);
// dinp += (or =, mode) dout ⊙ mask, the mask of dropout_forward_hashed with the same p and seed.
template <typename T>
void dropout_backward_hashed(T* dinp, const T* dout, std::size_t n, float p, std::uint64_t seed,
                             backend::GradMode mode = backend::GradMode::Add);

// ---- optimizer ----------------------------------------------------------------------------------------
// One AdamW step (model/optim.hpp has the formula); decay_mask null: every parameter decays.
template <typename T>
void adamw_step(T* params, const T* grads, T* m, T* v, const std::uint8_t* decay_mask, std::size_t n,
                const backend::AdamStep& h);
template <typename T>
double sum_squares(const T* x, std::size_t n);

// ---- attention, tiled (the FlashAttention idea) -------------------------------------------------
//
// The same result as attention_forward without ever forming the Tq × Tk matrix. Queries are taken in
// blocks of block_q rows and keys in blocks of block_k; for each query row we keep a running maximum
// m and a running normaliser l of the exponentials seen so far. When a new key block raises the
// maximum from m to m', everything accumulated so far is rescaled by exp(m − m') ("online softmax"):
//   l ← l·exp(m − m') + Σ_j exp(s_j − m'),     O ← O·exp(m − m') + Σ_j exp(s_j − m')·V_j,
// and at the end O ← O / l. Extra memory: one block_q × block_k score tile and 2·block_q running
// values per thread (attention_tiled_workspace), independent of Tk; the output itself is Tq × C as
// always. Work items are (batch, head, query block), shared among the threads of backend/cpu/parallel.hpp,
// each running single-threaded sgemm on its tiles.
// Masking is that of attention_forward (key_len, causal); a row with no visible key gives zeros.
// lse (B × H × Tq) receives log Σ_j exp(s_j) per row (−inf for a fully masked row), all that the
// backward pass needs to recompute the weights.
template <typename T>
std::size_t attention_tiled_workspace(int block_q, int block_k);
template <typename T>
void attention_forward_tiled(T* out, T* lse, T* work, const T* q, const T* k, const T* v, const int* key_len,
                             bool causal, int B, int Tq, int Tk, int C, int H, int block_q, int block_k);
// Backward of the tiled path (FlashAttention-2 style): recomputes each weight tile from lse instead of
// reading a stored Tq × Tk matrix. With D_i = Σ_c dout_ic·out_ic, dscores = P ⊙ (dout·Vᵀ − D).
// dq, dk, dv accumulate. Work items are key blocks (each owns its rows of dK and dV), dealt into at
// most 8 fixed groups; each group gathers its dQ contributions in its own Tq × d_k buffer, added to
// dq in group order, so the result is the same on any number of threads. work needs
// attention_tiled_backward_workspace(block_q, block_k, Tq, C / H) elements: 8 such buffers, and per
// thread two tiles and block_q values, so O(Tq) and never Tq × Tk.
template <typename T>
std::size_t attention_tiled_backward_workspace(int block_q, int block_k, int Tq, int hs);
template <typename T>
void attention_backward_tiled(T* dq, T* dk, T* dv, T* work, const T* dout, const T* out, const T* lse, const T* q,
                              const T* k, const T* v, const int* key_len, bool causal, int B, int Tq, int Tk, int C,
                              int H, int block_q, int block_k);

// ---- loss -----------------------------------------------------------------------------------------

// Cross-entropy with label smoothing ε over N rows of logits (N × V), as torch.nn.CrossEntropyLoss
// defines it: the target distribution is (1 − ε)·onehot(target) + ε/V on every class, and the loss is
// averaged over rows whose target is not `ignore_index` (padding). Returns the mean loss; *count
// receives the number of non-ignored rows. lse (N) receives each row's log Σ_c exp(z_c), all the
// backward pass needs: p_c = exp(z_c − lse). Saving that instead of an N × V probability matrix spares
// a write of the whole matrix (303 MB for Transformer-base) and the memory to hold it.
template <typename T>
T cross_entropy_forward(T* lse, const T* logits, const int* targets, int N, int V, T smoothing,
                        int ignore_index, int* count);
// Its rows, as the backend op (backend::Ops::cross_entropy_forward): lse and each row's loss in double
// (row_loss, 0 where the target is ignore_index) written; cross_entropy_forward is this followed by
// backend::row_loss_mean.
template <typename T>
void cross_entropy_rows(T* lse, double* row_loss, const T* logits, const int* targets, int N, int V, T smoothing,
                        int ignore_index);
// dlogits = (softmax(logits) − target distribution) · dloss / count   (0 for ignored rows).
// Unlike every other backward here it *writes* rather than accumulates: the loss is always the
// graph's last op, and writing saves zero-filling N × V values first. dlogits may alias logits.
template <typename T>
void cross_entropy_backward(T* dlogits, const T* logits, const T* lse, const int* targets, int N, int V,
                            T smoothing, int ignore_index, int count, T dloss);
// Softmax rows from the logits and the lse of cross_entropy_forward: probs = exp(logits − lse).
template <typename T>
void softmax_from_lse(T* probs, const T* logits, const T* lse, int N, int V);

}  // namespace attnlab::cpu
