#pragma once
// The transformer of "Attention Is All You Need" (encoder–decoder) and its decoder-only variant,
// forward and backward, composed from the ops of one backend (backend/backend.hpp).
//
// Shape legend: B batch, S source tokens (padded), T target tokens (padded), C d_model, H heads,
// F d_ff, V vocabulary. Activations are (B·S) × C or (B·T) × C, one token per row.
//
// Layout of one encoder layer (post-norm, the paper's):   x = LN1(x + Drop(SelfAttn(x)))
//                                                        x = LN2(x + Drop(FFN(x)))
// pre-norm (option):                                     x = x + Drop(SelfAttn(LN1(x)))  …
// A decoder layer adds masked (causal) self-attention and cross-attention (queries from the decoder,
// keys and values from the encoder output). As in torch.nn.Transformer, each stack ends in a final
// LayerNorm; embeddings are multiplied by √C and added to sinusoidal positions, then dropped out.
#include <cmath>
#include <cstdint>
#include <vector>

#include "util/token_ids.hpp"
#include "backend/backend.hpp"
#include "model/config.hpp"

namespace attnlab::model {

using tokens::kBos;  // the reserved ids (util/token_ids.hpp)
using tokens::kEos;
using tokens::kPad;
using tokens::kUnk;

// The sinusoidal positional encoding the model adds to its embeddings, n × C row-major (the paper's,
// interleaved: PE(pos, 2i) = sin(pos / 10000^(2i/C)), PE(pos, 2i+1) = cos(pos / 10000^(2i/C)), computed
// in double and rounded once). Every backend uploads this one table; the lessons show it too.
std::vector<float> positional_encoding(int n, int C);

// A padded batch. Encoder–decoder: src (B × S) with src_len, tgt_in = <bos> y₁ … yₙ and
// tgt_out = y₁ … yₙ <eos>, both B × T and padded with kPad (padding positions carry no loss).
// Decoder-only: src is empty; tgt_in / tgt_out are the input and the next-token targets.
struct Batch {
  int B = 0, S = 0, T = 0;
  std::vector<int> src, src_len, tgt_in, tgt_out;
};

template <typename T>
class Transformer {
 public:
  // The model lives on `backend` (backend/backend.hpp): parameters, gradients and every activation are
  // its buffers, and every op runs there. The caller chooses it (backend::cpu_backend<T>() for the
  // CPU, backend/registry.hpp for --backend): the model knows only the interface.
  Transformer(const ModelConfig& config, backend::Ops<T>& backend);

  const ModelConfig& config() const { return cfg_; }
  const ParamLayout& layout() const { return layout_; }
  backend::Ops<T>& backend() const { return be_; }

  backend::Buffer<T> params;  // every tensor of layout(), flat (upload()/download() for host copies)
  backend::Buffer<T> grads;   // same layout; filled by backward()

  // Xavier-uniform matrices, N(0, 1/√C) embeddings, zero biases, unit LayerNorm gains; deterministic.
  void init_params(std::uint64_t seed);

  // Runs the model on a batch and returns the mean cross-entropy (label smoothing `smoothing`) over
  // non-padding targets. With train = true dropout is applied: *rng is advanced once per call and
  // seeds every dropout site of this forward (backend/dropout_hash.hpp), so the masks are the same on
  // every backend. forward_queued() then loss().
  T forward(const Batch& batch, T smoothing, bool train, std::uint64_t* rng);
  // The same forward without reading its loss back: on a device it returns once the work is queued,
  // so that the backward and the optimizer's step can be queued behind it before the host waits
  // (model::train_step). The rows counted, targets_counted(), are known at once (from the batch).
  void forward_queued(const Batch& batch, T smoothing, bool train, std::uint64_t* rng);
  // The last forward's loss: each row's loss downloaded (on a device, a wait for everything queued
  // before) and averaged in row order (backend::row_loss_mean), the same sum on every backend.
  T loss() const;
  // Gradient clipping after backward(), on the backend (backend::Ops::clip_factor): the gradients'
  // norm and the factor that clips it to max_norm (0 = off), NaN when the norm or the last forward's
  // loss is not finite. Nothing is read back; the factor's address is for AdamStep::grad_scale_at.
  const double* clip_gradients(double max_norm);
  // After clip_gradients: the loss, the norm and the factor, read back in one download.
  struct StepReadback {
    T loss = 0;
    double grad_norm = 0.0, grad_scale = 1.0;
    // Whether an adamw_step given this factor updated anything: a NaN factor skips the update.
    bool updated() const { return !std::isnan(grad_scale); }
  };
  StepReadback read_step() const;
  // Gradients of the last forward's loss with respect to every parameter (grads is overwritten).
  void backward();
  // One AdamW step on params from grads (backend adamw_step; m, v and decay_mask as there). When the
  // backend's products are bf16 it is adamw_step_bf16, which also writes a bf16 copy of every updated
  // parameter in the same pass: the next forward's bf16 products read that copy instead of rounding
  // their weights again (a read of V × C and more, and a launch per matrix, saved each step). The copy
  // is exactly those parameters rounded, so the results are bit for bit the same; it serves that one
  // forward (and its backward) only, so a write to params in between must not happen: none does in
  // this code (Trainer steps, evaluates, checkpoints, steps).
  void adamw_step(T* m, T* v, const std::uint8_t* decay_mask, const backend::AdamStep& h);

