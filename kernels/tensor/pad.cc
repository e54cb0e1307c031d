// Pad (opsets 1-23): pads (opset 1: paddings)/value attributes before opset 11, then inputs
// (pads, constant_value, and from 18 axes). Modes constant, reflect, edge and
// wrap (wrap is new in 19 but accepted for any version). Negative pads crop.
// Dtype-agnostic.
//
// Data layout (fast path): along each axis, output index i corresponds to input
// index i - pad_begin; outside [0, dim) the mode decides (constant: padding,
// edge: clamp, reflect: mirror without repeating the edge, wrap: modulo). That
// per-axis table goes to the axis-offset engine, which writes each output row
// as a few segments: left padding, one block copy of the input row, right
// padding (reflected borders are short reversed copies).
#include <cmath>

#include "core/checked_math.h"
#include "kernels/registry.h"
#include "kernels/tensor/tensor_utils.h"

namespace onnxmini {

namespace {

using namespace tensor_ops;

enum class PadMode { Constant, Reflect, Edge, Wrap };

// Input index for the (unclamped) source index `src` along an axis of size
// `dim`, or kFill for constant padding.
int64_t source_index(int64_t src, int64_t dim, PadMode mode) {
  if (src >= 0 && src < dim) return src;
  switch (mode) {
    case PadMode::Constant: return kFill;
    case PadMode::Edge: return src < 0 ? 0 : dim - 1;
    case PadMode::Wrap: return ((src % dim) + dim) % dim;
    case PadMode::Reflect: {
      if (dim == 1) return 0;
      const int64_t period = 2 * (dim - 1);  // ... 2 1 [0 1 2 3] 2 1 0 1 ...
      int64_t s = ((src % period) + period) % period;
      return s < dim ? s : period - s;
    }
  }
  return kFill;
}

// Writes `value` (a double from the opset < 11 attribute) into one element of dtype `dt`.
Tensor scalar_of(DType dt, double value) {
  Tensor t(dt, {});
  switch (dt) {
    case DType::Float32: *t.mutable_data<float>() = static_cast<float>(value); break;
    case DType::Float64: *t.mutable_data<double>() = value; break;
    case DType::Int8: *t.mutable_data<int8_t>() = static_cast<int8_t>(value); break;
    case DType::UInt8: *t.mutable_data<uint8_t>() = static_cast<uint8_t>(value); break;
    case DType::Int16: *t.mutable_data<int16_t>() = static_cast<int16_t>(value); break;
    case DType::UInt16: *t.mutable_data<uint16_t>() = static_cast<uint16_t>(value); break;
    case DType::Int32: *t.mutable_data<int32_t>() = static_cast<int32_t>(value); break;
    case DType::UInt32: *t.mutable_data<uint32_t>() = static_cast<uint32_t>(value); break;
    case DType::Int64: *t.mutable_data<int64_t>() = static_cast<int64_t>(value); break;
    case DType::UInt64: *t.mutable_data<uint64_t>() = static_cast<uint64_t>(value); break;
    case DType::Bool: *t.mutable_data<bool>() = value != 0; break;
    case DType::String: break;
    default: std::memset(t.raw_mut(), 0, t.nbytes());  // float16/bfloat16: only 0 is supported
  }
  return t;
}

class PadKernel : public Kernel {
 public:
  explicit PadKernel(const KernelInfo& info) : opset_(info.opset) {
    const std::string mode = info.attrs.get_string("mode", "constant");
    if (mode == "constant") mode_ = PadMode::Constant;
    else if (mode == "reflect") mode_ = PadMode::Reflect;
    else if (mode == "edge") mode_ = PadMode::Edge;
    else if (mode == "wrap") mode_ = PadMode::Wrap;
    else info.fail("unknown mode '{}' (expected constant, reflect, edge or wrap)", mode);
    if (opset_ < 11) {
      pads_attr_ = info.attrs.get_ints(opset_ < 2 ? "paddings" : "pads");  // opset 1's name, same layout
      value_attr_ = info.attrs.get_float("value", 0.f);
    }
  }

  void prepare(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    std::vector<int64_t> begin, end;
    full_pads(ctx, x, begin, end);
    Shape out(x.rank());
    for (size_t d = 0; d < x.rank(); ++d) {
      // Pads come from the model or an input: INT64_MAX would wrap.
      out[d] = checked_add(checked_add(x.dim(d), begin[d], [&] { return ctx.info().label() + ": input dim + pads"; }),
                           end[d], [&] { return ctx.info().label() + ": input dim + pads"; });
      if (out[d] < 0)
        ctx.fail("pads {} and {} on axis {} of size {} give a negative dimension {}", begin[d], end[d], d, x.dim(d),
                 out[d]);
      if (mode_ != PadMode::Constant && x.dim(d) == 0 && out[d] > 0)
        ctx.fail("cannot pad axis {} of size 0 in a non-constant mode", d);
    }
    ctx.allocate_output(0, x.dtype(), out);
  }

