// BinaryKernel<Op>: one kernel class for every two-input element-wise op with
// numpy broadcasting (Add, Pow, Equal, And, PRelu, ...). An op is a small struct:
//
//   struct AddOp : BinaryOpDefaults {
//     using Types = NumericTypes;                  // dtypes accepted for A (and B)
//     explicit AddOp(const KernelInfo&) {}         // reads attributes once
//     template <class C> C operator()(C a, C b) const { return a + b; }  // compute types
//   };
//
// and may override the defaults below. Data layout: inputs and output dense,
// row-major; broadcasting is done by the BroadcastPlan (no broadcast copies).
#pragma once
#include <type_traits>

#include "kernels/elementwise/elementwise.h"
#include "kernels/simd/f32_kernels.h"

namespace onnxmini {
namespace ew {

struct BinaryOpDefaults {
  template <class T> using Out = T;               // output storage type for input type T
  static constexpr bool kMixedTypes = false;      // true: B's dtype is chosen from TypesB independently (Pow)
  using TypesB = TypeList<>;
  static constexpr bool kIntegerDivisor = false;  // true: fail when an integer B holds a 0 (Div, Mod)
  static constexpr bool kUnidirectional = false;  // true: B must broadcast to A's shape (PRelu)
  static constexpr bool kChannelBBefore7 = false; // true: before opset 7 a 1-D B of size C runs along axis 1 (PRelu)
  static constexpr const char* kNameA = "A";
  static constexpr const char* kNameB = "B";
  static constexpr int kSimdOp = -1;              // a simd::BinOp: float32 runs the ISA's SIMD rows
  // Run-time checks that depend on the dtype (e.g. Mod's fmod=0 on floats).
  void check(const KernelContext&, DType) const {}
};

// Fails naming the first zero of an integer divisor: integer division by zero
// has no value (and traps on x86).
template <typename T>
void check_no_zero_divisor(const KernelContext& ctx, const Tensor& b, const char* name) {
  const T* p = cdata<T>(b);
  for (int64_t i = 0; i < b.numel(); ++i)
    if (p[i] == T(0)) ctx.fail("integer division by zero: {} element {} is 0", name, i);
}

// float32 Add/Sub/Mul/Div with the ISA's SIMD rows (kernels/simd/f32_kernels.h).
// Data layout: a 2-D plan with short runs is split into blocks of whole rows;
// any other plan is cut by for_each_piece into pieces of one (possibly partial)
// run, each a one-row call. false: no SIMD table (portable), use binary_fast.
inline bool binary_f32_simd(const BroadcastPlan& plan, const float* a, const float* b, float* y, int op,
                            ThreadPool* pool) {
  const simd::BinaryRowsFn fn = simd::f32_kernels().binary[op];
  if (!fn) return false;
  const bool va = plan.inner_stride(0) != 0, vb = plan.inner_stride(1) != 0;
  if (short_rows_2d(plan)) {
    const simd::BinaryRows p{a, plan.strides[0][0], va, b, plan.strides[1][0], vb, y, plan.inner};
    for_each_row_block(plan, pool, [&](int64_t r0, int64_t r1) { fn(p, r0, r1); });
  } else {
    for_each_piece(plan, pool, [&](const int64_t* off, int64_t n, int64_t o) {
      fn(simd::BinaryRows{a + off[0], 0, va, b + off[1], 0, vb, y + o, n}, 0, 1);
    });
  }
  return true;
}

// The broadcast shape of a plan, as a variant name (static strings, for
// profiles): "binary_same_shape" (both inputs one dense run), "binary_scalar"
// (one input is a single value), "binary_broadcast_rows" (a 2-D plan of short
// rows, done in row blocks), "binary_broadcast_runs" (any other plan, run by run);
// "_simd" when the ISA's float32 rows ran.
inline const char* binary_variant(const BroadcastPlan& plan, bool simd) {
  static const char* const names[4][2] = {{"binary_same_shape", "binary_same_shape_simd"},
                                          {"binary_scalar", "binary_scalar_simd"},
                                          {"binary_broadcast_rows", "binary_broadcast_rows_simd"},
                                          {"binary_broadcast_runs", "binary_broadcast_runs_simd"}};
  const bool va = plan.inner_stride(0) != 0, vb = plan.inner_stride(1) != 0;
  int kind = 3;
  if (plan.outer <= 1 && va && vb) kind = 0;
  else if (plan.outer <= 1) kind = 1;
  else if (short_rows_2d(plan)) kind = 2;
  return names[kind][simd ? 1 : 0];
}

template <typename Op>
class BinaryKernel : public Kernel {
 public:
  explicit BinaryKernel(const KernelInfo& info) : op_(info), legacy_(info.opset < 7 && (Op::kChannelBBefore7 || !Op::kUnidirectional)) {}

