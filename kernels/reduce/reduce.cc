// ReduceSum, ReduceSumSquare, ReduceMean, ReduceMax, ReduceMin, ReduceProd,
// ReduceL1, ReduceL2, ReduceLogSum, ReduceLogSumExp (opsets 1-23).
// Axes are an attribute up to opset 12 (ReduceSum) / 17 (the others) and an
// optional input after, together with noop_with_empty_axes. Negative axes
// count from the end; no axes means all axes (or, with noop_with_empty_axes,
// no reduction: each element goes through map + finalize alone, which is what
// onnxruntime does, e.g. ReduceSumSquare squares). Reducing a zero-size axis
// gives the op's empty value (Sum 0, Prod 1, Max -inf, Min +inf, LogSum -inf...).
// dtypes: float, double, int32, int64; ReduceMax/Min also int8, uint8 and bool.
//
// Fast path, data layout: axes of size 1 are dropped and neighbouring axes of
// the same kind (kept / reduced) merged. When the reduced axes form one block
// the input is viewed as (outer, reduced, inner) in place; otherwise it is
// first transposed to (kept..., reduced...) so that inner = 1. Then:
//  - inner == 1: each output reduces one contiguous run of `reduced` elements
//    (reduce_rows; float32 rows of <= 64 with AVX2/AVX-512: reduce_short_rows,
//    one SIMD register per row);
//  - inner  > 1: each output tile of kTile neighbours accumulates rows of
//    `inner` elements, a contiguous vectorisable loop (reduce_columns).
// Work is split over outer x (inner tiles or row blocks) and is independent of
// the thread count, so results are bit-identical for any number of threads.
//
// Accuracy: float32 sums are pairwise. A run sums 8 interleaved lanes (the
// compiler turns them into one SIMD register) over blocks of at most
// kLeaf elements and merges halves recursively; column sums add blocks of kLeaf
// rows and merge them like a binary counter. The rounding error then grows
// with log2(n) instead of n, so a 1M-element float sum stays near 1e-6
// relative where a naive loop drifts to ~1e-4.
#include "kernels/reduce/reduce_ops.h"
#include "kernels/registry.h"
#include "kernels/tensor/tensor_utils.h"
#include "kernels/tensor/transpose.h"

