// Gemm: Y = alpha * op(A) * op(B) + beta * C, float32 and float64.
//
// Layout: A is M x K (K x M with transA), B is K x N (N x K with transB), all
// row-major. C (optional from opset 11) broadcasts to M x N (before opset 7 only with
// broadcast=1; broadcast=0 requires exactly M x N): a scalar, a row
// (N or 1 x N), a column (M x 1) or the full M x N.
// Fast path (float32): when beta == 1 and C is a row or column, C becomes the
// GEMM epilogue's bias (no copy of C); otherwise Y is first filled with C
// broadcast and the engine accumulates with beta. A constant B is packed once
// at session creation (sgemm_packed). float64 goes through dgemm.
// An activation fused by the graph pass (Relu / Sigmoid / Clip,
// kernels/fused_attributes.h) runs in the epilogue, after alpha/beta and C.
// Addends fused by the graph pass (Gemm -> Add -> Add, attribute
// fused_attr::kAddends = k, inputs 3 .. 3+k-1): Y = Gemm + V1 + V2 ... with numpy
// broadcasting. When every V is a scalar, a row (N) or a column (M x 1) and the
// result stays M x N, the columns are summed into one per-row bias and the rows
// into one per-column bias of the epilogue (KMeans' distance expression costs no
// pass over Y); otherwise the adds run after the GEMM as the Add nodes would.
// A Reshape between the Gemm and its Add (fused_attr::kReshape: Keras' Dense layer, MatMul
// on [B*S, K] -> Reshape to [B, S, N] -> Add(residual)): the shape input after the addends
// reshapes Y first. When the one addend has exactly the reshaped shape (no broadcast), its
// flat order is Y's, so it joins the GEMM epilogue as a residual (row i, column j at
// i * N + j) and Y is written once; other shapes take the general path.
#include <fmt/ranges.h>

#include <cstring>

#include "kernels/elementwise/elementwise.h"
#include "kernels/fused_attributes.h"
#include "kernels/gemm_engine/fused_activation.h"
#include "kernels/gemm_engine/gemm.h"
#include "kernels/registry.h"

namespace onnxmini {
namespace linalg {
namespace {

enum class CShape { None, Scalar, Row, Column, Full };

class GemmKernel : public Kernel {
 public:
  explicit GemmKernel(const KernelInfo& info)
      : alpha_(info.attrs.get_float("alpha", 1.0f)),
        beta_(info.attrs.get_float("beta", 1.0f)),
        trans_a_(info.attrs.get_int("transA", 0) != 0),
        trans_b_(info.attrs.get_int("transB", 0) != 0),
        fused_(gemm::FusedActivation::read(info)),
        addends_(static_cast<size_t>(info.attrs.get_int(fused_attr::kAddends, 0))),
        reshape_(info.attrs.get_int(fused_attr::kReshape, 0)),
        // Before opset 7, C broadcasts only when the `broadcast` attribute (default 0) says so;
        // otherwise it must be exactly M x N.
        c_must_be_full_(info.opset < 7 && info.attrs.get_int("broadcast", 0) == 0) {
    if (fused_.act == gemm::Epilogue::Activation::PRelu) info.unsupported("a fused PRelu is not supported on Gemm");
    if (reshape_ < 0 || reshape_ > 2 || (reshape_ && addends_ == 0))
      info.fail("fused reshape {} with {} addends is not supported", reshape_, addends_);
    const Tensor* b = info.constant_input(1);
    if (b && info.mode == KernelMode::Fast && b->dtype() == DType::Float32 && b->rank() == 2) {
      const int64_t K = trans_b_ ? b->dim(1) : b->dim(0), N = trans_b_ ? b->dim(0) : b->dim(1);
      packed_b_ = gemm::engine(info.gemm, info.mode).pack_b(trans_b_, K, N, b->data<float>(), b->dim(1));
    }
  }

  void prepare(KernelContext& ctx) override {
    int64_t M, N, K;
    dims(ctx, M, N, K);
    c_shape(ctx, M, N);
    ctx.allocate_output(0, ctx.input(0).dtype(), addends_ ? sum_shape(ctx, M, N) : Shape{M, N});
  }

