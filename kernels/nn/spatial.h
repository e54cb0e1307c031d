// Shared window geometry for Conv, ConvTranspose and the pools: reading
// kernel_shape / strides / dilations / pads / auto_pad, and computing output
// sizes and the begin/end padding of every spatial axis.
//
// Layout: tensors are N x C x D1 x ... x Dk (NCHW for 2-D). "Spatial" means
// the axes after C. All vectors below have one entry per spatial axis.
// Strides and flat-index <-> coordinates come from core/shape_util.h.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "core/shape_util.h"
#include "kernels/kernel.h"

namespace onnxmini {
namespace nn {

enum class AutoPad { NotSet, SameUpper, SameLower, Valid };

struct WindowAttrs {
  AutoPad auto_pad = AutoPad::NotSet;
  std::vector<int64_t> kernel;     // may be empty for Conv (taken from the weight)
  std::vector<int64_t> strides;    // empty: all 1
  std::vector<int64_t> dilations;  // empty: all 1
  std::vector<int64_t> pads;       // [b1..bk, e1..ek]; empty: all 0
  bool ceil_mode = false;          // pools only
};

inline WindowAttrs read_window_attrs(const KernelInfo& info) {
  WindowAttrs w;
  const std::string ap = info.attrs.get_string("auto_pad", "NOTSET");
  if (ap == "NOTSET") w.auto_pad = AutoPad::NotSet;
  else if (ap == "SAME_UPPER") w.auto_pad = AutoPad::SameUpper;
  else if (ap == "SAME_LOWER") w.auto_pad = AutoPad::SameLower;
  else if (ap == "VALID") w.auto_pad = AutoPad::Valid;
  else info.fail("auto_pad '{}' is not one of NOTSET, SAME_UPPER, SAME_LOWER, VALID", ap);
  w.kernel = info.attrs.get_ints("kernel_shape", {});
  w.strides = info.attrs.get_ints("strides", {});
  w.dilations = info.attrs.get_ints("dilations", {});
  w.pads = info.attrs.get_ints("pads", {});
  w.ceil_mode = info.attrs.get_int("ceil_mode", 0) != 0;
  for (int64_t s : w.strides)
    if (s <= 0) info.fail("strides must be positive, got {}", s);
  for (int64_t d : w.dilations)
    if (d <= 0) info.fail("dilations must be positive, got {}", d);
  for (int64_t p : w.pads)
    if (p < 0) info.fail("pads must be non-negative, got {}", p);
  return w;
}

// The resolved geometry of one call (per-run: depends on the input shape).
struct Window {
  size_t rank = 0;  // number of spatial axes
  std::vector<int64_t> in, kernel, stride, dilation, pad_begin, pad_end, out;
  int64_t in_size() const { return prod(in); }
  int64_t out_size() const { return prod(out); }
  int64_t kernel_size() const { return prod(kernel); }
  static int64_t prod(const std::vector<int64_t>& v) { return shape_product(v, 0, v.size()); }
};

// Resolves pads and output sizes for a forward window op (Conv, pools).
// `in` are the input's spatial sizes, `kernel` the kernel's. ctx: the KernelContext
// (run time) or the KernelInfo (Kernel::describe) whose fail() names the node.
template <typename Ctx>
inline Window resolve_window(const Ctx& ctx, const WindowAttrs& a, const std::vector<int64_t>& in,
                             const std::vector<int64_t>& kernel) {
  Window w;
  const size_t k = in.size();
  w.rank = k;
  w.in = in;
  w.kernel = kernel;
  auto per_axis = [&](const std::vector<int64_t>& v, const char* name, size_t n) {
    if (v.empty()) return std::vector<int64_t>(n, 1);
    if (v.size() != n) ctx.fail("{} has {} values, expected {} (one per spatial axis)", name, v.size(), n);
    return v;
  };
  w.stride = per_axis(a.strides, "strides", k);
  w.dilation = per_axis(a.dilations, "dilations", k);
  w.pad_begin.assign(k, 0);
  w.pad_end.assign(k, 0);
  w.out.assign(k, 0);
  if (a.auto_pad == AutoPad::NotSet && !a.pads.empty()) {
    if (a.pads.size() != 2 * k) ctx.fail("pads has {} values, expected {} (begin and end per spatial axis)", a.pads.size(), 2 * k);
    for (size_t i = 0; i < k; ++i) {
      w.pad_begin[i] = a.pads[i];
      w.pad_end[i] = a.pads[i + k];
    }
  }
  for (size_t i = 0; i < k; ++i) {
    if (kernel[i] <= 0) ctx.fail("kernel size {} on spatial axis {} must be positive", kernel[i], i);
    const int64_t eff = (kernel[i] - 1) * w.dilation[i] + 1;  // extent of a dilated window
    const int64_t s = w.stride[i];
    if (a.auto_pad == AutoPad::SameUpper || a.auto_pad == AutoPad::SameLower) {
      // Output = ceil(in / stride); the padding needed is split, the odd pixel going to the end (UPPER) or begin.
      w.out[i] = (in[i] + s - 1) / s;
      const int64_t total = std::max<int64_t>(0, (w.out[i] - 1) * s + eff - in[i]);
      w.pad_begin[i] = a.auto_pad == AutoPad::SameUpper ? total / 2 : total - total / 2;
      w.pad_end[i] = total - w.pad_begin[i];
      continue;
    }
    const int64_t padded = in[i] + w.pad_begin[i] + w.pad_end[i];
    if (padded < eff)
      ctx.fail("kernel extent {} (size {}, dilation {}) is larger than the padded input {} on spatial axis {}", eff,
               kernel[i], w.dilation[i], padded, i);
    if (a.ceil_mode) {
      w.out[i] = (padded - eff + s - 1) / s + 1;
      // A window may not start inside the end padding (onnxruntime / PyTorch rule).
      if ((w.out[i] - 1) * s >= in[i] + w.pad_begin[i]) --w.out[i];
    } else {
      w.out[i] = (padded - eff) / s + 1;
    }
  }
  return w;
}

}  // namespace nn
}  // namespace onnxmini
