// Resize (opsets 10, 11, 13, 18, 19) and Upsample (1, 7, 9): nearest / linear /
// cubic interpolation of any number of axes, float32 / float64 / int8 / uint8.
//
// Algorithm: interpolation is separable, so the output is computed one resized
// axis at a time (bilinear = a pass over H then a pass over W, trilinear = three
// passes). For one axis, every output index o maps to a source coordinate x
// (coordinate_transformation_mode), and reads `taps` neighbours around x with
// weights (mode): nearest = 1 tap, linear = 2, cubic = 4, antialiased linear /
// cubic = a filter widened by 1/scale when downscaling. Neighbours outside the
// axis are clamped to its edge (or dropped and the rest renormalized with
// exclude_outside); tf_crop_and_resize writes extrapolation_value where x falls
// outside the input. The (index, weight) table of every axis depends only on
// the input shape and the scales / sizes / roi values, so it is built once and
// cached (ResizePlan); a pass is then a plain strided loop, threaded over the
// outer planes. Intermediate passes are float64; the last one converts to the
// output type (integers: round half to even, saturate), as the ONNX reference
// does. This general path is also KernelMode::Reference.
//
// Fast paths (float32, resize_fast.h): nearest and bilinear over the last two
// axes, when the plan's own tables show they compute the same values (pixel
// replication, one-hot gathers, two-tap linear); threaded over planes.
// float16 / bfloat16 go through float32 (convert, resize, convert back).
#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <mutex>

#include "core/float16.h"
#include "core/shape_util.h"
#include "core/thread_pool.h"
#include "kernels/nn/resize_fast.h"
#include "kernels/registry.h"

