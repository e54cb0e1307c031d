// MatMul with numpy semantics: float32, float64, int32, int64.
//
// Layout: A is [...batchA, M, K], B is [...batchB, K, N], row-major; the batch
// dims broadcast against each other. A 1-D A is [1, K] with M dropped from the
// output; a 1-D B is [K, 1] with N dropped. Every matrix is contiguous, so a
// batch is a base pointer plus batch index * (rows * cols).
// float32 variants (no copies anywhere):
//   matmul_folded     B has no batch (or all 1s): A's batch folds into M, one GEMM
//                     (B prepacked at session creation when it is a constant)
//   matmul_batched    batch dims equal, or A has no batch: sgemm_batched with
//                     strides (0 for the side that is broadcast); tiny matrices
//                     (attention's [B, H, S, S] x [B, H, S, D], S <= 64) take the
//                     engine's small-matrix route, "matmul_batched+gemm_small/builtin"
//   matmul_broadcast  anything else: one sgemm per output matrix, offsets from
//                     the broadcast strides
// The profile's kernel_variant joins the layout and the engine's route:
// "matmul_folded+gemm_skinny/builtin" (gemm::sgemm_variant).
// float64 uses dgemm per matrix; integers a plain triple loop (wrapping like onnxruntime).
// Fused by the graph pass (gemm_activation, runtime/graph_fusion.cc; float32 only): a bias
// input 2 of shape [1, .., 1, N] and an activation (kernels/fused_attributes.h); a bias of
// higher rank than Y adds leading 1s to Y's shape, as the Add it replaces did. Applied in the GEMM
// epilogue of matmul_folded (a [B, S, K] x [K, N] MatMul + Add + Gelu of a transformer
// MLP), after the GEMM on the other layouts and the reference path.
#include <algorithm>

#include "kernels/gemm_engine/fused_activation.h"
#include "kernels/gemm_engine/gemm.h"
#include "kernels/registry.h"

namespace onnxmini {
namespace linalg {
namespace {

// The resolved problem of one call.
struct MatMulPlan {
  int64_t M = 1, N = 1, K = 1;
  Shape out_batch, out_shape;
  std::vector<int64_t> a_stride, b_stride;  // per out-batch axis, in matrices (0: broadcast)
  int64_t a_batch = 1, b_batch = 1, batch = 1;