  // (B·T) × V of the last forward (stored in bf16 when bf16_storage(): widened here).
  std::vector<T> logits() const;
  // Whether the last forward stored activations in bf16, as it does on a backend whose matrix
  // products are bf16 (backend::MatmulPrecision): the loss head's (the final norm's output, the
  // logits and their gradient), the feed-forward blocks' (their input, hidden layer and output, and
  // the gradients of those) and the attention blocks' (their input, Q, K, V, the context and output,
  // and the gradients of those; the encoder's memory), each product reading a bf16 copy of its
  // weights. The residual stream and its gradient, layer norm's statistics, attention's lse, the
  // parameters and their gradients stay float32 (docs/cuda.md, "What remains").
  bool bf16_storage() const { return bf16_; }
  int targets_counted() const { return count_; }

  // Attention weights of the last forward (B × H × Tq × Tk), recomputed on request from the saved
  // queries, keys and log-sum-exps (training never stores them), for lessons and `attnlab attend`.
  std::vector<T> encoder_attention(int layer) const;
  std::vector<T> decoder_self_attention(int layer) const;
  std::vector<T> decoder_cross_attention(int layer) const;

  // Everything one attention block saw and produced in the last forward, so that lessons can replay
  // a trained model's attention through the attention core (core/attention.hpp) and check that the
  // numbers agree. Inputs are the sub-layer's input after the pre-norm LayerNorm when pre_norm.
  enum class Block { EncoderSelf, DecoderSelf, DecoderCross };
  struct AttentionView {
    std::vector<T> query_input;  // (B·Tq) × C
    std::vector<T> kv_input;     // (B·Tk) × C (the encoder output for cross-attention)
    int B = 0, Tq = 0, Tk = 0;
    std::vector<T> weights;  // B × H × Tq × Tk softmax weights
    std::vector<T> output;   // (B·Tq) × C: after W_O and b_O, before dropout/residual
    AttnLayout params;       // offsets of W_Q, b_Q, … in `params`
  };
  AttentionView attention_view(Block block, int layer) const;
  // The queries and keys of one attention block in the last forward: q is (B·Tq) × C, k is (B·Tk) × C,
  // head h's in columns [h·d_k, (h+1)·d_k), with b_Q and b_K added and before the 1/√d_k scaling:
  // the vectors whose scaled dot products, softmaxed over each row, are that block's weights (widened
  // from bf16 after a bf16 forward, the values its products read). For the neuron view (attend
  // --vectors).
  struct QueriesKeys {
    std::vector<T> q, k;
    int B = 0, Tq = 0, Tk = 0;
  };
  QueriesKeys attention_queries_keys(Block block, int layer) const;
  // The heads' outputs side by side before W_O in the last forward, (B·Tq) × C (head h owns columns
  // [h·d_v, (h+1)·d_v)): what mean-ablation (model/probes.hpp) averages.
  std::vector<T> attention_context(Block block, int layer) const;
  // The embedded input of the encoder (or of the decoder): tokens · √C + positions, (B·S) × C.
  std::vector<T> encoder_embedding() const { return enc_emb_.download(); }
  std::vector<T> decoder_embedding() const { return dec_emb_.download(); }
  // The encoder's output (the memory that cross-attention reads), (B·S) × C.
  std::vector<T> memory() const { return enc_final_.out.download(); }
  // Softmax probabilities of the last forward, (B·T) × V, computed on request from the logits and
  // each row's log-sum-exp (the forward itself writes no probability matrix).
  std::vector<T> probabilities() const;