namespace onnxmini {

namespace {

using namespace tensor_ops;
using namespace reduce_ops;

constexpr int64_t kLeaf = 128;     // elements (or rows) summed plainly before merging pairwise
constexpr int64_t kRowBlock = 1 << 16;  // a long run is split into independent blocks of this size
constexpr int64_t kTile = 64;      // output columns accumulated together when inner > 1

// ---- inner == 1: contiguous runs ----

template <typename Op, typename T, typename A>
A reduce_run(const T* x, int64_t n, A shift) {
  if (n <= kLeaf) {
    A lane[8];
    for (int j = 0; j < 8; ++j) lane[j] = Op::init();
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
      for (int j = 0; j < 8; ++j) lane[j] = Op::combine(lane[j], Op::map(static_cast<A>(x[i + j]), shift));
    for (; i < n; ++i) lane[0] = Op::combine(lane[0], Op::map(static_cast<A>(x[i]), shift));
    return Op::combine(Op::combine(Op::combine(lane[0], lane[1]), Op::combine(lane[2], lane[3])),
                       Op::combine(Op::combine(lane[4], lane[5]), Op::combine(lane[6], lane[7])));
  }
  const int64_t half = (n / 2 + 7) / 8 * 8;
  return Op::combine(reduce_run<Op>(x, half, shift), reduce_run<Op>(x + half, n - half, shift));
}

template <typename Op, typename A>
A combine_pairwise(const A* v, int64_t n) {
  if (n == 1) return v[0];
  const int64_t half = n / 2;
  return Op::combine(combine_pairwise<Op>(v, half), combine_pairwise<Op>(v + half, n - half));
}

// out[o] = finalize(reduce of x[o*n .. o*n+n)); long runs are cut into
// kRowBlock blocks reduced in parallel, then merged pairwise.
template <typename Op, typename T, typename A>
void reduce_rows(const T* x, int64_t outer, int64_t n, const A* shift, A* out, ThreadPool* pool) {
  const int64_t blocks = std::max<int64_t>(1, (n + kRowBlock - 1) / kRowBlock);
  std::vector<A> partial(outer * blocks);
  parallel_for(pool, outer * blocks, std::max<int64_t>(1, 32768 / std::max<int64_t>(1, std::min(n, kRowBlock))),
               [&](int64_t w0, int64_t w1) {
                 for (int64_t w = w0; w < w1; ++w) {
                   const int64_t o = w / blocks, b = w % blocks;
                   const int64_t begin = b * kRowBlock, len = std::min(kRowBlock, n - begin);
                   partial[w] = len > 0 ? reduce_run<Op>(x + o * n + begin, len, shift ? shift[o] : A(0)) : Op::init();
                 }
               });
  for (int64_t o = 0; o < outer; ++o) out[o] = combine_pairwise<Op>(partial.data() + o * blocks, blocks);
}

// Short float32 rows (n <= kShortRow) with a SIMD table: one register per row
// (f32_kernels_impl.h) instead of the 8-lane pairwise engine, its per-row
// partials and its merge; the few terms per lane keep the pairwise accuracy.
constexpr int64_t kShortRow = 64;

template <typename Op, typename T, typename A>
bool reduce_short_rows(const T* x, int64_t outer, int64_t n, A* out, ThreadPool* pool) {
  if constexpr (std::is_same<T, float>::value && Op::kSimdRow >= 0) {
    const simd::ReduceRowsFn fn = simd::f32_kernels().reduce_rows[Op::kSimdRow];
    if (!fn || n > kShortRow) return false;
    // Threads take blocks of 16 rows (a multiple of every SIMD width), so rows
    // are grouped the same way for any thread count: bit-identical results.
    const int64_t blocks = (outer + 15) / 16;
    parallel_for(pool, blocks, std::max<int64_t>(1, 2048 / n), [&](int64_t b0, int64_t b1) {
      const int64_t o0 = b0 * 16, o1 = std::min(outer, b1 * 16);
      fn(x + o0 * n, o1 - o0, n, out + o0);
    });
    return true;
  }
  return false;
}

// ---- inner > 1: columns ----

// acc[0..w) = reduce over r of map(x[r*inner + j]) for the kTile-wide column
// tile starting at x; rows are summed in blocks of kLeaf and the block results
// merged like a binary counter (level k holds the sum of 2^k blocks).
template <typename Op, typename T, typename A>
void reduce_tile(const T* x, int64_t n, int64_t inner, int64_t w, const A* shift, A* acc) {
  A stack[64][kTile];
  int level[64];
  int depth = 0;
  for (int64_t r0 = 0; r0 < n; r0 += kLeaf) {
    A* blk = stack[depth];
    for (int64_t j = 0; j < w; ++j) blk[j] = Op::init();
    const int64_t r1 = std::min(n, r0 + kLeaf);
    for (int64_t r = r0; r < r1; ++r) {
      const T* row = x + r * inner;
      for (int64_t j = 0; j < w; ++j) blk[j] = Op::combine(blk[j], Op::map(static_cast<A>(row[j]), shift ? shift[j] : A(0)));
    }
    level[depth++] = 0;
    while (depth >= 2 && level[depth - 1] == level[depth - 2]) {
      for (int64_t j = 0; j < w; ++j) stack[depth - 2][j] = Op::combine(stack[depth - 2][j], stack[depth - 1][j]);
      ++level[depth - 2];
      --depth;
    }
  }
  for (int64_t j = 0; j < w; ++j) acc[j] = depth ? stack[depth - 1][j] : Op::init();
  for (int d = depth - 2; d >= 0; --d)
    for (int64_t j = 0; j < w; ++j) acc[j] = Op::combine(stack[d][j], acc[j]);
}

template <typename Op, typename T, typename A>
void reduce_columns(const T* x, int64_t outer, int64_t n, int64_t inner, const A* shift, A* out, ThreadPool* pool) {
  const int64_t tiles = (inner + kTile - 1) / kTile;
  parallel_for(pool, outer * tiles, std::max<int64_t>(1, 32768 / std::max<int64_t>(1, n * kTile)),
               [&](int64_t w0, int64_t w1) {
                 for (int64_t t = w0; t < w1; ++t) {
                   const int64_t o = t / tiles, j0 = (t % tiles) * kTile, w = std::min(kTile, inner - j0);
                   const A* sh = shift ? shift + o * inner + j0 : nullptr;
                   reduce_tile<Op>(x + o * n * inner + j0, n, inner, w, sh, out + o * inner + j0);
                 }
               });
}

// ---- the plan: which layout the fast path sees ----

struct ReducePlan {
  Shape out_shape;               // with or without kept dims, per keepdims
  std::vector<bool> reduced;     // per input axis
  int64_t outer = 1, n = 1, inner = 1;
  std::vector<int64_t> perm;     // non-empty: transpose to (kept, reduced) first
};

ReducePlan make_plan(const Shape& shape, const std::vector<bool>& reduced, bool keepdims) {
  ReducePlan p;
  p.reduced = reduced;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (!reduced[d]) p.out_shape.push_back(shape[d]);
    else if (keepdims) p.out_shape.push_back(1);
  }
  // Merged kinds of the axes of size != 1: e.g. K R K, R K R (needs a transpose).
  std::vector<std::pair<bool, int64_t>> runs;  // (reduced?, merged size)
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 1) continue;
    if (!runs.empty() && runs.back().first == reduced[d]) runs.back().second *= shape[d];
    else runs.push_back({reduced[d], shape[d]});
  }
  int reduced_runs = 0;
  for (auto& r : runs) reduced_runs += r.first;
  if (reduced_runs <= 1) {
    bool seen = false;
    for (auto& [is_red, size] : runs) {
      if (is_red) { p.n = size; seen = true; }
      else if (seen) p.inner *= size;
      else p.outer *= size;
    }
    return p;
  }
  for (size_t d = 0; d < shape.size(); ++d)
    if (!reduced[d]) p.perm.push_back(static_cast<int64_t>(d));
  for (size_t d = 0; d < shape.size(); ++d)
    if (reduced[d]) p.perm.push_back(static_cast<int64_t>(d));
  for (size_t d = 0; d < shape.size(); ++d) (reduced[d] ? p.n : p.outer) *= shape[d];
  return p;
}

