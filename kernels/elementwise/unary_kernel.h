// UnaryKernel<Op>: one kernel class for every one-input element-wise op
// (Abs, Exp, Sigmoid, Elu, IsNaN, ...). An op is a small struct:
//
//   struct EluOp : UnaryOpDefaults {
//     using Types = FloatTypes;                      // accepted input dtypes
//     explicit EluOp(const KernelInfo& info) : alpha(info.attrs.get_float("alpha", 1.f)) {}
//     template <class C> C operator()(C x) const { return x >= 0 ? x : C(alpha) * std::expm1(x); }
//     float alpha;
//   };
//
// Data layout: input and output dense with the same shape, so the fast path is
// one flat loop split into chunks of kGrain elements across threads; the
// reference path is the same loop on one thread. Ops with kFastFloat use a
// vectorisable approximation (fast_math.h) for float32 in the fast path.
#pragma once
#include <type_traits>

#include "kernels/elementwise/elementwise.h"
#include "kernels/simd/f32_kernels.h"

namespace onnxmini {
namespace ew {

struct UnaryOpDefaults {
  template <class T> using Out = T;  // output storage type for input type T
  // true: the op has `static void fast_run(const float* x, float* y, int64_t n)`,
  // a vectorised approximation the fast path uses for float32 (the reference
  // path keeps operator()).
  static constexpr bool kFastFloat = false;
  void check(const KernelContext&, DType) const {}
};

template <typename Op>
class UnaryKernel : public Kernel {
 public:
  explicit UnaryKernel(const KernelInfo& info) : op_(info) {}

  void prepare(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    DType out_dtype = DType::Undefined;
    const bool ok = visit(typename Op::Types{}, x.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      out_dtype = storage_dtype<typename Op::template Out<T>>::value;
    });
    if (!ok)
      ctx.unsupported("input has dtype {}; supported: {}", dtype_name(x.dtype()), type_names(typename Op::Types{}));
    op_.check(ctx, x.dtype());
    ctx.allocate_output(0, out_dtype, x.shape());
  }

  KernelPlan describe(const KernelInfo& info, const std::vector<const Shape*>&) const override {
    const DType dt = info.input_dtypes.empty() ? DType::Undefined : info.input_dtypes[0];
    if (!Op::kFastFloat) return KernelPlan{"unary_loop", "portable", ""};
    if (dt == DType::Undefined) return KernelPlan::at_run_time();
    if (dt != DType::Float32) return KernelPlan{"unary_loop", "portable", ""};
    const cpu::Isa isa = simd::f32_kernels().isa;
    return KernelPlan{isa == cpu::Isa::Portable ? "unary_fast_math" : "unary_simd", cpu::isa_name(isa), ""};
  }

  // The cost rule's view of a vectorised float32 approximation (Sigmoid, Tanh, Exp, ...):
  // ~16 flops per element (range reduction + a degree-5/6 polynomial), 8 bytes moved, 4 written.
  static ParallelCost fast_float_cost(int64_t n) { return ParallelCost{n * 16, n * 8, n * 4}; }

  void compute(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    Tensor& y = ctx.output(0);
    ctx.stats().flops = static_cast<double>(x.numel());
    // Outside the generic lambda below: clang checks a non-dependent call such as
    // Op::fast_run in a lambda's discarded `if constexpr` branch, so ops without it
    // would not compile there.
    if constexpr (Op::kFastFloat) {
      if (!ctx.reference_mode() && x.dtype() == DType::Float32) {
        const float* px = cdata<float>(x);
        float* py = mdata<float>(y);
        parallel_for(ctx.threads(), x.numel(), kGrain, fast_float_cost(x.numel()),
                     [&](int64_t b, int64_t e) { Op::fast_run(px + b, py + b, e - b); });
        // Every kFastFloat op has an entry in the AVX2 / AVX-512 tables; the portable
        // table is empty and fast_run keeps its scalar approximation.
        const cpu::Isa isa = simd::f32_kernels().isa;
        ctx.stats().variant = isa == cpu::Isa::Portable ? "unary_fast_math" : "unary_simd";
        ctx.stats().isa = cpu::isa_name(isa);
        return;
      }
      // Half in, same half out: float32 blocks through the same vectorised approximation.
      if (!ctx.reference_mode() && y.dtype() == x.dtype() && (x.dtype() == DType::Float16 || x.dtype() == DType::BFloat16)) {
        const auto* px = cdata<Float16>(x);
        auto* py = mdata<Float16>(y);
        const DType t = x.dtype();
        parallel_for(ctx.threads(), x.numel(), kGrain, [&](int64_t b, int64_t e) {
          float v[kHalfBlock];
          for (int64_t i = b; i < e; i += kHalfBlock) {
            const int64_t m = std::min(kHalfBlock, e - i);
            simd::widen_half_row(t, &px[i].bits, v, m);
            Op::fast_run(v, v, m);
            simd::narrow_half_row(t, v, &py[i].bits, m);
          }
        });
        return;
      }
    }
    visit(typename Op::Types{}, x.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      using TO = typename Op::template Out<T>;
      if (ctx.reference_mode()) {
        unary_reference(cdata<T>(x), mdata<TO>(y), x.numel(), op_);
      } else {
        unary_fast(cdata<T>(x), mdata<TO>(y), x.numel(), op_, ctx.threads());
        ctx.stats().variant = "unary_loop";  // a plain loop the compiler vectorises for the baseline ISA
      }
    });
  }

 private:
  const Op op_;
};

template <typename Op>
std::unique_ptr<Kernel> make_unary(const KernelInfo& info) {
  return std::make_unique<UnaryKernel<Op>>(info);
}

}  // namespace ew
}  // namespace onnxmini
