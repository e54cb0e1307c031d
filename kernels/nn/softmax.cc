// Softmax and LogSoftmax, float32 and float64, numerically stable
// (the row maximum is subtracted before exp, so large inputs do not overflow).
//
// Axis semantics differ by opset:
//   opset < 13: X is flattened to 2-D at `axis` (default 1): rows = prod(shape[:axis]),
//               and softmax runs over each whole row of prod(shape[axis:]) elements.
//   opset >= 13: softmax runs along the single axis `axis` (default -1).
// Both are expressed as outer x len x inner: element (o, j, i) sits at
// (o * len + j) * inner + i; softmax runs over j. Pre-13 is inner = 1.
// Fast path: inner == 1 rows are contiguous, processed one row per step on
// threads (float32 with AVX-512 / AVX2: softmax_simd_rows_f32, rows of up to 32 / 16
// in registers, longer ones in three vector passes); inner > 1 loops j outside and i
// inside so memory stays sequential, split across threads by (outer, column block).
#include <cmath>
#include <cstring>
#include <type_traits>
#include <limits>
#include <vector>

#include "core/shape_util.h"
#include "kernels/elementwise/fast_math.h"
#include "kernels/registry.h"
#include "kernels/simd/f32_kernels.h"
#include "core/thread_pool.h"

