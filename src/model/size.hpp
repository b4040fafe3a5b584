#pragma once
// How big a model is: its parameters, grouped the way papers report them, and the matrix-product
// FLOPs of training it, per token. Both are read off the model's own layout (make_layout in
// config.hpp), so they count exactly what Transformer<T> allocates and multiplies.
//
// Shape legend: V vocabulary, C d_model, H heads, F d_ff, L layers, S source tokens, T target tokens
// (decoder-only: T tokens per sequence).
#include <cstddef>

#include "model/config.hpp"

namespace attnlab::model {

// One layer's parameters, by sub-layer. Attention blocks are W_Q, W_K, W_V, W_O (C × C each) and
// their biases: 4·C² + 4·C. The FFN is C × F and F × C with biases: 2·C·F + F + C. A LayerNorm is a
// gain and a bias: 2·C.
struct LayerParams {
  std::size_t self_attention = 0;
  std::size_t cross_attention = 0;  // decoder layers of an encoder–decoder only
  std::size_t ffn = 0;
  std::size_t norms = 0;            // 2 LayerNorms per encoder layer, 3 per decoder layer (2 decoder-only)
  std::size_t total() const { return self_attention + cross_attention + ffn + norms; }
};

struct ParamBreakdown {
  bool decoder_only = false;
  bool tied = false;                    // one V × C matrix for source, target and output projection
  std::size_t total = 0;                // == make_layout(c).total
  std::size_t token_embedding = 0;      // tok_emb (tied or decoder-only) or tgt_emb, V × C
  std::size_t source_embedding = 0;     // src_emb, V × C (untied encoder–decoder only)
  std::size_t output_projection = 0;    // out_proj, C × V (untied only; tied models reuse tok_emb)
  int encoder_layers = 0, decoder_layers = 0;
  LayerParams encoder_layer, decoder_layer;  // one layer (all layers of a stack are the same size)
  std::size_t encoder_final_norm = 0, decoder_final_norm = 0;
  std::size_t encoder = 0, decoder = 0;      // all layers plus the stack's final LayerNorm
  std::size_t embeddings() const { return token_embedding + source_embedding; }
};

// Groups every tensor of make_layout(c) by its name; throws RuntimeError if a tensor fits no group or
// the layers of a stack differ in size (either would mean this breakdown no longer matches the layout).
ParamBreakdown count_parameters(const ModelConfig& c);

// Forward FLOPs of the matrix products of one sequence (encoder–decoder: one source sentence of S
// tokens and one target sentence of T), 2·m·n·k per product (m × k)·(k × n), summed over heads.
// Attention's two products (Q·Kᵀ and weights·V) are counted in full, Tq × Tk, causal or not: the
// model's plain attention computes the masked half too. Not counted: softmax, LayerNorm, ReLU,
// dropout, residual and bias additions, the embedding lookup and scaling, the loss, the optimizer
// (all O(rows · C) or O(rows · V) element-wise work, or once per step rather than per token).
struct FlopBreakdown {
  int S = 0, T = 0;           // S = 0 for a decoder-only model
  double projections = 0;     // W_Q, W_K, W_V, W_O of every attention block: 2·rows·C·C each
  double attention = 0;       // Q·Kᵀ and weights·V: 2·Tq·Tk·C each (per head d_k, times H heads)
  double ffn = 0;             // 2 · 2·rows·C·F per layer
  double output = 0;          // the output projection to the vocabulary: 2·T·C·V (tied or not)
  double forward() const { return projections + attention + ffn + output; }
  // Backward does two products of the forward's size for each one (the input's gradient and the
  // weight's; for attention dQ, dK from dscores and dV, dweights), so training is 3 × forward.
  double training() const { return 3.0 * forward(); }
  int tokens() const { return S + T; }  // tokens per sequence, source and target both counted
};

// seq: S = T = seq for an encoder–decoder, T = seq decoder-only.
FlopBreakdown count_flops(const ModelConfig& c, int seq);

}  // namespace attnlab::model