// ---- reference: element by element, accumulating in double / int64 ----

// Every input element is added into the output slot found by dropping its
// reduced coordinates. Floating-point accumulates in double, so this is also
// the precision oracle for the fast float32 path.
template <template <typename, typename> class OpT, typename T>
void reduce_reference(const Tensor& x, const ReducePlan& plan, const double* shift, Tensor& y) {
  using R = std::conditional_t<is_float_v<T>, double, acc_t<OpT, T>>;
  using Op = OpT<T, R>;
  const int64_t count = y.numel() ? x.numel() / y.numel() : 0;
  std::vector<R> acc(y.numel(), Op::init());
  std::vector<int64_t> idx(x.rank());
  const T* in = x.data<T>();
  for (int64_t i = 0; i < x.numel(); ++i) {
    unravel_index(i, x.shape(), idx.data());
    int64_t o = 0;
    for (size_t d = 0; d < idx.size(); ++d)
      if (!plan.reduced[d]) o = o * x.dim(d) + idx[d];
    acc[o] = Op::combine(acc[o], Op::map(static_cast<R>(in[i]), shift ? static_cast<R>(shift[o]) : R(0)));
  }
  T* out = y.mutable_data<T>();
  for (int64_t o = 0; o < y.numel(); ++o) out[o] = to_output<T>(Op::finalize(acc[o], count));
}

// ---- dispatch ----

