// GridSample (opsets 16-23): Y[n, c, p] = X[n, c] sampled at grid[n, p], a
// point in normalised coordinates [-1, 1] (grid's last axis lists them
// innermost axis first: x for W, y for H, z for D). Opset 16: 4-D X only and
// modes bilinear / nearest / bicubic; opset 20+: any spatial rank (4-D and 5-D
// in practice) and the names linear / nearest / cubic.
//
// Per spatial axis of size d (following the ONNX reference, which follows
// PyTorch):
//  - denormalise: align_corners ? (g + 1) / 2 * (d - 1) : ((g + 1) * d - 1) / 2;
//  - nearest rounds the coordinate half to even first;
//  - a coordinate outside [lo, hi] ([0, d-1] with align_corners, [-0.5, d-0.5]
//    without) is clamped to [0, d-1] (border) or reflected into [lo, hi]
//    (reflection); zeros leaves it;
//  - the taps (1 nearest, 2 linear, 4 cubic with Keys' a = -0.75) read pixels
//    whose index is, when outside [0, d), 0 (zeros), clamped (border) or
//    reflected (reflection).
// The N-D weights are products of the per-axis ones.
//
// Layout and threading: taps (flat pixel offset, or -1 for a zero pixel, and
// weight) depend on (n, output position) only, so they are computed for a
// block of positions at once and then applied to every channel plane of X,
// writing contiguous runs of Y. Blocks of (n, positions) are split across
// threads. float16 / bfloat16 compute in float, double in double.
#include <algorithm>
#include <cmath>
#include <vector>

#include "kernels/elementwise/elementwise.h"
#include "kernels/registry.h"

