// RoiAlign (opsets 10-23): X [N, C, H, W], rois [R, 4] (x1, y1, x2, y2 in
// input coordinates before spatial_scale), batch_indices [R] -> Y [R, C,
// output_height, output_width]. Each output bin averages (mode avg) or takes
// the max (mode max) of a grid of bilinear samples: sampling_ratio per axis,
// or ceil(roi extent / output extent) when it is 0 (adaptive).
//
// Semantics follow the ONNX reference (and onnxruntime): samples more than one
// pixel outside the image (or NaN) contribute 0, others are clamped into it; max mode
// takes, per sample, the largest of the four weighted corner values
// w_i * x_i (not the interpolated value), then the max over samples.
// coordinate_transformation_mode half_pixel shifts the roi by -0.5 pixel
// (opset 16+, the default there); output_half_pixel (the only behaviour of
// opset 10) does not, and widens rois to at least 1 pixel.
//
// Layout: the sample positions and weights of one roi (4 corner offsets + 4
// weights per sample, bins x grid samples) do not depend on the channel, so
// they are computed once per roi into a per-thread buffer and applied to each
// channel plane. Work is split over (roi, channel) pairs; a thread recomputes
// the table only when its chunk moves to the next roi.
#include <algorithm>
#include <cmath>
#include <vector>

#include "kernels/elementwise/elementwise.h"
#include "kernels/registry.h"