template <template <typename, typename> class OpT, typename T>
void reduce_fast(KernelContext& ctx, const Tensor& x, const ReducePlan& plan, const std::vector<double>* shift,
                 Tensor& y) {
  using A = acc_t<OpT, T>;
  using Op = OpT<T, A>;
  const T* in = x.data<T>();
  Tensor moved;
  if (!plan.perm.empty()) {  // reduced axes not in one block: bring them to the end
    moved = ctx.scratch(x.dtype(), transposed_shape(x.shape(), plan.perm));
    transpose(ctx, x, plan.perm, moved, false);
    in = moved.data<T>();
  }
  const int64_t outputs = plan.outer * plan.inner;
  T* out = y.mutable_data<T>();
  // Accumulators: the output itself when they have its type (float, double),
  // finalised in place; a separate buffer otherwise (integers in int64 / double).
  std::vector<A> acc_buffer, sh;
  A* acc;
  if constexpr (std::is_same<A, T>::value) {
    acc = out;
  } else {
    acc_buffer.resize(outputs);
    acc = acc_buffer.data();
  }
  if (shift) sh.assign(shift->begin(), shift->end());
  // The path this call takes, for profiles (static strings; a transpose first when
  // the reduced axes were not one block).
  const bool moved_first = !plan.perm.empty();
  KernelStats& stats = ctx.stats();
  stats.isa = "portable";
  if (plan.n == 0) {
    std::fill(acc, acc + outputs, Op::init());
    stats.variant = "reduce_empty";
  } else if (plan.inner == 1) {
    if (!shift && reduce_short_rows<Op>(in, plan.outer, plan.n, acc, ctx.threads())) {
      stats.variant = moved_first ? "reduce_transpose_short_rows_simd" : "reduce_short_rows_simd";
      stats.isa = cpu::isa_name(simd::f32_kernels().isa);
    } else {
      reduce_rows<Op>(in, plan.outer, plan.n, shift ? sh.data() : nullptr, acc, ctx.threads());
      stats.variant = moved_first ? "reduce_transpose_rows_pairwise" : "reduce_rows_pairwise";
    }
  } else {
    reduce_columns<Op>(in, plan.outer, plan.n, plan.inner, shift ? sh.data() : nullptr, acc, ctx.threads());
    stats.variant = "reduce_columns";
  }
  for (int64_t o = 0; o < outputs; ++o) out[o] = to_output<T>(Op::finalize(acc[o], plan.n));
}

template <template <typename, typename> class OpT, typename T>
void run_op(KernelContext& ctx, const Tensor& x, const ReducePlan& plan, const std::vector<double>* shift, Tensor& y) {
  if (ctx.reference_mode()) reduce_reference<OpT, T>(x, plan, shift ? shift->data() : nullptr, y);
  else reduce_fast<OpT, T>(ctx, x, plan, shift, y);
}

template <template <typename, typename> class OpT>
void run_typed(KernelContext& ctx, const Tensor& x, const ReducePlan& plan, const std::vector<double>* shift,
               Tensor& y, bool small_ints) {
  switch (x.dtype()) {
    case DType::Float32: return run_op<OpT, float>(ctx, x, plan, shift, y);
    case DType::Float64: return run_op<OpT, double>(ctx, x, plan, shift, y);
    case DType::Int32: return run_op<OpT, int32_t>(ctx, x, plan, shift, y);
    case DType::Int64: return run_op<OpT, int64_t>(ctx, x, plan, shift, y);
    default: break;
  }
  if (small_ints) {
    // bool is stored as one byte 0/1, so max/min over it are max/min over uint8.
    if (x.dtype() == DType::UInt8 || x.dtype() == DType::Bool) {
      Tensor xv(DType::UInt8, x.shape(), x.buffer(), x.offset());
      Tensor yv(DType::UInt8, y.shape(), y.buffer(), y.offset());
      return run_op<OpT, uint8_t>(ctx, xv, plan, shift, yv);
    }
    if (x.dtype() == DType::Int8) return run_op<OpT, int8_t>(ctx, x, plan, shift, y);
  }
  ctx.unsupported("dtype {} is not supported", dtype_name(x.dtype()));
}

enum class ReduceKind { Sum, SumSquare, Mean, Max, Min, Prod, L1, L2, LogSum, LogSumExp };

template <ReduceKind K>
class ReduceKernel : public Kernel {
 public:
  explicit ReduceKernel(const KernelInfo& info)
      : axes_from_input_(info.opset >= (K == ReduceKind::Sum ? 13 : 18)),
        keepdims_(info.attrs.get_int("keepdims", 1) != 0),
        noop_(info.attrs.get_int("noop_with_empty_axes", 0) != 0),
        axes_attr_(axes_from_input_ ? std::vector<int64_t>{} : info.attrs.get_ints("axes", {})) {}

