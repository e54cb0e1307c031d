// com.microsoft QLinearGlobalAveragePool and QLinearAveragePool: X, x_scale,
// x_zero_point, y_scale, y_zero_point; uint8 or int8, per-tensor parameters;
// attribute channels_last (0: NCHW..., 1: NHWC...). AveragePool also takes
// kernel_shape, strides, pads, auto_pad, ceil_mode, count_include_pad as the
// float AveragePool does, for any number of spatial axes.
// Both sum the window's integers exactly (int64), then requantize once:
//   y = sat(round(float(sum - zx * count) * (x_scale / (y_scale * count))) + zy)
// (onnxruntime's requantization of the global pool; count = the divisor).
// Data layout: NCHW: one image plane per (n, c), contiguous; NHWC: channels
// innermost, a window sums C-wide rows. Planes / output pixels across threads.
#include <algorithm>
#include <vector>

#include "core/thread_pool.h"
#include "kernels/quantization/quant_common.h"
#include "kernels/registry.h"

namespace onnxmini {
namespace {

template <class Q>
Q requantize_sum(int64_t sum, int64_t count, int32_t zx, float sx, float sy, int32_t zy) {
  const float scale = sx / (sy * static_cast<float>(count));
  const float v = static_cast<float>(sum - static_cast<int64_t>(zx) * count) * scale;
  return quant::saturate_round<Q>(std::nearbyint(v) + static_cast<float>(zy));
}

// Common reading of X and the four parameters.
struct QPoolParams {
  float sx, sy;
  int32_t zx, zy;
  QPoolParams(const KernelContext& ctx, DType t)
      : sx(quant::scalar_scale(ctx, 1, "x_scale")),
        sy(quant::scalar_scale(ctx, 3, "y_scale")),
        zx(quant::scalar_zero_point(ctx, 2, t, "x_zero_point")),
        zy(quant::scalar_zero_point(ctx, 4, t, "y_zero_point")) {}
};

void check_input(const KernelContext& ctx, const Tensor& x) {
  if (x.dtype() != DType::UInt8 && x.dtype() != DType::Int8)
    ctx.unsupported("X dtype {} is not supported (uint8, int8)", dtype_name(x.dtype()));
  if (x.rank() < 3) ctx.fail("X must have rank >= 3 (N, C, spatial...), got shape {}", shape_to_string(x.shape()));
}

class QLinearGlobalAveragePoolKernel : public Kernel {
 public:
  explicit QLinearGlobalAveragePoolKernel(const KernelInfo& info)
      : channels_last_(info.attrs.get_int("channels_last", 0) != 0) {}

  void prepare(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    check_input(ctx, x);
    Shape out = x.shape();
    const size_t first_spatial = channels_last_ ? 1 : 2, end_spatial = channels_last_ ? x.rank() - 1 : x.rank();
    for (size_t d = first_spatial; d < end_spatial; ++d) out[d] = 1;
    ctx.allocate_output(0, x.dtype(), out);
  }

  void compute(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    Tensor& y = ctx.output(0);
    if (y.numel() == 0) return;
    const QPoolParams p(ctx, x.dtype());
    const int64_t n = x.dim(0), c = channels_last_ ? x.dim(x.rank() - 1) : x.dim(1);
    const int64_t image = n * c == 0 ? 0 : x.numel() / (n * c);
    quant::visit_quant_int(x.dtype(), [&](auto tag) {
      using Q = decltype(tag);
      if constexpr (sizeof(Q) == 1) {
        const Q* in = x.data<Q>();
        Q* out = y.mutable_data<Q>();
        if (image == 0) {  // an empty window: ONNX's mean of nothing; give the zero point
          for (int64_t i = 0; i < y.numel(); ++i) out[i] = static_cast<Q>(p.zy);
          return;
        }
        if (!channels_last_) {
          parallel_for(ctx.threads(), n * c, std::max<int64_t>(1, 16384 / image), [&](int64_t b, int64_t e) {
            for (int64_t plane = b; plane < e; ++plane) {
              int64_t sum = 0;
              const Q* src = in + plane * image;
              for (int64_t i = 0; i < image; ++i) sum += src[i];
              out[plane] = requantize_sum<Q>(sum, image, p.zx, p.sx, p.sy, p.zy);
            }
          });
        } else {
          parallel_for(ctx.threads(), n, 1, [&](int64_t b, int64_t e) {
            std::vector<int64_t> sums(static_cast<size_t>(c));
            for (int64_t img = b; img < e; ++img) {
              std::fill(sums.begin(), sums.end(), 0);
              const Q* src = in + img * image * c;
              for (int64_t i = 0; i < image; ++i)
                for (int64_t ch = 0; ch < c; ++ch) sums[ch] += src[i * c + ch];
              for (int64_t ch = 0; ch < c; ++ch)
                out[img * c + ch] = requantize_sum<Q>(sums[ch], image, p.zx, p.sx, p.sy, p.zy);
            }
          });
        }
      }
    });
  }