namespace onnxmini {
namespace nn {
namespace {

enum class Mode { Nearest, Linear, Cubic };
enum class NearestMode { RoundPreferFloor, RoundPreferCeil, Floor, Ceil };
enum class Coord { HalfPixel, HalfPixelSymmetric, PytorchHalfPixel, AlignCorners, Asymmetric, TfHalfPixelForNearest,
                   TfCropAndResize };
enum class AspectPolicy { Stretch, NotLarger, NotSmaller };

struct ResizeAttrs {
  Mode mode = Mode::Nearest;
  NearestMode nearest = NearestMode::RoundPreferFloor;
  Coord coord = Coord::HalfPixel;
  AspectPolicy policy = AspectPolicy::Stretch;
  double cubic_a = -0.75;
  bool exclude_outside = false;
  bool antialias = false;
  double extrapolation_value = 0.0;
  std::vector<int64_t> axes;  // as given (may be negative); empty: all axes
};

// One resized axis: for output index o, taps t in [0, taps): source index
// index[o*taps+t] (already clamped) with weight weight[o*taps+t].
struct AxisPass {
  size_t axis = 0;
  int64_t in = 0, out = 0;
  int taps = 1;
  std::vector<int64_t> index;
  std::vector<double> weight;
  std::vector<uint8_t> extrapolated;  // per output index (tf_crop_and_resize only)
};

struct ResizePlan {
  Shape in_shape, out_shape;
  std::vector<double> scales, roi;  // the key besides in_shape (scales or sizes, as doubles)
  std::vector<AxisPass> passes;     // ascending axis order
  ResizeFastPlan fast;              // float32 fast path (kind None: general path only)
};

// ---- per-axis tables --------------------------------------------------------

double source_coordinate(Coord c, double y, double scale, int64_t in, int64_t out_int, double roi_lo, double roi_hi) {
  const double out_w = scale * static_cast<double>(in);  // the reference's (fractional) output length
  switch (c) {
    case Coord::AlignCorners: return out_w == 1 ? 0.0 : y * (in - 1) / (out_w - 1);
    case Coord::Asymmetric: return y / scale;
    case Coord::TfHalfPixelForNearest: return (y + 0.5) / scale;
    case Coord::TfCropAndResize: {
      const double x = out_w == 1 ? (roi_hi - roi_lo) * (in - 1) / 2 : y * (roi_hi - roi_lo) * (in - 1) / (out_w - 1);
      return x + roi_lo * (in - 1);
    }
    case Coord::PytorchHalfPixel: return out_w == 1 ? -0.5 : (y + 0.5) / scale - 0.5;
    case Coord::HalfPixel: return (y + 0.5) / scale - 0.5;
    case Coord::HalfPixelSymmetric: {
      const double adjustment = static_cast<double>(out_int) / out_w;
      const double offset = static_cast<double>(in) / 2 * (1 - adjustment);
      return offset + (y + 0.5) / scale - 0.5;
    }
  }
  return 0.0;
}

double cubic_weight(double x, double a) {
  x = std::abs(x);
  if (x <= 1) return ((a + 2) * x - (a + 3)) * x * x + 1;
  if (x < 2) return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a;
  return 0.0;
}

// Weights of the taps start..start+n-1 for a coordinate whose distance from the
// first tap right of `start + n/2 - 1` is `ratio` in (0, 1].
void tap_weights(const ResizeAttrs& a, double ratio, double scale, std::vector<double>& w) {
  w.clear();
  if (a.mode == Mode::Nearest) {
    bool up = true;  // ratio == 1: the coordinate is an integer, the second tap
    if (ratio < 1) {
      switch (a.nearest) {
        case NearestMode::RoundPreferFloor: up = ratio > 0.5; break;
        case NearestMode::RoundPreferCeil: up = ratio >= 0.5; break;
        case NearestMode::Floor: up = false; break;
        case NearestMode::Ceil: up = true; break;
      }
    }
    w = {up ? 0.0 : 1.0, up ? 1.0 : 0.0};
    return;
  }
  if (!a.antialias) {
    if (a.mode == Mode::Linear) {
      w = {1 - ratio, ratio};
    } else {
      for (double d : {1 + ratio, ratio, 1 - ratio, 2 - ratio}) w.push_back(cubic_weight(d, a.cubic_a));
    }
    return;
  }
  // Antialias: the filter (triangle or cubic kernel) stretched by 1/scale when downscaling.
  const double s = std::min(scale, 1.0);
  const double support = a.mode == Mode::Linear ? 1.0 : 2.0;
  const int64_t start = static_cast<int64_t>(std::floor(-support / s)) + 1;
  const int64_t n = 2 - 2 * start;
  double sum = 0;
  for (int64_t i = start; i < start + n; ++i) {
    const double arg = (static_cast<double>(i) - ratio) * s;
    const double v = a.mode == Mode::Linear ? std::clamp(1 - std::abs(arg), 0.0, 1.0) : cubic_weight(arg, a.cubic_a);
    w.push_back(v);
    sum += v;
  }
  for (double& v : w) v /= sum;
}

AxisPass build_pass(const ResizeAttrs& a, size_t axis, int64_t in, int64_t out, double scale, double roi_lo,
                    double roi_hi) {
  AxisPass p;
  p.axis = axis, p.in = in, p.out = out;
  std::vector<double> w;
  for (int64_t o = 0; o < out; ++o) {
    const double x = source_coordinate(a.coord, static_cast<double>(o), scale, in, out, roi_lo, roi_hi);
    const double fl = std::floor(x);
    const double ratio = x == fl ? 1.0 : x - fl;
    tap_weights(a, ratio, scale, w);
    const int n = static_cast<int>(w.size());
    if (o == 0) p.taps = n;
    // The n nearest integers to x, ties to the smaller ones (n is even).
    const int64_t start = static_cast<int64_t>(fl) - n / 2 + (x == fl ? 0 : 1);
    if (a.exclude_outside) {
      double sum = 0;
      for (int t = 0; t < n; ++t) {
        const int64_t i = start + t;
        if (i < 0 || i >= in) w[t] = 0;
        sum += w[t];
      }
      if (sum != 0)
        for (double& v : w) v /= sum;
    }
    for (int t = 0; t < n; ++t) {
      p.index.push_back(std::clamp<int64_t>(start + t, 0, in - 1));
      p.weight.push_back(w[t]);
    }
    p.extrapolated.push_back(a.coord == Coord::TfCropAndResize && (x < 0 || x > in - 1));
  }
  return p;
}

// ---- one pass: [outer, in, inner] -> [outer, out, inner] --------------------

template <typename T>
T convert_out(double v) {
  if constexpr (std::is_integral_v<T>) {
    const double r = std::nearbyint(v);
    return static_cast<T>(std::clamp<double>(r, std::numeric_limits<T>::min(), std::numeric_limits<T>::max()));
  } else {
    return static_cast<T>(v);
  }
}

template <typename Tin, typename Tout>
void run_pass(const AxisPass& p, int64_t outer, int64_t inner, double extrapolation, const Tin* src, Tout* dst,
              ThreadPool* pool) {
  const int taps = p.taps;
  parallel_for(pool, outer, 1, [&](int64_t b0, int64_t b1) {
    std::vector<double> acc(static_cast<size_t>(inner));
    for (int64_t b = b0; b < b1; ++b) {
      const Tin* s = src + b * p.in * inner;
      Tout* d = dst + b * p.out * inner;
      for (int64_t o = 0; o < p.out; ++o) {
        Tout* drow = d + o * inner;
        if (!p.extrapolated.empty() && p.extrapolated[o]) {
          for (int64_t j = 0; j < inner; ++j) drow[j] = convert_out<Tout>(extrapolation);
          continue;
        }
        std::fill(acc.begin(), acc.end(), 0.0);
        for (int t = 0; t < taps; ++t) {
          const double w = p.weight[o * taps + t];
          if (w == 0) continue;
          const Tin* srow = s + p.index[o * taps + t] * inner;
          for (int64_t j = 0; j < inner; ++j) acc[j] += w * static_cast<double>(srow[j]);
        }
        for (int64_t j = 0; j < inner; ++j) drow[j] = convert_out<Tout>(acc[j]);
      }
    }
  });
}

// ---- the kernel ---------------------------------------------------------------

Mode parse_mode(const KernelInfo& info, const std::string& s) {
  if (s == "nearest") return Mode::Nearest;
  if (s == "linear" || s == "bilinear") return Mode::Linear;
  if (s == "cubic" && info.op_type == "Resize") return Mode::Cubic;
  info.fail("mode '{}' is not one of nearest, linear{}", s, info.op_type == "Resize" ? ", cubic" : "");
}

NearestMode parse_nearest(const KernelInfo& info, const std::string& s) {
  if (s == "round_prefer_floor") return NearestMode::RoundPreferFloor;
  if (s == "round_prefer_ceil") return NearestMode::RoundPreferCeil;
  if (s == "floor") return NearestMode::Floor;
  if (s == "ceil") return NearestMode::Ceil;
  info.fail("nearest_mode '{}' is not one of round_prefer_floor, round_prefer_ceil, floor, ceil", s);
}

Coord parse_coord(const KernelInfo& info, const std::string& s) {
  if (s == "half_pixel") return Coord::HalfPixel;
  if (s == "half_pixel_symmetric") return Coord::HalfPixelSymmetric;
  if (s == "pytorch_half_pixel") return Coord::PytorchHalfPixel;
  if (s == "align_corners") return Coord::AlignCorners;
  if (s == "asymmetric") return Coord::Asymmetric;
  // "tf_half_pixel_for_nn" is the name opset 11's text used (and its backend tests write).
  if (s == "tf_half_pixel_for_nearest" || s == "tf_half_pixel_for_nn") return Coord::TfHalfPixelForNearest;
  if (s == "tf_crop_and_resize") return Coord::TfCropAndResize;
  info.fail("coordinate_transformation_mode '{}' is not one of half_pixel, half_pixel_symmetric, pytorch_half_pixel, "
            "align_corners, asymmetric, tf_half_pixel_for_nearest, tf_crop_and_resize", s);
}

AspectPolicy parse_policy(const KernelInfo& info, const std::string& s) {
  if (s == "stretch") return AspectPolicy::Stretch;
  if (s == "not_larger") return AspectPolicy::NotLarger;
  if (s == "not_smaller") return AspectPolicy::NotSmaller;
  info.fail("keep_aspect_ratio_policy '{}' is not one of stretch, not_larger, not_smaller", s);
}

std::vector<double> float_values(const KernelContext& ctx, const Tensor& t, const char* what) {
  std::vector<double> v(static_cast<size_t>(t.numel()));
  if (t.dtype() == DType::Float32) std::copy(t.data<float>(), t.data<float>() + t.numel(), v.begin());
  else if (t.dtype() == DType::Float64) std::copy(t.data<double>(), t.data<double>() + t.numel(), v.begin());
  else if (t.dtype() == DType::Float16)  // roi may be float16 (T2); no typed accessor for the half types
    for (int64_t k = 0; k < t.numel(); ++k) v[k] = half_to_float(static_cast<const uint16_t*>(t.raw())[k]);
  else ctx.unsupported("{} has dtype {}, expected float, double or float16", what, dtype_name(t.dtype()));
  return v;
}

class ResizeKernel : public Kernel {
 public:
  explicit ResizeKernel(const KernelInfo& info) : opset_(info.opset), upsample_(info.op_type == "Upsample") {
    const std::string mode = info.attrs.get_string("mode", "nearest");
    // Upsample-1 (experimental) names linear on its two axes "bilinear".
    a_.mode = parse_mode(info, upsample_ && opset_ < 7 && mode == "bilinear" ? "linear" : mode);
    if (upsample_ || opset_ < 11) {
      // Upsample and Resize-10: asymmetric coordinates; Upsample takes the floor
      // for nearest, Resize-10 rounds (as onnxruntime does).
      a_.coord = Coord::Asymmetric;
      a_.nearest = upsample_ ? NearestMode::Floor : NearestMode::RoundPreferFloor;
      if (upsample_ && opset_ < 7) {
        // Upsample-1: N x C x H x W scaled by height_scale and width_scale (both required).
        if (!info.attrs.has("height_scale") || !info.attrs.has("width_scale"))
          info.fail("attributes height_scale and width_scale are required");
        scales_attr_ = {1.f, 1.f, info.attrs.get_float("height_scale"), info.attrs.get_float("width_scale")};
      } else if (upsample_ && opset_ < 9) {
        scales_attr_ = info.attrs.get_floats("scales");
        if (scales_attr_.empty()) info.fail("attribute scales is required");
      }
      return;
    }
    a_.coord = parse_coord(info, info.attrs.get_string("coordinate_transformation_mode", "half_pixel"));
    a_.nearest = parse_nearest(info, info.attrs.get_string("nearest_mode", "round_prefer_floor"));
    a_.cubic_a = info.attrs.get_float("cubic_coeff_a", -0.75f);
    a_.exclude_outside = info.attrs.get_int("exclude_outside", 0) != 0;
    a_.extrapolation_value = info.attrs.get_float("extrapolation_value", 0.f);
    if (opset_ >= 18) {
      // Antialias only changes linear and cubic (nearest has nothing to widen).
      a_.antialias = info.attrs.get_int("antialias", 0) != 0 && a_.mode != Mode::Nearest;
      a_.axes = info.attrs.get_ints("axes", {});
      a_.policy = parse_policy(info, info.attrs.get_string("keep_aspect_ratio_policy", "stretch"));
    }
  }