namespace onnxmini {
namespace nn {
namespace {

template <bool kLog, typename T>
void softmax_reference(int64_t outer, int64_t len, int64_t inner, const T* x, T* y) {
  // For each softmax vector v (stride `inner`): m = max(v); s = sum exp(v - m);
  // softmax = exp(v - m) / s; log-softmax = v - m - log(s).
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      const T* v = x + o * len * inner + i;
      T* out = y + o * len * inner + i;
      double m = -std::numeric_limits<double>::infinity();
      for (int64_t j = 0; j < len; ++j) m = std::max(m, static_cast<double>(v[j * inner]));
      double s = 0;
      for (int64_t j = 0; j < len; ++j) s += std::exp(v[j * inner] - m);
      for (int64_t j = 0; j < len; ++j)
        out[j * inner] = static_cast<T>(kLog ? v[j * inner] - m - std::log(s) : std::exp(v[j * inner] - m) / s);
    }
}

// Softmax over contiguous rows (inner == 1, float): max, exp + sum, scale; three
// vectorisable passes per row.
ONNXMINI_NO_TRAPPING_MATH void softmax_rows_f32(ThreadPool* pool, int64_t outer, int64_t len, const float* x, float* y) {
  const int64_t grain = std::max<int64_t>(1, 8192 / std::max<int64_t>(1, len));
  parallel_for(pool, outer, grain, [&](int64_t o0, int64_t o1) {
    for (int64_t o = o0; o < o1; ++o) {
      const float* xr = x + o * len;
      float* yr = y + o * len;
      float m = -std::numeric_limits<float>::infinity();
      for (int64_t j = 0; j < len; ++j) m = std::max(m, xr[j]);
      if (!(m > -std::numeric_limits<float>::infinity() && m < std::numeric_limits<float>::infinity())) {
        // inf / NaN rows: the general path's semantics (std::exp) apply.
        float s = 0;
        for (int64_t j = 0; j < len; ++j) s += (yr[j] = std::exp(xr[j] - m));
        for (int64_t j = 0; j < len; ++j) yr[j] /= s;
        continue;
      }
      float s = 0;
      for (int64_t j = 0; j < len; ++j) {
        const float e = ew::fast_expf(xr[j] - m);
        yr[j] = e;
        s += e;
      }
      const float inv = 1.0f / s;
      for (int64_t j = 0; j < len; ++j) yr[j] *= inv;
    }
  });
}

// Contiguous float32 rows with a SIMD table (f32_kernels_impl.h): rows of up to
// two registers are loaded masked and max / exp / sum / scale stay in
// registers; longer rows take three vector passes (max, exp + sum, scale).
bool softmax_simd_rows_f32(ThreadPool* pool, int64_t outer, int64_t len, const float* x, float* y) {
  const simd::F32Kernels& k = simd::f32_kernels();
  if (!k.softmax_rows || len > k.softmax_max_len) return false;
  parallel_for(pool, outer, std::max<int64_t>(1, 8192 / len),
               [&](int64_t o0, int64_t o1) { k.softmax_rows(x + o0 * len, o1 - o0, len, y + o0 * len); });
  return true;
}

// Softmax along a strided axis (inner > 1): element (o, j, i) at (o * len + j) * inner + i.
// Data layout / blocking: the work is cut into tasks of (one outer index) x (a block of
// kColumnBlock contiguous inner columns); a task keeps the block's running max and sum
// in stack arrays and sweeps j three times (max, exp + sum, scale), each sweep reading
// kColumnBlock contiguous values per j. Tasks are independent and each column is
// computed in the same order whatever the split, so results are bit-identical for any
// thread count. Splitting the columns (not only `outer`) matters for the common
// outer == 1 case (a detection head's DFL softmax: 1 x 16 x 8400 was one serial task).
constexpr int64_t kColumnBlock = 256;

// y[i] = exp(x[i]) over n contiguous values: float32 through the ISA table's vectorised
// fast_expf when it has one (AVX2 / AVX-512), std::exp otherwise (a scalar fast_expf
// loop measured 2.6x slower than glibc's expf here, Intel Xeon AVX-512).
template <typename T>
inline void exp_row(const T* x, T* y, int64_t n) {
  if constexpr (std::is_same_v<T, float>) {
    if (const simd::UnaryFn fn = simd::f32_kernels().exp) return fn(x, y, n);
  }
  for (int64_t i = 0; i < n; ++i) y[i] = std::exp(x[i]);
}

template <bool kLog, typename T>
void softmax_columns(ThreadPool* pool, int64_t outer, int64_t len, int64_t inner, const T* x, T* y) {
  const int64_t blocks = (inner + kColumnBlock - 1) / kColumnBlock;
  const int64_t total = outer * len * inner;
  // ~20 flops per element (max, exp, sum, scale); read x twice and y once, write y twice.
  const ParallelCost cost{total * 20, total * static_cast<int64_t>(5 * sizeof(T)), total * static_cast<int64_t>(sizeof(T))};
  parallel_for(pool, outer * blocks, 1, cost, [&](int64_t t0, int64_t t1) {
    T m[kColumnBlock], s[kColumnBlock], tmp[kColumnBlock];
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t o = t / blocks, c0 = (t % blocks) * kColumnBlock;
      const int64_t w = std::min(kColumnBlock, inner - c0);
      const T* xb = x + o * len * inner + c0;
      T* yb = y + o * len * inner + c0;
      for (int64_t i = 0; i < w; ++i) {
        m[i] = -std::numeric_limits<T>::infinity();
        s[i] = T(0);
      }
      // Written as a select (a < b ? b : a, max's NaN rule) so that it compiles to vector
      // max instructions: std::max here became a compare-and-branch per element.
      for (int64_t j = 0; j < len; ++j)
        for (int64_t i = 0; i < w; ++i) {
          const T a = m[i], b = xb[j * inner + i];
          m[i] = a < b ? b : a;
        }
      for (int64_t j = 0; j < len; ++j) {
        T* e = kLog ? tmp : yb + j * inner;  // LogSoftmax only needs the sums
        for (int64_t i = 0; i < w; ++i) e[i] = xb[j * inner + i] - m[i];
        exp_row(e, e, w);
        for (int64_t i = 0; i < w; ++i) s[i] += e[i];
      }
      if (kLog) {
        for (int64_t i = 0; i < w; ++i) s[i] = m[i] + std::log(s[i]);  // log-sum-exp
        for (int64_t j = 0; j < len; ++j)
          for (int64_t i = 0; i < w; ++i) yb[j * inner + i] = xb[j * inner + i] - s[i];
      } else {
        for (int64_t i = 0; i < w; ++i) s[i] = T(1) / s[i];
        for (int64_t j = 0; j < len; ++j)
          for (int64_t i = 0; i < w; ++i) yb[j * inner + i] *= s[i];
      }
    }
  });
}

template <bool kLog, typename T>
void softmax_fast(ThreadPool* pool, int64_t outer, int64_t len, int64_t inner, const T* x, T* y) {
  if (outer == 0 || len == 0 || inner == 0) return;  // an empty tensor (the row paths divide by len)
  if constexpr (!kLog && std::is_same_v<T, float>) {
    if (inner == 1 && softmax_simd_rows_f32(pool, outer, len, x, y)) return;
    if (inner == 1) return softmax_rows_f32(pool, outer, len, x, y);
  }
  softmax_columns<kLog>(pool, outer, len, inner, x, y);
}

template <bool kLog>
class SoftmaxKernel : public Kernel {
 public:
  explicit SoftmaxKernel(const KernelInfo& info)
      : flatten_(info.opset < 13), axis_(info.attrs.get_int("axis", info.opset < 13 ? 1 : -1)) {}
  void prepare(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    if (x.dtype() != DType::Float32 && x.dtype() != DType::Float64) ctx.unsupported("dtype {} is not supported (float, double)", dtype_name(x.dtype()));
    norm_axis(ctx, x);
    ctx.allocate_output(0, x.dtype(), x.shape());
  }
  KernelPlan describe(const KernelInfo& info, const std::vector<const Shape*>& in) const override {
    const DType dt = info.input_dtypes.empty() ? DType::Undefined : info.input_dtypes[0];
    if (in.empty() || !in[0] || dt == DType::Undefined) return KernelPlan::at_run_time();
    const int64_t rank = static_cast<int64_t>(in[0]->size());
    if (axis_ < -rank || axis_ >= rank) return KernelPlan::at_run_time();
    const int64_t axis = axis_ < 0 ? axis_ + rank : axis_;
    int64_t len = 1, inner = 1;
    for (int64_t d = axis; d < rank; ++d) ((d == axis || flatten_) ? len : inner) *= (*in[0])[d];
    KernelPlan p;
    p.variant = variant(dt, len, inner, p.isa);
    return p;
  }

