// OneHotMatMul (domain ai.onnxmini): the one-hot embedding that TensorFlow / JAX exports
// write as MatMul(Cast(Equal([Expand(]X[, S)], V), float), W) [+ B], fused into one node
// by the optimizer rule one_hot_matmul (runtime/graph_fusion_one_hot.h). Inputs:
//   X  int32 / int64 (the values to look up), last dimension 1 or N
//   V  X's dtype, [1, .., 1, N] or [N] (the value each one-hot position stands for)
//   W  float32 [N, D]
//   B  float32, D values ([D] or [1, .., 1, D]; optional)
//   S  int64 [rank] (optional): the Expand's target shape that X went through first
// and the MatMul's fused activation (gemm_activation's attributes; not PRelu), applied last.
// With E = the broadcast of X's shape, S and V's shape (the Equal's output; its last
// dimension must be N), row r of E's leading dimensions gives output row r:
//   B + sum of W[j] over the positions j with x(r, j) == V[j],
// x(r, j) the element of X that Equal compared at (r, j) (X broadcast to E). That is
// exactly what the nodes compute: the one-hot row holds 1.0 at those positions and 0.0
// elsewhere (the optimizer only fuses a W without inf / NaN, where 0 * W would not vanish).
// The output has the MatMul's shape: E's leading dimensions (leading 1s where B has more),
// then D.
//
// Layout / fast path: when X's last dimension is 1, V is the run start, start + 1, ..,
// start + N - 1 and W and B are constants (checked once, at session creation), the N + 1
// possible rows act(W[j] + B) and act(B) (an x outside the run) are computed once and a
// row is one copy of D floats instead of an N x D product (magika: Expand + Equal + Cast + a [2048, 257] x [257, 64] MatMul; see
// docs/kernels/tensor.md). Otherwise (and in reference mode) every row compares its N
// positions. Rows are split across threads.
#include <algorithm>
#include <cstring>

#include "core/thread_pool.h"
#include "kernels/elementwise/elementwise.h"
#include "kernels/gemm_engine/fused_activation.h"
#include "kernels/gemm_engine/gemm.h"
#include "kernels/registry.h"
#include "kernels/tensor/tensor_utils.h"

namespace onnxmini {

namespace {

using namespace tensor_ops;

// V's values as int64 when they are start, start + 1, ..: sets `start`, returns true.
bool is_run(const Tensor& v, int64_t& start) {
  const std::vector<int64_t> vals = v.to_int64_vector();
  if (vals.empty()) return false;
  for (size_t j = 1; j < vals.size(); ++j)
    if (vals[j] != vals[0] + static_cast<int64_t>(j)) return false;
  start = vals[0];
  return true;
}

class OneHotMatMulKernel : public Kernel {
 public:
  explicit OneHotMatMulKernel(const KernelInfo& info) : act_(gemm::FusedActivation::read(info)) {
    if (act_.act == FusedActivationKind::PRelu)
      info.unsupported("a fused PRelu is not supported (its slopes would be per output row)");
    act_.set(epi_);
    const Tensor* v = info.constant_input(1);
    if (!v || (v->dtype() != DType::Int32 && v->dtype() != DType::Int64) || !is_run(*v, start_)) return;
    run_ = true;
    // W and B constant (as the optimizer fuses them): the gathered rows act(W[j] + B), and
    // act(B) for a value outside the run, are computed once; a row is then one copy.
    const Tensor* w = info.constant_input(2);
    const Tensor* b = info.has_input(3) ? info.constant_input(3) : nullptr;
    if (!w || w->dtype() != DType::Float32 || w->rank() != 2 || w->dim(0) != v->numel() ||
        (info.has_input(3) && (!b || b->dtype() != DType::Float32 || b->numel() != w->dim(1))))
      return;
    const int64_t N = w->dim(0), D = w->dim(1);
    table_.assign(static_cast<size_t>((N + 1) * D), 0.0f);
    for (int64_t j = 0; j <= N; ++j) {
      float* t = table_.data() + j * D;
      if (b) std::copy(b->data<float>(), b->data<float>() + D, t);
      if (j < N)
        for (int64_t d = 0; d < D; ++d) t[d] += w->data<float>()[j * D + d];
      if (act_.active()) gemm::apply_epilogue(epi_, t, D, 0, 0);
    }
  }

