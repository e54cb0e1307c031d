// The reference recurrence: for each direction and batch entry, the ONNX
// equations step by step with plain loops (dot products accumulated in double)
// and any activation. Slow and obvious on purpose: it is the oracle the fast
// path is tested against, and the path for non-default activations.
#include <algorithm>
#include <cstring>
#include <vector>

#include "kernels/rnn/rnn_common.h"

namespace onnxmini {
namespace rnn {

namespace {

// out[j] = W[j, :] . v for rows j in [0, n) of a row-major matrix with `cols` columns.
void matvec(const float* w, const float* v, int64_t n, int64_t cols, std::vector<double>& out) {
  out.assign(n, 0.0);
  for (int64_t j = 0; j < n; ++j) {
    double s = 0;
    for (int64_t k = 0; k < cols; ++k) s += static_cast<double>(w[j * cols + k]) * v[k];
    out[j] = s;
  }
}

}  // namespace

void rnn_reference(const Problem& p) {
  const Attrs& a = *p.attrs;
  const int64_t H = p.hidden, I = p.input, GH = p.gates() * H;
  const int per_dir = activations_of(a.cell);
  if (p.y) std::fill(p.y, p.y + p.seq * p.num_dir() * p.batch * H, 0.0f);
  std::vector<double> wx, rh, rh2;
  std::vector<float> h(H), c(H), gated(H);
  for (int d = 0; d < p.num_dir(); ++d) {
    const float* w = p.w + d * GH * I;
    const float* r = p.r + d * GH * H;
    const float* wb = p.b ? p.b + d * 2 * GH : nullptr;
    const float* rb = p.b ? wb + GH : nullptr;
    const float* peep = p.p ? p.p + d * 3 * H : nullptr;
    const Activation* act = &a.acts[d * per_dir];
    // Clip bounds the input of every gate activation; like onnxruntime, not the cell
    // state LSTM's h() reads.
    auto f = [&](int k, double v) {
      float x = static_cast<float>(v);
      if (a.has_clip) x = std::min(a.clip, std::max(-a.clip, x));
      return act[k](x);
    };
    auto bias = [&](int64_t j) { return p.b ? static_cast<double>(wb[j]) + rb[j] : 0.0; };
    for (int64_t b = 0; b < p.batch; ++b) {
      const int64_t so = p.state_offset(d, b);
      for (int64_t j = 0; j < H; ++j) {
        h[j] = p.h0 ? p.h0[so + j] : 0.0f;
        c[j] = p.c0 ? p.c0[so + j] : 0.0f;
      }
      for (int64_t s = 0; s < p.len(b); ++s) {
        const int64_t t = p.time_of(s, d, b);
        matvec(w, p.x + p.x_row(t, b) * I, GH, I, wx);
        matvec(r, h.data(), GH, H, rh);
        if (a.cell == Cell::Lstm) {  // gates i o f c
          for (int64_t j = 0; j < H; ++j) {
            auto pre = [&](int g) { return wx[g * H + j] + rh[g * H + j] + bias(g * H + j); };
            const double pi = peep ? static_cast<double>(peep[j]) * c[j] : 0.0;
            const double pf = peep ? static_cast<double>(peep[2 * H + j]) * c[j] : 0.0;
            const float ig = f(0, pre(0) + pi);
            const float fg = a.input_forget ? 1.0f - ig : f(0, pre(2) + pf);
            const float cand = f(1, pre(3));
            c[j] = fg * c[j] + ig * cand;
            const double po = peep ? static_cast<double>(peep[H + j]) * c[j] : 0.0;
            const float og = f(0, pre(1) + po);
            h[j] = og * act[2](c[j]);
          }
        } else if (a.cell == Cell::Gru) {  // gates z r h
          std::vector<float> z(H), rr(H);
          for (int64_t j = 0; j < H; ++j) {
            z[j] = f(0, wx[j] + rh[j] + bias(j));
            rr[j] = f(0, wx[H + j] + rh[H + j] + bias(H + j));
          }
          std::vector<float> cand(H);
          if (a.linear_before_reset) {
            for (int64_t j = 0; j < H; ++j) {
              const double rbh = p.b ? rb[2 * H + j] : 0.0, wbh = p.b ? wb[2 * H + j] : 0.0;
              cand[j] = f(1, wx[2 * H + j] + rr[j] * (rh[2 * H + j] + rbh) + wbh);
            }
          } else {
            for (int64_t j = 0; j < H; ++j) gated[j] = rr[j] * h[j];
            matvec(r + 2 * H * H, gated.data(), H, H, rh2);
            for (int64_t j = 0; j < H; ++j) cand[j] = f(1, wx[2 * H + j] + rh2[j] + bias(2 * H + j));
          }
          for (int64_t j = 0; j < H; ++j) h[j] = (1.0f - z[j]) * cand[j] + z[j] * h[j];
        } else {
          for (int64_t j = 0; j < H; ++j) h[j] = f(0, wx[j] + rh[j] + bias(j));
        }
        if (p.y) std::copy(h.begin(), h.end(), p.y + p.y_offset(t, d, b));
      }
      // An empty sequence has no last step: its Y_h / Y_c are zero (as onnxruntime's).
      if (p.len(b) == 0) std::fill(h.begin(), h.end(), 0.0f), std::fill(c.begin(), c.end(), 0.0f);
      if (p.yh) std::copy(h.begin(), h.end(), p.yh + so);
      if (p.yc) std::copy(c.begin(), c.end(), p.yc + so);
    }
  }
}

}  // namespace rnn
}  // namespace onnxmini
