// Activation functions: Relu, LeakyRelu, PRelu, Elu, Selu, Celu, HardSigmoid,
// HardSwish, Softplus, Softsign, ThresholdedRelu, Shrink, Mish, Gelu, Swish, SwiGLU.
// Each is a functor: attributes are read once in the constructor (as float, as
// ONNX stores them) and converted to the compute type per call. The unary ones
// run through UnaryKernel (one flat loop over dense data, split across threads);
// PRelu runs through BinaryKernel with the slope broadcast to X.
#include <algorithm>
#include <cmath>

#include "kernels/elementwise/binary_kernel.h"
#include "kernels/elementwise/fast_math.h"
#include "kernels/elementwise/unary_kernel.h"
#include "kernels/registry.h"

namespace onnxmini {
namespace ew {
namespace {

struct ReluOp : UnaryOpDefaults {
  using Types = SignedTypes;  // integer types since opset 14
  explicit ReluOp(const KernelInfo&) {}
  template <class C> C operator()(C x) const { return x > C(0) ? x : C(0); }
};

struct LeakyReluOp : UnaryOpDefaults {
  using Types = FloatTypes;
  explicit LeakyReluOp(const KernelInfo& info) : alpha(info.attrs.get_float("alpha", 0.01f)) {}
  template <class C> C operator()(C x) const { return x >= C(0) ? x : C(alpha) * x; }
  float alpha;
};

// PRelu: y = x < 0 ? slope * x : x, slope broadcast to X's shape (unidirectional).
// Opsets 1 and 6 define no numpy broadcasting: a slope of size 1 is shared, a 1-D slope of
// size C is per channel (axis 1), as PyTorch's exporter writes nn.PReLU(num_parameters=C).
struct PReluOp : BinaryOpDefaults {
  using Types = concat_t<FloatTypes, TypeList<int32_t, int64_t, uint32_t, uint64_t>>;
  static constexpr bool kUnidirectional = true;
  static constexpr bool kChannelBBefore7 = true;
  static constexpr const char* kNameA = "X";
  static constexpr const char* kNameB = "slope";
  explicit PReluOp(const KernelInfo&) {}
  template <class C> C operator()(C x, C slope) const { return x < C(0) ? static_cast<C>(slope * x) : x; }
};

struct EluOp : UnaryOpDefaults {
  using Types = FloatTypes;
  explicit EluOp(const KernelInfo& info) : alpha(info.attrs.get_float("alpha", 1.f)) {}
  template <class C> C operator()(C x) const { return x >= C(0) ? x : C(alpha) * std::expm1(x); }
  float alpha;
};

struct SeluOp : UnaryOpDefaults {
  using Types = FloatTypes;
  explicit SeluOp(const KernelInfo& info)
      : alpha(info.attrs.get_float("alpha", 1.67326319217681884765625f)),
        gamma(info.attrs.get_float("gamma", 1.05070102214813232421875f)) {}
  template <class C> C operator()(C x) const {
    return x > C(0) ? C(gamma) * x : C(gamma) * (C(alpha) * std::exp(x) - C(alpha));
  }
  float alpha, gamma;
};

// Celu: max(0, x) + min(0, alpha * (exp(x / alpha) - 1)).
struct CeluOp : UnaryOpDefaults {
  using Types = FloatTypes;
  explicit CeluOp(const KernelInfo& info) : alpha(info.attrs.get_float("alpha", 1.f)) {
    if (alpha == 0.f) info.fail("alpha must not be 0");
  }
  template <class C> C operator()(C x) const { return x > C(0) ? x : C(alpha) * std::expm1(x / C(alpha)); }
  float alpha;
};

struct HardSigmoidOp : UnaryOpDefaults {
  using Types = FloatTypes;
  explicit HardSigmoidOp(const KernelInfo& info)
      : alpha(info.attrs.get_float("alpha", 0.2f)), beta(info.attrs.get_float("beta", 0.5f)) {}
  template <class C> C operator()(C x) const { return std::max(C(0), std::min(C(1), C(alpha) * x + C(beta))); }
  float alpha, beta;
};

// HardSwish: x * HardSigmoid(x) with alpha = 1/6, beta = 0.5.
struct HardSwishOp : UnaryOpDefaults {
  using Types = FloatTypes;
  explicit HardSwishOp(const KernelInfo&) {}
  template <class C> C operator()(C x) const {
    return x * std::max(C(0), std::min(C(1), x * C(1.0 / 6.0) + C(0.5)));
  }
};

// Softplus: log(1 + exp(x)), written so that exp never overflows.
struct SoftplusOp : UnaryOpDefaults {
  using Types = FloatTypes;
  explicit SoftplusOp(const KernelInfo&) {}
  template <class C> C operator()(C x) const {
    return x > C(0) ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x));
  }
};

struct SoftsignOp : UnaryOpDefaults {
  using Types = FloatTypes;
  explicit SoftsignOp(const KernelInfo&) {}
  template <class C> C operator()(C x) const { return x / (C(1) + std::fabs(x)); }
};

struct ThresholdedReluOp : UnaryOpDefaults {
  using Types = FloatTypes;
  explicit ThresholdedReluOp(const KernelInfo& info) : alpha(info.attrs.get_float("alpha", 1.f)) {}
  template <class C> C operator()(C x) const { return x > C(alpha) ? x : C(0); }
  float alpha;
};

struct ShrinkOp : UnaryOpDefaults {
  using Types = FloatTypes;
  explicit ShrinkOp(const KernelInfo& info)
      : lambd(info.attrs.get_float("lambd", 0.5f)), bias(info.attrs.get_float("bias", 0.f)) {}
  template <class C> C operator()(C x) const {
    if (x < C(-lambd)) return x + C(bias);
    if (x > C(lambd)) return x - C(bias);
    return C(0);
  }
  float lambd, bias;
};

// Mish: x * tanh(softplus(x)).
struct MishOp : UnaryOpDefaults {
  using Types = FloatTypes;
  explicit MishOp(const KernelInfo&) {}
  template <class C> C operator()(C x) const {
    const C sp = x > C(0) ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x));
    return x * std::tanh(sp);
  }
};