  // ---- incremental decoding with a key/value cache ----
  // Encodes one source sentence for `beams` hypotheses that will be decoded side by side.
  void start_decoding(const std::vector<int>& src, int beams);
  // Feeds one token per hypothesis at the next position; returns logits (beams × V).
  const std::vector<T>& decode_step(const std::vector<int>& tokens);
  // Keeps hypothesis order[i] as the new hypothesis i (beam search reordering of the caches).
  void reorder_cache(const std::vector<int>& order);
  int decoded_length() const { return step_; }
  // Cross-attention weights of the last decode_step in layer `layer`: beams × H × S.
  std::vector<T> step_cross_attention(int layer) const;
  int source_length() const { return src_len_; }

 private:
  using Buf = backend::Buffer<T>;
  struct LNAct {
    Buf out, mean, rstd;
  };
  struct AttnAct {
    Buf q, k, v, lse, ctx, out;
    int Tq = 0, Tk = 0;
    bool causal = false, masked = false;  // masked: keys limited by the batch's source lengths
    // bf16_storage(): the sub-layer's input (LN(x) or x, rounded), q, k, v, ctx and out in bf16 instead
    // (lse stays float32), and the weights' bf16 copies (wq … wo: the optimizer's copy, or rounded
    // into wq_16 … wo_16 at the forward; kept for the backward). Cross-attention's keys and values
    // read the memory's bf16 copy (mem16_).
    backend::Buffer<backend::Bf16> in16, q16, k16, v16, ctx16, out16, wq_16, wk_16, wv_16, wo_16;
    const backend::Bf16* wq = nullptr;
    const backend::Bf16* wk = nullptr;
    const backend::Bf16* wv = nullptr;
    const backend::Bf16* wo = nullptr;
  };
  struct FfnAct {
    Buf a, out;  // a = ReLU(x·W1 + b1), one op (linear_forward with ReLU): its backward needs only a > 0
    // bf16_storage(): the block's input, a and out in bf16 instead, and the weights' bf16 copies
    // (w1, w2: the optimizer's copy, or rounded into w1_16, w2_16 at the forward; kept for the backward).
    backend::Buffer<backend::Bf16> in16, a16, out16, w1_16, w2_16;
    const backend::Bf16* w1 = nullptr;
    const backend::Bf16* w2 = nullptr;
  };
  // One residual sub-layer: attention or feed-forward, with its norm, dropout and residual sum.
  struct Sub {
    LNAct ln;
    AttnAct attn;
    FfnAct ffn;
    Buf sum;                    // x + dropout(sub-layer's output): one fused op (Ops::dropout_forward)
    float p = 0.0f;             // the forward's dropout rate (0: none, sum = x + output)
    std::uint64_t seed = 0;     // and its seed: the backward draws the same mask again
    const T* x = nullptr;       // the sub-layer's input (the residual stream)
    const T* sub_in = nullptr;  // what the attention/FFN saw (x for post-norm, LN(x) for pre-norm)
    const T* y = nullptr;       // output: LN(sum) for post-norm, sum for pre-norm
  };
  struct EncLayer {
    Sub attn, ffn;
  };
  struct DecLayer {
    Sub self, cross, ffn;
  };
  struct CacheLayer {
    Buf k, v;              // beams × max_len × C (self-attention keys/values so far)
    Buf cross_k, cross_v;  // S × C (shared by all beams: batch stride 0)
    Buf cross_q, cross_lse;  // the last step's cross-attention queries and lse, for step_cross_attention
  };

  T* P(std::size_t off) { return params.data() + off; }
  const T* P(std::size_t off) const { return params.data() + off; }
  T* G(std::size_t off) { return grads.data() + off; }
  // b bound to this model's backend and sized n (contents unspecified); returns its data.
  T* sized(Buf& b, std::size_t n) const;
  T* zeroed(Buf& b, std::size_t n) const;
  std::uint64_t next_dropout_seed();

  backend::AttentionShape attn_shape(const AttnAct& a) const;
  std::vector<T> weights_of(const AttnAct& a) const;