  // Matrix index in A and B of output matrix `i`.
  void offsets(int64_t i, int64_t& ia, int64_t& ib) const {
    ia = ib = 0;
    for (size_t d = out_batch.size(); d-- > 0;) {
      const int64_t c = i % out_batch[d];
      i /= out_batch[d];
      ia += c * a_stride[d];
      ib += c * b_stride[d];
    }
  }
};

// ctx: a KernelContext (run time) or KernelInfo (describe): what fail() names.
template <typename Ctx>
MatMulPlan make_plan(const Ctx& ctx, const Shape& sa, const Shape& sb) {
  if (sa.empty() || sb.empty()) ctx.fail("inputs must have rank >= 1, got {} and {}", shape_to_string(sa), shape_to_string(sb));
  Shape a = sa.size() == 1 ? Shape{1, sa[0]} : sa;
  Shape b = sb.size() == 1 ? Shape{sb[0], 1} : sb;
  MatMulPlan p;
  p.M = a[a.size() - 2], p.K = a[a.size() - 1], p.N = b[b.size() - 1];
  if (b[b.size() - 2] != p.K)
    ctx.fail("inner dimensions differ: A {} has K = {}, B {} has K = {}", shape_to_string(sa), p.K, shape_to_string(sb), b[b.size() - 2]);
  const size_t ra = a.size() - 2, rb = b.size() - 2, r = std::max(ra, rb);
  p.out_batch.assign(r, 1);
  p.a_stride.assign(r, 0);
  p.b_stride.assign(r, 0);
  int64_t sta = 1, stb = 1;
  for (size_t i = 0; i < r; ++i) {  // from the innermost batch axis outwards
    const size_t d = r - 1 - i;
    const int64_t da = i < ra ? a[ra - 1 - i] : 1, db = i < rb ? b[rb - 1 - i] : 1;
    if (da != db && da != 1 && db != 1)
      ctx.fail("batch dimensions do not broadcast: A {} and B {} (axis {}: {} vs {})", shape_to_string(sa), shape_to_string(sb), d, da, db);
    p.out_batch[d] = std::max(da, db);
    if (da == 0 || db == 0) p.out_batch[d] = 0;
    p.a_stride[d] = da == 1 ? 0 : sta;
    p.b_stride[d] = db == 1 ? 0 : stb;
    sta *= da, stb *= db;
  }
  p.a_batch = sta, p.b_batch = stb, p.batch = shape_numel(p.out_batch);
  p.out_shape = p.out_batch;
  if (sa.size() > 1) p.out_shape.push_back(p.M);
  if (sb.size() > 1) p.out_shape.push_back(p.N);
  return p;
}

// The reference (and the integer path): C = A * B, one dot product per element.
template <typename T, typename Acc>
void matmul_loops(const MatMulPlan& p, const T* a, const T* b, T* c) {
  for (int64_t i = 0; i < p.batch; ++i) {
    int64_t ia, ib;
    p.offsets(i, ia, ib);
    const T* am = a + ia * p.M * p.K;
    const T* bm = b + ib * p.K * p.N;
    T* cm = c + i * p.M * p.N;
    for (int64_t m = 0; m < p.M; ++m)
      for (int64_t n = 0; n < p.N; ++n) {
        Acc acc = 0;
        for (int64_t k = 0; k < p.K; ++k) acc += static_cast<Acc>(am[m * p.K + k]) * static_cast<Acc>(bm[k * p.N + n]);
        cm[m * p.N + n] = static_cast<T>(acc);
      }
  }
}

// How f32 lays the batch out (see the header): one folded GEMM, sgemm_batched
// with strides, or one sgemm per output matrix.
gemm::GemmCaller f32_layout(const MatMulPlan& p) {
  if (p.b_batch == 1 && p.a_batch == p.batch) return gemm::GemmCaller::MatMulFolded;
  if (p.a_batch == 1 || p.a_batch == p.b_batch) {
    // Equal batch counts may still be transposed broadcasts ([2,1] vs [1,2]); only equal shapes are strided.
    const int64_t sa = p.a_batch == 1 ? 0 : 1, sb = p.b_batch == 1 ? 0 : 1;
    bool simple = true;
    int64_t ia, ib;
    for (int64_t i = 0; i < p.batch && simple; ++i) {
      p.offsets(i, ia, ib);
      simple = ia == sa * i && ib == sb * i;
    }
    if (simple) return gemm::GemmCaller::MatMulBatched;
  }
  return gemm::GemmCaller::MatMulBroadcast;
}

class MatMulKernel : public Kernel {
 public:
  explicit MatMulKernel(const KernelInfo& info) : fused_(gemm::FusedActivation::read(info)) {
    if (fused_.act == gemm::Epilogue::Activation::PRelu) info.unsupported("a fused PRelu is not supported on MatMul");
    const Tensor* b = info.constant_input(1);
    if (b && info.mode == KernelMode::Fast && b->dtype() == DType::Float32 && b->rank() == 2)
      packed_b_ = gemm::engine(info.gemm, info.mode).pack_b(false, b->dim(0), b->dim(1), b->data<float>(), b->dim(1));
  }