namespace onnxmini {

namespace {

using ew::compute_t;
using ew::Num;

enum class Interp { Nearest, Linear, Cubic };
enum class Padding { Zeros, Border, Reflection };

constexpr int64_t kBlock = 128;  // output positions whose taps are computed together
constexpr size_t kMaxRank = 3;   // spatial axes (volumetric); cubic 3-D has 64 taps per position

// Folds x into [lo, hi] by reflecting at the bounds as often as needed. The
// fold count stays a float (x may be far beyond any integer type).
template <typename C>
C reflect(C x, C lo, C hi) {
  const C range = hi - lo;
  if (range <= 0) return lo;  // a one-pixel axis with align_corners
  if (x < lo || x > hi) {
    const C dx = x < lo ? lo - x : x - hi;
    const C folds = std::floor(dx / range);
    const C r = std::clamp(dx - folds * range, C(0), range);
    const bool even = std::fmod(folds, C(2)) == 0;
    return (x < lo) == even ? lo + r : hi - r;
  }
  return x;
}

// Keys' cubic convolution weights of the 4 pixels floor(x)-1 .. floor(x)+2 at fraction t.
template <typename C>
void cubic_weights(C t, C* w) {
  const C a = C(-0.75);
  const C t1 = t + 1, t2 = 1 - t, t3 = 2 - t;
  w[0] = ((a * t1 - 5 * a) * t1 + 8 * a) * t1 - 4 * a;
  w[1] = ((a + 2) * t - (a + 3)) * t * t + 1;
  w[2] = ((a + 2) * t2 - (a + 3)) * t2 * t2 + 1;
  w[3] = ((a * t3 - 5 * a) * t3 + 8 * a) * t3 - 4 * a;
}

struct Axis {
  int64_t size;
  double lo, hi;  // the reflection bounds
};

// The pixel index read for tap index i on an axis, or -1 for a zero pixel.
template <typename C>
int64_t pixel_index(int64_t i, const Axis& a, Padding pad) {
  if (i >= 0 && i < a.size) return i;
  switch (pad) {
    case Padding::Zeros:
      return -1;
    case Padding::Border:
      return std::clamp<int64_t>(i, 0, a.size - 1);
    case Padding::Reflection:
      return std::clamp<int64_t>(
          static_cast<int64_t>(reflect<C>(static_cast<C>(i), static_cast<C>(a.lo), static_cast<C>(a.hi))), 0,
          a.size - 1);
  }
  return -1;
}

// out[p] = sum over the TAPS taps of position p of weight * pixel (a zero pixel has offset -1).
// The tap count is a template argument so the inner loop unrolls.
template <int TAPS, typename T, typename C>
void apply_taps(const T* img, T* out, int64_t count, const int64_t* offsets, const C* weights) {
  for (int64_t p = 0; p < count; ++p, offsets += TAPS, weights += TAPS) {
    C acc = 0;
    for (int k = 0; k < TAPS; ++k) acc += offsets[k] >= 0 ? weights[k] * Num<T>::load(img[offsets[k]]) : C(0);
    out[p] = Num<T>::store(acc);
  }
}

template <typename T, typename C>
using ApplyFn = void (*)(const T*, T*, int64_t, const int64_t*, const C*);

// Taps per position are (1, 2 or 4 per axis) ^ (1 to 3 axes): 1, 2, 4, 8, 16 or 64.
template <typename T, typename C>
ApplyFn<T, C> apply_for(int taps) {
  switch (taps) {
    case 1:
      return apply_taps<1, T, C>;
    case 2:
      return apply_taps<2, T, C>;
    case 4:
      return apply_taps<4, T, C>;
    case 8:
      return apply_taps<8, T, C>;
    case 16:
      return apply_taps<16, T, C>;
    default:
      return apply_taps<64, T, C>;
  }
}

class GridSampleKernel : public Kernel {
 public:
  explicit GridSampleKernel(const KernelInfo& info) {
    const bool new_names = info.opset >= 20;
    const std::string mode = info.attrs.get_string("mode", new_names ? "linear" : "bilinear");
    if (mode == "nearest")
      interp_ = Interp::Nearest;
    else if (mode == (new_names ? "linear" : "bilinear"))
      interp_ = Interp::Linear;
    else if (mode == (new_names ? "cubic" : "bicubic"))
      interp_ = Interp::Cubic;
    else
      info.fail("mode must be {}, got '{}' (opset {})",
                new_names ? "linear, nearest or cubic" : "bilinear, nearest or bicubic", mode, info.opset);
    const std::string pad = info.attrs.get_string("padding_mode", "zeros");
    if (pad == "zeros")
      padding_ = Padding::Zeros;
    else if (pad == "border")
      padding_ = Padding::Border;
    else if (pad == "reflection")
      padding_ = Padding::Reflection;
    else
      info.fail("padding_mode must be zeros, border or reflection, got '{}'", pad);
    align_corners_ = info.attrs.get_int("align_corners", 0) != 0;
    info.require_dtype(0, {DType::Float32, DType::Float64, DType::Float16, DType::BFloat16});
    info.require_dtype(1, {DType::Float32, DType::Float64, DType::Float16, DType::BFloat16});
  }