namespace onnxmini {

namespace {

using ew::compute_t;
using ew::Num;

struct Sample {
  int64_t pos[4];  // y_low*W + x_low, y_low*W + x_high, y_high*W + x_low, y_high*W + x_high
  double w[4];     // matching bilinear weights (all 0 for a sample outside the image)
};

// Where a roi's bins and samples lie, in pixel coordinates.
template <typename C>
struct RoiGeometry {
  C start_h = 0, start_w = 0, bin_h = 0, bin_w = 0;
  int64_t grid_h = 0, grid_w = 0;  // samples per bin along each axis (may be <= 0: no samples)
  int64_t count = 1;               // the avg divisor: max(grid_h * grid_w, 1)
};

// A roi's sample table is 64 bytes a sample: 4M samples (256 MB) is far beyond any sensible roi
// (a 7x7 output over 1000x1000 pixels takes 1M) and keeps an absurd roi from exhausting memory.
constexpr int64_t kMaxSamplesPerRoi = int64_t{1} << 22;

// ceil(extent per bin) samples per bin. A huge extent saturates (and trips the limit); a NaN one
// (a NaN roi) takes no samples, so its bins are 0 as with any roi that has none.
template <typename C>
int64_t adaptive_grid(C per_bin) {
  if (per_bin != per_bin || per_bin <= C(-1e9)) return 0;
  if (per_bin >= C(1e9)) return kMaxSamplesPerRoi;
  return static_cast<int64_t>(std::ceil(per_bin));
}

template <typename C>
RoiGeometry<C> roi_geometry(const C* roi, C spatial_scale, bool half_pixel, int64_t out_h, int64_t out_w,
                            int64_t sampling_ratio) {
  const C offset = half_pixel ? C(0.5) : C(0);
  RoiGeometry<C> g;
  g.start_w = roi[0] * spatial_scale - offset;
  g.start_h = roi[1] * spatial_scale - offset;
  C roi_w = roi[2] * spatial_scale - offset - g.start_w, roi_h = roi[3] * spatial_scale - offset - g.start_h;
  if (!half_pixel) {
    roi_w = std::max(roi_w, C(1));
    roi_h = std::max(roi_h, C(1));
  }
  g.bin_h = roi_h / static_cast<C>(out_h);
  g.bin_w = roi_w / static_cast<C>(out_w);
  g.grid_h = sampling_ratio > 0 ? sampling_ratio : adaptive_grid(g.bin_h);
  g.grid_w = sampling_ratio > 0 ? sampling_ratio : adaptive_grid(g.bin_w);
  g.count = std::max<int64_t>(g.grid_h * g.grid_w, 1);
  return g;
}

// Samples per roi, or -1 when over kMaxSamplesPerRoi.
template <typename C>
int64_t sample_count(const RoiGeometry<C>& g, int64_t out_h, int64_t out_w) {
  const int64_t gh = std::max<int64_t>(g.grid_h, 0), gw = std::max<int64_t>(g.grid_w, 0);
  if (gh > kMaxSamplesPerRoi || gw > kMaxSamplesPerRoi) return -1;
  const int64_t per_bin = gh * gw;
  return per_bin > kMaxSamplesPerRoi / (out_h * out_w) ? -1 : per_bin * out_h * out_w;
}

// The table of bins x grid samples, in (ph, pw, iy, ix) order.
template <typename C>
void fill_samples(const RoiGeometry<C>& g, int64_t height, int64_t width, int64_t out_h, int64_t out_w,
                  std::vector<Sample>& table) {
  const int64_t gh = std::max<int64_t>(g.grid_h, 0), gw = std::max<int64_t>(g.grid_w, 0);
  table.resize(static_cast<size_t>(out_h * out_w * gh * gw));
  Sample* s = table.data();
  for (int64_t ph = 0; ph < out_h; ++ph)
    for (int64_t pw = 0; pw < out_w; ++pw)
      for (int64_t iy = 0; iy < gh; ++iy) {
        const C yy =
            g.start_h + static_cast<C>(ph) * g.bin_h + (static_cast<C>(iy) + C(0.5)) * g.bin_h / static_cast<C>(gh);
        for (int64_t ix = 0; ix < gw; ++ix, ++s) {
          C x = g.start_w + static_cast<C>(pw) * g.bin_w + (static_cast<C>(ix) + C(0.5)) * g.bin_w / static_cast<C>(gw);
          C y = yy;
          if (!(y >= C(-1) && y <= static_cast<C>(height) && x >= C(-1) && x <= static_cast<C>(width))) {
            *s = Sample{{0, 0, 0, 0}, {0, 0, 0, 0}};  // outside by more than a pixel (or NaN): contributes 0
            continue;
          }
          y = std::max(y, C(0));
          x = std::max(x, C(0));
          int64_t y_low = static_cast<int64_t>(y), x_low = static_cast<int64_t>(x), y_high, x_high;
          if (y_low >= height - 1) {
            y_high = y_low = height - 1;
            y = static_cast<C>(y_low);
          } else {
            y_high = y_low + 1;
          }
          if (x_low >= width - 1) {
            x_high = x_low = width - 1;
            x = static_cast<C>(x_low);
          } else {
            x_high = x_low + 1;
          }
          const C ly = y - static_cast<C>(y_low), lx = x - static_cast<C>(x_low), hy = 1 - ly, hx = 1 - lx;
          *s = Sample{{y_low * width + x_low, y_low * width + x_high, y_high * width + x_low, y_high * width + x_high},
                      {hy * hx, hy * lx, ly * hx, ly * lx}};
        }
      }
}

class RoiAlignKernel : public Kernel {
 public:
  explicit RoiAlignKernel(const KernelInfo& info)
      : out_h_(info.attrs.get_int("output_height", 1)),
        out_w_(info.attrs.get_int("output_width", 1)),
        sampling_ratio_(info.attrs.get_int("sampling_ratio", 0)),
        spatial_scale_(info.attrs.get_float("spatial_scale", 1.0f)) {
    const std::string mode = info.attrs.get_string("mode", "avg");
    if (mode != "avg" && mode != "max") info.fail("mode must be avg or max, got '{}'", mode);
    max_mode_ = mode == "max";
    // Opset 10 has no attribute and behaves as output_half_pixel; from 16 the default is half_pixel.
    const std::string ctm =
        info.attrs.get_string("coordinate_transformation_mode", info.opset >= 16 ? "half_pixel" : "output_half_pixel");
    if (ctm != "half_pixel" && ctm != "output_half_pixel")
      info.fail("coordinate_transformation_mode must be half_pixel or output_half_pixel, got '{}'", ctm);
    half_pixel_ = ctm == "half_pixel";
    if (out_h_ < 1 || out_w_ < 1)
      info.fail("output_height and output_width must be positive, got {} and {}", out_h_, out_w_);
    if (sampling_ratio_ < 0) info.fail("sampling_ratio must be >= 0, got {}", sampling_ratio_);
    info.require_dtype(0, {DType::Float32, DType::Float64, DType::Float16, DType::BFloat16});
  }

  void prepare(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    const Tensor& rois = ctx.input(1);
    const Tensor& idx = ctx.input(2);
    if (!ew::visit(ew::FloatTypes{}, x.dtype(), [](auto) {}))
      ctx.unsupported("X dtype {} is not supported (float32, float64, float16, bfloat16)", dtype_name(x.dtype()));
    if (x.rank() != 4) ctx.fail("X must be 4-D [N, C, H, W], got shape {}", shape_to_string(x.shape()));
    if (rois.dtype() != x.dtype())
      ctx.fail("rois dtype {} differs from X dtype {}", dtype_name(rois.dtype()), dtype_name(x.dtype()));
    if (rois.rank() != 2 || rois.dim(1) != 4)
      ctx.fail("rois must be 2-D [num_rois, 4], got shape {}", shape_to_string(rois.shape()));
    if (idx.dtype() != DType::Int64 || idx.rank() != 1 || idx.dim(0) != rois.dim(0))
      ctx.fail("batch_indices must be 1-D int64 [{}] (one per roi), got {} of shape {}", rois.dim(0),
               dtype_name(idx.dtype()), shape_to_string(idx.shape()));
    const int64_t* b = idx.data<int64_t>();
    for (int64_t r = 0; r < idx.numel(); ++r)
      if (b[r] < 0 || b[r] >= x.dim(0))
        ctx.fail("batch_indices[{}] = {} is outside [0, {}) (X has shape {})", r, b[r], x.dim(0),
                 shape_to_string(x.shape()));
    ew::visit(ew::FloatTypes{}, x.dtype(), [&](auto tag) { check_sample_counts<typename decltype(tag)::type>(ctx); });
    ctx.allocate_output(0, x.dtype(), {rois.dim(0), x.dim(1), out_h_, out_w_});
  }

