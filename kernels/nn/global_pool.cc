// GlobalMaxPool / GlobalAveragePool: one window covering each whole plane of an
// N x C x D1..Dk tensor; output N x C x 1 x .. x 1. float32, float64.
//
// Layout and blocking (float32, global_pool_f32): planes of n contiguous floats,
// threads over planes.
// - Planes of up to 64 floats (7x7 heads): reduce_rows over many planes per
//   call, so W planes are folded at once and combined by one register transpose
//   rather than a horizontal reduction per plane.
// - Larger planes: rows of kPlaneSumBlock floats through reduce_rows (W lanes of
//   float partial sums, 16 terms each on AVX-512), the row sums added in double;
//   the maximum as one reduce_rows row per plane (exact at any length).
// The portable table has no row functions: plain loops (16 float chains per
// block for the sum, which the compiler vectorises), also the reference mode.
// float64: one double loop per plane.
#include "kernels/nn/global_pool.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <limits>

#include "core/thread_pool.h"
#include "kernels/registry.h"

namespace onnxmini {
namespace nn {

namespace {
constexpr int64_t kRowsAtOnce = 64;     // row sums kept on the stack per reduce_rows call
constexpr int64_t kShortPlane = 64;     // planes up to this many floats go many per call
}  // namespace

double plane_sum_f32(const float* v, int64_t n, simd::ReduceRowsFn row_sum) {
  double s = 0;
  int64_t i = 0;
  if (row_sum) {
    float rows[kRowsAtOnce];
    while (n - i >= kPlaneSumBlock) {
      const int64_t b = std::min(kRowsAtOnce, (n - i) / kPlaneSumBlock);
      row_sum(v + i, b, kPlaneSumBlock, rows);
      for (int64_t k = 0; k < b; ++k) s += rows[k];
      i += b * kPlaneSumBlock;
    }
    if (i < n) {
      row_sum(v + i, 1, n - i, rows);
      s += rows[0];
    }
    return s;
  }
  constexpr int64_t kLanes = 16;
  for (; i + kPlaneSumBlock <= n; i += kPlaneSumBlock) {
    float acc[kLanes] = {};
    for (int64_t j = 0; j < kPlaneSumBlock; j += kLanes)
      for (int64_t l = 0; l < kLanes; ++l) acc[l] += v[i + j + l];
    for (int64_t l = 0; l < kLanes; ++l) s += acc[l];
  }
  for (; i < n; ++i) s += v[i];
  return s;
}

namespace {
float plane_max(const float* v, int64_t n) {
  float m = n > 0 ? v[0] : 0.0f;
  for (int64_t i = 1; i < n; ++i) {
    if (std::isnan(v[i])) return v[i];
    m = v[i] > m ? v[i] : m;
  }
  return m;
}
}  // namespace

void global_pool_f32(const float* x, int64_t planes, int64_t n, bool max, const simd::F32Kernels* k,
                     ThreadPool* pool, float* y) {
  const simd::ReduceRowsFn sum_rows = k ? k->reduce_rows[simd::kRowSum] : nullptr;
  const simd::ReduceRowsFn max_rows = k ? k->reduce_rows[simd::kRowMax] : nullptr;
  auto body = [&](int64_t p0, int64_t p1) {
    if (n == 0) {
      std::fill(y + p0, y + p1, 0.0f);
      return;
    }
    if (max) {
      if (max_rows) return max_rows(x + p0 * n, p1 - p0, n, y + p0);
      for (int64_t p = p0; p < p1; ++p) y[p] = plane_max(x + p * n, n);
      return;
    }
    if (sum_rows && n <= kShortPlane) {
      sum_rows(x + p0 * n, p1 - p0, n, y + p0);
      const float inv = 1.0f / static_cast<float>(n);
      for (int64_t p = p0; p < p1; ++p) y[p] *= inv;
      return;
    }
    for (int64_t p = p0; p < p1; ++p) y[p] = static_cast<float>(plane_sum_f32(x + p * n, n, sum_rows) / n);
  };
  // Cost rule (core/thread_pool.h): one operation per element, X read once.
  const ParallelCost cost{planes * n, static_cast<int64_t>(sizeof(float)) * planes * (n + 1),
                          static_cast<int64_t>(sizeof(float)) * planes};
  const int64_t grain = std::max<int64_t>(1, 4096 / std::max<int64_t>(1, n));
  parallel_for(pool, planes, grain, cost, body);
}

namespace {

template <bool kMax>
class GlobalPoolKernel : public Kernel {
 public:
  explicit GlobalPoolKernel(const KernelInfo&) {}
  KernelPlan describe(const KernelInfo&, const std::vector<const Shape*>&) const override {
    return KernelPlan{"global_pool", cpu::isa_name(simd::f32_kernels().isa), ""};
  }

  void prepare(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    if (x.rank() < 3) ctx.fail("input has shape {}, expected N x C x D1 [x D2 ...]", shape_to_string(x.shape()));
    if (x.dtype() != DType::Float32 && x.dtype() != DType::Float64) ctx.unsupported("dtype {} is not supported", dtype_name(x.dtype()));
    Shape out(x.rank(), 1);
    out[0] = x.dim(0), out[1] = x.dim(1);
    ctx.allocate_output(0, x.dtype(), out);
  }
  void compute(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    const int64_t planes = x.dim(0) * x.dim(1), n = x.numel() / std::max<int64_t>(1, planes);
    ctx.stats().flops = static_cast<double>(x.numel());
    ctx.stats().variant = "global_pool";
    if (x.dtype() == DType::Float32) {
      const simd::F32Kernels* k = ctx.reference_mode() ? nullptr : &simd::f32_kernels();
      ctx.stats().isa = cpu::isa_name(k ? k->isa : cpu::Isa::Portable);
      global_pool_f32(x.data<float>(), planes, n, kMax, k, ctx.reference_mode() ? nullptr : ctx.threads(),
                      ctx.output(0).mutable_data<float>());
      return;
    }
    const double* px = x.data<double>();
    double* py = ctx.output(0).mutable_data<double>();
    for (int64_t p = 0; p < planes; ++p) {
      const double* v = px + p * n;
      double r = 0;
      if (kMax) {
        r = n > 0 ? v[0] : 0.0;
        for (int64_t i = 1; i < n; ++i) r = std::isnan(v[i]) || v[i] > r ? v[i] : r;
      } else {
        for (int64_t i = 0; i < n; ++i) r += v[i];
        r = n > 0 ? r / n : 0.0;
      }
      py[p] = r;
    }
  }
};

}  // namespace

ONNXMINI_REGISTER_KERNEL("global_pool", "", "GlobalMaxPool", 1, INT_MAX, make_kernel<GlobalPoolKernel<true>>);
ONNXMINI_REGISTER_KERNEL("global_pool", "", "GlobalAveragePool", 1, INT_MAX, make_kernel<GlobalPoolKernel<false>>);

}  // namespace nn
}  // namespace onnxmini

ONNXMINI_KERNEL_FILE(nn_global_pool);