  KernelPlan describe(const KernelInfo&, const std::vector<const Shape*>&) const override {
    return KernelPlan::at_run_time();  // the fast paths depend on scales / sizes fed at run time
  }

  void prepare(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    const DType t = x.dtype();
    if (t != DType::Float32 && t != DType::Float64 && t != DType::UInt8 && t != DType::Int8 && t != DType::Float16 &&
        t != DType::BFloat16)
      ctx.unsupported("dtype {} is not supported (float, double, float16, bfloat16, int8, uint8)", dtype_name(t));
    ctx.allocate_output(0, t, plan(ctx)->out_shape);
  }

  void compute(KernelContext& ctx) override {
    const std::shared_ptr<const ResizePlan> p = plan(ctx);
    const Tensor& x = ctx.input(0);
    Tensor& y = ctx.output(0);
    ctx.stats().variant = "resize_separable";
    if (y.numel() == 0) return;
    double flops = 0;
    for (const AxisPass& ps : p->passes) flops += static_cast<double>(ps.taps) * ps.out;
    ctx.stats().flops = flops * static_cast<double>(y.numel());
    switch (x.dtype()) {
      case DType::Float32: run_float(ctx, *p, x.data<float>(), y.mutable_data<float>()); break;
      case DType::Float64: run<double>(ctx, *p, x.data<double>(), y.mutable_data<double>()); break;
      case DType::UInt8: run<uint8_t>(ctx, *p, x.data<uint8_t>(), y.mutable_data<uint8_t>()); break;
      case DType::Int8: run<int8_t>(ctx, *p, x.data<int8_t>(), y.mutable_data<int8_t>()); break;
      case DType::Float16:
      case DType::BFloat16: run_half(ctx, *p); break;
      default: ctx.unsupported("dtype {} is not supported", dtype_name(x.dtype()));
    }
  }

