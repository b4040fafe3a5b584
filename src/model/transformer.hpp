#pragma once
// The transformer of "Attention Is All You Need" (encoder–decoder) and its decoder-only variant,
// forward and backward, on the ops of backend/cpu/ops.hpp.
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
#include <cstdint>
#include <vector>

#include "model/config.hpp"

namespace attnlab::model {

inline constexpr int kPad = 0, kUnk = 1, kBos = 2, kEos = 3;

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
  explicit Transformer(const ModelConfig& config);

  const ModelConfig& config() const { return cfg_; }
  const ParamLayout& layout() const { return layout_; }

  std::vector<T> params;  // every tensor of layout(), flat
  std::vector<T> grads;   // same layout; filled by backward()

  // Xavier-uniform matrices, N(0, 1/√C) embeddings, zero biases, unit LayerNorm gains; deterministic.
  void init_params(std::uint64_t seed);

  // Runs the model on a batch and returns the mean cross-entropy (label smoothing `smoothing`) over
  // non-padding targets. With train = true dropout is applied using *rng (advanced in place).
  T forward(const Batch& batch, T smoothing, bool train, std::uint64_t* rng);
  // Gradients of the last forward's loss with respect to every parameter (grads is overwritten).
  void backward();

  const std::vector<T>& logits() const { return logits_; }  // (B·T) × V of the last forward
  int targets_counted() const { return count_; }

  // Attention weights of the last forward (B × H × Tq × Tk), for lessons and `attnlab attend`.
  const std::vector<T>& encoder_attention(int layer) const;
  const std::vector<T>& decoder_self_attention(int layer) const;
  const std::vector<T>& decoder_cross_attention(int layer) const;

  // Everything one attention block saw and produced in the last forward, so that lessons can replay
  // a trained model's attention through the attention core (core/attention.hpp) and check that the
  // numbers agree. Inputs are the sub-layer's input after the pre-norm LayerNorm when pre_norm.
  enum class Block { EncoderSelf, DecoderSelf, DecoderCross };
  struct AttentionView {
    const T* query_input = nullptr;  // (B·Tq) × C
    const T* kv_input = nullptr;     // (B·Tk) × C (the encoder output for cross-attention)
    int B = 0, Tq = 0, Tk = 0;
    const std::vector<T>* weights = nullptr;  // B × H × Tq × Tk softmax weights
    const std::vector<T>* output = nullptr;   // (B·Tq) × C: after W_O and b_O, before dropout/residual
    AttnLayout params;                        // offsets of W_Q, b_Q, … in `params`
  };
  AttentionView attention_view(Block block, int layer) const;
  // The embedded input of the encoder (or of the decoder): tokens · √C + positions, (B·S) × C.
  const std::vector<T>& encoder_embedding() const { return enc_emb_; }
  const std::vector<T>& decoder_embedding() const { return dec_emb_; }
  // The encoder's output (the memory that cross-attention reads), (B·S) × C.
  const std::vector<T>& memory() const { return enc_final_.out; }
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
  // Cross-attention weights of the last decode_step, per layer: beams × H × S.
  const std::vector<T>& step_cross_attention(int layer) const { return dec_cache_[layer].cross_att; }
  int source_length() const { return src_len_; }

 private:
  struct LNAct {
    std::vector<T> out, mean, rstd;
  };
  struct AttnAct {
    std::vector<T> q, k, v, att, ctx, out;
  };
  struct FfnAct {
    std::vector<T> a, out;  // a = ReLU(x·W1 + b1), computed in place: ReLU's backward needs only a > 0
  };
  // One residual sub-layer: attention or feed-forward, with its norm, dropout and residual sum.
  struct Sub {
    LNAct ln;
    AttnAct attn;
    FfnAct ffn;
    std::vector<T> mask, dropped, sum;
    bool dropout = false;       // whether the forward applied dropout (mask and dropped are valid)
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
    std::vector<T> k, v;             // beams × max_len × C (self-attention keys/values so far)
    std::vector<T> cross_k, cross_v;  // S × C (shared by all beams)
    std::vector<T> cross_att;         // beams × H × S
  };

  T* P(std::size_t off) { return params.data() + off; }
  const T* P(std::size_t off) const { return params.data() + off; }
  T* G(std::size_t off) { return grads.data() + off; }

  void ln_fwd(const NormLayout& o, const T* x, int N, LNAct& a);
  void ln_bwd(const NormLayout& o, const T* x, int N, const LNAct& a, const T* dy, T* dx);
  void attn_fwd(const AttnLayout& o, const T* xq, int Tq, const T* xkv, int Tk, const int* key_len, bool causal,
                AttnAct& a);
  void attn_bwd(const AttnLayout& o, const T* xq, int Tq, const T* xkv, int Tk, AttnAct& a, const T* dout, T* dxq,
                T* dxkv);
  void ffn_fwd(const FfnLayout& o, const T* x, int N, FfnAct& a);
  void ffn_bwd(const FfnLayout& o, const T* x, int N, const FfnAct& a, const T* dout, T* dx);

  enum class Kind { SelfAttn, CrossAttn, Ffn };
  void sub_fwd(Sub& s, Kind kind, const AttnLayout* attn, const FfnLayout* ffn, const NormLayout& norm, const T* x,
               int Tq, const T* mem, int Tk, const int* key_len, bool causal, bool train, std::uint64_t* rng);
  void sub_bwd(Sub& s, Kind kind, const AttnLayout* attn, const FfnLayout* ffn, const NormLayout& norm, int Tq,
               const T* mem, int Tk, const T* dy, T* dx, T* dmem);

  const T* out_weights_input() const;
  void step_attention(const AttnLayout& o, const T* x, CacheLayer& c, bool cross, std::vector<T>& out);

  ModelConfig cfg_;
  ParamLayout layout_;
  std::vector<T> pe_;

  // Activations of the last forward.
  Batch batch_;
  T smoothing_ = 0;
  int count_ = 0;
  std::vector<T> enc_emb_, enc_emb_mask_, enc_x0_;
  std::vector<EncLayer> enc_;
  LNAct enc_final_;
  std::vector<T> dec_emb_, dec_emb_mask_, dec_x0_;
  std::vector<DecLayer> dec_;
  LNAct dec_final_;
  std::vector<T> logits_, lse_;  // lse_: log Σ exp of each logits row (N), what the loss's backward needs
  // Backward-pass scratch, kept between steps so a training step does not allocate (and page-fault)
  // hundreds of megabytes every time: dlogits alone is (B·T) × V.
  std::vector<T> dlogits_, ws_dctx_, ws_dq_, ws_dk_, ws_dv_, ws_scores_, ws_da_, ws_dh_, ws_dsum_, ws_dsub_, ws_din_;

  // Decoding state.
  int beams_ = 0, step_ = 0, src_len_ = 0;
  std::vector<CacheLayer> dec_cache_;
  std::vector<T> step_logits_;
};

extern template class Transformer<float>;
extern template class Transformer<double>;

}  // namespace attnlab::model