  void compute(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    Tensor& y = ctx.output(0);
    if (y.numel() == 0) return;
    std::vector<int64_t> begin, end;
    full_pads(ctx, x, begin, end);
    Tensor fill = opset_ >= 11 && ctx.has_input(2) ? ctx.input(2) : scalar_of(x.dtype(), value_attr_);
    if (fill.dtype() != x.dtype())
      ctx.fail("constant_value is {}, data is {}", dtype_name(fill.dtype()), dtype_name(x.dtype()));
    if (fill.numel() != 1) ctx.fail("constant_value must hold one value, got shape {}", shape_to_string(fill.shape()));
    const int64_t rank = static_cast<int64_t>(x.rank());
    const std::vector<int64_t> strides = row_major_strides(x.shape());
    dispatch_by_width(ctx, x.dtype(), [&](auto tag) {
      using T = decltype(tag);
      const T* in = elems<T>(x);
      T* out = elems_mut<T>(y);
      const T value = elems<T>(fill)[0];
      if (ctx.reference_mode()) {
        // Reference: each output element maps every coordinate back to the input.
        std::vector<int64_t> idx(y.rank());
        for (int64_t i = 0; i < y.numel(); ++i) {
          unravel_index(i, y.shape(), idx.data());
          int64_t src = 0;
          bool pad = false;
          for (int64_t d = 0; d < rank; ++d) {
            const int64_t s = source_index(idx[d] - begin[d], x.dim(d), mode_);
            if (s == kFill) pad = true;
            else src += s * strides[d];
          }
          out[i] = pad ? value : in[src];
        }
        return;
      }
      AxisOffsets p;
      p.out_shape = y.shape();
      p.offsets.resize(rank);
      // Sized once per axis (no growth per element); the interior is a plain ramp and
      // only the borders go through source_index (a few hundred elements per row on
      // silero's reflect pads, where push_back and the per-element mode switch showed).
      for (int64_t d = 0; d < rank; ++d) {
        std::vector<int64_t>& off = p.offsets[d];
        const int64_t od = y.dim(d), dim = x.dim(d), st = strides[d];
        off.resize(static_cast<size_t>(od));
        for (int64_t i = 0; i < od; ++i) {
          const int64_t src = i - begin[d];
          if (src >= 0 && src < dim) {
            off[i] = src * st;
          } else {
            const int64_t s = source_index(src, dim, mode_);
            off[i] = s == kFill ? kFill : s * st;
          }
        }
      }
      copy_by_axis_offsets(p, in, out, value, ctx.threads());
    });
  }

 private:
  // Begin/end pads for every axis, from the attribute or the pads/axes inputs.
  void full_pads(const KernelContext& ctx, const Tensor& x, std::vector<int64_t>& begin, std::vector<int64_t>& end) const {
    const int64_t rank = static_cast<int64_t>(x.rank());
    std::vector<int64_t> pads = opset_ >= 11 ? ctx.input(1).to_int64_vector() : pads_attr_;
    std::vector<int64_t> axes;
    if (opset_ >= 18 && ctx.has_input(3)) {
      for (int64_t a : ctx.input(3).to_int64_vector()) axes.push_back(normalize_axis(ctx, a, rank));
    } else {
      for (int64_t d = 0; d < rank; ++d) axes.push_back(d);
    }
    const size_t n = axes.size();
    if (pads.size() != 2 * n)
      ctx.fail("pads [{}] has {} entries, expected {} (2 x {} axes) for input shape {}", fmt::join(pads, ","),
               pads.size(), 2 * n, n, shape_to_string(x.shape()));
    begin.assign(rank, 0);
    end.assign(rank, 0);
    for (size_t k = 0; k < n; ++k) {
      begin[axes[k]] = pads[k];
      end[axes[k]] = pads[k + n];
    }
  }

  int opset_;
  PadMode mode_ = PadMode::Constant;
  std::vector<int64_t> pads_attr_;
  float value_attr_ = 0.f;
};

}  // namespace

ONNXMINI_REGISTER_KERNEL("pad", "", "Pad", 1, INT_MAX, make_kernel<PadKernel>);

}  // namespace onnxmini

ONNXMINI_KERNEL_FILE(tensor_pad);