// Swish (opset 24): x * sigmoid(alpha * x), the sigmoid written so exp never overflows.
struct SwishOp : UnaryOpDefaults {
  using Types = FloatTypes;
  explicit SwishOp(const KernelInfo& info) : alpha(info.attrs.get_float("alpha", 1.f)) {}
  template <class C> C operator()(C x) const {
    const C z = C(alpha) * x;
    const C e = std::exp(-std::abs(z));  // in (0, 1]
    const C sig = z >= C(0) ? C(1) / (C(1) + e) : e / (C(1) + e);
    return x * sig;
  }
  float alpha;
};

// SwiGLU (opset 28): Y = Swish_alpha(A) * B, A the gate, B the value.
struct SwiGluOp : BinaryOpDefaults {
  using Types = FloatTypes;
  explicit SwiGluOp(const KernelInfo& info) : swish(info) {}
  template <class C> C operator()(C a, C b) const { return swish(a) * b; }
  SwishOp swish;
};

// The spec allows no broadcasting between A and B: shapes are checked before the
// element-wise kernel runs.
class SameShapeKernel : public Kernel {
 public:
  explicit SameShapeKernel(std::unique_ptr<Kernel> inner) : inner_(std::move(inner)) {}
  void prepare(KernelContext& ctx) override {
    const Tensor &a = ctx.input(0), &b = ctx.input(1);
    if (a.shape() != b.shape())
      ctx.fail("A has shape {} and B {}: they must be identical (no broadcasting)", shape_to_string(a.shape()),
               shape_to_string(b.shape()));
    inner_->prepare(ctx);
  }
  void compute(KernelContext& ctx) override { inner_->compute(ctx); }

