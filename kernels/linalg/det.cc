// Det (opsets 11-22): determinants of the [*, M, M] input's square matrices,
// output [*]. float32, float64, float16, bfloat16; computed in float64 by LU
// decomposition with partial pivoting (the product of the pivots, the sign
// flipped per row swap), then rounded once to the output type. A zero pivot
// column means a singular matrix: determinant 0.
//
// Layout: each matrix (M * M contiguous elements) is copied into a float64
// scratch block and factored in place; matrices are independent.
#include <cmath>

#include "core/float16.h"
#include "kernels/registry.h"

namespace onnxmini {

namespace {

double load(const Tensor& t, int64_t i) {
  switch (t.dtype()) {
    case DType::Float32: return t.data<float>()[i];
    case DType::Float64: return t.data<double>()[i];
    case DType::Float16: return half_to_float(static_cast<const uint16_t*>(t.raw())[i]);
    default: return bfloat16_to_float(static_cast<const uint16_t*>(t.raw())[i]);
  }
}

void store(Tensor& t, int64_t i, double v) {
  switch (t.dtype()) {
    case DType::Float32: t.mutable_data<float>()[i] = static_cast<float>(v); break;
    case DType::Float64: t.mutable_data<double>()[i] = v; break;
    case DType::Float16: static_cast<uint16_t*>(t.raw_mut())[i] = float_to_half(static_cast<float>(v)); break;
    default: static_cast<uint16_t*>(t.raw_mut())[i] = float_to_bfloat16(static_cast<float>(v));
  }
}

// Determinant of the m x m row-major matrix `a` (destroyed).
double lu_determinant(double* a, int64_t m) {
  double det = 1.0;
  for (int64_t c = 0; c < m; ++c) {
    int64_t pivot = c;
    for (int64_t r = c + 1; r < m; ++r)
      if (std::fabs(a[r * m + c]) > std::fabs(a[pivot * m + c])) pivot = r;
    if (a[pivot * m + c] == 0.0) return 0.0;
    if (pivot != c) {
      for (int64_t j = 0; j < m; ++j) std::swap(a[c * m + j], a[pivot * m + j]);
      det = -det;
    }
    const double p = a[c * m + c];
    det *= p;
    for (int64_t r = c + 1; r < m; ++r) {
      const double f = a[r * m + c] / p;
      if (f == 0.0) continue;
      for (int64_t j = c + 1; j < m; ++j) a[r * m + j] -= f * a[c * m + j];
    }
  }
  return det;
}

class DetKernel : public Kernel {
 public:
  explicit DetKernel(const KernelInfo& info) {
    info.require_dtype(0, {DType::Float32, DType::Float64, DType::Float16, DType::BFloat16});
  }

  void prepare(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    const DType t = x.dtype();
    if (t != DType::Float32 && t != DType::Float64 && t != DType::Float16 && t != DType::BFloat16)
      ctx.unsupported("input dtype {} is not supported (float32, float64, float16, bfloat16)", dtype_name(t));
    if (x.rank() < 2 || x.dim(x.rank() - 1) != x.dim(x.rank() - 2))
      ctx.fail("input must be [*, M, M] (square matrices), got shape {}", shape_to_string(x.shape()));
    ctx.allocate_output(0, t, Shape(x.shape().begin(), x.shape().end() - 2));
  }

  void compute(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    Tensor& y = ctx.output(0);
    const int64_t m = x.dim(x.rank() - 1);
    Tensor scratch = ctx.scratch(DType::Float64, {m, m});
    double* a = scratch.mutable_data<double>();
    for (int64_t k = 0; k < y.numel(); ++k) {
      for (int64_t i = 0; i < m * m; ++i) a[i] = load(x, k * m * m + i);
      store(y, k, lu_determinant(a, m));
    }
  }
};

}  // namespace

ONNXMINI_REGISTER_KERNEL("det", "", "Det", 11, INT_MAX, make_kernel<DetKernel>);

}  // namespace onnxmini

ONNXMINI_KERNEL_FILE(linalg_det);