 private:
  // float32: a fast path where the plan has one (not in reference mode), else the general one.
  void run_float(KernelContext& ctx, const ResizePlan& p, const float* in, float* out) {
    if (p.fast.kind != ResizeFastKind::None && !ctx.reference_mode()) {
      const cpu::Isa isa = resize_isa();
      const ResizeRowKernels& k = resize_row_kernels_for(isa);
      ctx.stats().variant = resize_fast_variant(p.fast.kind, k.isa);
      ctx.stats().isa = cpu::isa_name(k.isa);
      ResizePathCounts& counts = resize_path_counts();
      (p.fast.kind == ResizeFastKind::Bilinear           ? counts.bilinear
       : p.fast.kind == ResizeFastKind::NearestReplicate ? counts.nearest_replicate
       : p.fast.kind == ResizeFastKind::NearestFlat      ? counts.nearest_flat
                                                         : counts.nearest_gather)++;
      run_resize_fast(p.fast, k, in, out, ctx.threads());
      return;
    }
    run<float>(ctx, p, in, out);
  }

  // float16 / bfloat16: through float32 scratch copies of the input and output.
  void run_half(KernelContext& ctx, const ResizePlan& p) {
    const Tensor& x = ctx.input(0);
    Tensor& y = ctx.output(0);
    const bool bf = x.dtype() == DType::BFloat16;
    Tensor xf = ctx.scratch(DType::Float32, x.shape()), yf = ctx.scratch(DType::Float32, y.shape());
    const uint16_t* xs = static_cast<const uint16_t*>(x.raw());
    float* xd = xf.mutable_data<float>();
    for (int64_t k = 0; k < x.numel(); ++k) xd[k] = bf ? bfloat16_to_float(xs[k]) : half_to_float(xs[k]);
    run_float(ctx, p, xd, yf.mutable_data<float>());
    const float* yd = yf.data<float>();
    uint16_t* ys = static_cast<uint16_t*>(y.raw_mut());
    for (int64_t k = 0; k < y.numel(); ++k) ys[k] = bf ? float_to_bfloat16(yd[k]) : float_to_half(yd[k]);
  }