 private:
  bool channels_last_;
};

class QLinearAveragePoolKernel : public Kernel {
 public:
  explicit QLinearAveragePoolKernel(const KernelInfo& info)
      : kernel_(info.attrs.get_ints("kernel_shape")),
        strides_(info.attrs.get_ints("strides", {})),
        pads_(info.attrs.get_ints("pads", {})),
        auto_pad_(info.attrs.get_string("auto_pad", "NOTSET")),
        ceil_mode_(info.attrs.get_int("ceil_mode", 0) != 0),
        count_include_pad_(info.attrs.get_int("count_include_pad", 0) != 0),
        channels_last_(info.attrs.get_int("channels_last", 0) != 0) {
    for (int64_t k : kernel_)
      if (k < 1) info.fail("kernel_shape entries must be >= 1, got {}", k);
  }

  void prepare(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    check_input(ctx, x);
    const size_t k = x.rank() - 2;
    if (kernel_.size() != k) ctx.fail("kernel_shape has {} entries for {} spatial axes", kernel_.size(), k);
    Geometry g = geometry(ctx, x);
    Shape out = x.shape();
    for (size_t d = 0; d < k; ++d) out[spatial_axis(d, x.rank())] = g.out[d];
    ctx.allocate_output(0, x.dtype(), out);
  }

  void compute(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    Tensor& y = ctx.output(0);
    if (y.numel() == 0) return;
    const QPoolParams p(ctx, x.dtype());
    const Geometry g = geometry(ctx, x);
    const size_t k = g.in.size();
    const int64_t n = x.dim(0), c = channels_last_ ? x.dim(x.rank() - 1) : x.dim(1);
    int64_t in_plane = 1, out_plane = 1;
    for (size_t d = 0; d < k; ++d) {
      in_plane *= g.in[d];
      out_plane *= g.out[d];
    }
    // Element strides of a spatial position and of a channel in each layout.
    const int64_t pos_step = channels_last_ ? c : 1, ch_step = channels_last_ ? 1 : in_plane;
    const int64_t out_pos_step = channels_last_ ? c : 1, out_ch_step = channels_last_ ? 1 : out_plane;
    quant::visit_quant_int(x.dtype(), [&](auto tag) {
      using Q = decltype(tag);
      if constexpr (sizeof(Q) == 1) {
        const Q* in = x.data<Q>();
        Q* out = y.mutable_data<Q>();
        parallel_for(ctx.threads(), n * out_plane, std::max<int64_t>(1, 4096 / c), [&](int64_t b, int64_t e) {
          std::vector<int64_t> lo(k), hi(k), idx(k);
          for (int64_t task = b; task < e; ++task) {
            const int64_t img = task / out_plane, opos = task % out_plane;
            // Window bounds per axis: [start, end) clipped to the image; the divisor
            // with count_include_pad counts the part inside the padded extent.
            int64_t rem = opos, padded_count = 1, count = 1;
            for (size_t d = k; d-- > 0;) {
              const int64_t o = rem % g.out[d];
              rem /= g.out[d];
              const int64_t start = o * g.stride[d] - g.pad_begin[d];
              const int64_t end = std::min(start + kernel_[d], g.in[d] + g.pad_end[d]);
              padded_count *= end - start;
              lo[d] = std::max<int64_t>(start, 0);
              hi[d] = std::min(end, g.in[d]);
              count *= std::max<int64_t>(0, hi[d] - lo[d]);
            }
            const int64_t divisor = count_include_pad_ ? padded_count : count;
            const Q* base = in + img * c * in_plane;
            for (int64_t ch = 0; ch < c; ++ch) {
              int64_t sum = 0;
              if (count > 0) {
                idx = lo;
                for (;;) {
                  int64_t pos = 0;
                  for (size_t d = 0; d < k; ++d) pos = pos * g.in[d] + idx[d];
                  sum += base[ch * ch_step + pos * pos_step];
                  size_t d = k;
                  while (d-- > 0 && ++idx[d] == hi[d]) idx[d] = lo[d];
                  if (d == static_cast<size_t>(-1)) break;
                }
              }
              // Padding counted in the divisor reads as real 0, i.e. the integer zx.
              const int64_t padded_sum = sum + static_cast<int64_t>(p.zx) * (divisor - count);
              out[img * c * out_plane + ch * out_ch_step + opos * out_pos_step] =
                  divisor > 0 ? requantize_sum<Q>(padded_sum, divisor, p.zx, p.sx, p.sy, p.zy) : static_cast<Q>(p.zy);
            }
          }
        });
      }
    });
  }

