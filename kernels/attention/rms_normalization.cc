// RMSNormalization (opset 23): Y = X / sqrt(mean(X^2 over axes [axis, r)) +
// epsilon) * Scale, Scale broadcast unidirectionally to X; X and Scale float32
// / float16 / bfloat16 / float64 (independently, T and V).
//
// Layout: X viewed as rows x cols, rows = prod(shape[:axis]), cols =
// prod(shape[axis:]); each contiguous row is normalised. Scale is expanded
// once per run to float32 over one row (cols) or, when it varies along the
// leading axes too, over all of X.
// Math: stash_type 1 (float32, the default; the only value the ONNX reference
// implements). The fast path reads each row once into float32 (threads over
// rows; the sum of squares by kernels/simd's row reduction); the reference
// path accumulates in double, one thread.
#include <cmath>
#include <vector>

#include "core/aligned_vector.h"
#include "core/shape_util.h"
#include "core/thread_pool.h"
#include "kernels/attention/float_rows.h"
#include "kernels/registry.h"
#include "kernels/simd/f32_kernels.h"

namespace onnxmini {
namespace attention {
namespace {

class RmsNormKernel : public Kernel {
 public:
  explicit RmsNormKernel(const KernelInfo& info)
      : axis_(info.attrs.get_int("axis", -1)), epsilon_(info.attrs.get_float("epsilon", 1e-5f)) {
    const int64_t stash = info.attrs.get_int("stash_type", 1);
    if (stash != 1) info.unsupported("stash_type {} is not supported (1: float32)", stash);
  }

  void prepare(KernelContext& ctx) override {
    const Tensor &x = ctx.input(0), &s = ctx.input(1);
    if (!is_attention_float(x.dtype()) || !is_attention_float(s.dtype()))
      ctx.unsupported("X / scale have dtypes {} / {} (float, float16, bfloat16, double)", dtype_name(x.dtype()),
                      dtype_name(s.dtype()));
    const int64_t r = static_cast<int64_t>(x.rank());
    if (!normalize_axis(axis_, r)) ctx.fail("axis {} is out of range [{}, {})", axis_, -r, r);
    if (s.rank() > x.rank()) ctx.fail("scale has shape {}, more axes than X {}", shape_to_string(s.shape()), shape_to_string(x.shape()));
    for (size_t d = 0; d < s.rank(); ++d) {
      const int64_t sd = s.dim(s.rank() - 1 - d), xd = x.dim(x.rank() - 1 - d);
      if (sd != 1 && sd != xd)
        ctx.fail("scale has shape {}, not broadcastable to X {}", shape_to_string(s.shape()), shape_to_string(x.shape()));
    }
    ctx.allocate_output(0, s.dtype(), x.shape());
  }

  // float64: the double loops; other float types: rows with the SIMD sum of squares.
  KernelPlan describe(const KernelInfo& info, const std::vector<const Shape*>&) const override {
    const DType dt = info.input_dtypes.empty() ? DType::Undefined : info.input_dtypes[0];
    if (dt == DType::Undefined) return KernelPlan::at_run_time();
    if (dt == DType::Float64) return KernelPlan{"rmsnorm_reference", "portable", ""};
    return KernelPlan{"rmsnorm_rows", cpu::isa_name(attention_lanes_for(attention_isa()).isa), ""};
  }

  void compute(KernelContext& ctx) override {
    const Tensor &x = ctx.input(0), &s = ctx.input(1);
    Tensor& y = ctx.output(0);
    const int64_t axis = *normalize_axis(axis_, static_cast<int64_t>(x.rank()));
    const int64_t cols = shape_product(x.shape(), axis, x.rank());
    const int64_t rows = cols == 0 ? 0 : x.numel() / cols;
    ctx.stats().flops = 4.0 * x.numel();
    const AttentionLanes& lanes = attention_lanes_for(attention_isa());
    // Scale expanded over one row, or over all of X when it varies along the leading axes.
    bool per_row = false;
    for (size_t d = 0; d < s.rank(); ++d)
      if (static_cast<int64_t>(x.rank() - 1 - d) < axis && s.dim(s.rank() - 1 - d) != 1) per_row = true;
    const int64_t expand = per_row ? x.numel() : cols;
    std::vector<double> scale(static_cast<size_t>(expand));
    {
      Shape aligned(x.rank(), 1);
      for (size_t d = 0; d < s.rank(); ++d) aligned[x.rank() - s.rank() + d] = s.dim(d);
      const std::vector<int64_t> sstr = row_major_strides(aligned);
      const Shape& xs = x.shape();
      for (int64_t e = 0; e < expand; ++e) {
        int64_t rem = per_row ? e : e, idx = 0;
        for (size_t d = x.rank(); d-- > 0;) {
          if (!per_row && static_cast<int64_t>(d) < axis) break;
          const int64_t c = rem % xs[d];
          rem /= xs[d];
          if (aligned[d] != 1) idx += c * sstr[d];
        }
        scale[e] = read_double(s.dtype(), s.raw(), idx);
      }
    }
    const DType xt = x.dtype(), yt = y.dtype();
    if (ctx.reference_mode() || xt == DType::Float64) {
      ctx.stats().variant = "rmsnorm_reference";
      for (int64_t r = 0; r < rows; ++r) {
        double ss = 0;
        for (int64_t c = 0; c < cols; ++c) {
          const double v = read_double(xt, x.raw(), r * cols + c);
          ss += v * v;
        }
        const double inv = 1.0 / std::sqrt(ss / cols + epsilon_);
        for (int64_t c = 0; c < cols; ++c)
          write_double(yt, y.raw_mut(), r * cols + c,
                       read_double(xt, x.raw(), r * cols + c) * inv * scale[per_row ? r * cols + c : c]);
      }
      return;
    }
    ctx.stats().variant = "rmsnorm_rows";
    ctx.stats().isa = cpu::isa_name(attention_lanes_for(attention_isa()).isa);
    std::vector<float> scale_f(scale.begin(), scale.end());
    // Sum of squares of a row: the SIMD row reduction where the ISA has one.
    const simd::ReduceRowsFn sum_squares = simd::f32_kernels_for(attention_isa()).reduce_rows[simd::kRowSumSquare];
    parallel_for(ctx.threads(), rows, std::max<int64_t>(1, 8192 / std::max<int64_t>(1, cols)), [&](int64_t r0, int64_t r1) {
      thread_local AlignedVector<float> row;
      row.resize(cols);
      for (int64_t r = r0; r < r1; ++r) {
        read_floats(xt, x.raw(), r * cols, cols, row.data(), lanes);
        float ss = 0.f;
        if (sum_squares) {
          sum_squares(row.data(), 1, cols, &ss);
        } else {
          for (int64_t c = 0; c < cols; ++c) ss += row[c] * row[c];
        }
        const float inv = 1.f / std::sqrt(ss / static_cast<float>(cols) + epsilon_);
        const float* sc = scale_f.data() + (per_row ? r * cols : 0);
        for (int64_t c = 0; c < cols; ++c) row[c] = row[c] * inv * sc[c];
        write_floats(yt, y.raw_mut(), r * cols, cols, row.data(), lanes);
      }
    });
  }

 private:
  int64_t axis_;
  float epsilon_;
};

}  // namespace

ONNXMINI_REGISTER_KERNEL("rms_normalization", "", "RMSNormalization", 23, INT_MAX, make_kernel<RmsNormKernel>);

}  // namespace attention
}  // namespace onnxmini

ONNXMINI_KERNEL_FILE(attention_rms_normalization);