  void prepare(KernelContext& ctx) override {
    const Tensor& a = ctx.input(0);
    const Tensor& b = ctx.input(1);
    if (a.dtype() != b.dtype()) ctx.fail("A has dtype {}, B has {}", dtype_name(a.dtype()), dtype_name(b.dtype()));
    if (a.dtype() != DType::Float32 && a.dtype() != DType::Float64 && a.dtype() != DType::Int32 && a.dtype() != DType::Int64)
      ctx.unsupported("dtype {} is not supported (float, double, int32, int64)", dtype_name(a.dtype()));
    const MatMulPlan p = make_plan(ctx, a.shape(), b.shape());
    if ((fused_.active() || ctx.has_input(2)) && a.dtype() != DType::Float32)
      ctx.unsupported("a fused bias / activation needs float32, got {}", dtype_name(a.dtype()));
    Shape out = p.out_shape;
    if (ctx.has_input(2)) {
      const Tensor& bias = ctx.input(2);
      if (bias.dtype() != DType::Float32 || bias.rank() == 0 || bias.numel() != p.N || bias.shape().back() != p.N)
        ctx.fail("fused bias (input 2) must be float [1, .., 1, {}], got {} {}", p.N, dtype_name(bias.dtype()),
                 shape_to_string(bias.shape()));
      if (bias.rank() > out.size()) out.insert(out.begin(), bias.rank() - out.size(), 1);
    }
    ctx.allocate_output(0, a.dtype(), out);
  }

  KernelPlan describe(const KernelInfo& info, const std::vector<const Shape*>& in) const override {
    const DType dt = info.input_dtypes.empty() ? DType::Undefined : info.input_dtypes[0];
    if (dt == DType::Float64) return KernelPlan{"matmul_dgemm", "portable", ""};
    if (dt == DType::Int32 || dt == DType::Int64) return KernelPlan{"matmul_int_loops", "portable", ""};
    if (in.size() < 2 || !in[0] || !in[1]) return KernelPlan::at_run_time();
    const MatMulPlan p = make_plan(info, *in[0], *in[1]);
    const gemm::GemmCaller layout = f32_layout(p);
    gemm::SgemmArgs args;
    args.M = layout == gemm::GemmCaller::MatMulFolded ? p.batch * p.M : p.M;
    args.N = p.N, args.K = p.K;
    const bool prepacked = layout == gemm::GemmCaller::MatMulFolded && packed_b_;
    const gemm::GemmEngine& engine = gemm::engine(info.gemm, info.mode);
    const gemm::SgemmPath path =
        layout == gemm::GemmCaller::MatMulBatched ? engine.sgemm_batched_path(args) : engine.sgemm_path(args, prepacked);
    return KernelPlan{gemm::sgemm_variant(layout, path.route), path.isa, gemm::sgemm_blocking(path)};
  }

  void compute(KernelContext& ctx) override {
    const Tensor& a = ctx.input(0);
    const Tensor& b = ctx.input(1);
    Tensor& y = ctx.output(0);
    const MatMulPlan p = make_plan(ctx, a.shape(), b.shape());
    ctx.stats().flops = 2.0 * p.batch * p.M * p.N * p.K;
    if (y.numel() == 0) return;
    switch (a.dtype()) {
      case DType::Float32:
        if (ctx.reference_mode()) {
          ctx.stats().variant = "matmul_reference";
          matmul_loops<float, double>(p, a.data<float>(), b.data<float>(), y.mutable_data<float>());
          return epilogue_after(ctx, p, y.mutable_data<float>());
        }
        return f32(ctx, p, a.data<float>(), b.data<float>(), y.mutable_data<float>());
      case DType::Float64:
        if (ctx.reference_mode()) {
          ctx.stats().variant = "matmul_reference";
          return matmul_loops<double, double>(p, a.data<double>(), b.data<double>(), y.mutable_data<double>());
        }
        return f64(ctx, p, a.data<double>(), b.data<double>(), y.mutable_data<double>());
      case DType::Int32:
        ctx.stats().variant = "matmul_int_loops";
        return matmul_loops<int32_t, int64_t>(p, a.data<int32_t>(), b.data<int32_t>(), y.mutable_data<int32_t>());
      default:
        ctx.stats().variant = "matmul_int_loops";
        return matmul_loops<int64_t, int64_t>(p, a.data<int64_t>(), b.data<int64_t>(), y.mutable_data<int64_t>());
    }
  }