  void compute(KernelContext& ctx) override {
    ew::visit(ew::FloatTypes{}, ctx.input(0).dtype(), [&](auto tag) { run<typename decltype(tag)::type>(ctx); });
  }

 private:
  // Fails on a roi whose sample table would exceed kMaxSamplesPerRoi (computed as run() does).
  template <typename T>
  void check_sample_counts(const KernelContext& ctx) const {
    using C = compute_t<T>;
    const T* rois = ew::cdata<T>(ctx.input(1));
    for (int64_t r = 0; r < ctx.input(1).dim(0); ++r) {
      C roi[4];
      for (int k = 0; k < 4; ++k) roi[k] = Num<T>::load(rois[r * 4 + k]);
      const RoiGeometry<C> g =
          roi_geometry<C>(roi, static_cast<C>(spatial_scale_), half_pixel_, out_h_, out_w_, sampling_ratio_);
      if (sample_count(g, out_h_, out_w_) < 0)
        ctx.fail(
            "roi {} ({}, {}, {}, {}) needs {} x {} samples per bin of a {}x{} output, over the limit of {} "
            "samples per roi (set sampling_ratio)",
            r, roi[0], roi[1], roi[2], roi[3], g.grid_h, g.grid_w, out_h_, out_w_, kMaxSamplesPerRoi);
    }
  }

  template <typename T>
  void run(KernelContext& ctx) const {
    using C = compute_t<T>;
    const Tensor& x_t = ctx.input(0);
    Tensor& y_t = ctx.output(0);
    if (y_t.numel() == 0) return;
    const T* x = ew::cdata<T>(x_t);
    const T* rois = ew::cdata<T>(ctx.input(1));
    const int64_t* batch = ctx.input(2).data<int64_t>();
    T* y = ew::mdata<T>(y_t);
    const int64_t channels = x_t.dim(1), height = x_t.dim(2), width = x_t.dim(3);
    const int64_t plane = height * width, bins = out_h_ * out_w_;
    const int64_t pairs = y_t.dim(0) * channels;
    if (plane == 0) {  // an empty image: every sample reads nothing
      std::fill(y, y + y_t.numel(), Num<T>::store(C(0)));
      return;
    }
    // Chunks of a quarter of a roi's channels at least: the sample table is rebuilt per roi a chunk touches.
    parallel_for(ctx.threads(), pairs, std::max<int64_t>(1, channels / 4), [&](int64_t begin, int64_t end) {
      std::vector<Sample> table;
      RoiGeometry<C> g;
      int64_t table_roi = -1;
      for (int64_t rc = begin; rc < end; ++rc) {
        const int64_t r = rc / channels, c = rc % channels;
        if (r != table_roi) {
          C roi[4];
          for (int k = 0; k < 4; ++k) roi[k] = Num<T>::load(rois[r * 4 + k]);
          g = roi_geometry<C>(roi, static_cast<C>(spatial_scale_), half_pixel_, out_h_, out_w_, sampling_ratio_);
          fill_samples<C>(g, height, width, out_h_, out_w_, table);
          table_roi = r;
        }
        const T* img = x + (batch[r] * channels + c) * plane;
        T* out = y + rc * bins;
        const int64_t per_bin = static_cast<int64_t>(table.size()) / bins;
        const Sample* s = table.data();
        for (int64_t bin = 0; bin < bins; ++bin) {
          C acc = 0;
          for (int64_t k = 0; k < per_bin; ++k, ++s) {
            C v[4];
            for (int q = 0; q < 4; ++q) v[q] = static_cast<C>(s->w[q]) * Num<T>::load(img[s->pos[q]]);
            if (max_mode_) {
              const C m = std::max(std::max(v[0], v[1]), std::max(v[2], v[3]));
              acc = k == 0 ? m : std::max(acc, m);
            } else {
              acc += v[0] + v[1] + v[2] + v[3];
            }
          }
          out[bin] = Num<T>::store(max_mode_ ? acc : acc / static_cast<C>(g.count));
        }
      }
    });
  }

  int64_t out_h_, out_w_, sampling_ratio_;
  float spatial_scale_;
  bool max_mode_ = false, half_pixel_ = true;
};

}  // namespace

ONNXMINI_REGISTER_KERNEL("roi_align", "", "RoiAlign", 10, INT_MAX, make_kernel<RoiAlignKernel>);

}  // namespace onnxmini

ONNXMINI_KERNEL_FILE(vision_roi_align);
