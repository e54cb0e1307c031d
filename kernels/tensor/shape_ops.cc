// Shape (opsets 1-23; start/end from 15), Size (1-23), ConstantOfShape (9-23)
// and Range (11-23). These make small tensors from shapes or scalars; the only
// loops worth a fast path are ConstantOfShape's fill and Range's sequence,
// both split across threads.
#include <cmath>
#include <type_traits>

#include "core/float16.h"
#include "kernels/registry.h"
#include "kernels/tensor/tensor_utils.h"

namespace onnxmini {

namespace {

using namespace tensor_ops;

class ShapeKernel : public Kernel {
 public:
  explicit ShapeKernel(const KernelInfo& info)
      : start_(info.opset >= 15 ? info.attrs.get_int("start", 0) : 0),
        end_(info.opset >= 15 && info.attrs.has("end") ? info.attrs.get_int("end") : INT64_MAX) {}
  void prepare(KernelContext& ctx) override {
    const Shape& s = ctx.input(0).shape();
    const int64_t rank = static_cast<int64_t>(s.size());
    // start/end are clamped to [0, rank] after adding rank to negative values.
    auto clamp = [rank](int64_t v) { return std::clamp<int64_t>(v < 0 ? v + rank : v, 0, rank); };
    const int64_t b = clamp(start_), e = std::max(b, clamp(end_));
    Tensor& y = ctx.allocate_output(0, DType::Int64, {e - b});
    for (int64_t i = b; i < e; ++i) y.mutable_data<int64_t>()[i - b] = s[i];
  }
  void compute(KernelContext&) override {}

 private:
  int64_t start_, end_;
};

class SizeKernel : public Kernel {
 public:
  explicit SizeKernel(const KernelInfo&) {}
  void prepare(KernelContext& ctx) override {
    const int64_t n = ctx.input(0).numel();
    *ctx.allocate_output(0, DType::Int64, {}).mutable_data<int64_t>() = n;
  }
  void compute(KernelContext&) override {}
};

class ConstantOfShapeKernel : public Kernel {
 public:
  explicit ConstantOfShapeKernel(const KernelInfo& info) {
    if (info.attrs.has("value")) {
      value_ = info.attrs.get_tensor("value");
      if (value_.numel() != 1)
        info.fail("attribute 'value' must hold one element, got shape {}", shape_to_string(value_.shape()));
    } else {
      value_ = Tensor::scalar<float>(0.f);
    }
  }
  void prepare(KernelContext& ctx) override {
    const Tensor& shape = ctx.input(0);
    if (shape.dtype() != DType::Int64) ctx.fail("input must be int64, got {}", dtype_name(shape.dtype()));
    Shape out = shape.to_int64_vector();
    for (int64_t d : out)
      if (d < 0) ctx.fail("shape [{}] has a negative dimension", fmt::join(out, ","));
    ctx.allocate_output(0, value_.dtype(), out);
  }
  void compute(KernelContext& ctx) override {
    Tensor& y = ctx.output(0);
    dispatch_by_width(ctx, y.dtype(), [&](auto tag) {
      using T = decltype(tag);
      const T v = elems<T>(value_)[0];
      T* out = elems_mut<T>(y);
      if (ctx.reference_mode()) {
        for (int64_t i = 0; i < y.numel(); ++i) out[i] = v;
        return;
      }
      parallel_for(ctx.threads(), y.numel(), 65536, [&](int64_t a, int64_t b) { std::fill(out + a, out + b, v); });
    });
  }