 private:
  // The variant and ISA of this call: the MatMul layout plus the engine's route.
  static void report(KernelContext& ctx, gemm::GemmCaller caller, const gemm::SgemmArgs& args, bool prepacked_b) {
    const gemm::SgemmPath path = caller == gemm::GemmCaller::MatMulBatched ? ctx.gemm().sgemm_batched_path(args)
                                                                          : ctx.gemm().sgemm_path(args, prepacked_b);
    ctx.stats().variant = gemm::sgemm_variant(caller, path.route);
    ctx.stats().isa = path.isa;
  }

  // The fused bias + activation as a separate pass over Y's rows of N (paths without it in
  // the GEMM epilogue).
  void epilogue_after(KernelContext& ctx, const MatMulPlan& p, float* c) const {
    if (!fused_.active() && !ctx.has_input(2)) return;
    gemm::Epilogue e;
    e.bias = ctx.has_input(2) ? ctx.input(2).data<float>() : nullptr;
    fused_.set(e);
    const int64_t rows = p.batch * p.M;
    for (int64_t r = 0; r < rows; ++r) gemm::apply_epilogue(e, c + r * p.N, p.N, r, 0);
  }

  void f32(KernelContext& ctx, const MatMulPlan& p, const float* a, const float* b, float* c) const {
    gemm::SgemmArgs args;
    args.M = p.M, args.N = p.N, args.K = p.K;
    args.A = a, args.lda = p.K, args.B = b, args.ldb = p.N, args.C = c, args.ldc = p.N;
    const auto& g = ctx.gemm();
    const gemm::GemmCaller layout = f32_layout(p);  // shared with describe()
    if (layout == gemm::GemmCaller::MatMulFolded) {
      args.M = p.batch * p.M;  // A's matrices are stacked rows of one tall matrix
      args.epilogue.bias = ctx.has_input(2) ? ctx.input(2).data<float>() : nullptr;
      fused_.set(args.epilogue);
      report(ctx, gemm::GemmCaller::MatMulFolded, args, packed_b_ != nullptr);
      if (packed_b_) g.sgemm_packed(args, *packed_b_, ctx.threads());
      else g.sgemm(args, ctx.threads());
      return;
    }
    if (layout == gemm::GemmCaller::MatMulBatched) {
      gemm::BatchStrides st;
      st.a = p.a_batch == 1 ? 0 : p.M * p.K;
      st.b = p.b_batch == 1 ? 0 : p.K * p.N;
      st.c = p.M * p.N;
      report(ctx, gemm::GemmCaller::MatMulBatched, args, false);
      g.sgemm_batched(args, p.batch, st, ctx.threads());
      return epilogue_after(ctx, p, c);
    }
    report(ctx, gemm::GemmCaller::MatMulBroadcast, args, false);
    for (int64_t i = 0; i < p.batch; ++i) {
      int64_t ia, ib;
      p.offsets(i, ia, ib);
      args.A = a + ia * p.M * p.K, args.B = b + ib * p.K * p.N, args.C = c + i * p.M * p.N;
      g.sgemm(args, ctx.threads());
    }
    epilogue_after(ctx, p, c);
  }

  void f64(KernelContext& ctx, const MatMulPlan& p, const double* a, const double* b, double* c) const {
    ctx.stats().variant = "matmul_dgemm";
    gemm::DgemmArgs args;
    args.M = p.M, args.N = p.N, args.K = p.K, args.lda = p.K, args.ldb = p.N, args.ldc = p.N;
    for (int64_t i = 0; i < p.batch; ++i) {
      int64_t ia, ib;
      p.offsets(i, ia, ib);
      args.A = a + ia * p.M * p.K, args.B = b + ib * p.K * p.N, args.C = c + i * p.M * p.N;
      ctx.gemm().dgemm(args, ctx.threads());
    }
  }

  std::shared_ptr<gemm::PackedB> packed_b_;  // constant 2-D B, packed at session creation
  gemm::FusedActivation fused_;               // set by the graph fusion pass (with input 2, the bias)
};

}  // namespace

ONNXMINI_REGISTER_KERNEL("matmul", "", "MatMul", 1, INT_MAX, make_kernel<MatMulKernel>);

}  // namespace linalg
}  // namespace onnxmini

ONNXMINI_KERNEL_FILE(linalg_matmul);
