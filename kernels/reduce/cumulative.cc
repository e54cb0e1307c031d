// CumSum (opsets 11, 14) and CumProd (opset 26): running sum / product along
// the axis given as an int32 / int64 scalar (or 1-element) tensor; `exclusive`
// leaves out the element itself (the first output is 0 / 1), `reverse` runs
// from the end. float32, float64, int32, int64, uint32, uint64, and float16 /
// bfloat16 (opset 14+: accumulated in float32, each output rounded once).
//
// Layout: the input is (outer, len, inner) around the axis; each of the
// outer * inner lanes is an independent running accumulation with stride
// `inner`. The inner loop runs over the inner lanes of one axis position, so
// memory is read contiguously; outer blocks are split across threads. The
// running value is the previous output row (no buffer), except for halves,
// which keep a float32 row per thread chunk.
#include "core/float16.h"
#include "core/thread_pool.h"
#include "kernels/registry.h"
#include "kernels/tensor/tensor_utils.h"

namespace onnxmini {

namespace {

using namespace tensor_ops;

template <bool kProduct>
class CumulativeKernel : public Kernel {
 public:
  explicit CumulativeKernel(const KernelInfo& info)
      : exclusive_(info.attrs.get_int("exclusive", 0) != 0), reverse_(info.attrs.get_int("reverse", 0) != 0) {}

  void prepare(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    switch (x.dtype()) {
      case DType::Float32: case DType::Float64: case DType::Int32: case DType::Int64: case DType::UInt32:
      case DType::UInt64: case DType::Float16: case DType::BFloat16: break;
      default:
        ctx.unsupported("input dtype {} is not supported (float32, float64, float16, bfloat16, int32, int64, "
                        "uint32, uint64)", dtype_name(x.dtype()));
    }
    axis(ctx);  // validates
    ctx.allocate_output(0, x.dtype(), x.shape());
  }

  void compute(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    Tensor& y = ctx.output(0);
    if (y.numel() == 0) return;
    const int64_t a = axis(ctx);
    const Shape& s = x.shape();
    const int64_t outer = shape_product(s, 0, a), len = s.empty() ? 1 : s[a],
                  inner = s.empty() ? 1 : shape_product(s, a + 1, s.size());
    switch (x.dtype()) {
      case DType::Float32: run<float, float>(ctx, x.raw(), y.raw_mut(), outer, len, inner); break;
      case DType::Float64: run<double, double>(ctx, x.raw(), y.raw_mut(), outer, len, inner); break;
      case DType::Int32: run<int32_t, int32_t>(ctx, x.raw(), y.raw_mut(), outer, len, inner); break;
      case DType::Int64: run<int64_t, int64_t>(ctx, x.raw(), y.raw_mut(), outer, len, inner); break;
      case DType::UInt32: run<uint32_t, uint32_t>(ctx, x.raw(), y.raw_mut(), outer, len, inner); break;
      case DType::UInt64: run<uint64_t, uint64_t>(ctx, x.raw(), y.raw_mut(), outer, len, inner); break;
      default: run<uint16_t, float>(ctx, x.raw(), y.raw_mut(), outer, len, inner, x.dtype() == DType::Float16);
    }
  }

 private:
  int64_t axis(const KernelContext& ctx) const {
    const Tensor& x = ctx.input(0);
    const Tensor& t = ctx.input(1);
    if ((t.dtype() != DType::Int32 && t.dtype() != DType::Int64) || t.numel() != 1 || t.rank() > 1)
      ctx.fail("axis must be an int32 / int64 scalar, got {} of shape {}", dtype_name(t.dtype()),
               shape_to_string(t.shape()));
    const int64_t rank = std::max<int64_t>(1, static_cast<int64_t>(x.rank()));  // a scalar acts as [1]
    return normalize_axis(ctx, t.to_int64_vector()[0], rank);
  }

  // Acc: the accumulation type; T = uint16_t means float16 (half) or bfloat16 bits.
  template <typename T, typename Acc>
  void run(KernelContext& ctx, const void* in_raw, void* out_raw, int64_t outer, int64_t len, int64_t inner,
           bool half = false) const {
    const T* in = static_cast<const T*>(in_raw);
    T* out = static_cast<T*>(out_raw);
    auto load = [half](T v) -> Acc {
      if constexpr (std::is_same_v<T, uint16_t>) return half ? half_to_float(v) : bfloat16_to_float(v);
      else return v;
    };
    auto save = [half](Acc v) -> T {
      if constexpr (std::is_same_v<T, uint16_t>) return half ? float_to_half(v) : float_to_bfloat16(v);
      else return v;
    };
    const Acc identity = kProduct ? Acc(1) : Acc(0);
    auto combine = [](Acc a, Acc b) { return kProduct ? static_cast<Acc>(a * b) : static_cast<Acc>(a + b); };
    parallel_for(ctx.threads(), outer, std::max<int64_t>(1, 16384 / std::max<int64_t>(len * inner, 1)),
                 [&](int64_t o0, int64_t o1) {
      if constexpr (std::is_same_v<T, Acc>) {
        // The running value of step k is the previous output row (exact: same type),
        // so no accumulator buffer: dst = prev_dst op (exclusive ? prev_src : src).
        for (int64_t o = o0; o < o1; ++o)
          for (int64_t step = 0; step < len; ++step) {
            const int64_t k = reverse_ ? len - 1 - step : step, prev = reverse_ ? k + 1 : k - 1;
            const T* src = in + (o * len + k) * inner;
            T* dst = out + (o * len + k) * inner;
            if (step == 0) {
              for (int64_t i = 0; i < inner; ++i) dst[i] = exclusive_ ? identity : src[i];
              continue;
            }
            const T* prev_dst = out + (o * len + prev) * inner;
            const T* add = exclusive_ ? in + (o * len + prev) * inner : src;
            for (int64_t i = 0; i < inner; ++i) dst[i] = combine(prev_dst[i], add[i]);
          }
      } else {
        // float16 / bfloat16: the running value stays in float32, rounded once per output.
        std::vector<Acc> acc(static_cast<size_t>(inner));
        for (int64_t o = o0; o < o1; ++o) {
          std::fill(acc.begin(), acc.end(), identity);
          for (int64_t step = 0; step < len; ++step) {
            const int64_t k = reverse_ ? len - 1 - step : step;
            const T* src = in + (o * len + k) * inner;
            T* dst = out + (o * len + k) * inner;
            for (int64_t i = 0; i < inner; ++i) {
              const Acc v = load(src[i]);
              if (exclusive_) dst[i] = save(acc[i]);
              acc[i] = combine(acc[i], v);
              if (!exclusive_) dst[i] = save(acc[i]);
            }
          }
        }
      }
    });
  }

  bool exclusive_, reverse_;
};

}  // namespace

ONNXMINI_REGISTER_KERNEL("cumulative", "", "CumSum", 11, INT_MAX, make_kernel<CumulativeKernel<false>>);
ONNXMINI_REGISTER_KERNEL("cumulative", "", "CumProd", 26, INT_MAX, make_kernel<CumulativeKernel<true>>);

}  // namespace onnxmini

ONNXMINI_KERNEL_FILE(reduce_cumulative);