  void prepare(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    const Tensor& grid = ctx.input(1);
    for (size_t i : {0, 1})
      if (!ew::visit(ew::FloatTypes{}, ctx.input(i).dtype(), [](auto) {}))
        ctx.unsupported("{} dtype {} is not supported (float32, float64, float16, bfloat16)", i == 0 ? "X" : "grid",
                        dtype_name(ctx.input(i).dtype()));
    const int opset = ctx.info().opset;
    if (opset < 20 ? x.rank() != 4 : x.rank() < 3)
      ctx.fail("X must be {}, got shape {}",
               opset < 20 ? "4-D [N, C, H, W] (opset 16)" : "[N, C, D1, ...] with rank >= 3",
               shape_to_string(x.shape()));
    const size_t r = x.rank() - 2;
    if (r > kMaxRank)
      ctx.unsupported("X shape {} has {} spatial axes (at most {} are supported)", shape_to_string(x.shape()), r,
                      kMaxRank);
    if (grid.rank() != r + 2 || grid.dim(0) != x.dim(0) || grid.dim(r + 1) != static_cast<int64_t>(r))
      ctx.fail("grid shape {} does not fit X shape {} (want [{}, <{} output dims>, {}])", shape_to_string(grid.shape()),
               shape_to_string(x.shape()), x.dim(0), r, r);
    Shape out = {x.dim(0), x.dim(1)};
    for (size_t d = 0; d < r; ++d) out.push_back(grid.dim(d + 1));
    Tensor& y = ctx.allocate_output(0, x.dtype(), out);
    if (y.numel() > 0)
      for (size_t d = 0; d < r; ++d)
        if (x.dim(d + 2) == 0)
          ctx.fail("X shape {} has an empty spatial axis to sample from", shape_to_string(x.shape()));
  }

  void compute(KernelContext& ctx) override {
    ew::visit(ew::FloatTypes{}, ctx.input(0).dtype(), [&](auto tag) { run<typename decltype(tag)::type>(ctx); });
  }

 private:
  template <typename T>
  void run(KernelContext& ctx) const {
    using C = compute_t<T>;
    const Tensor& x_t = ctx.input(0);
    Tensor& y_t = ctx.output(0);
    if (y_t.numel() == 0) return;
    const size_t rank = x_t.rank() - 2;
    // The grid in the compute type: as is, or converted once (it may be another float type than X).
    const Tensor& g_in = ctx.input(1);
    const DType compute_dtype = std::is_same<C, double>::value ? DType::Float64 : DType::Float32;
    Tensor converted;
    const C* grid = ew::cdata<C>(g_in);
    if (g_in.dtype() != compute_dtype) {
      converted = ctx.scratch(compute_dtype, g_in.shape());
      C* dst = ew::mdata<C>(converted);
      for (int64_t i = 0; i < g_in.numel(); ++i) dst[i] = static_cast<C>(g_in.get_as_double(i));
      grid = dst;
    }

    std::vector<Axis> axes(rank);
    int64_t plane = 1;
    for (size_t d = 0; d < rank; ++d) {
      const int64_t size = x_t.dim(d + 2);
      axes[d] = Axis{size, align_corners_ ? 0.0 : -0.5, align_corners_ ? double(size - 1) : double(size) - 0.5};
      plane *= size;
    }
    const int64_t batch = x_t.dim(0), channels = x_t.dim(1);
    const int64_t positions = y_t.numel() / (batch * channels);
    const int64_t blocks_per_image = (positions + kBlock - 1) / kBlock;
    const int per_axis = interp_ == Interp::Nearest ? 1 : interp_ == Interp::Linear ? 2 : 4;
    int taps = 1;
    for (size_t d = 0; d < rank; ++d) taps *= per_axis;
    const T* x = ew::cdata<T>(x_t);
    T* y = ew::mdata<T>(y_t);
    const ApplyFn<T, C> apply = apply_for<T, C>(taps);

    // Chunks of at least ~64K multiply-adds, so a thread hand-off pays for itself.
    const int64_t grain = std::max<int64_t>(1, 65536 / (kBlock * std::max<int64_t>(channels, 1) * taps));
    parallel_for(ctx.threads(), batch * blocks_per_image, grain, [&](int64_t begin, int64_t end) {
      std::vector<int64_t> offsets(static_cast<size_t>(kBlock * taps));
      std::vector<C> weights(static_cast<size_t>(kBlock * taps));
      for (int64_t job = begin; job < end; ++job) {
        const int64_t n = job / blocks_per_image, p0 = (job % blocks_per_image) * kBlock;
        const int64_t count = std::min(kBlock, positions - p0);
        for (int64_t p = 0; p < count; ++p)
          position_taps<C>(grid + (n * positions + p0 + p) * rank, axes, per_axis, offsets.data() + p * taps,
                           weights.data() + p * taps);
        for (int64_t c = 0; c < channels; ++c)
          apply(x + (n * channels + c) * plane, y + (n * channels + c) * positions + p0, count, offsets.data(),
                weights.data());
      }
    });
  }

