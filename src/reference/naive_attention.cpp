#include "reference/naive_attention.hpp"

#include <cmath>
#include <stdexcept>

namespace attnlab::reference {

Mat matmul(const Mat& a, const Mat& b) {
  const std::size_t n = a.size(), k = b.size(), m = b.empty() ? 0 : b[0].size();
  Mat c(n, std::vector<double>(m, 0.0));
  for (std::size_t i = 0; i < n; ++i) {
    if (a[i].size() != k) throw std::invalid_argument("reference::matmul: inner sizes differ");
    for (std::size_t j = 0; j < m; ++j) {
      double s = 0.0;
      for (std::size_t t = 0; t < k; ++t) s += a[i][t] * b[t][j];
      c[i][j] = s;
    }
  }
  return c;
}

Mat transpose(const Mat& a) {
  if (a.empty()) return {};
  Mat t(a[0].size(), std::vector<double>(a.size()));
  for (std::size_t i = 0; i < a.size(); ++i)
    for (std::size_t j = 0; j < a[i].size(); ++j) t[j][i] = a[i][j];
  return t;
}

namespace {
void add_bias(Mat& m, const std::vector<double>& b) {
  if (b.empty()) return;
  for (auto& row : m)
    for (std::size_t j = 0; j < row.size(); ++j) row[j] += b.at(j);
}
}  // namespace

Result attention(const Mat& x, const Mat& kv, const std::vector<Head>& heads, const Mat& w_o,
                 const MaskMat& mask, const std::vector<double>& b_o) {
  Result r;
  const std::size_t n = x.size(), m = kv.size();
  for (const Head& hd : heads) {
    HeadResult h;
    h.q = matmul(x, hd.w_q);
    h.k = matmul(kv, hd.w_k);
    h.v = matmul(kv, hd.w_v);
    add_bias(h.q, hd.b_q);
    add_bias(h.k, hd.b_k);
    add_bias(h.v, hd.b_v);
    const std::size_t d_k = hd.w_q.empty() ? 0 : hd.w_q[0].size();
    h.scores = matmul(h.q, transpose(h.k));
    h.scaled = h.scores;
    for (auto& row : h.scaled)
      for (double& s : row) s /= std::sqrt(static_cast<double>(d_k));
    h.weights.assign(n, std::vector<double>(m, 0.0));
    for (std::size_t i = 0; i < n; ++i) {
      // Softmax over the visible keys only; hidden keys keep weight 0.
      bool any = false;
      double mx = 0.0;
      for (std::size_t j = 0; j < m; ++j) {
        if (!mask.empty() && !mask[i][j]) continue;
        if (!any || h.scaled[i][j] > mx) mx = h.scaled[i][j];
        any = true;
      }
      if (!any) continue;  // fully masked: stays all zeros
      double sum = 0.0;
      for (std::size_t j = 0; j < m; ++j) {
        if (!mask.empty() && !mask[i][j]) continue;
        h.weights[i][j] = std::exp(h.scaled[i][j] - mx);
        sum += h.weights[i][j];
      }
      for (std::size_t j = 0; j < m; ++j) h.weights[i][j] /= sum;
    }
    h.context = matmul(h.weights, h.v);
    r.heads.push_back(std::move(h));
  }
  for (std::size_t i = 0; i < n; ++i) {
    bool any = false;
    for (std::size_t j = 0; j < m; ++j) any = any || mask.empty() || mask[i][j];
    if (!any) r.fully_masked_rows.push_back(i);
  }
  r.concat.assign(n, {});
  for (const HeadResult& h : r.heads)
    for (std::size_t i = 0; i < n; ++i)
      r.concat[i].insert(r.concat[i].end(), h.context[i].begin(), h.context[i].end());
  r.output = w_o.empty() ? r.concat : matmul(r.concat, w_o);
  if (!w_o.empty()) add_bias(r.output, b_o);
  return r;
}

}  // namespace attnlab::reference