  void ln_fwd(const NormLayout& o, const T* x, int N, LNAct& a);
  // The backward helpers store the gradient of their input by `mode` (backend::GradMode): Write where
  // theirs is the first to reach the buffer, Add where another is already there.
  void ln_bwd(const NormLayout& o, const T* x, int N, const LNAct& a, const T* dy, T* dx, backend::GradMode mode);
  void attn_fwd(const AttnLayout& o, const T* xq, int Tq, const T* xkv, int Tk, bool masked, bool causal, AttnAct& a);
  // q_mode for dxq; dxkv always adds (the cross-attention's dmem collects every decoder layer's).
  void attn_bwd(const AttnLayout& o, const T* xq, const T* xkv, AttnAct& a, const T* dout, T* dxq, T* dxkv,
                backend::GradMode q_mode);
  void ffn_fwd(const FfnLayout& o, const T* x, int N, FfnAct& a);
  void ffn_bwd(const FfnLayout& o, const T* x, int N, const FfnAct& a, const T* dout, T* dx, backend::GradMode mode);

  enum class Kind { SelfAttn, CrossAttn, Ffn };
  void sub_fwd(Sub& s, Kind kind, const AttnLayout* attn, const FfnLayout* ffn, const NormLayout& norm, const T* x,
               int Tq, const T* mem, int Tk, bool masked, bool causal, float p);
  void sub_output(Sub& s, const NormLayout& norm, int N);  // s.y from s.sum (post-norm: through the norm)
  // From the gradient dy of the sub-layer's output: dx, and for cross-attention dmem (added to).
  // Pre-norm: dx must be dy, updated in place (dx = dy + the sub-layer's share). Post-norm: dx must not
  // be dy; it is written, its prior contents ignored, and dy is left as it was.
  void sub_bwd(Sub& s, Kind kind, const AttnLayout* attn, const FfnLayout* ffn, const NormLayout& norm, int Tq,
               const T* mem, const T* dy, T* dx, T* dmem);

  void step_attention(const AttnLayout& o, const T* x, CacheLayer& c, bool cross, T* out);

  backend::Ops<T>& be_;
  ModelConfig cfg_;
  ParamLayout layout_;
  Buf pe_;