  // The taps of one output position: `point` is its grid entry (innermost axis first).
  template <typename C>
  void position_taps(const C* point, const std::vector<Axis>& axes, int per_axis, int64_t* offsets, C* weights) const {
    const size_t rank = axes.size();
    int64_t idx[kMaxRank][4];  // [axis][tap]: pixel index, or -1 for a zero pixel
    C w[kMaxRank][4];
    for (size_t d = 0; d < rank; ++d) {
      const Axis& a = axes[d];
      const C g = point[rank - 1 - d];
      C v = align_corners_ ? (g + 1) / 2 * static_cast<C>(a.size - 1) : ((g + 1) * static_cast<C>(a.size) - 1) / 2;
      if (interp_ == Interp::Nearest) v = std::nearbyint(v);
      if (v < static_cast<C>(a.lo) || v > static_cast<C>(a.hi)) {
        if (padding_ == Padding::Border)
          v = std::clamp(v, C(0), static_cast<C>(a.size - 1));
        else if (padding_ == Padding::Reflection)
          v = reflect<C>(v, static_cast<C>(a.lo), static_cast<C>(a.hi));
      }
      if (!std::isfinite(v)) {  // a NaN grid entry (or inf with zeros / reflection padding) reads zeros
        for (int k = 0; k < per_axis; ++k) {
          idx[d][k] = -1;
          w[d][k] = 0;
        }
        continue;
      }
      // Only zeros padding leaves points outside; pulling far ones to 8 pixels out changes no tap
      // (all stay outside) and keeps the integer conversions below in range.
      v = std::clamp(v, C(-8), static_cast<C>(a.size + 8));
      if (interp_ == Interp::Nearest) {
        idx[d][0] = pixel_index<C>(static_cast<int64_t>(v), a, padding_);
        w[d][0] = 1;
        continue;
      }
      const C f = std::floor(v);
      const C t = v - f;
      const int64_t i0 = static_cast<int64_t>(f);
      if (interp_ == Interp::Linear) {
        w[d][0] = 1 - t;
        w[d][1] = t;
        idx[d][0] = pixel_index<C>(i0, a, padding_);
        idx[d][1] = pixel_index<C>(i0 + 1, a, padding_);
      } else {
        cubic_weights(t, w[d]);
        for (int k = 0; k < 4; ++k) idx[d][k] = pixel_index<C>(i0 - 1 + k, a, padding_);
      }
    }
    // Expand the per-axis taps into their product, outermost axis slowest: after axis d, entry j
    // holds the taps of axes 0..d; it splits into entries j * per_axis + k (in place, from the back).
    offsets[0] = 0;
    weights[0] = 1;
    int n = 1;
    for (size_t d = 0; d < rank; ++d) {
      for (int j = n - 1; j >= 0; --j) {
        const int64_t o = offsets[j];
        const C wj = weights[j];
        for (int k = per_axis - 1; k >= 0; --k) {
          const int64_t i = idx[d][k];
          offsets[j * per_axis + k] = o < 0 || i < 0 ? -1 : o * axes[d].size + i;
          weights[j * per_axis + k] = wj * w[d][k];
        }
      }
      n *= per_axis;
    }
  }

  Interp interp_ = Interp::Linear;
  Padding padding_ = Padding::Zeros;
  bool align_corners_ = false;
};

}  // namespace

ONNXMINI_REGISTER_KERNEL("grid_sample", "", "GridSample", 16, INT_MAX, make_kernel<GridSampleKernel>);

}  // namespace onnxmini

ONNXMINI_KERNEL_FILE(vision_grid_sample);