  KernelPlan describe(const KernelInfo& info, const std::vector<const Shape*>& in) const override {
    const DType dt = info.input_dtypes.empty() ? DType::Undefined : info.input_dtypes[0];
    if (dt == DType::Float64) return KernelPlan{"gemm_dgemm", "portable", ""};
    if (in.size() < 2 || !in[0] || !in[1] || in[0]->size() != 2 || in[1]->size() != 2) return KernelPlan::at_run_time();
    gemm::SgemmArgs args;
    args.trans_a = trans_a_, args.trans_b = trans_b_;
    args.M = trans_a_ ? (*in[0])[1] : (*in[0])[0];
    args.K = trans_a_ ? (*in[0])[0] : (*in[0])[1];
    args.N = trans_b_ ? (*in[1])[0] : (*in[1])[1];
    const gemm::SgemmPath path = gemm::engine(info.gemm, info.mode).sgemm_path(args, packed_b_ != nullptr);
    return KernelPlan{gemm::sgemm_variant(gemm::GemmCaller::Gemm, path.route), path.isa, gemm::sgemm_blocking(path)};
  }

  void compute(KernelContext& ctx) override {
    int64_t M, N, K;
    dims(ctx, M, N, K);
    const CShape cs = c_shape(ctx, M, N);
    ctx.stats().flops = 2.0 * M * N * K;
    if (ctx.input(0).dtype() == DType::Float32) {
      if (addends_) compute_with_addends(ctx, M, N, K, cs);
      else compute_f32(ctx, M, N, K, cs, ctx.output(0).mutable_data<float>(), true);
    } else {
      if (addends_) ctx.unsupported("fused addends need float32, got {}", dtype_name(ctx.input(0).dtype()));
      compute_f64(ctx, M, N, K, cs);
    }
  }

 private:
  void dims(const KernelContext& ctx, int64_t& M, int64_t& N, int64_t& K) const {
    const Tensor& a = ctx.input(0);
    const Tensor& b = ctx.input(1);
    if (a.dtype() != DType::Float32 && a.dtype() != DType::Float64) ctx.unsupported("dtype {} is not supported (float, double)", dtype_name(a.dtype()));
    if (b.dtype() != a.dtype()) ctx.fail("A has dtype {}, B has {}", dtype_name(a.dtype()), dtype_name(b.dtype()));
    if (a.rank() != 2 || b.rank() != 2)
      ctx.fail("A {} and B {} must be 2-D", shape_to_string(a.shape()), shape_to_string(b.shape()));
    M = trans_a_ ? a.dim(1) : a.dim(0);
    K = trans_a_ ? a.dim(0) : a.dim(1);
    const int64_t kb = trans_b_ ? b.dim(1) : b.dim(0);
    N = trans_b_ ? b.dim(0) : b.dim(1);
    if (K != kb)
      ctx.fail("shape mismatch: op(A) is {}x{} (transA={}), op(B) is {}x{} (transB={}); inner dimensions {} and {} differ",
               M, K, int(trans_a_), kb, N, int(trans_b_), K, kb);
  }

  CShape c_shape(const KernelContext& ctx, int64_t M, int64_t N) const {
    if (!ctx.has_input(2)) return CShape::None;
    const Tensor& c = ctx.input(2);
    if (c.dtype() != ctx.input(0).dtype()) ctx.fail("C has dtype {}, A has {}", dtype_name(c.dtype()), dtype_name(ctx.input(0).dtype()));
    const Shape& s = c.shape();
    if (c_must_be_full_) {
      if (s.size() == 2 && s[0] == M && s[1] == N) return CShape::Full;
      ctx.fail("C has shape {}, expected {}x{}: before opset 7 C broadcasts only with broadcast=1", shape_to_string(s), M, N);
    }
    if (c.numel() == 1 && s.size() <= 2) return CShape::Scalar;
    if ((s.size() == 1 && s[0] == N) || (s.size() == 2 && s[0] == 1 && s[1] == N)) return CShape::Row;
    if (s.size() == 2 && s[0] == M && s[1] == 1) return CShape::Column;
    if (s.size() == 2 && s[0] == M && s[1] == N) return CShape::Full;
    ctx.fail("C has shape {}, which does not broadcast to the output {}x{}", shape_to_string(s), M, N);
  }