 private:
  Tensor value_;
};

class RangeKernel : public Kernel {
 public:
  explicit RangeKernel(const KernelInfo&) {}
  void prepare(KernelContext& ctx) override {
    const Tensor& start = ctx.input(0);
    for (size_t i = 0; i < 3; ++i) {
      const Tensor& t = ctx.input(i);
      if (t.numel() != 1) ctx.fail("input {} must be a scalar, got shape {}", i, shape_to_string(t.shape()));
      if (t.dtype() != start.dtype())
        ctx.fail("input {} is {}, start is {}", i, dtype_name(t.dtype()), dtype_name(start.dtype()));
    }
    const double s = start.get_as_double(0), l = ctx.input(1).get_as_double(0), d = ctx.input(2).get_as_double(0);
    if (d == 0) ctx.fail("delta is 0");
    int64_t n = 0;
    switch (start.dtype()) {
      case DType::Float32: case DType::Float64: case DType::Int16: case DType::Int32: case DType::Int64: break;
      case DType::Float16: case DType::BFloat16: break;  // opset 25+: computed in float32, rounded once
      default: ctx.unsupported("dtype {} is not supported", dtype_name(start.dtype()));
    }
    if (start.dtype() == DType::Int64) {  // exact integer arithmetic: doubles lose int64 precision
      const int64_t si = start.data<int64_t>()[0], li = ctx.input(1).data<int64_t>()[0], di = ctx.input(2).data<int64_t>()[0];
      // ceil((limit - start) / delta) in 128 bits: limit - start alone may not fit in int64.
      const __int128 span = static_cast<__int128>(li) - si, step = di;
      const __int128 count = step > 0 ? (span + step - 1) / step : (span + step + 1) / step;
      if (count > INT64_MAX) ctx.fail("start {}, limit {}, delta {} give {} elements, more than int64 counts", si, li, di, "2^63 or more");
      n = static_cast<int64_t>(count);
    } else {
      const double count = std::ceil((l - s) / d);
      if (!(count < 9.2e18))  // NaN, inf or past int64 (its conversion would be undefined)
        ctx.fail("start {}, limit {}, delta {} give {} elements, more than int64 counts", s, l, d, count);
      n = count > 0 ? static_cast<int64_t>(count) : 0;
    }
    // A bomb (start 0, limit 1e15) fails here, naming the count, before the output is allocated.
    ctx.check_element_count(start.dtype(), std::max<int64_t>(0, n), "output");
    ctx.allocate_output(0, start.dtype(), {std::max<int64_t>(0, n)});
  }
  void compute(KernelContext& ctx) override {
    switch (ctx.output(0).dtype()) {
      case DType::Float32: return fill<float>(ctx);
      case DType::Float64: return fill<double>(ctx);
      case DType::Int16: return fill<int16_t>(ctx);
      case DType::Int32: return fill<int32_t>(ctx);
      case DType::Float16: case DType::BFloat16: return fill_half(ctx);
      default: return fill<int64_t>(ctx);
    }
  }

 private:
  // out[i] = start + i * delta, computed per element so rounding does not
  // accumulate (onnxruntime adds delta repeatedly: float results may differ in the last bit).
  template <typename T>
  void fill(KernelContext& ctx) {
    const T s = ctx.input(0).data<T>()[0], d = ctx.input(2).data<T>()[0];
    Tensor& y = ctx.output(0);
    T* out = y.mutable_data<T>();
    parallel_for(ctx.reference_mode() ? nullptr : ctx.threads(), y.numel(), 65536, [&](int64_t a, int64_t b) {
      if constexpr (std::is_integral_v<T>) {
        // Modulo 2^64: i * delta alone may pass int64 (start -2^63, delta 2^62) while the sum is in range.
        for (int64_t i = a; i < b; ++i)
          out[i] = static_cast<T>(static_cast<uint64_t>(s) + static_cast<uint64_t>(i) * static_cast<uint64_t>(d));
      } else {
        for (int64_t i = a; i < b; ++i) out[i] = static_cast<T>(s + static_cast<T>(i) * d);
      }
    });
  }
  // float16 / bfloat16: start + i * delta in float32, rounded once to nearest even.
  void fill_half(KernelContext& ctx) {
    const Tensor& y = ctx.output(0);
    const bool bf = y.dtype() == DType::BFloat16;
    const float s = static_cast<float>(ctx.input(0).get_as_double(0)), d = static_cast<float>(ctx.input(2).get_as_double(0));
    auto* out = static_cast<uint16_t*>(y.raw_mut());
    for (int64_t i = 0; i < y.numel(); ++i) {
      const float v = s + static_cast<float>(i) * d;
      out[i] = bf ? float_to_bfloat16(v) : float_to_half(v);
    }
  }
};

}  // namespace

ONNXMINI_REGISTER_KERNEL("shape_ops", "", "Shape", 1, INT_MAX, make_kernel<ShapeKernel>);
ONNXMINI_REGISTER_KERNEL("shape_ops", "", "Size", 1, INT_MAX, make_kernel<SizeKernel>);
ONNXMINI_REGISTER_KERNEL("shape_ops", "", "ConstantOfShape", 9, INT_MAX, make_kernel<ConstantOfShapeKernel>);
ONNXMINI_REGISTER_KERNEL("shape_ops", "", "Range", 11, INT_MAX, make_kernel<RangeKernel>);

}  // namespace onnxmini

ONNXMINI_KERNEL_FILE(tensor_shape_ops);