  template <typename T>
  void run(KernelContext& ctx, const ResizePlan& p, const T* in, T* out) {
    resize_path_counts().general++;
    if (p.passes.empty()) {
      std::copy(in, in + shape_product(p.in_shape, 0, p.in_shape.size()), out);
      return;
    }
    Shape cur = p.in_shape;
    Tensor buf[2];
    const double* prev = nullptr;
    for (size_t k = 0; k < p.passes.size(); ++k) {
      const AxisPass& ps = p.passes[k];
      const int64_t outer = shape_product(cur, 0, ps.axis), inner = shape_product(cur, ps.axis + 1, cur.size());
      cur[ps.axis] = ps.out;
      const bool first = k == 0, last = k + 1 == p.passes.size();
      if (last) {
        if (first) run_pass(ps, outer, inner, a_.extrapolation_value, in, out, ctx.threads());
        else run_pass(ps, outer, inner, a_.extrapolation_value, prev, out, ctx.threads());
        break;
      }
      buf[k % 2] = ctx.scratch(DType::Float64, cur);
      double* next = buf[k % 2].mutable_data<double>();
      if (first) run_pass(ps, outer, inner, a_.extrapolation_value, in, next, ctx.threads());
      else run_pass(ps, outer, inner, a_.extrapolation_value, prev, next, ctx.threads());
      prev = next;
    }
  }

