// CausalConvWithState (opset 27): the stateful causal depthwise 1-D convolution of
// Gated DeltaNet / Mamba blocks. input (B, C, L), weight (C, 1, K), optional bias (C)
// and past_state (B, C, K-1; zeros when absent); float32 / float16 / bfloat16.
//
// Per (batch, channel) row the kernel builds the padded row [past_state | input]
// (K-1+L floats, converted once), then y[t] = bias + sum_j w[j] * padded[t + j]:
// only current and earlier positions contribute (causal). activation "silu" / "swish"
// applies y * sigmoid(y) before the one rounding to the stored type; present_state
// is the padded row's last K-1 positions (the carry for the next decode step).
// Rows are independent: threads split B x C. Computed in float32 like the ONNX
// reference's activation; the reference mode accumulates in double.
#include <cmath>
#include <string>
#include <vector>

#include "core/thread_pool.h"
#include "kernels/attention/float_rows.h"
#include "kernels/registry.h"

namespace onnxmini {
namespace attention {
namespace {

class CausalConvWithStateKernel : public Kernel {
 public:
  explicit CausalConvWithStateKernel(const KernelInfo& info) {
    const std::string a = info.attrs.get_string("activation", "none");
    if (a != "none" && a != "silu" && a != "swish")
      info.fail("activation must be 'none', 'silu' or 'swish', got '{}'", a);
    silu_ = a != "none";
  }

  void prepare(KernelContext& ctx) override {
    const Tensor &x = ctx.input(0), &w = ctx.input(1);
    const DType t = x.dtype();
    if (t != DType::Float32 && t != DType::Float16 && t != DType::BFloat16)
      ctx.unsupported("dtype {} is not supported (float, float16, bfloat16)", dtype_name(t));
    if (x.rank() != 3) ctx.fail("input has shape {}, expected (batch, channels, length)", shape_to_string(x.shape()));
    const int64_t B = x.dim(0), C = x.dim(1);
    if (w.dtype() != t || w.rank() != 3 || w.dim(0) != C || w.dim(1) != 1 || w.dim(2) < 1)
      ctx.fail("weight is {} {}, expected {} ({}, 1, k >= 1)", dtype_name(w.dtype()), shape_to_string(w.shape()),
               dtype_name(t), C);
    const int64_t K = w.dim(2);
    if (ctx.has_input(2)) {
      const Tensor& b = ctx.input(2);
      if (b.dtype() != t || b.rank() != 1 || b.dim(0) != C)
        ctx.fail("bias is {} {}, expected {} ({})", dtype_name(b.dtype()), shape_to_string(b.shape()), dtype_name(t), C);
    }
    if (ctx.has_input(3)) {
      const Tensor& p = ctx.input(3);
      if (p.dtype() != t || p.shape() != Shape{B, C, K - 1})
        ctx.fail("past_state is {} {}, expected {} ({}, {}, {})", dtype_name(p.dtype()), shape_to_string(p.shape()),
                 dtype_name(t), B, C, K - 1);
    }
    ctx.allocate_output(0, t, x.shape());
    if (ctx.output_wanted(1)) ctx.allocate_output(1, t, {B, C, K - 1});
  }

  void compute(KernelContext& ctx) override {
    const Tensor &x = ctx.input(0), &w = ctx.input(1);
    const DType t = x.dtype();
    const int64_t B = x.dim(0), C = x.dim(1), L = x.dim(2), K = w.dim(2);
    const bool has_bias = ctx.has_input(2), has_past = ctx.has_input(3), want_state = ctx.output_wanted(1);
    const bool reference = ctx.reference_mode();
    const AttentionLanes& lanes = attention_lanes_for(reference ? cpu::Isa::Portable : attention_isa());
    ctx.stats().flops = 2.0 * B * C * L * K;
    ctx.stats().variant = reference ? "causal_conv_reference" : "causal_conv_rows";
    std::vector<float> weights(C * K), bias(C, 0.f);
    read_floats(t, w.raw(), 0, C * K, weights.data(), lanes);
    if (has_bias) read_floats(t, ctx.input(2).raw(), 0, C, bias.data(), lanes);
    Tensor& y = ctx.output(0);
    parallel_for(reference ? nullptr : ctx.threads(), B * C, std::max<int64_t>(1, 4096 / (L + K)), [&](int64_t r0, int64_t r1) {
      std::vector<float> padded(K - 1 + L), out(L);
      for (int64_t r = r0; r < r1; ++r) {
        const int64_t c = r % C;
        if (has_past)
          read_floats(t, ctx.input(3).raw(), r * (K - 1), K - 1, padded.data(), lanes);
        else
          std::fill(padded.begin(), padded.begin() + (K - 1), 0.f);
        read_floats(t, x.raw(), r * L, L, padded.data() + (K - 1), lanes);
        const float* wc = &weights[c * K];
        for (int64_t i = 0; i < L; ++i) {
          double acc_d = 0;
          float acc = 0;
          for (int64_t j = 0; j < K; ++j) {
            if (reference)
              acc_d += static_cast<double>(wc[j]) * padded[i + j];
            else
              acc += wc[j] * padded[i + j];
          }
          float v = (reference ? static_cast<float>(acc_d) : acc) + bias[c];
          if (silu_) v = v / (1.f + std::exp(-v));
          out[i] = v;
        }
        write_floats(t, y.raw_mut(), r * L, L, out.data(), lanes);
        if (want_state) write_floats(t, ctx.output(1).raw_mut(), r * (K - 1), K - 1, padded.data() + L, lanes);
      }
    });
  }

 private:
  bool silu_ = false;
};

}  // namespace

ONNXMINI_REGISTER_KERNEL("causal_conv_with_state", "", "CausalConvWithState", 27, INT_MAX,
                         make_kernel<CausalConvWithStateKernel>);

}  // namespace attention
}  // namespace onnxmini

ONNXMINI_KERNEL_FILE(attention_causal_conv_with_state);
