// Shared pieces of the integer matmul / conv ops (matmul_integer.cc, qlinear_matmul.cc,
// qlinear_conv.cc, qgemm_op.cc): reading zero points and scales, the numpy batch plan
// of MatMulInteger-style ops, and filling a QgemmArgs from uint8 / int8 tensors.
// (Rounding and saturation live in the engine's output stage, kernels/gemm_engine/qgemm.cc,
// so every op requantizes the same way.)
#pragma once
#include <algorithm>
#include <cstdint>
#include <vector>

#include "core/float16.h"
#include "kernels/gemm_engine/qgemm.h"
#include "kernels/kernel.h"

namespace onnxmini {
namespace quant {

inline bool is_int8_type(DType t) { return t == DType::UInt8 || t == DType::Int8; }

inline void require_int8(const KernelContext& ctx, const Tensor& t, const char* what) {
  if (!is_int8_type(t.dtype()))
    ctx.unsupported("{} has dtype {}; only uint8 and int8 are supported", what, dtype_name(t.dtype()));
}

// Zero point input `i` (absent: 0), as int32 values; must have the dtype of its data
// (`data_type`) and `max_count` or 1 elements.
inline std::vector<int32_t> read_zero_point(const KernelContext& ctx, size_t i, DType data_type, int64_t max_count,
                                            const char* what) {
  if (!ctx.has_input(i)) return {0};
  const Tensor& z = ctx.input(i);
  if (z.dtype() != data_type)
    ctx.fail("{} has dtype {}, its data has {} (they must match)", what, dtype_name(z.dtype()), dtype_name(data_type));
  if (z.numel() != 1 && z.numel() != max_count)
    ctx.fail("{} has shape {}: expected a scalar or {} values", what, shape_to_string(z.shape()), max_count);
  std::vector<int32_t> v(static_cast<size_t>(z.numel()));
  for (int64_t k = 0; k < z.numel(); ++k)
    v[k] = data_type == DType::UInt8 ? int32_t(z.data<uint8_t>()[k]) : int32_t(z.data<int8_t>()[k]);
  return v;
}

// Scale input `i`: a scalar or `max_count` values, float32 or (QLinearMatMul 21) float16 /
// bfloat16 widened to float32. Any value is accepted, as onnxruntime does.
inline std::vector<float> read_scale(const KernelContext& ctx, size_t i, int64_t max_count, const char* what) {
  const Tensor& s = ctx.input(i);
  if (s.numel() != 1 && s.numel() != max_count)
    ctx.fail("{} has shape {}: expected a scalar or {} values", what, shape_to_string(s.shape()), max_count);
  if (s.dtype() == DType::Float32) return std::vector<float>(s.data<float>(), s.data<float>() + s.numel());
  if (s.dtype() != DType::Float16 && s.dtype() != DType::BFloat16)
    ctx.unsupported("{} has dtype {}; float, float16 and bfloat16 are supported", what, dtype_name(s.dtype()));
  const uint16_t* h = static_cast<const uint16_t*>(s.raw());
  std::vector<float> v(static_cast<size_t>(s.numel()));
  for (int64_t k = 0; k < s.numel(); ++k) v[k] = s.dtype() == DType::Float16 ? half_to_float(h[k]) : bfloat16_to_float(h[k]);
  return v;
}

// numpy matmul over [..., M, K] x [..., K, N] with broadcast batch dims; 1-D operands
// promoted (and the promoted dim dropped from the output) as numpy does.
struct MatMulPlan {
  int64_t M = 1, N = 1, K = 1, batch = 1;
  Shape out_shape;
  std::vector<int64_t> a_index, b_index;  // per output matrix: matrix index into A and B
};

inline MatMulPlan make_matmul_plan(const KernelContext& ctx, const Shape& sa, const Shape& sb) {
  if (sa.empty() || sb.empty())
    ctx.fail("inputs must have rank >= 1, got {} and {}", shape_to_string(sa), shape_to_string(sb));
  const Shape a = sa.size() == 1 ? Shape{1, sa[0]} : sa;
  const Shape b = sb.size() == 1 ? Shape{sb[0], 1} : sb;
  MatMulPlan p;
  p.M = a[a.size() - 2], p.K = a[a.size() - 1], p.N = b[b.size() - 1];
  if (b[b.size() - 2] != p.K)
    ctx.fail("inner dimensions differ: A {} has K = {}, B {} has K = {}", shape_to_string(sa), p.K, shape_to_string(sb),
             b[b.size() - 2]);
  const size_t ra = a.size() - 2, rb = b.size() - 2, r = std::max(ra, rb);
  Shape out_batch(r, 1);
  std::vector<int64_t> sta(r, 0), stb(r, 0);
  int64_t ma = 1, mb = 1;
  for (size_t i = 0; i < r; ++i) {
    const size_t d = r - 1 - i;
    const int64_t da = i < ra ? a[ra - 1 - i] : 1, db = i < rb ? b[rb - 1 - i] : 1;
    if (da != db && da != 1 && db != 1)
      ctx.fail("batch dimensions do not broadcast: A {} and B {}", shape_to_string(sa), shape_to_string(sb));
    out_batch[d] = (da == 0 || db == 0) ? 0 : std::max(da, db);
    sta[d] = da == 1 ? 0 : ma;
    stb[d] = db == 1 ? 0 : mb;
    ma *= da, mb *= db;
  }
  p.batch = 1;
  for (int64_t d : out_batch) p.batch *= d;
  for (int64_t i = 0; i < p.batch; ++i) {
    int64_t rem = i, ia = 0, ib = 0;
    for (size_t d = r; d-- > 0;) {
      const int64_t c = rem % out_batch[d];
      rem /= out_batch[d];
      ia += c * sta[d], ib += c * stb[d];
    }
    p.a_index.push_back(ia);
    p.b_index.push_back(ib);
  }
  p.out_shape = out_batch;
  if (sa.size() > 1) p.out_shape.push_back(p.M);
  if (sb.size() > 1) p.out_shape.push_back(p.N);
  return p;
}

// One B matrix for every output matrix and A's matrices in order: A's batch folds into M
// (one engine call over batch * M rows instead of `batch` calls).
inline void fold_batch_into_rows(MatMulPlan& p) {
  if (p.batch <= 1) return;
  for (int64_t i = 0; i < p.batch; ++i)
    if (p.b_index[i] != 0 || p.a_index[i] != i) return;
  p.M *= p.batch;
  p.batch = 1;
  p.a_index.assign(1, 0);
  p.b_index.assign(1, 0);
}

// The GEMM of output matrix `i` of a plan: A / B pointers, signedness and zero points.
inline gemm::QgemmArgs matmul_args(const MatMulPlan& p, int64_t i, const Tensor& a, const Tensor& b, int32_t a_zero,
                                   const std::vector<int32_t>& b_zero) {
  gemm::QgemmArgs g;
  g.M = p.M, g.N = p.N, g.K = p.K;
  g.A = static_cast<const uint8_t*>(a.raw()) + p.a_index[i] * p.M * p.K;
  g.a_signed = a.dtype() == DType::Int8;
  g.lda = p.K;
  g.a_zero = a_zero;
  g.B = static_cast<const uint8_t*>(b.raw()) + p.b_index[i] * p.K * p.N;
  g.b_signed = b.dtype() == DType::Int8;
  g.ldb = p.N;
  g.b_zero = b_zero.data();
  g.b_zero_per_column = b_zero.size() > 1;
  return g;
}

// Runs one GEMM: the reference loop in reference mode, else the engine (with B prepacked
// when `packed` is set and the matrix is the only B matrix).
inline void run_qgemm(const KernelContext& ctx, const gemm::QgemmArgs& g, const gemm::QPackedB* packed) {
  if (ctx.reference_mode()) return gemm::qgemm_reference(g);
  gemm::qgemm(g, packed, ctx.threads());
}

}  // namespace quant
}  // namespace onnxmini