  // Activations of the last forward.
  Batch batch_;
  // Its ids in one upload (on a device each upload waits for the stream): [tgt_in | tgt_out | src |
  // src_len], and where each part starts.
  backend::Buffer<int> ids_dev_;
  std::vector<int> ids_host_;
  const int *tgt_in_dev_ = nullptr, *tgt_out_dev_ = nullptr, *src_dev_ = nullptr, *src_len_dev_ = nullptr;
  T smoothing_ = 0;
  int count_ = 0;
  std::uint64_t dropout_base_ = 0;  // drawn once per training forward
  int dropout_site_ = 0;            // dropout sites used so far in this forward
  Buf enc_emb_, enc_x0_;
  std::uint64_t enc_emb_seed_ = 0, dec_emb_seed_ = 0;  // the embeddings' dropout seeds
  std::vector<EncLayer> enc_;
  LNAct enc_final_;
  Buf dec_emb_, dec_x0_;
  // The last forward's dropout rate for the embeddings (0: none). With dropout the first layer's input
  // is the dropped-out embedding (enc_x0_, dec_x0_), else the embedding itself (enc_emb_, dec_emb_):
  // first_input().
  float emb_p_ = 0.0f;
  bool emb_dropout() const { return emb_p_ > 0.0f; }
  const T* first_input(const Buf& emb, const Buf& dropped) const { return emb_dropout() ? dropped.data() : emb.data(); }
  std::vector<DecLayer> dec_;
  LNAct dec_final_;
  Buf logits_, lse_;  // lse_: log Σ exp of each logits row (N), what the loss's backward needs
  // What the host reads after a step, in one download: [each row's loss (N) | the gradients' norm |
  // clipping's factor] (the last two written by clip_gradients).
  backend::Buffer<double> readback_;
  double* rows_of_loss(int N);  // readback_ bound and sized for a forward of N rows
  std::size_t queued_rows(const char* who) const;  // N, once a forward has queued its rows
  T loss_of(const std::vector<double>& rows) const;  // the mean of the first N rows (row_loss_mean)
  bool clipped_ = false;        // clip_gradients has run since the last forward
  // bf16_storage(): the loss head's final norm output, output projection weights (rounded from the
  // float32 parameters at each forward), logits and their gradient, in bf16 (logits_ and
  // dec_final_.out are then not written); and the feed-forward blocks' gradient scratch.
  bool bf16_ = false;
  backend::Buffer<backend::Bf16> h16_, w16_, logits16_, dlogits16_, ws_dout16_, ws_da16_, ws_dh16_, ws_din16_;
  // bf16_storage() with an encoder: its output (the memory) in bf16 too, what every cross-attention's
  // keys and values read; and the attention blocks' gradient scratch.
  backend::Buffer<backend::Bf16> mem16_, ws_dctx16_, ws_dq16_, ws_dk16_, ws_dv16_;
  const backend::Bf16* head_w16_ = nullptr;  // the output projection's bf16 weights (w16_ or params16_)
  // adamw_step's bf16 copy of params (same layout), and whether the next forward may read it.
  backend::Buffer<backend::Bf16> params16_;
  bool params16_fresh_ = false;
  const backend::Bf16* params16_now_ = nullptr;  // params16_ during the forward that reads it, else null
  backend::Bf16* sized16(backend::Buffer<backend::Bf16>& b, std::size_t n) const;
  // A bf16 copy of n parameters at offset off: in the optimizer's copy when this forward reads it,
  // else rounded into b.
  const backend::Bf16* weights16(backend::Buffer<backend::Bf16>& b, std::size_t off, std::size_t n);
  // The feed-forward sub-layer of sub_fwd / sub_bwd when bf16_: its input (LN(x) or x) in bf16, both
  // products and ReLU's backward on bf16, dropout with the residual from and to bf16.
  void ffn_sub_fwd16(Sub& s, const FfnLayout& o, const NormLayout& norm, const T* x, int N, float p);
  // Their shared ends: the input in bf16 (into dst; sets s.x), and the residual sum from the output.
  const backend::Bf16* sub_input16(Sub& s, const NormLayout& norm, const T* x, int N,
                                   backend::Buffer<backend::Bf16>& dst);
  void sub_residual16(Sub& s, const NormLayout& norm, const backend::Bf16* out, int N, float p);
  // Post-norm at bf16, the next sub-layer's input is this one's norm output, rounded: the norm writes
  // it in bf16 too, in the same pass (layernorm_forward_bf16 with its float32 output), into the next
  // sub-layer's input buffer, which the forward's loop names here before each sub-layer (null for a
  // stack's last, whose output goes to the final norm). in16_ready_ records the float32 output and
  // the buffer written, so that the next sub_input16 finds its input there and does not round it.
  backend::Buffer<backend::Bf16>* next_in16_ = nullptr;
  struct In16Ready {
    const T* x = nullptr;
    const backend::Buffer<backend::Bf16>* dst = nullptr;
  } in16_ready_;
  void ffn_sub_bwd16(Sub& s, const FfnLayout& o, const NormLayout& norm, int N, const T* dsum, T* dx);
  // The attention sub-layers likewise: the four products, attention's forward and backward on bf16;
  // the gradients of the sub-layer's input (and of the memory) float32, as the three products that
  // reach each of them add up there.
  void attn_sub_fwd16(Sub& s, Kind kind, const AttnLayout& o, const NormLayout& norm, const T* x, int Tq, int Tk,
                      bool masked, bool causal, float p);
  void attn_sub_bwd16(Sub& s, Kind kind, const AttnLayout& o, const NormLayout& norm, int Tq, const T* dsum, T* dx,
                      T* dmem);
  // A bf16 buffer widened to T, downloaded (what the lessons' accessors read after a bf16 forward).
  std::vector<T> widened(const backend::Buffer<backend::Bf16>& b) const;
  // The activations of one attention block (`what` names the caller in the ShapeError for a block this
  // model lacks).
  const AttnAct& attn_act(Block block, int layer, const char* what) const;
  // Backward-pass scratch, kept between steps so a training step does not allocate (and page-fault)
  // hundreds of megabytes every time: dlogits alone is (B·T) × V.
  Buf dlogits_, ws_dctx_, ws_dq_, ws_dk_, ws_dv_, ws_da_, ws_dh_, ws_dsub_, ws_din_, ws_dh_out_, ws_dy_,
      ws_dprev_, ws_dmem_, ws_demb_;

  // Decoding state.
  int beams_ = 0, step_ = 0, src_len_ = 0;
  std::vector<CacheLayer> dec_cache_;
  Buf reorder_scratch_;  // reorder_cache's, kept between steps
  Buf step_x_, step_in_, step_sub_, step_mean_, step_rstd_, step_q_, step_kt_, step_vt_, step_ctx_, step_lse_, step_h_,
      step_logits_dev_;
  backend::Buffer<int> step_tokens_;
  std::vector<T> step_logits_;
};

extern template class Transformer<float>;
extern template class Transformer<double>;

}  // namespace attnlab::model