 private:
  std::unique_ptr<Kernel> inner_;
};

std::unique_ptr<Kernel> make_swiglu(const KernelInfo& info) {
  return std::make_unique<SameShapeKernel>(make_binary<SwiGluOp>(info));
}

// Gelu (opset 20): approximate="none" uses erf, "tanh" the tanh approximation.
struct GeluOp : UnaryOpDefaults {
  using Types = FloatTypes;
  explicit GeluOp(const KernelInfo& info) {
    const std::string a = info.attrs.get_string("approximate", "none");
    if (a != "none" && a != "tanh") info.fail("approximate must be 'none' or 'tanh', got '{}'", a);
    use_tanh = a == "tanh";
  }
  template <class C> C operator()(C x) const {
    if (use_tanh) {
      const C k = C(0.7978845608028654);  // sqrt(2 / pi)
      return C(0.5) * x * (C(1) + std::tanh(k * (x + C(0.044715) * x * x * x)));
    }
    return C(0.5) * x * (C(1) + std::erf(x * C(0.7071067811865476)));  // x / sqrt(2)
  }
  bool use_tanh = false;
};

// Gelu approximate="tanh" with a float32 fast path: on AVX2 / AVX-512 the hand-written
// x * sigmoid(2u) of kernels/simd/erf_impl.h (the GEMM epilogue's Gelu, one pass). On the
// portable table: fast_tanhf over blocks of kBlock elements, the polynomial before it and
// the product after it in plain loops the compiler vectorises (the scalar std::tanh made
// the fused node 13x slower than the unfused graph's vector ops).
struct GeluTanhOp : GeluOp {
  static constexpr bool kFastFloat = true;
  using GeluOp::GeluOp;
  ONNXMINI_NO_TRAPPING_MATH static void fast_run(const float* x, float* y, int64_t n) {
    if (const simd::UnaryFn gelu = simd::f32_kernels().gelu_tanh) return gelu(x, y, n);
    constexpr int64_t kBlock = 256;
    const simd::UnaryFn tanh_fn = simd::f32_kernels().tanh;
    float u[kBlock];
    for (int64_t b = 0; b < n; b += kBlock) {
      const int64_t m = std::min(kBlock, n - b);
      const float* xb = x + b;
      for (int64_t i = 0; i < m; ++i) u[i] = 0.7978845608028654f * (xb[i] + 0.044715f * xb[i] * xb[i] * xb[i]);
      if (tanh_fn) {
        tanh_fn(u, u, m);
      } else {
        for (int64_t i = 0; i < m; ++i) u[i] = fast_tanhf(u[i]);
      }
      for (int64_t i = 0; i < m; ++i) y[b + i] = 0.5f * xb[i] * (1.0f + u[i]);
    }
  }
};