  void prepare(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    const Tensor& v = ctx.input(1);
    const Tensor& w = ctx.input(2);
    if (x.dtype() != DType::Int32 && x.dtype() != DType::Int64)
      ctx.fail("X must be int32 or int64, got {}", dtype_name(x.dtype()));
    if (v.dtype() != x.dtype()) ctx.fail("V has dtype {}, X {}: they must match", dtype_name(v.dtype()), dtype_name(x.dtype()));
    if (w.dtype() != DType::Float32 || w.rank() != 2)
      ctx.fail("W must be a float32 matrix, got {} {}", dtype_name(w.dtype()), shape_to_string(w.shape()));
    const int64_t N = w.dim(0), D = w.dim(1);
    if (v.rank() == 0 || v.shape().back() != N || v.numel() != N)
      ctx.fail("V has shape {}, expected [1, .., 1, {}] (one value per row of W {})", shape_to_string(v.shape()), N,
               shape_to_string(w.shape()));
    if (x.rank() == 0) ctx.fail("X must have rank >= 1, got a scalar");
    const int64_t L = x.shape().back();
    if (L != 1 && L != N) ctx.fail("X's last dimension is {}: Equal(X, V) broadcasts only 1 or {}", L, N);
    std::vector<Shape> shapes{x.shape(), v.shape()};
    if (ctx.has_input(4)) shapes.push_back(ctx.input(4).to_int64_vector());
    const Shape e = ew::broadcast_or_fail(ctx, shapes);
    if (e.back() != N) ctx.fail("the one-hot rows have {} positions, W has {} rows", e.back(), N);
    size_t rank = e.size();
    if (ctx.has_input(3)) {
      const Tensor& b = ctx.input(3);
      if (b.dtype() != DType::Float32 || b.rank() == 0 || b.numel() != D || b.shape().back() != D)
        ctx.fail("B has {} {}, expected {} float32 values along its last axis", dtype_name(b.dtype()),
                 shape_to_string(b.shape()), D);
      rank = std::max(rank, b.rank());
    }
    Shape out(rank - e.size(), 1);
    out.insert(out.end(), e.begin(), e.end() - 1);
    out.push_back(D);
    ctx.allocate_output(0, DType::Float32, out);
  }

  void compute(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    if (x.dtype() == DType::Int32) run<int32_t>(ctx);
    else run<int64_t>(ctx);
  }

  KernelPlan describe(const KernelInfo& info, const std::vector<const Shape*>&) const override {
    if (info.mode == KernelMode::Reference) return KernelPlan{"one_hot_matmul_compare", "portable", ""};
    const bool gather = !table_.empty();  // V a run, W and B constants
    return KernelPlan{gather ? "one_hot_matmul_gather" : "one_hot_matmul_compare", "portable",
                      gather ? "one row of W per row where X's last dimension is 1" : "N comparisons per row"};
  }

 private:
  template <typename T>
  void run(KernelContext& ctx) {
    const Tensor& x = ctx.input(0);
    const Tensor& w = ctx.input(2);
    Tensor& y = ctx.output(0);
    const int64_t N = w.dim(0), D = w.dim(1), L = x.shape().back();
    // E's leading dimensions (the output rows) and X's, right-aligned, its last axis dropped.
    const Shape& ys = y.shape();
    const Shape rows_shape(ys.begin(), ys.end() - 1);
    const Shape x_lead(x.shape().begin(), x.shape().end() - 1);
    const int64_t rows = shape_numel(rows_shape);
    const T* xs = x.data<T>();
    const T* vs = ctx.input(1).data<T>();
    const float* ws = w.data<float>();
    const float* bs = ctx.has_input(3) ? ctx.input(3).data<float>() : nullptr;
    float* yd = y.mutable_data<float>();
    const bool gather = run_ && L == 1 && !table_.empty() && !ctx.reference_mode();
    const bool same_rows = x_lead == rows_shape;  // no broadcast of X's leading axes
    ctx.stats().variant = gather ? "one_hot_matmul_gather" : "one_hot_matmul_compare";
    ctx.stats().flops = gather ? 0.0 : static_cast<double>(rows * N);
    parallel_for(ctx.threads(), rows, std::max<int64_t>(1, 4096 / std::max<int64_t>(D, 1)), [&](int64_t r0, int64_t r1) {
      for (int64_t r = r0; r < r1; ++r) {
        float* yr = yd + r * D;
        const T* xr = xs + (same_rows ? r : ew::broadcast_offset(rows_shape, x_lead, r)) * L;
        if (gather) {
          const int64_t j = static_cast<int64_t>(xr[0]) - start_;  // both within int64
          std::memcpy(yr, table_.data() + (j >= 0 && j < N ? j : N) * D, static_cast<size_t>(D) * sizeof(float));
          continue;
        }
        if (bs) std::memcpy(yr, bs, static_cast<size_t>(D) * sizeof(float));
        else std::fill(yr, yr + D, 0.0f);
        for (int64_t j = 0; j < N; ++j)
          if (xr[L == 1 ? 0 : j] == vs[j])
            for (int64_t d = 0; d < D; ++d) yr[d] += ws[j * D + d];
        if (act_.active()) gemm::apply_epilogue(epi_, yr, D, 0, 0);
      }
    });
  }

  gemm::FusedActivation act_;  // gemm_activation's, carried over from the MatMul
  gemm::Epilogue epi_;         // its activation part
  bool run_ = false;           // V is a constant run start, start + 1, ..
  int64_t start_ = 0;
  std::vector<float> table_;   // (N + 1) x D: act(W[j] + B), then act(B) (gather path)
};

}  // namespace

ONNXMINI_REGISTER_KERNEL("one_hot_matmul", "ai.onnxmini", "OneHotMatMul", 1, INT_MAX,
                         make_kernel<OneHotMatMulKernel>);

}  // namespace onnxmini

ONNXMINI_KERNEL_FILE(tensor_one_hot_matmul);