  // Y[i, j] = C broadcast at (i, j).
  template <typename T>
  static void fill_c(const T* c, CShape cs, int64_t M, int64_t N, T* y) {
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < N; ++j)
        y[i * N + j] = cs == CShape::Scalar ? c[0] : cs == CShape::Row ? c[j] : cs == CShape::Column ? c[i] : c[i * N + j];
  }

  // The reference: one dot product per output element, accumulated in double.
  template <typename T>
  void reference(const KernelContext& ctx, int64_t M, int64_t N, int64_t K, CShape cs, T* y) const {
    const Tensor& A = ctx.input(0);
    const Tensor& B = ctx.input(1);
    const T* a = A.template data<T>();
    const T* b = B.template data<T>();
    if (cs != CShape::None) fill_c(ctx.input(2).template data<T>(), cs, M, N, y);
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < N; ++j) {
        double acc = 0;
        for (int64_t k = 0; k < K; ++k) {
          const T av = trans_a_ ? a[k * A.dim(1) + i] : a[i * A.dim(1) + k];
          const T bv = trans_b_ ? b[j * B.dim(1) + k] : b[k * B.dim(1) + j];
          acc += static_cast<double>(av) * bv;
        }
        const double cv = (cs == CShape::None || beta_ == 0.0f) ? 0.0 : static_cast<double>(beta_) * y[i * N + j];
        y[i * N + j] = static_cast<T>(alpha_ * acc + cv);
      }
  }

  // Y (M x N at y) = alpha * op(A) op(B) + beta * C, then the fused activation
  // when `activation`. `extra` (per-row and per-column vectors) joins the epilogue.
  // `residual` (M x N, row stride N) is added after C and the extra vectors, before the activation.
  void compute_f32(KernelContext& ctx, int64_t M, int64_t N, int64_t K, CShape cs, float* y, bool activation,
                   const float* extra_col = nullptr, const float* extra_row = nullptr,
                   const float* residual = nullptr) {
    if (ctx.reference_mode()) {
      ctx.stats().variant = "gemm_reference";
      reference<float>(ctx, M, N, K, cs, y);
      if (activation && fused_.active()) {
        gemm::Epilogue e;
        fused_.set(e);
        for (int64_t i = 0; i < M; ++i) gemm::apply_epilogue(e, y + i * N, N, i, 0);
      }
      return;
    }
    const Tensor& a = ctx.input(0);
    const Tensor& b = ctx.input(1);
    gemm::SgemmArgs args;
    args.trans_a = trans_a_, args.trans_b = trans_b_;
    args.M = M, args.N = N, args.K = K, args.alpha = alpha_;
    args.A = a.data<float>(), args.lda = a.dim(1);
    args.B = b.data<float>(), args.ldb = b.dim(1);
    args.C = y, args.ldc = N;
    if (cs != CShape::None && beta_ == 1.0f && (cs == CShape::Row || cs == CShape::Column)) {
      args.epilogue.bias = ctx.input(2).data<float>();  // C as a bias vector, fused into the store
      args.epilogue.bias_per_row = cs == CShape::Column;
    } else if (cs != CShape::None && beta_ != 0.0f) {
      fill_c(ctx.input(2).data<float>(), cs, M, N, y);
      args.beta = beta_;
    }
    if (extra_col || extra_row) set_extra_bias(args.epilogue, extra_col, extra_row);
    if (residual) args.epilogue.residual = residual, args.epilogue.residual_ld = N;
    if (activation) fused_.set(args.epilogue);
    const gemm::SgemmPath path = ctx.gemm().sgemm_path(args, packed_b_ != nullptr);
    ctx.stats().variant = gemm::sgemm_variant(gemm::GemmCaller::Gemm, path.route);
    ctx.stats().isa = path.isa;
    if (packed_b_) ctx.gemm().sgemm_packed(args, *packed_b_, ctx.threads());
    else ctx.gemm().sgemm(args, ctx.threads());
  }

  // ---- fused addends (inputs 3 ..) ----
  const Tensor& addend(const KernelContext& ctx, size_t i) const {
    const Tensor& v = ctx.input(3 + i);
    if (v.dtype() != DType::Float32) ctx.fail("fused addend {} has dtype {}, expected float", i, dtype_name(v.dtype()));
    return v;
  }