 private:
  struct Geometry {
    std::vector<int64_t> in, out, stride, pad_begin, pad_end;
  };

  size_t spatial_axis(size_t d, size_t rank) const { return channels_last_ ? 1 + d : 2 + d; }

  Geometry geometry(const KernelContext& ctx, const Tensor& x) const {
    const size_t k = x.rank() - 2;
    Geometry g;
    for (size_t d = 0; d < k; ++d) g.in.push_back(x.dim(spatial_axis(d, x.rank())));
    g.stride = strides_.empty() ? std::vector<int64_t>(k, 1) : strides_;
    if (g.stride.size() != k) ctx.fail("strides has {} entries for {} spatial axes", g.stride.size(), k);
    std::vector<int64_t> pads = pads_.empty() ? std::vector<int64_t>(2 * k, 0) : pads_;
    if (pads.size() != 2 * k) ctx.fail("pads has {} entries, want {}", pads.size(), 2 * k);
    g.pad_begin.assign(pads.begin(), pads.begin() + k);
    g.pad_end.assign(pads.begin() + k, pads.end());
    for (size_t d = 0; d < k; ++d) {
      if (g.stride[d] < 1) ctx.fail("strides[{}] is {}, want >= 1", d, g.stride[d]);
      int64_t o;
      if (auto_pad_ == "SAME_UPPER" || auto_pad_ == "SAME_LOWER") {
        o = (g.in[d] + g.stride[d] - 1) / g.stride[d];
        const int64_t total = std::max<int64_t>(0, (o - 1) * g.stride[d] + kernel_[d] - g.in[d]);
        g.pad_begin[d] = auto_pad_ == "SAME_UPPER" ? total / 2 : total - total / 2;
        g.pad_end[d] = total - g.pad_begin[d];
      } else {
        if (auto_pad_ == "VALID") g.pad_begin[d] = g.pad_end[d] = 0;
        else if (auto_pad_ != "NOTSET") ctx.fail("auto_pad '{}' is not NOTSET, SAME_UPPER, SAME_LOWER or VALID", auto_pad_);
        const int64_t span = g.in[d] + g.pad_begin[d] + g.pad_end[d] - kernel_[d];
        if (span < 0) ctx.fail("axis {}: kernel {} is larger than the padded input {}", d, kernel_[d], span + kernel_[d]);
        o = (ceil_mode_ ? (span + g.stride[d] - 1) / g.stride[d] : span / g.stride[d]) + 1;
        // ceil_mode: a last window starting past the input and its begin padding is dropped.
        if (ceil_mode_ && (o - 1) * g.stride[d] >= g.in[d] + g.pad_begin[d]) --o;
      }
      g.out.push_back(o);
    }
    return g;
  }

  std::vector<int64_t> kernel_, strides_, pads_;
  std::string auto_pad_;
  bool ceil_mode_, count_include_pad_, channels_last_;
};

}  // namespace

ONNXMINI_REGISTER_KERNEL("qlinear_pool", "com.microsoft", "QLinearGlobalAveragePool", 1, INT_MAX,
                         make_kernel<QLinearGlobalAveragePoolKernel>);
ONNXMINI_REGISTER_KERNEL("qlinear_pool", "com.microsoft", "QLinearAveragePool", 1, INT_MAX,
                         make_kernel<QLinearAveragePoolKernel>);

}  // namespace onnxmini

ONNXMINI_KERNEL_FILE(quantization_qlinear_pool);
