// Shared window geometry for Conv, ConvTranspose and the pools: reading
// kernel_shape / strides / dilations / pads / auto_pad, and computing output
// sizes and the begin/end padding of every spatial axis.
//
// Layout: tensors are N x C x D1 x ... x Dk (NCHW for 2-D). "Spatial" means
// the axes after C. All vectors below have one entry per spatial axis.
// Strides and flat-index <-> coordinates come from core/shape_util.h.
#pragma once
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "core/checked_math.h"
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
  // At most this many taps of one window lie inside the input (min(kernel, in) per axis):
  // a pool's work per output, whatever the kernel_shape (a kernel of 10^9 over a 5x5 map
  // still reads at most 25 values per output).
  int64_t taps_bound() const {  // per run: no allocation; saturates like prod
    int64_t t = 1;
    for (size_t d = 0; d < rank; ++d) t = try_mul(t, std::min(kernel[d], in[d])).value_or(INT64_MAX);
    return t;
  }
  // Saturates at INT64_MAX instead of wrapping: output sizes come from model pads; a shape
  // that large is refused when its tensor is allocated (KernelContext::check_tensor_size).
  static int64_t prod(const std::vector<int64_t>& v) { return try_numel(v).value_or(INT64_MAX); }
};

// The taps k in [0, kernel) of one window along axis d, at output index o: [lo, hi) land
// inside the input (lo == hi: none), `padded` of them inside the input and the declared
// pads (AveragePool's count_include_pad; not the ceil_mode overhang). Tap k reads input
// index o * stride - pad_begin + k * dilation, increasing in k, so each is a count of the
// taps below a bound: O(1) per window, whatever the kernel size.
struct WindowTaps {
  int64_t lo = 0, hi = 0, padded = 0;
};
inline WindowTaps window_taps(const Window& w, size_t d, int64_t o) {
  const int64_t start = o * w.stride[d] - w.pad_begin[d], dil = w.dilation[d], K = w.kernel[d];
  // Taps whose input index is below `bound` (no overflow: bound - start is within the padded input).
  auto below = [&](int64_t bound) { return bound <= start ? 0 : std::min(K, (bound - start - 1) / dil + 1); };
  WindowTaps t;
  t.lo = below(0);
  t.hi = std::max(t.lo, below(w.in[d]));
  t.padded = below(w.in[d] + w.pad_end[d]) - below(-w.pad_begin[d]);
  return t;
}

// Whether the input padded by the window's pads stays within 4x the input + output plus
// 64 Ki elements (per plane). The convolution paths that copy a zero-padded plane (or lay
// one out per channel block) need it; pads far beyond the input are legal (dilations of
// 10^9 with pads of 10^9 over a 5x5 map: each output reads its centre tap), and those
// layers take the loops that skip padding taps (im2col, the direct loops).
inline bool padded_input_near(const Window& w) {
  double padded = 1;
  for (size_t d = 0; d < w.rank; ++d) padded *= static_cast<double>(w.in[d] + w.pad_begin[d] + w.pad_end[d]);
  return padded <= 4.0 * (static_cast<double>(w.in_size()) + static_cast<double>(w.out_size())) + 65536.0;
}

// The node a KernelContext or a KernelInfo belongs to (resolve_window's error text).
inline const KernelInfo& node_info(const KernelContext& ctx) { return ctx.info(); }
inline const KernelInfo& node_info(const KernelInfo& info) { return info; }

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
  // Sizes, pads, strides and dilations come from the model and the input: every sum and
  // product below is checked (core/checked_math.h), the error naming the node and the axis.
  auto where = [&](size_t i, const char* what) {
    return [&ctx, i, what] { return fmt::format("{}: {} on spatial axis {}", node_info(ctx).label(), what, i); };
  };
  for (size_t i = 0; i < k; ++i) {
    if (kernel[i] <= 0) ctx.fail("kernel size {} on spatial axis {} must be positive", kernel[i], i);
    // Extent of a dilated window: (kernel - 1) * dilation + 1.
    const int64_t eff =
        checked_add(checked_mul(kernel[i] - 1, w.dilation[i], where(i, "kernel extent")), 1, where(i, "kernel extent"));
    const int64_t s = w.stride[i];
    auto ceil_div = [](int64_t x, int64_t d) { return x / d + (x % d != 0); };  // x >= 0, d > 0: no overflow
    if (a.auto_pad == AutoPad::SameUpper || a.auto_pad == AutoPad::SameLower) {
      // Output = ceil(in / stride); the padding needed is split, the odd pixel going to the end (UPPER) or begin.
      w.out[i] = ceil_div(in[i], s);
      const int64_t reach = checked_add(checked_mul(std::max<int64_t>(w.out[i] - 1, 0), s, where(i, "SAME padding")),
                                        eff, where(i, "SAME padding"));
      const int64_t total = std::max<int64_t>(0, reach - in[i]);
      w.pad_begin[i] = a.auto_pad == AutoPad::SameUpper ? total / 2 : total - total / 2;
      w.pad_end[i] = total - w.pad_begin[i];
      continue;
    }
    const int64_t padded = checked_add(checked_add(in[i], w.pad_begin[i], where(i, "input + pads")), w.pad_end[i],
                                       where(i, "input + pads"));
    if (padded < eff)
      ctx.fail("kernel extent {} (size {}, dilation {}) is larger than the padded input {} on spatial axis {}", eff,
               kernel[i], w.dilation[i], padded, i);
    if (a.ceil_mode) {
      w.out[i] = ceil_div(padded - eff, s) + 1;
      // A window may not start inside the end padding (onnxruntime / PyTorch rule); (out - 1) * s <= padded - eff + s - 1.
      const auto start = try_mul(w.out[i] - 1, s);
      if (start && *start >= in[i] + w.pad_begin[i]) --w.out[i];
    } else {
      w.out[i] = (padded - eff) / s + 1;
    }
  }
  return w;
}

}  // namespace nn
}  // namespace onnxmini