  // Broadcast shape of Y (M x N) and every addend, as the chain of Adds produced it.
  Shape sum_shape(const KernelContext& ctx, int64_t M, int64_t N) const {
    std::vector<Shape> shapes{y_shape(ctx, M, N)};
    for (size_t i = 0; i < addends_; ++i) shapes.push_back(addend(ctx, i).shape());
    try {
      return broadcast_shapes(shapes);
    } catch (const Error& e) {
      ctx.fail("fused Add: {}", e.what());
    }
  }

  // Y's shape before the addends: M x N, or the fused Reshape's result (ONNX Reshape's rules:
  // 0 copies Y's dimension unless allowzero, one -1 is inferred).
  Shape y_shape(const KernelContext& ctx, int64_t M, int64_t N) const {
    if (!reshape_) return {M, N};
    const std::vector<int64_t> spec = ctx.input(3 + addends_).to_int64_vector();
    const Shape in{M, N};
    Shape out(spec.size());
    int64_t known = 1, infer = -1;
    for (size_t i = 0; i < spec.size(); ++i) {
      int64_t d = spec[i];
      if (d == 0 && reshape_ != 2) {
        if (i >= in.size()) ctx.fail("fused Reshape: shape {} copies dimension {} of the {}x{} Gemm output", fmt::join(spec, ","), i, M, N);
        d = in[i];
      }
      if (d == -1 && infer < 0) {
        infer = static_cast<int64_t>(i);
        continue;
      }
      if (d < 0) ctx.fail("fused Reshape: shape {} has invalid dimension {}", fmt::join(spec, ","), d);
      out[i] = d;
      known *= d;
    }
    if (infer >= 0) {
      if (known == 0 || (M * N) % known != 0) ctx.fail("fused Reshape: cannot reshape {}x{} into {}", M, N, fmt::join(spec, ","));
      out[infer] = M * N / known;
    }
    if (shape_numel(out) != M * N) ctx.fail("fused Reshape: cannot reshape {}x{} into {}", M, N, fmt::join(spec, ","));
    return out;
  }

  static void set_extra_bias(gemm::Epilogue& e, const float* col, const float* row) {
    e.bias = col ? col : row;
    e.bias_per_row = col != nullptr;
    e.bias2 = col ? row : nullptr;
  }

  // Where addend v sits against an M x N output: per row, per column, one value, or none of these.
  enum class Along { Row, Column, Scalar, Other };
  static Along along(const Tensor& v, int64_t M, int64_t N) {
    const Shape& s = v.shape();
    if (v.numel() == 1 && s.size() <= 2) return Along::Scalar;
    if ((s.size() == 1 && s[0] == N) || (s.size() == 2 && s[0] == 1 && s[1] == N)) return Along::Column;
    if (s.size() == 2 && s[0] == M && s[1] == 1) return Along::Row;
    return Along::Other;
  }

  void compute_with_addends(KernelContext& ctx, int64_t M, int64_t N, int64_t K, CShape cs) {
    Tensor& y = ctx.output(0);
    if (reshape_) {  // one addend of the reshaped shape: the epilogue's residual
      if (!ctx.reference_mode() && addends_ == 1 && addend(ctx, 0).shape() == y.shape() &&
          y.shape() == y_shape(ctx, M, N))
        return compute_f32(ctx, M, N, K, cs, y.mutable_data<float>(), true, nullptr, nullptr, addend(ctx, 0).data<float>());
      return addends_after(ctx, M, N, K, cs);
    }
    bool vectors = !ctx.reference_mode() && y.shape() == Shape{M, N};
    for (size_t i = 0; vectors && i < addends_; ++i) vectors = along(addend(ctx, i), M, N) != Along::Other;
    if (!vectors) return addends_after(ctx, M, N, K, cs);
    // Sum the per-row terms (column C, M x 1 addends, scalars) and the per-column
    // terms (row C, N addends) in model order into two small vectors.
    Tensor rows = ctx.scratch(DType::Float32, {M}), cols = ctx.scratch(DType::Float32, {N});
    float* r = rows.mutable_data<float>();
    float* c = cols.mutable_data<float>();
    std::fill(r, r + M, 0.0f);
    std::fill(c, c + N, 0.0f);
    bool any_r = false, any_c = false;
    if (beta_ == 1.0f && (cs == CShape::Row || cs == CShape::Column)) {
      const float* cv = ctx.input(2).data<float>();
      if (cs == CShape::Column) for (int64_t i = 0; i < M; ++i) r[i] += cv[i];
      else for (int64_t j = 0; j < N; ++j) c[j] += cv[j];
      (cs == CShape::Column ? any_r : any_c) = true;
      cs = CShape::None;  // carried by the vectors now
    }
    for (size_t k = 0; k < addends_; ++k) {
      const Tensor& v = addend(ctx, k);
      const float* vd = v.data<float>();
      switch (along(v, M, N)) {
        case Along::Row: for (int64_t i = 0; i < M; ++i) r[i] += vd[i]; any_r = true; break;
        case Along::Column: for (int64_t j = 0; j < N; ++j) c[j] += vd[j]; any_c = true; break;
        default: for (int64_t j = 0; j < N; ++j) c[j] += vd[0]; any_c = true; break;
      }
    }
    compute_f32(ctx, M, N, K, cs, y.mutable_data<float>(), true, any_r ? r : nullptr, any_c ? c : nullptr);
  }

