#include "model/decode.hpp"

#include "util/rng.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "util/error.hpp"

namespace attnlab::model {

namespace {

std::vector<double> log_softmax_row(const float* z, int V) {
  std::vector<double> out(V);
  double mx = z[0];
  for (int v = 1; v < V; ++v) mx = std::max(mx, static_cast<double>(z[v]));
  double sum = 0;
  for (int v = 0; v < V; ++v) sum += std::exp(z[v] - mx);
  const double ls = std::log(sum) + mx;
  for (int v = 0; v < V; ++v) out[v] = z[v] - ls;
  return out;
}

std::vector<std::vector<float>> step_attention(const Transformer<float>& m, int beam_index) {
  std::vector<std::vector<float>> layers;
  const int H = m.config().heads, S = m.source_length();
  for (int l = 0; l < m.config().decoder_layers; ++l) {
    const std::vector<float> a = m.step_cross_attention(l);
    layers.emplace_back(a.begin() + static_cast<std::ptrdiff_t>(beam_index) * H * S,
                        a.begin() + static_cast<std::ptrdiff_t>(beam_index + 1) * H * S);
  }
  return layers;
}

}  // namespace

double length_penalty(int length, double alpha) {
  return alpha == 0.0 ? 1.0 : std::pow((5.0 + length) / 6.0, alpha);
}

namespace {

// Whether y ends with a block of L tokens followed by its first L − 1 again, so that appending the
// block's last token, y[n − L], would write the block twice back to back (2L − 1 ≤ n).
bool block_half_repeated(const std::vector<int>& y, std::size_t L) {
  const std::size_t n = y.size();
  return std::equal(y.begin() + static_cast<std::ptrdiff_t>(n + 1 - 2 * L), y.begin() + static_cast<std::ptrdiff_t>(n - L),
                    y.begin() + static_cast<std::ptrdiff_t>(n + 1 - L));
}

}  // namespace

std::vector<int> loop_closing_tokens(const std::vector<int>& y) {
  std::vector<int> out;
  const std::size_t n = y.size();
  if (n >= 2 && y[n - 1] == y[n - 2]) out.push_back(y[n - 1]);  // x x → not x
  for (std::size_t L = 2; 2 * L <= n + 1; ++L)
    if (block_half_repeated(y, L)) out.push_back(y[n - L]);
  return out;
}

std::size_t loop_closed_by(const std::vector<int>& y, int next) {
  const std::size_t n = y.size();
  if (n >= 2 && y[n - 1] == next && y[n - 2] == next) return 1;
  for (std::size_t L = 2; 2 * L <= n + 1; ++L)
    if (y[n - L] == next && block_half_repeated(y, L)) return L;
  return 0;
}

int translation_limit(const Transformer<float>& model, int source_length, const DecodeOptions& opt) {
  const int cap = model.config().max_len - 1;
  return std::min(cap, opt.max_len > 0 ? opt.max_len : 2 * source_length + 10);
}

namespace {

Hypothesis beam_search(Transformer<float>& model, const std::vector<int>& src, const DecodeOptions& opt) {
  const int K = std::max(1, opt.beam), V = model.config().vocab_size;
  const int max_new = translation_limit(model, static_cast<int>(src.size()), opt);
  model.start_decoding(src, K);
  struct Beam {
    std::vector<int> tokens;
    double logprob = 0;
    std::vector<double> lps;  // per token
    std::vector<std::vector<std::vector<float>>> att;
  };
  std::vector<Beam> beams(K);
  std::vector<bool> alive(K, false);
  alive[0] = true;  // all beams start identical; expand only the first at step 0
  std::vector<Hypothesis> finished;
  std::vector<int> feed(K, kBos);
  const bool record = opt.record_attention && model.config().decoder_layers > 0;
  for (int t = 0; t <= max_new; ++t) {
    const auto& logits = model.decode_step(feed);
    struct Cand {
      double lp;    // the hypothesis' log-probability with this token
      int beam, token;
      double step;  // this token's own log-probability
    };
    std::vector<Cand> cands;
    cands.reserve(static_cast<std::size_t>(K) * static_cast<std::size_t>(V));
    for (int b = 0; b < K; ++b) {
      if (!alive[b]) continue;
      const auto lps = log_softmax_row(logits.data() + static_cast<std::size_t>(b) * V, V);
      const std::vector<int> banned = opt.block_loops ? loop_closing_tokens(beams[b].tokens) : std::vector<int>{};
      for (int v = 0; v < V; ++v) {
        if (v == kPad || v == kBos) continue;
        if (std::find(banned.begin(), banned.end(), v) != banned.end()) continue;
        if (t == max_new && v != kEos) continue;  // out of room: only <eos> is allowed now
        cands.push_back({beams[b].logprob + lps[v], b, v, lps[v]});
      }
    }
    if (cands.empty()) break;
    // The loop below reads candidates best first and stops after K that are not <eos>; each beam has one
    // <eos> candidate at most, so it reads at most 2K. Only those are ordered: the comparison is a total
    // order (ties broken by beam, then token), so they are the same 2K, in the same order, as a full sort
    // gives, which took a fifth of `attnlab serve`'s time per translation (perf, translate-wide).
    const std::size_t top = std::min(cands.size(), static_cast<std::size_t>(2 * K));
    std::partial_sort(cands.begin(), cands.begin() + static_cast<std::ptrdiff_t>(top), cands.end(), [](const Cand& a, const Cand& b) {
      return a.lp != b.lp ? a.lp > b.lp : (a.beam != b.beam ? a.beam < b.beam : a.token < b.token);
    });
    cands.resize(top);
    std::vector<Beam> next;
    std::vector<int> parents;
    for (const Cand& c : cands) {
      if (static_cast<int>(next.size()) == K) break;
      if (c.token == kEos) {
        Hypothesis h;
        h.tokens = beams[c.beam].tokens;
        h.logprob = c.lp;
        h.token_logprobs = beams[c.beam].lps;
        h.token_logprobs.push_back(c.step);
        h.score = c.lp / length_penalty(static_cast<int>(h.tokens.size()) + 1, opt.length_penalty);
        h.finished = true;
        if (record) {
          h.cross_attention = beams[c.beam].att;
          h.cross_attention.push_back(step_attention(model, c.beam));
        }
        finished.push_back(std::move(h));
        continue;
      }
      Beam nb;
      nb.tokens = beams[c.beam].tokens;
      nb.tokens.push_back(c.token);
      nb.logprob = c.lp;
      nb.lps = beams[c.beam].lps;
      nb.lps.push_back(c.step);
      if (record) {
        nb.att = beams[c.beam].att;
        nb.att.push_back(step_attention(model, c.beam));
      }
      parents.push_back(c.beam);
      next.push_back(std::move(nb));
    }
    // Stopping once K hypotheses have finished (the textbook rule) is wrong with a length penalty:
    // short hypotheses finish first, and a live beam that ends later can still score better (this
    // returned "Le vieux chat." for "The cat sees the small dog." over the greedy "Le chat voit le
    // petit chien."). Stop only when nothing live can win: log-probs only decrease, and with α ≥ 0
    // the best a live beam can reach is bounded by its score at the longest length.
    if (next.empty()) break;
    if (!finished.empty()) {
      double best_done = -std::numeric_limits<double>::infinity();
      for (const auto& h : finished) best_done = std::max(best_done, h.score);
      double best_live = -std::numeric_limits<double>::infinity();
      for (const auto& nb : next) best_live = std::max(best_live, nb.logprob / length_penalty(max_new + 1, opt.length_penalty));
      if (best_live < best_done) break;
    }
    const int live = static_cast<int>(next.size());
    std::vector<int> order(K, parents[0]);
    for (int i = 0; i < live; ++i) order[i] = parents[i];
    model.reorder_cache(order);
    beams.assign(K, Beam{});
    for (int i = 0; i < live; ++i) beams[i] = std::move(next[i]);
    for (int i = 0; i < K; ++i) {
      alive[i] = i < live;
      feed[i] = i < live ? beams[i].tokens.back() : kEos;  // dead slots are fed a dummy token
    }
  }
  if (finished.empty()) {
    Hypothesis h;
    h.tokens = beams[0].tokens;
    h.logprob = beams[0].logprob;
    h.token_logprobs = beams[0].lps;
    h.score = h.logprob / length_penalty(static_cast<int>(h.tokens.size()), opt.length_penalty);
    h.cross_attention = beams[0].att;
    return h;
  }
  return *std::max_element(finished.begin(), finished.end(),
                           [](const Hypothesis& a, const Hypothesis& b) { return a.score < b.score; });
}

// Whether a beats b: finished before unfinished, then the higher score; a tie is not better, so
// translate() keeps the beam's hypothesis when greedy only equals it.
bool better(const Hypothesis& a, const Hypothesis& b) {
  if (a.finished != b.finished) return a.finished;
  return a.score > b.score;
}

}  // namespace

Hypothesis translate(Transformer<float>& model, const std::vector<int>& src, const DecodeOptions& opt) {
  if (model.config().decoder_only) throw InputError("this model is a decoder-only language model; it cannot translate");
  if (opt.beam <= 1) return beam_search(model, src, opt);
  // A beam can prune the greedy path (its prefix need not stay among the K best partial
  // log-probs), so a wider search is not by itself guaranteed to score at least as well as greedy.
  // Greedy costs 1/K of the beam; running it too makes "beam ≥ greedy" a guarantee, not a hope.
  DecodeOptions g = opt;
  g.beam = 1;
  Hypothesis greedy = beam_search(model, src, g);
  Hypothesis best = beam_search(model, src, opt);
  return better(greedy, best) ? greedy : best;
}

std::vector<double> next_token_logprobs(Transformer<float>& model, const std::vector<int>& prompt) {
  if (!model.config().decoder_only) throw InputError("next-token probabilities need a decoder-only language model");
  if (static_cast<int>(prompt.size()) + 1 > model.config().max_len) {
    throw InputError("the prompt has " + std::to_string(prompt.size()) + " tokens; this model reads at most " +
                     std::to_string(model.config().max_len - 1));
  }
  model.start_decoding({}, 1);
  const std::vector<float>* logits = &model.decode_step({kBos});
  for (int t : prompt) logits = &model.decode_step({t});
  return log_softmax_row(logits->data(), model.config().vocab_size);
}

std::vector<int> continue_greedy(Transformer<float>& model, const std::vector<int>& prompt, int max_new) {
  std::vector<double> lp = next_token_logprobs(model, prompt);
  std::vector<int> out;
  const int room = model.config().max_len - 1 - static_cast<int>(prompt.size());
  for (int i = 0; i < std::min(max_new, room); ++i) {
    int best = kEos;
    for (int v = 0; v < static_cast<int>(lp.size()); ++v)
      if (v != kPad && v != kBos && v != kUnk && lp[v] > lp[best]) best = v;
    if (best == kEos) break;
    out.push_back(best);
    if (i + 1 == std::min(max_new, room)) break;
    const auto& logits = model.decode_step({best});
    lp = log_softmax_row(logits.data(), model.config().vocab_size);
  }
  return out;
}

std::vector<double> sampling_distribution(const std::vector<double>& lp, const SampleOptions& opt) {
  if (!(opt.temperature > 0)) throw InputError("sampling: the temperature must be above 0 (use greedy decoding for 0)");
  if (!(opt.top_p > 0 && opt.top_p <= 1)) throw InputError("sampling: top_p must be in (0, 1]");
  const int V = static_cast<int>(lp.size());
  std::vector<int> order;
  for (int v = 0; v < V; ++v)
    if (v != kPad && v != kBos && v != kUnk && std::isfinite(lp[v])) order.push_back(v);
  // Most likely first; ties by id, so the order (and the draw) is the same everywhere.
  std::sort(order.begin(), order.end(), [&](int a, int b) { return lp[a] != lp[b] ? lp[a] > lp[b] : a < b; });
  if (opt.top_k > 0 && static_cast<int>(order.size()) > opt.top_k) order.resize(static_cast<std::size_t>(opt.top_k));
  std::vector<double> p(lp.size(), 0.0);
  if (order.empty()) return p;
  const double top = lp[order.front()];
  double sum = 0;
  for (int v : order) sum += p[v] = std::exp((lp[v] - top) / opt.temperature);
  double kept = 0;
  std::size_t n = 0;
  while (n < order.size() && (n == 0 || kept < opt.top_p * sum)) kept += p[order[n++]];
  for (std::size_t i = n; i < order.size(); ++i) p[order[i]] = 0;
  for (std::size_t i = 0; i < n; ++i) p[order[i]] /= kept;
  return p;
}

std::vector<int> continue_sampled(Transformer<float>& model, const std::vector<int>& prompt, int max_new, const SampleOptions& opt) {
  std::vector<double> lp = next_token_logprobs(model, prompt);
  std::uint64_t state = opt.seed;
  auto uniform = [&state] { return uniform01(state); };  // util/rng.hpp: the same splitmix64 as every seeded draw
  std::vector<int> out;
  const int room = std::min(max_new, model.config().max_len - 1 - static_cast<int>(prompt.size()));
  for (int i = 0; i < room; ++i) {
    const std::vector<double> p = sampling_distribution(lp, opt);
    const double u = uniform();
    double acc = 0;
    int pick = -1, last = -1;
    for (int v = 0; v < static_cast<int>(p.size()); ++v) {
      if (p[v] <= 0) continue;
      last = v;
      acc += p[v];
      if (u < acc) {
        pick = v;
        break;
      }
    }
    if (pick < 0) pick = last;  // rounding left u above the last partial sum
    if (pick < 0 || pick == kEos) break;
    out.push_back(pick);
    if (i + 1 == room) break;
    const auto& logits = model.decode_step({pick});
    lp = log_softmax_row(logits.data(), model.config().vocab_size);
  }
  return out;
}

}  // namespace attnlab::model