// Gelu approximate="none" with a float32 fast path: on AVX2 / AVX-512 the hand-written
// SIMD Gelu of kernels/simd/erf_impl.h (the GEMM epilogue's; erf branch-free with a small-|z|
// polynomial), on the portable table the loop below, which the compiler vectorises (libm's
// erf does not):
// 0.5 x (1 + erf(z)), z = x / sqrt 2, written with erfc(|z|) = t exp(-z^2 + P(t)),
// t = 1 / (1 + |z| / 2): 1 + erf(z) is 2 - erfc(|z|) for z >= 0 and erfc(|z|) itself for
// z < 0, so the negative side keeps its relative accuracy instead of cancelling in 1 + erf.
// P: degree-10 least-squares fit (ours) of log(erfc(z) / t) + z^2 over z in [0, 10], within
// 2.4e-8 of it; with float32 evaluation and fast_expf the result is within 4e-7 absolute of
// the exact Gelu on [-12, 12] (checked in tests/kernels/elementwise/test_elementwise_values.cc).
struct GeluErfOp : GeluOp {
  static constexpr bool kFastFloat = true;
  using GeluOp::GeluOp;
  ONNXMINI_NO_TRAPPING_MATH static void fast_run(const float* x, float* y, int64_t n) {
    if (const simd::UnaryFn gelu = simd::f32_kernels().gelu_erf) return gelu(x, y, n);
    for (int64_t i = 0; i < n; ++i) {
      const float z = x[i] * 0.7071067811865476f;
      const float a = z < 0.0f ? -z : z;
      const float t = 1.0f / (1.0f + 0.5f * a);
      float p = -1.322038917e-01f;
      p = p * t + 9.185590751e-01f;
      p = p * t - 2.660384397e+00f;
      p = p * t + 4.065858531e+00f;
      p = p * t - 3.407748510e+00f;
      p = p * t + 1.589637131e+00f;
      p = p * t - 6.848514480e-01f;
      p = p * t + 2.197643883e-01f;
      p = p * t + 3.553123364e-01f;
      p = p * t + 1.001627487e+00f;
      p = p * t - 1.265570678e+00f;
      const float erfc_a = t * fast_expf(p - a * a);
      y[i] = 0.5f * x[i] * (z >= 0.0f ? 2.0f - erfc_a : erfc_a);
    }
  }
};

std::unique_ptr<Kernel> make_gelu(const KernelInfo& info) {
  return info.attrs.get_string("approximate", "none") == "tanh" ? make_unary<GeluTanhOp>(info)
                                                                : make_unary<GeluErfOp>(info);
}

}  // namespace

ONNXMINI_REGISTER_KERNEL("activations", "", "Relu", 1, INT_MAX, make_unary<ReluOp>);
ONNXMINI_REGISTER_KERNEL("activations", "", "LeakyRelu", 1, INT_MAX, make_unary<LeakyReluOp>);
ONNXMINI_REGISTER_KERNEL("activations", "", "PRelu", 1, INT_MAX, make_binary<PReluOp>);
ONNXMINI_REGISTER_KERNEL("activations", "", "Elu", 1, INT_MAX, make_unary<EluOp>);
ONNXMINI_REGISTER_KERNEL("activations", "", "Selu", 1, INT_MAX, make_unary<SeluOp>);
ONNXMINI_REGISTER_KERNEL("activations", "", "Celu", 12, INT_MAX, make_unary<CeluOp>);
ONNXMINI_REGISTER_KERNEL("activations", "", "HardSigmoid", 1, INT_MAX, make_unary<HardSigmoidOp>);
ONNXMINI_REGISTER_KERNEL("activations", "", "HardSwish", 14, INT_MAX, make_unary<HardSwishOp>);
ONNXMINI_REGISTER_KERNEL("activations", "", "Softplus", 1, INT_MAX, make_unary<SoftplusOp>);
ONNXMINI_REGISTER_KERNEL("activations", "", "Softsign", 1, INT_MAX, make_unary<SoftsignOp>);
ONNXMINI_REGISTER_KERNEL("activations", "", "ThresholdedRelu", 10, INT_MAX, make_unary<ThresholdedReluOp>);
ONNXMINI_REGISTER_KERNEL("activations", "", "Shrink", 9, INT_MAX, make_unary<ShrinkOp>);
ONNXMINI_REGISTER_KERNEL("activations", "", "Mish", 18, INT_MAX, make_unary<MishOp>);
ONNXMINI_REGISTER_KERNEL("activations", "", "Gelu", 20, INT_MAX, make_gelu);
ONNXMINI_REGISTER_KERNEL("activations", "", "Swish", 24, INT_MAX, make_unary<SwishOp>);
ONNXMINI_REGISTER_KERNEL("activations", "", "SwiGLU", 28, INT_MAX, make_swiglu);

}  // namespace ew
}  // namespace onnxmini

ONNXMINI_KERNEL_FILE(elementwise_activations);