  // General shapes (and the reference mode): the GEMM into a scratch M x N, then
  // each Add with broadcasting, then the fused activation over the result.
  void addends_after(KernelContext& ctx, int64_t M, int64_t N, int64_t K, CShape cs) {
    Tensor cur = ctx.scratch(DType::Float32, {M, N});
    compute_f32(ctx, M, N, K, cs, cur.mutable_data<float>(), false);
    if (reshape_) cur = cur.view(y_shape(ctx, M, N));
    auto plus = [](float a, float b) { return a + b; };
    for (size_t k = 0; k < addends_; ++k) {
      const Tensor& v = addend(ctx, k);
      const Shape out = broadcast_shapes({cur.shape(), v.shape()});
      Tensor next = k + 1 == addends_ ? ctx.output(0) : ctx.scratch(DType::Float32, out);
      if (ctx.reference_mode())
        ew::binary_reference(out, cur.shape(), v.shape(), cur.data<float>(), v.data<float>(), next.mutable_data<float>(), plus);
      else
        ew::binary_fast(BroadcastPlan({cur.shape(), v.shape()}), cur.data<float>(), v.data<float>(),
                        next.mutable_data<float>(), plus, ctx.threads());
      cur = next;
    }
    if (fused_.active()) {
      gemm::Epilogue e;
      fused_.set(e);
      gemm::apply_epilogue(e, cur.mutable_data<float>(), cur.numel(), 0, 0);
    }
  }

  void compute_f64(KernelContext& ctx, int64_t M, int64_t N, int64_t K, CShape cs) {
    if (fused_.active()) ctx.unsupported("a fused activation needs float32, got float64");
    double* y = ctx.output(0).mutable_data<double>();
    if (ctx.reference_mode()) {
      ctx.stats().variant = "gemm_reference";
      return reference<double>(ctx, M, N, K, cs, y);
    }
    const Tensor& a = ctx.input(0);
    const Tensor& b = ctx.input(1);
    gemm::DgemmArgs args;
    args.trans_a = trans_a_, args.trans_b = trans_b_;
    args.M = M, args.N = N, args.K = K, args.alpha = alpha_;
    args.A = a.data<double>(), args.lda = a.dim(1);
    args.B = b.data<double>(), args.ldb = b.dim(1);
    args.C = y, args.ldc = N;
    if (cs != CShape::None && beta_ != 0.0f) {
      fill_c(ctx.input(2).data<double>(), cs, M, N, y);
      args.beta = beta_;
    }
    ctx.stats().variant = "gemm_dgemm";
    ctx.gemm().dgemm(args, ctx.threads());
  }

  float alpha_, beta_;
  bool trans_a_, trans_b_;
  std::shared_ptr<gemm::PackedB> packed_b_;  // constant B, packed at session creation
  gemm::FusedActivation fused_;              // set by the graph fusion pass
  size_t addends_;                           // fused Add inputs (3 ..), set by the graph fusion pass
  int64_t reshape_;                          // fused Reshape before the addends: 0 none, 1, 2 allowzero
  bool c_must_be_full_;                      // opset < 7 with broadcast=0: C is exactly M x N
};

}  // namespace

ONNXMINI_REGISTER_KERNEL("gemm", "", "Gemm", 1, INT_MAX, make_kernel<GemmKernel>);

}  // namespace linalg
}  // namespace onnxmini

ONNXMINI_KERNEL_FILE(linalg_gemm);
