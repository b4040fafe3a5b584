#pragma once
// Shared support for the exercise graders (lessons/*/exercises/*/grader.cpp).
//
// A grader runs the learner's function on several inputs, compares each result with attnlab's
// in-process reference (core/ or the small references below), and when they differ it also computes
// the classic *mistaken* variants on the same inputs. If the learner's result matches one of them,
// the grader names that mistake in plain words ("mistake [no-scaling]: ..."), otherwise it shows the
// first differing entry. The tag in brackets is what tests/mutants/ checks for.
//
// This code is compiled once, with the project; `attnlab check` only compiles the learner's file and
// links it against the prebuilt grader objects.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "attnlab/exercise.hpp"
#include "core/matrix.hpp"

namespace attnlab::grading {

// ---- the mistakes a grader can name -------------------------------------------------------------

struct Mistake {
  const char* tag;      // short stable id, printed in brackets
  const char* message;  // what went wrong and what to do instead
};

namespace mistakes {
extern const Mistake no_scaling, scale_by_dk, scale_by_dmodel, softmax_wrong_axis, unstable_softmax,
    mask_after_softmax, mask_zero_fill, causal_hides_diagonal, causal_leaks_next, causal_hides_past, mask_from_scores,
    fully_masked_nan, padding_query_rows, heads_interleaved, heads_wrong_order, q_times_k, missing_wo,
    cross_kv_from_decoder, layernorm_eps_outside, layernorm_wrong_axis, layernorm_biased_variance,
    layernorm_no_affine, input_modified, pe_concatenated_halves, pe_sin_cos_swapped, pe_exponent,
    backward_missing_scale, backward_softmax_jacobian, backward_dv_transpose, online_no_rescale,
    online_full_matrix;
}  // namespace mistakes

// Reports a failed check of the current test case with a plain message.
void fail(const std::string& message);

// Reports a named mistake as a failed check of the current test case (`detail` adds case context).
void report_mistake(const Mistake& m, const std::string& detail = "");

// ---- matrices -------------------------------------------------------------------------------------

ex::Matrix to_ex(const core::Matrix& m);
core::Matrix to_core(const ex::Matrix& m);
ex::Matrix from_rows(const std::vector<std::vector<float>>& rows);

// Deterministic random matrices: entries uniform in [-scale, scale].
class Rng {
 public:
  explicit Rng(std::uint32_t seed) : gen_(seed) {}
  ex::Matrix matrix(std::size_t r, std::size_t c, float scale = 1.0f);
  std::vector<float> vector(std::size_t n, float scale = 1.0f);

 private:
  std::mt19937 gen_;
};

bool all_finite(const ex::Matrix& m);
// Same shape and |a − b| ≤ tol·(1 + |b|) everywhere; NaN matches NaN and ±inf match the same ±inf.
bool close(const ex::Matrix& a, const ex::Matrix& b, double tol = 1e-4);

// A mistaken variant computed on the same inputs as the reference.
struct Candidate {
  const Mistake* mistake;
  ex::Matrix value;
};

// Compares the learner's `got` with the reference `want`. On a mismatch it looks for a candidate that
// `got` matches and names its mistake; failing that it reports the shape or the first differing entry.
// `if_nonfinite` is the mistake to name when `got` holds inf/NaN where `want` is finite (e.g. the
// unstable softmax on large scores). Returns true when `got` matches `want`.
bool expect_match(const std::string& what, const ex::Matrix& got, const ex::Matrix& want,
                  const std::vector<Candidate>& candidates = {}, const Mistake* if_nonfinite = nullptr,
                  double tol = 1e-4);

// Snapshots inputs before the learner's function runs; verify() reports input_modified naming the
// first input that changed.
class InputGuard {
 public:
  InputGuard() = default;
  InputGuard(const InputGuard&) = delete;
  InputGuard& operator=(const InputGuard&) = delete;
  // Its inputs are no longer named in index errors once it is gone.
  ~InputGuard();
  InputGuard& add(const char* name, const ex::Matrix& m);
  InputGuard& add(const char* name, const std::vector<float>& v);
  bool verify(const std::string& function) const;

 private:
  struct Entry {
    const char* name;
    const ex::Matrix* m;
    const std::vector<float>* v;
    ex::Matrix m_copy;
    std::vector<float> v_copy;
  };
  std::vector<Entry> entries_;
};

// ---- attention, computed the right way and the classic wrong ways ------------------------------

enum class Scale { SqrtDk, None, Dk, Custom };
enum class Axis { Rows, Cols };
enum class MaskMode { BeforeSoftmaxNegInf, BeforeSoftmaxZero, AfterSoftmax };

struct Variant {
  Scale scale = Scale::SqrtDk;
  double custom_scale = 1.0;  // multiplier used with Scale::Custom
  Axis axis = Axis::Rows;
  bool transpose_k = true;    // false: Q·K (needs d_k == m)
  MaskMode mask_mode = MaskMode::BeforeSoftmaxNegInf;
  bool nan_for_empty_rows = false;  // fully masked rows: NaN (naive) instead of zeros
};

using MaskBits = std::vector<std::vector<std::uint8_t>>;  // n × m, 1 = may attend; empty = no mask

// softmax over rows (or columns) of `s`, in double; rows whose entries are all -inf give zeros (or NaN).
ex::Matrix softmax_variant(const ex::Matrix& s, Axis axis = Axis::Rows, bool nan_for_empty = false);

// Softmax of already-scaled scores under a mask, applied the right way or one of the wrong ways.
ex::Matrix masked_softmax(const ex::Matrix& s, const MaskBits& mask, MaskMode mode = MaskMode::BeforeSoftmaxNegInf,
                          bool nan_for_empty = false, Axis axis = Axis::Rows);

// Positions where every value is exactly 0 (used to see which keys a learner's mask hides).
MaskBits zero_pattern(const ex::Matrix& w);

// Attention weights and output of one head under a variant. Returns nullopt when the variant is not
// defined for these shapes (e.g. Q·K with d_k ≠ m).
struct HeadOut {
  ex::Matrix weights, output;
};
std::optional<HeadOut> attention_variant(const ex::Matrix& q, const ex::Matrix& k, const ex::Matrix& v,
                                         const Variant& var, const MaskBits& mask = {});

// Head `head`'s columns of a packed n × (h·width) matrix: the contiguous block [head·width, (head+1)·width),
// or with `interleave` the columns head, head + h, head + 2h, ... (the classic mistake).
ex::Matrix head_columns(const ex::Matrix& x, std::size_t head, std::size_t width, std::size_t h, bool interleave);

// Multi-head self/cross attention with packed weights (W_Q: d_model × h·d_k, ...), under a variant of
// the head split, the concat order, the scale and the output projection.
struct MhaVariant {
  Variant head = {};
  bool interleave_split = false;
  bool reverse_concat = false;
  bool skip_wo = false;
};
std::optional<ex::Matrix> mha_variant(const ex::Matrix& x, const ex::Matrix& kv, const ex::Matrix& w_q,
                                      const ex::Matrix& w_k, const ex::Matrix& w_v, const ex::Matrix& w_o,
                                      std::size_t h, const MhaVariant& var);

// ---- bookkeeping for the online-softmax exercise -------------------------------------------------

// While tracking is on, records the peak of the heap bytes made through operator new (every form)
// and not yet freed; stop returns it.
void start_allocation_tracking();
std::size_t stop_allocation_tracking();
// Heap bytes (through operator new, any form) live now: the grader's own and the learner's, whenever
// they were made (static initialisation, an earlier test).
std::size_t heap_live_now();

}  // namespace attnlab::grading