  void prepare(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    ctx.allocate_output(0, x.dtype(), plan(ctx, x).out_shape);
  }

  // Mirrors reduce_fast's choice (keep the two in step).
  KernelPlan describe(const KernelInfo& info, const std::vector<const Shape*>& in) const override {
    if (in.empty() || !in[0]) return KernelPlan::at_run_time();
    std::vector<int64_t> axes = axes_attr_;
    if (axes_from_input_ && info.has_input(1)) {
      const Tensor* a = info.constant_input(1);
      if (!a || a->dtype() != DType::Int64) return KernelPlan::at_run_time();  // axes fed at run time
      axes = a->to_int64_vector();
    }
    const int64_t rank = static_cast<int64_t>(in[0]->size());
    std::vector<bool> reduced(rank, axes.empty() && !(noop_ && axes_from_input_));
    for (int64_t a : axes) {
      if (a < -rank || a >= rank) return KernelPlan::at_run_time();
      reduced[a < 0 ? a + rank : a] = true;
    }
    const ReducePlan p = make_plan(*in[0], reduced, keepdims_);
    const bool moved_first = !p.perm.empty();
    if (p.n == 0) return KernelPlan{"reduce_empty", "portable", ""};
    if (p.inner > 1) return KernelPlan{"reduce_columns", "portable", "64-column tiles, rows summed pairwise in blocks of 128"};
    const DType dt = info.input_dtypes.empty() ? DType::Undefined : info.input_dtypes[0];
    const simd::F32Kernels& k = simd::f32_kernels();
    // LogSumExp's last pass (SumExp, shifted) and Prod have no SIMD rows.
    const int row = simd_row_kind();
    if (dt == DType::Float32 && row >= 0 && k.reduce_rows[row] && p.n <= kShortRow)
      return KernelPlan{moved_first ? "reduce_transpose_short_rows_simd" : "reduce_short_rows_simd", cpu::isa_name(k.isa),
                        "one register per row, blocks of 16 rows"};
    if (dt == DType::Undefined) return KernelPlan::at_run_time();
    return KernelPlan{moved_first ? "reduce_transpose_rows_pairwise" : "reduce_rows_pairwise", "portable",
                      "8 lanes, pairwise over blocks of 128, runs cut at 65536"};
  }

  void compute(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    Tensor& y = ctx.output(0);
    if (y.numel() == 0) return;
    const ReducePlan p = plan(ctx, x);
    ctx.stats().flops = static_cast<double>(x.numel());
    switch (K) {
      case ReduceKind::Sum: return run_typed<Sum>(ctx, x, p, nullptr, y, false);
      case ReduceKind::SumSquare: return run_typed<SumSquare>(ctx, x, p, nullptr, y, false);
      case ReduceKind::Mean: return run_typed<Mean>(ctx, x, p, nullptr, y, false);
      case ReduceKind::Max: return run_typed<Max>(ctx, x, p, nullptr, y, true);
      case ReduceKind::Min: return run_typed<Min>(ctx, x, p, nullptr, y, true);
      case ReduceKind::Prod: return run_typed<Prod>(ctx, x, p, nullptr, y, false);
      case ReduceKind::L1: return run_typed<L1>(ctx, x, p, nullptr, y, false);
      case ReduceKind::L2: return run_typed<L2>(ctx, x, p, nullptr, y, false);
      case ReduceKind::LogSum: return run_typed<LogSum>(ctx, x, p, nullptr, y, false);
      case ReduceKind::LogSumExp: return log_sum_exp(ctx, x, p, y);
    }
  }

 private:
  static int simd_row_kind() {
    switch (K) {
      case ReduceKind::Sum: case ReduceKind::Mean: case ReduceKind::LogSum: return Sum<float, float>::kSimdRow;
      case ReduceKind::SumSquare: return SumSquare<float, float>::kSimdRow;
      case ReduceKind::L1: return L1<float, float>::kSimdRow;
      case ReduceKind::L2: return L2<float, float>::kSimdRow;
      case ReduceKind::Max: return Max<float, float>::kSimdRow;
      case ReduceKind::Min: return Min<float, float>::kSimdRow;
      case ReduceKind::Prod: return Prod<float, float>::kSimdRow;
      case ReduceKind::LogSumExp: return SumExp<float, float>::kSimdRow;
    }
    return -1;
  }