  // The plan for this run's input shape and scales / sizes / roi: the cached one
  // when they match (the usual case), else a new one.
  std::shared_ptr<const ResizePlan> plan(const KernelContext& ctx) {
    const Tensor& x = ctx.input(0);
    const size_t rank = x.rank();
    std::vector<double> scales, roi;
    std::vector<int64_t> sizes;
    read_targets(ctx, scales, sizes, roi);
    std::vector<double> key = scales;
    for (int64_t s : sizes) key.push_back(static_cast<double>(s));
    key.push_back(sizes.empty() ? 0 : 1);
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (cached_ && cached_->in_shape == x.shape() && cached_->scales == key && cached_->roi == roi) return cached_;
    }
    auto p = std::make_shared<ResizePlan>();
    p->in_shape = x.shape();
    p->scales = key;
    p->roi = roi;

    // Resized axes, in ascending order.
    std::vector<size_t> axes;
    if (a_.axes.empty()) {
      for (size_t d = 0; d < rank; ++d) axes.push_back(d);
    } else {
      for (int64_t a : a_.axes) {
        const auto n = normalize_axis(a, static_cast<int64_t>(rank));
        if (!n) ctx.fail("axes entry {} is out of range for input shape {}", a, shape_to_string(x.shape()));
        if (std::find(axes.begin(), axes.end(), static_cast<size_t>(*n)) != axes.end())
          ctx.fail("axes [{}] repeats axis {}", fmt::join(a_.axes, ","), *n);
        axes.push_back(static_cast<size_t>(*n));
      }
    }
    const size_t n = axes.size();
    const char* count_what = a_.axes.empty() ? "input rank" : "number of axes";
    if (!scales.empty() && scales.size() != n)
      ctx.fail("scales has {} entries, expected {} (the {}) for input shape {}", scales.size(), n, count_what,
               shape_to_string(x.shape()));
    if (!sizes.empty() && sizes.size() != n)
      ctx.fail("sizes has {} entries, expected {} (the {}) for input shape {}", sizes.size(), n, count_what,
               shape_to_string(x.shape()));
    if (a_.coord == Coord::TfCropAndResize && roi.size() != 2 * n)
      ctx.fail("roi has {} entries, expected {} (2 x {}) for tf_crop_and_resize on input shape {}", roi.size(), 2 * n,
               count_what, shape_to_string(x.shape()));