  void compute(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    const int64_t axis = norm_axis(ctx, x);
    int64_t outer = 1, len = 1, inner = 1;
    for (int64_t d = 0; d < static_cast<int64_t>(x.rank()); ++d) {
      if (d < axis) outer *= x.dim(d);
      else if (d == axis || flatten_) len *= x.dim(d);
      else inner *= x.dim(d);
    }
    ctx.stats().flops = 4.0 * x.numel();
    ctx.stats().variant = ctx.reference_mode() ? "softmax_reference" : variant(x.dtype(), len, inner, ctx.stats().isa);
    if (x.dtype() == DType::Float32) run<float>(ctx, outer, len, inner);
    else run<double>(ctx, outer, len, inner);
  }

 private:
  // The path softmax_fast takes (static strings, for profiles); sets `isa`.
  static const char* variant(DType dt, int64_t len, int64_t inner, const char*& isa) {
    isa = "portable";
    if (inner != 1) return "softmax_strided";  // columns of `inner` contiguous values
    if (kLog || dt != DType::Float32) return "softmax_rows_generic";
    const simd::F32Kernels& k = simd::f32_kernels();
    if (k.softmax_rows && len <= k.softmax_max_len) {
      isa = cpu::isa_name(k.isa);
      return "softmax_rows_simd";
    }
    return "softmax_rows";  // scalar rows with fast_expf
  }

  template <typename T>
  void run(KernelContext& ctx, int64_t outer, int64_t len, int64_t inner) {
    const T* x = ctx.input(0).data<T>();
    T* y = ctx.output(0).mutable_data<T>();
    if (ctx.reference_mode()) softmax_reference<kLog>(outer, len, inner, x, y);
    else softmax_fast<kLog>(ctx.threads(), outer, len, inner, x, y);
  }
  int64_t norm_axis(const KernelContext& ctx, const Tensor& x) const {
    const int64_t r = static_cast<int64_t>(x.rank());
    // A scalar has one element; treat it as rank 1 (pre-13 flattens at `axis`, so axis == rank is valid).
    const int64_t rank = std::max<int64_t>(r, 1);
    const auto axis = flatten_ ? normalize_split_axis(axis_, rank) : normalize_axis(axis_, rank);
    if (!axis) ctx.fail("axis {} is out of range for input of rank {}", axis_, r);
    return *axis;
  }
  bool flatten_;
  int64_t axis_;
};

}  // namespace

ONNXMINI_REGISTER_KERNEL("softmax", "", "Softmax", 1, INT_MAX, make_kernel<SoftmaxKernel<false>>);
ONNXMINI_REGISTER_KERNEL("softmax", "", "LogSoftmax", 1, INT_MAX, make_kernel<SoftmaxKernel<true>>);

}  // namespace nn
}  // namespace onnxmini

ONNXMINI_KERNEL_FILE(nn_softmax);