  void prepare(KernelContext& ctx) override {
    const Tensor& a = ctx.input(0);
    const Tensor& b = ctx.input(1);
    DType out_dtype = DType::Undefined;
    dispatch(ctx, a.dtype(), b.dtype(), [&](auto ta, auto) {
      using TA = typename decltype(ta)::type;
      out_dtype = storage_dtype<typename Op::template Out<TA>>::value;
    });
    op_.check(ctx, a.dtype());
    Shape out = broadcast_or_fail(ctx, {a.shape(), b_shape(ctx, a, b)});
    if (Op::kUnidirectional && out != a.shape())
      ctx.fail("{} of shape {} does not broadcast to {} of shape {}", Op::kNameB, shape_to_string(b.shape()),
               Op::kNameA, shape_to_string(a.shape()));
    ctx.allocate_output(0, out_dtype, out);
  }

  // The plan shape decides the variant; SIMD rows for float32 Add/Sub/Mul/Div.
  KernelPlan describe(const KernelInfo& info, const std::vector<const Shape*>& in) const override {
    if (in.size() < 2 || !in[0] || !in[1] || legacy_) return KernelPlan::at_run_time();
    const DType da = info.input_dtypes.empty() ? DType::Undefined : info.input_dtypes[0];
    if (da == DType::Undefined) return KernelPlan::at_run_time();
    const BroadcastPlan plan({*in[0], *in[1]});
    const simd::F32Kernels& k = simd::f32_kernels();
    const bool simd = Op::kSimdOp >= 0 && da == DType::Float32 && k.binary[Op::kSimdOp >= 0 ? Op::kSimdOp : 0] &&
                      std::is_same<typename Op::template Out<float>, float>::value;
    return KernelPlan{binary_variant(plan, simd), simd ? cpu::isa_name(k.isa) : "portable", ""};
  }

  void compute(KernelContext& ctx) override {
    const Tensor& a = ctx.input(0);
    const Tensor& b = ctx.input(1);
    Tensor& y = ctx.output(0);
    const Shape sb = b_shape(ctx, a, b);
    ctx.stats().flops = static_cast<double>(y.numel());
    dispatch(ctx, a.dtype(), b.dtype(), [&](auto ta, auto tb) {
      using TA = typename decltype(ta)::type;
      using TB = typename decltype(tb)::type;
      using TO = typename Op::template Out<TA>;
      if constexpr (Op::kIntegerDivisor && std::is_integral<TB>::value) check_no_zero_divisor<TB>(ctx, b, Op::kNameB);
      if (ctx.reference_mode()) {
        binary_reference(y.shape(), a.shape(), sb, cdata<TA>(a), cdata<TB>(b), mdata<TO>(y), op_);
      } else {
        BroadcastPlan plan({a.shape(), sb});
        if constexpr (Op::kSimdOp >= 0 && std::is_same<TA, float>::value && std::is_same<TB, float>::value &&
                      std::is_same<TO, float>::value) {
          if (binary_f32_simd(plan, cdata<float>(a), cdata<float>(b), mdata<float>(y), Op::kSimdOp, ctx.threads())) {
            ctx.stats().variant = binary_variant(plan, true);
            ctx.stats().isa = cpu::isa_name(simd::f32_kernels().isa);
            return;
          }
        }
        binary_fast(plan, cdata<TA>(a), cdata<TB>(b), mdata<TO>(y), op_, ctx.threads());
        ctx.stats().variant = binary_variant(plan, false);
      }
    });
  }

 private:
  // fn(Tag<TA>, Tag<TB>) for the inputs' dtypes; fails on an unsupported or mismatched dtype.
  template <typename Fn>
  void dispatch(const KernelContext& ctx, DType da, DType db, Fn&& fn) const {
    bool ok_b = true;
    const bool ok_a = visit(typename Op::Types{}, da, [&](auto ta) {
      if constexpr (Op::kMixedTypes) {
        ok_b = visit(typename Op::TypesB{}, db, [&](auto tb) { fn(ta, tb); });
      } else {
        ok_b = da == db;
        if (ok_b) fn(ta, ta);
      }
    });
    if (!ok_a)
      ctx.unsupported("{} has dtype {}; supported: {}", Op::kNameA, dtype_name(da), type_names(typename Op::Types{}));
    if (!ok_b) {
      if (Op::kMixedTypes)
        ctx.unsupported("{} has dtype {}; supported: {}", Op::kNameB, dtype_name(db),
                        type_names(typename Op::TypesB{}));
      ctx.fail("{} and {} have different dtypes ({} and {})", Op::kNameA, Op::kNameB, dtype_name(da), dtype_name(db));
    }
  }

  // B's shape as the broadcasting sees it (legacy opsets place B at `axis`, or along the
  // channel axis for PRelu).
  Shape b_shape(const KernelContext& ctx, const Tensor& a, const Tensor& b) const {
    if (!legacy_) return b.shape();
    if (Op::kChannelBBefore7) return channel_broadcast_shape(a.shape(), b.shape());
    return legacy_broadcast_shape(ctx, a.shape(), b.shape());
  }

  const Op op_;
  const bool legacy_;
};

template <typename Op>
std::unique_ptr<Kernel> make_binary(const KernelInfo& info) {
  return std::make_unique<BinaryKernel<Op>>(info);
}

}  // namespace ew
}  // namespace onnxmini