    std::vector<double> scale(rank, 1.0);
    p->out_shape = x.shape();
    // An output size from scale x dim, refused before it is converted (a double past
    // 2^63 does not convert to int64: undefined) and before any per-axis table is built.
    auto to_size = [&](double v, size_t axis) {
      if (!(v >= 0 && v < 9.2e18))
        ctx.fail("output size {} on axis {} (input {}, scale {}) does not fit in int64", v, axis, x.dim(axis),
                 scale[axis]);
      return static_cast<int64_t>(v);
    };
    if (!scales.empty()) {
      for (size_t k = 0; k < n; ++k) {
        if (!(scales[k] > 0)) ctx.fail("scales [{}] must be positive", fmt::join(scales, ","));
        scale[axes[k]] = scales[k];
        p->out_shape[axes[k]] = to_size(std::floor(scales[k] * static_cast<double>(x.dim(axes[k]))), axes[k]);
      }
    } else {
      for (size_t k = 0; k < n; ++k) {
        if (sizes[k] < 0) ctx.fail("sizes [{}] must be non-negative", fmt::join(sizes, ","));
        if (x.dim(axes[k]) == 0 && sizes[k] != 0)
          ctx.fail("cannot resize axis {} of size 0 to {}", axes[k], sizes[k]);
        scale[axes[k]] = x.dim(axes[k]) == 0 ? 1.0 : static_cast<double>(sizes[k]) / x.dim(axes[k]);
        p->out_shape[axes[k]] = sizes[k];
      }
      if (a_.policy != AspectPolicy::Stretch && n > 0) {
        double s = scale[axes[0]];
        for (size_t d : axes) s = a_.policy == AspectPolicy::NotLarger ? std::min(s, scale[d]) : std::max(s, scale[d]);
        for (size_t d : axes) {
          scale[d] = s;
          p->out_shape[d] = to_size(s * static_cast<double>(x.dim(d)) + 0.5, d);
        }
      }
    }
    // A bomb (scales 1e9) fails here, before the per-axis tables of out_shape entries are built.
    ctx.check_tensor_size(x.dtype(), p->out_shape, "output");
    for (size_t k = 0; k < n; ++k) {
      const size_t d = axes[k];
      const double lo = roi.empty() ? 0.0 : roi[k], hi = roi.empty() ? 1.0 : roi[k + n];
      const bool identity = std::abs(scale[d] - 1.0) < 1e-9 && p->out_shape[d] == x.dim(d) &&
                            (a_.coord != Coord::TfCropAndResize || (std::abs(lo) < 1e-9 && std::abs(hi - 1) < 1e-9));
      if (identity || p->out_shape[d] == 0 || x.dim(d) == 0) continue;
      p->passes.push_back(build_pass(a_, d, x.dim(d), p->out_shape[d], scale[d], lo, hi));
    }
    std::vector<size_t> pass_axes;
    std::vector<AxisTapsView> views;
    for (const AxisPass& ps : p->passes) {
      pass_axes.push_back(ps.axis);
      views.push_back({ps.in, ps.out, ps.taps, ps.index.data(), ps.weight.data(),
                       std::find(ps.extrapolated.begin(), ps.extrapolated.end(), 1) != ps.extrapolated.end()});
    }
    if (!views.empty())
      p->fast = make_resize_fast_plan(p->in_shape, pass_axes, views, a_.mode == Mode::Nearest, a_.mode == Mode::Linear);
    std::lock_guard<std::mutex> lock(mu_);
    cached_ = p;
    return p;
  }

  // Reads exactly one of scales (as doubles) and sizes, and the roi (tf_crop_and_resize only).
  void read_targets(const KernelContext& ctx, std::vector<double>& scales, std::vector<int64_t>& sizes,
                    std::vector<double>& roi) const {
    if (upsample_ && opset_ < 9) {
      scales.assign(scales_attr_.begin(), scales_attr_.end());
      return;
    }
    if (upsample_ || opset_ < 11) {
      scales = float_values(ctx, ctx.input(1), "scales");
      if (scales.empty()) ctx.fail("scales is empty");
      return;
    }
    if (ctx.has_input(2)) scales = float_values(ctx, ctx.input(2), "scales");
    if (ctx.has_input(3)) {
      const Tensor& s = ctx.input(3);
      if (s.dtype() != DType::Int64) ctx.fail("sizes has dtype {}, expected int64", dtype_name(s.dtype()));
      sizes = s.to_int64_vector();
    }
    if (!scales.empty() && !sizes.empty())
      ctx.fail("both scales [{}] and sizes [{}] are given; exactly one of them must be", fmt::join(scales, ","),
               fmt::join(sizes, ","));
    if (scales.empty() && sizes.empty()) ctx.fail("neither scales nor sizes is given; exactly one of them must be");
    if (a_.coord == Coord::TfCropAndResize) {
      if (!ctx.has_input(1)) ctx.fail("tf_crop_and_resize needs the roi input");
      roi = float_values(ctx, ctx.input(1), "roi");
    }
  }

  int opset_;
  bool upsample_;
  ResizeAttrs a_;
  std::vector<float> scales_attr_;  // Upsample-1 (1, 1, height_scale, width_scale) and Upsample-7
  std::mutex mu_;
  std::shared_ptr<const ResizePlan> cached_;
};

}  // namespace

ONNXMINI_REGISTER_KERNEL("resize", "", "Resize", 10, INT_MAX, make_kernel<ResizeKernel>);
ONNXMINI_REGISTER_KERNEL("resize", "", "Upsample", 1, 9, make_kernel<ResizeKernel>);

}  // namespace nn
}  // namespace onnxmini

ONNXMINI_KERNEL_FILE(nn_resize);
