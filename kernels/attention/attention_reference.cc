// Reference Attention: for every (batch, query head, query row) the full score
// row in double, the spec's order of operations (scale, softcap, bias,
// softmax, fully-masked guard), then P . V. No blocking, no threads: the
// oracle the fused kernel is tested against.
#include <cmath>
#include <limits>
#include <vector>

#include "kernels/attention/attention_plan.h"
#include "kernels/attention/float_rows.h"

namespace onnxmini {
namespace attention {

void run_attention_reference(const AttentionPlan& p, const AttentionIo& io) {
  const double kNegInf = -std::numeric_limits<double>::infinity();
  const int64_t T = p.total_len;
  std::vector<double> raw(T), capped(T), biased(T), prob(T), out(p.v_head_size);
  for (int64_t b = 0; b < p.batch; ++b)
    for (int64_t h = 0; h < p.q_heads; ++h) {
      const int64_t g = h / p.group();
      for (int64_t i = 0; i < p.q_len; ++i) {
        int64_t lo, hi;
        p.key_range(b, i, lo, hi);
        const int64_t qrow = p.q.row(b, h, i);
        bool any = false;
        for (int64_t j = 0; j < T; ++j) {
          bool past;
          const int64_t krow = key_row(p, b, g, j, past);
          double dot = 0;
          for (int64_t d = 0; d < p.head_size; ++d)
            dot += read_double(io.qk_type, io.q, qrow + d) * read_double(io.qk_type, past ? io.past_k : io.k, krow + d);
          raw[j] = dot * p.scale;
          capped[j] = p.softcap > 0 ? p.softcap * std::tanh(raw[j] / p.softcap) : raw[j];
          double bias = (j >= lo && j < hi) ? 0.0 : kNegInf;
          if (p.mask && bias == 0.0) {
            const double m = read_double(p.mask->dtype(), p.mask->raw(), p.mask_row(b, h, i) + j);
            bias = p.mask->dtype() == DType::Bool ? (m != 0 ? 0.0 : kNegInf) : m;
          }
          if (bias != kNegInf) any = true;
          biased[j] = capped[j] + bias;
        }
        double mx = kNegInf;
        for (int64_t j = 0; j < T; ++j) mx = std::max(mx, biased[j]);
        double sum = 0;
        for (int64_t j = 0; j < T; ++j) {
          prob[j] = (!any || biased[j] == kNegInf) ? 0.0 : std::exp(biased[j] - mx);
          sum += prob[j];
        }
        for (int64_t j = 0; j < T; ++j) prob[j] = any && sum > 0 ? prob[j] / sum : 0.0;
        std::fill(out.begin(), out.end(), 0.0);
        for (int64_t j = 0; j < T; ++j) {
          bool past;
          const int64_t vrow = value_row(p, b, g, j, past);
          for (int64_t c = 0; c < p.v_head_size; ++c)
            out[c] += prob[j] * read_double(io.v_type, past ? io.past_v : io.v, vrow + c);
        }
        const int64_t yrow = p.y.row(b, h, i);
        for (int64_t c = 0; c < p.v_head_size; ++c) write_double(io.qk_type, io.y, yrow + c, out[c]);
        if (p.want_qk) {
          const std::vector<double>& src =
              p.qk_mode == kQkRaw ? raw : p.qk_mode == kQkSoftcapped ? capped : p.qk_mode == kQkBiased ? biased : prob;
          const int64_t qk_row = ((b * p.q_heads + h) * p.q_len + i) * T;
          for (int64_t j = 0; j < T; ++j) write_double(io.qk_type, io.qk, qk_row + j, src[j]);
        }
      }
    }
}

}  // namespace attention
}  // namespace onnxmini