  // log(sum(exp(x))) = m + log(sum(exp(x - m))) with m the max, so exp never overflows.
  static void log_sum_exp(KernelContext& ctx, const Tensor& x, const ReducePlan& p, Tensor& y) {
    run_typed<Max>(ctx, x, p, nullptr, y, false);
    std::vector<double> m(y.numel());
    for (int64_t i = 0; i < y.numel(); ++i) {
      m[i] = y.get_as_double(i);
      if (!std::isfinite(m[i])) m[i] = 0;  // all -inf (or empty) / +inf: the sum below gives the right inf
    }
    run_typed<SumExp>(ctx, x, p, &m, y, false);
    for (int64_t i = 0; i < y.numel(); ++i) add_back(y, i, m[i]);
  }
  static void add_back(Tensor& y, int64_t i, double m) {
    switch (y.dtype()) {
      case DType::Float32: y.mutable_data<float>()[i] += static_cast<float>(m); break;
      case DType::Float64: y.mutable_data<double>()[i] += m; break;
      case DType::Int32: y.mutable_data<int32_t>()[i] += static_cast<int32_t>(m); break;
      default: y.mutable_data<int64_t>()[i] += static_cast<int64_t>(m); break;
    }
  }

  ReducePlan plan(const KernelContext& ctx, const Tensor& x) const {
    const int64_t rank = static_cast<int64_t>(x.rank());
    std::vector<int64_t> axes = axes_attr_;
    if (axes_from_input_ && ctx.has_input(1)) {
      const Tensor& a = ctx.input(1);
      if (a.dtype() != DType::Int64) ctx.fail("axes must be int64, got {}", dtype_name(a.dtype()));
      axes = a.to_int64_vector();
    }
    std::vector<bool> reduced(rank, axes.empty() && !(noop_ && axes_from_input_));
    for (int64_t a : axes) reduced[normalize_axis(ctx, a, rank)] = true;
    return make_plan(x.shape(), reduced, keepdims_);
  }

  bool axes_from_input_, keepdims_, noop_;
  std::vector<int64_t> axes_attr_;
};

}  // namespace

ONNXMINI_REGISTER_KERNEL("reduce", "", "ReduceSum", 1, INT_MAX, make_kernel<ReduceKernel<ReduceKind::Sum>>);
ONNXMINI_REGISTER_KERNEL("reduce", "", "ReduceSumSquare", 1, INT_MAX, make_kernel<ReduceKernel<ReduceKind::SumSquare>>);
ONNXMINI_REGISTER_KERNEL("reduce", "", "ReduceMean", 1, INT_MAX, make_kernel<ReduceKernel<ReduceKind::Mean>>);
ONNXMINI_REGISTER_KERNEL("reduce", "", "ReduceMax", 1, INT_MAX, make_kernel<ReduceKernel<ReduceKind::Max>>);
ONNXMINI_REGISTER_KERNEL("reduce", "", "ReduceMin", 1, INT_MAX, make_kernel<ReduceKernel<ReduceKind::Min>>);
ONNXMINI_REGISTER_KERNEL("reduce", "", "ReduceProd", 1, INT_MAX, make_kernel<ReduceKernel<ReduceKind::Prod>>);
ONNXMINI_REGISTER_KERNEL("reduce", "", "ReduceL1", 1, INT_MAX, make_kernel<ReduceKernel<ReduceKind::L1>>);
ONNXMINI_REGISTER_KERNEL("reduce", "", "ReduceL2", 1, INT_MAX, make_kernel<ReduceKernel<ReduceKind::L2>>);
ONNXMINI_REGISTER_KERNEL("reduce", "", "ReduceLogSum", 1, INT_MAX, make_kernel<ReduceKernel<ReduceKind::LogSum>>);
ONNXMINI_REGISTER_KERNEL("reduce", "", "ReduceLogSumExp", 1, INT_MAX, make_kernel<ReduceKernel<ReduceKind::LogSumExp>>);

}  // namespace onnxmini

ONNXMINI_KERNEL_FILE(reduce_reduce);
