#pragma once
// The pieces of a transformer layer around attention, for lesson 9: residual connections, layer
// normalisation, the position-wise feed-forward net, and one encoder and one decoder layer in the
// paper's post-norm arrangement, LayerNorm(x + Sublayer(x)). Attention itself is the core's
// multi_head_attention; the residual, layer norm and feed-forward net are the model's own CPU ops
// (backend::Ops: add_forward, layernorm_forward, linear_forward, relu_forward) on the lesson's matrices.
//
// Shapes: x is n × d_model (one token per row); the feed-forward hidden layer is n × d_ff.
#include <cstdint>
#include <string_view>

#include "core/attention.hpp"

namespace attnlab::lessons {

// Residual connection: a + b, element by element (same shape). Throws ShapeError otherwise.
core::Matrix add(const core::Matrix& a, const core::Matrix& b);

// Layer normalisation over each row, i.e. over the d_model features of one token:
//   y = (x − μ) / √(σ² + ε),  μ and σ² the mean and (population, ÷ d_model) variance of the row.
// ε sits inside the square root. The learned gain γ and bias β (1 × d_model each; y = γ ⊙ y + β) are
// 1 and 0 in an untrained model, so they are optional. Without γ and β every output row has mean 0
// and variance σ²/(σ² + ε).
core::Matrix layer_norm(const core::Matrix& x, float eps = 1e-5f, const core::Matrix* gain = nullptr, const core::Matrix* bias = nullptr);

// FFN(x) = max(0, x·W1 + b1)·W2 + b2, applied to every token (row) separately.
// W1: d_model × d_ff, b1: 1 × d_ff, W2: d_ff × d_model, b2: 1 × d_model.
struct FeedForward {
  core::Matrix w1, b1, w2, b2;
};

// W1 and W2 from N(0, 1/fan_in), biases zero. The paper uses d_ff = 4·d_model.
FeedForward random_feed_forward(std::size_t d_model, std::size_t d_ff, std::uint64_t seed, std::string_view name);

// Returns FFN(x) (n × d_model); *hidden gets the ReLU output (n × d_ff) when given.
core::Matrix feed_forward(const core::Matrix& x, const FeedForward& f, core::Matrix* hidden = nullptr);

// ---- layers -------------------------------------------------------------------

struct EncoderLayer {
  core::AttentionWeights self;
  FeedForward ffn;
};

struct DecoderLayer {
  core::AttentionWeights self;   // masked (causal) self-attention over the target prefix
  core::AttentionWeights cross;  // Q from the decoder, K and V from the encoder output
  FeedForward ffn;
};

// Every intermediate of one layer, in order.
struct LayerTrace {
  core::AttentionTrace self;
  core::Matrix self_out, after_self;    // attention output; LayerNorm(x + attention)
  core::AttentionTrace cross;           // decoder only
  core::Matrix cross_out, after_cross;  // decoder only
  core::Matrix ffn_hidden, ffn_out, output;
};

// h = LayerNorm(x + SelfAttention(x)); out = LayerNorm(h + FFN(h)).
core::Matrix encoder_layer(const core::Matrix& x, const EncoderLayer& layer, LayerTrace* trace = nullptr);

// a = LayerNorm(y + MaskedSelfAttention(y)); c = LayerNorm(a + CrossAttention(a, memory));
// out = LayerNorm(c + FFN(c)). The causal mask keeps position i from seeing positions after it.
core::Matrix decoder_layer(const core::Matrix& y, const core::Matrix& memory, const DecoderLayer& layer, LayerTrace* trace = nullptr);

}  // namespace attnlab::lessons
