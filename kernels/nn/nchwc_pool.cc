// NchwcMaxPool, NchwcAveragePool, NchwcGlobalMaxPool, NchwcGlobalAveragePool and
// NchwcResize (ai.onnxmini): MaxPool / AveragePool / GlobalMaxPool / GlobalAveragePool /
// nearest Resize on the blocked layout NCHW16c (nchwc_pool.h), put in place of the ONNX
// ops by runtime/graph_layout_nchwc.cc.
//   NchwcMaxPool / NchwcAveragePool  X [N, Cb, H, W, 16] -> Y [N, Cb, OH, OW, 16]; the
//       attributes of the ONNX op on H, W (kernel_shape, strides, pads, dilations, auto_pad,
//       ceil_mode, count_include_pad); no Indices output.
//   NchwcGlobal{Max,Average}Pool    X [N, Cb, H, W, 16] -> Y [N, Cb, 1, 1, 16] (stays blocked:
//       an SE block's 1x1 Convs and its Mul broadcast stay in the region).
//   NchwcResize  X [N, Cb, H, W, 16] -> Y [N, Cb, OH, OW, 16], nearest only; attributes
//       `scales` (2 floats, H and W), coordinate_transformation_mode, nearest_mode: the
//       source index of every output row / column is computed once per shape, each output
//       pixel is one 16-float copy.
//   NchwcSqueezeExcite  X [N, Cb, H, W, 16] -> Y (same shape): SqueezeExcite's inputs and
//       attributes (squeeze_excite.h); the channel means come from the blocked planes, the
//       gate from squeeze_excite_gate, and Y = X * gate per block of 16 (padding gate 0).
// Padding channels: max / mean / copies of finite values stay finite.
// Blocking: one task per output row of one (image, channel block) plane.
#include <array>
#include <climits>
#include <cmath>
#include <cstring>
#include <tuple>

#include "core/thread_pool.h"
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "kernels/nn/nchwc_conv.h"
#include "kernels/nn/nchwc_pool.h"
#include "kernels/nn/nchwc_pool_impl.h"
#include "kernels/nn/squeeze_excite.h"
#include "kernels/nn/spatial.h"
#include "kernels/registry.h"
#include "kernels/fused_attributes.h"
#include "kernels/gemm_engine/fused_activation.h"

namespace onnxmini {
namespace nn {

namespace {

#if defined(__SSE2__)
// Portable traits: four SSE2 registers (the x86-64 baseline) per block of 16 channels.
struct PortablePoolBlock {
  struct Reg {
    __m128 v[4];
  };
  template <class F>
  static Reg each(const Reg& a, const Reg& b, F f) {
    return {{f(a.v[0], b.v[0]), f(a.v[1], b.v[1]), f(a.v[2], b.v[2]), f(a.v[3], b.v[3])}};
  }
  static Reg set1(float s) {
    const __m128 b = _mm_set1_ps(s);
    return {{b, b, b, b}};
  }
  static Reg load(const float* p) {
    return {{_mm_loadu_ps(p), _mm_loadu_ps(p + 4), _mm_loadu_ps(p + 8), _mm_loadu_ps(p + 12)}};
  }
  static void store(float* p, const Reg& r) {
    for (int i = 0; i < 4; ++i) _mm_storeu_ps(p + 4 * i, r.v[i]);
  }
  static Reg add(const Reg& a, const Reg& b) { return each(a, b, [](__m128 x, __m128 y) { return _mm_add_ps(x, y); }); }
  static Reg mul(const Reg& a, const Reg& b) { return each(a, b, [](__m128 x, __m128 y) { return _mm_mul_ps(x, y); }); }
  static Reg max(const Reg& a, const Reg& b) { return each(a, b, [](__m128 x, __m128 y) { return _mm_max_ps(x, y); }); }
};
#else
// Portable traits without SSE2: 16 floats in an array, plain loops.
struct PortablePoolBlock {
  struct Reg {
    float v[16];
  };
  template <class F>
  static Reg each(const Reg& a, const Reg& b, F f) {
    Reg r;
    for (int i = 0; i < 16; ++i) r.v[i] = f(a.v[i], b.v[i]);
    return r;
  }
  static Reg set1(float s) {
    Reg r;
    for (float& x : r.v) x = s;
    return r;
  }
  static Reg load(const float* p) {
    Reg r;
    for (int i = 0; i < 16; ++i) r.v[i] = p[i];
    return r;
  }
  static void store(float* p, const Reg& r) {
    for (int i = 0; i < 16; ++i) p[i] = r.v[i];
  }
  static Reg add(const Reg& a, const Reg& b) { return each(a, b, [](float x, float y) { return x + y; }); }
  static Reg mul(const Reg& a, const Reg& b) { return each(a, b, [](float x, float y) { return x * y; }); }
  static Reg max(const Reg& a, const Reg& b) { return each(a, b, [](float x, float y) { return x > y ? x : y; }); }
};
#endif

}  // namespace

const NchwcPoolKernels& nchwc_pool_kernels_portable() {
  static const NchwcPoolKernels k = nchwc_pool_table<PortablePoolBlock>(cpu::Isa::Portable);
  return k;
}

const NchwcPoolKernels& nchwc_pool_kernels_for(cpu::Isa isa) {
  const cpu::Isa hw = cpu::hw_isa();
  const cpu::Isa capped = static_cast<int>(isa) < static_cast<int>(hw) ? isa : hw;
  if (capped == cpu::Isa::Avx512) return nchwc_pool_kernels_avx512();
  if (capped == cpu::Isa::Avx2) return nchwc_pool_kernels_avx2();
  return nchwc_pool_kernels_portable();
}

namespace {

const NchwcPoolKernels& pool_table(const KernelContext& ctx) {
  return ctx.reference_mode() ? nchwc_pool_kernels_portable() : nchwc_pool_kernels_for(nchwc_isa());
}

// What describe() reports for a kernel that runs pool_table's routines: the table compute()
// will take (the portable one in reference mode), under the variant compute() names.
KernelPlan pool_plan(const KernelInfo& info, const char* variant) {
  const cpu::Isa isa =
      info.mode == KernelMode::Reference ? cpu::Isa::Portable : nchwc_pool_kernels_for(nchwc_isa()).isa;
  return KernelPlan{variant, cpu::isa_name(isa), ""};
}

void check_blocked(const KernelContext& ctx, const Tensor& x) {
  if (x.dtype() != DType::Float32) ctx.unsupported("dtype {} is not supported (float32 only)", dtype_name(x.dtype()));
  if (x.rank() != 5 || x.dim(4) != kNchwcBlock)
    ctx.fail("X has shape {}, expected the blocked N x Cb x H x W x 16", shape_to_string(x.shape()));
}

NchwcTaps taps(const Window& w, size_t d, int64_t o) {
  const WindowTaps t = window_taps(w, d, o);
  return NchwcTaps{t.lo, t.hi, t.padded};
}

class NchwcPoolKernel : public Kernel {
 public:
  NchwcPoolKernel(const KernelInfo& info, bool max) : attrs_(read_window_attrs(info)), max_(max) {
    count_include_pad_ = info.attrs.get_int("count_include_pad", 0) != 0;
    if (attrs_.kernel.size() != 2)
      info.fail("kernel_shape has {} values, expected 2 (H, W of the blocked layout)", attrs_.kernel.size());
    if (max && info.attrs.get_int("storage_order", 0) != 0)
      info.fail("storage_order {} is not supported (no Indices output)", info.attrs.get_int("storage_order", 0));
  }
  KernelPlan describe(const KernelInfo& info, const std::vector<const Shape*>&) const override {
    return pool_plan(info, max_ ? "nchwc_maxpool" : "nchwc_avgpool");
  }
  void prepare(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    check_blocked(ctx, x);
    const Window w = resolve_window(ctx, attrs_, {x.dim(2), x.dim(3)}, attrs_.kernel);
    ctx.allocate_output(0, DType::Float32, {x.dim(0), x.dim(1), w.out[0], w.out[1], kNchwcBlock});
  }
  void compute(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    Tensor& y = ctx.output(0);
    const NchwcPoolKernels& k = pool_table(ctx);
    ctx.stats().variant = max_ ? "nchwc_maxpool" : "nchwc_avgpool";
    ctx.stats().isa = cpu::isa_name(k.isa);
    if (y.numel() == 0) return;
    const Window w = resolve_window(ctx, attrs_, {x.dim(2), x.dim(3)}, attrs_.kernel);
    // Per calling thread, not a member: concurrent runs share the kernel object.
    thread_local NchwcPoolArgs a;
    a.H = w.in[0], a.W = w.in[1], a.OH = w.out[0], a.OW = w.out[1];
    a.sh = w.stride[0], a.sw = w.stride[1], a.dh = w.dilation[0], a.dw = w.dilation[1];
    a.ph = w.pad_begin[0], a.pw = w.pad_begin[1];
    a.count_include_pad = count_include_pad_;
    a.rows.resize(a.OH);
    a.cols.resize(a.OW);
    for (int64_t o = 0; o < a.OH; ++o) a.rows[o] = taps(w, 0, o);
    for (int64_t o = 0; o < a.OW; ++o) a.cols[o] = taps(w, 1, o);
    const int64_t planes = x.dim(0) * x.dim(1), in_plane = a.H * a.W * kNchwcBlock, out_plane = a.OH * a.OW * kNchwcBlock;
    ctx.stats().flops = static_cast<double>(y.numel()) * static_cast<double>(w.taps_bound());
    const NchwcPoolRowFn row = max_ ? k.max_row : k.avg_row;
    const float* px = x.data<float>();
    float* py = y.mutable_data<float>();
    const NchwcPoolArgs& args = a;
    const ParallelCost cost{try_mul(y.numel(), w.taps_bound()).value_or(INT64_MAX), 4 * (x.numel() + y.numel()),
                            4 * y.numel()};
    parallel_for(ctx.threads(), planes * a.OH, 1, cost, [&](int64_t t0, int64_t t1) {
      for (int64_t t = t0; t < t1; ++t) {
        const int64_t p = t / args.OH, oh = t % args.OH;
        row(args, px + p * in_plane, py + p * out_plane, oh);
      }
    });
  }

 private:
  WindowAttrs attrs_;
  bool max_;
  bool count_include_pad_ = false;
};

template <bool kMax>
class NchwcGlobalPoolKernel : public Kernel {
 public:
  explicit NchwcGlobalPoolKernel(const KernelInfo&) {}
  KernelPlan describe(const KernelInfo& info, const std::vector<const Shape*>&) const override {
    return pool_plan(info, kMax ? "nchwc_global_maxpool" : "nchwc_global_avgpool");
  }
  void prepare(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    check_blocked(ctx, x);
    ctx.allocate_output(0, DType::Float32, {x.dim(0), x.dim(1), 1, 1, kNchwcBlock});
  }
  void compute(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    const NchwcPoolKernels& k = pool_table(ctx);
    ctx.stats().variant = kMax ? "nchwc_global_maxpool" : "nchwc_global_avgpool";
    ctx.stats().isa = cpu::isa_name(k.isa);
    ctx.stats().flops = static_cast<double>(x.numel());
    const int64_t planes = x.dim(0) * x.dim(1), hw = x.dim(2) * x.dim(3);
    if (planes == 0) return;
    const NchwcGlobalFn fn = kMax ? k.global_max : k.global_avg;
    const float* px = x.data<float>();
    float* py = ctx.output(0).mutable_data<float>();
    const ParallelCost cost{x.numel(), 4 * x.numel(), 4 * planes * kNchwcBlock};
    parallel_for(ctx.threads(), planes, 1, cost, [&](int64_t p0, int64_t p1) {
      for (int64_t p = p0; p < p1; ++p) fn(px + p * hw * kNchwcBlock, hw, py + p * kNchwcBlock);
    });
  }
};

enum class Coord { HalfPixel, PytorchHalfPixel, AlignCorners, Asymmetric, TfHalfPixelForNearest };
enum class Nearest { RoundPreferFloor, RoundPreferCeil, Floor, Ceil };

class NchwcResizeKernel : public Kernel {
 public:
  explicit NchwcResizeKernel(const KernelInfo& info) {
    const std::string mode = info.attrs.get_string("mode", "nearest");
    if (mode != "nearest") info.fail("mode '{}' is not supported (nearest only)", mode);
    const std::string c = info.attrs.get_string("coordinate_transformation_mode", "half_pixel");
    if (c == "half_pixel") coord_ = Coord::HalfPixel;
    else if (c == "pytorch_half_pixel") coord_ = Coord::PytorchHalfPixel;
    else if (c == "align_corners") coord_ = Coord::AlignCorners;
    else if (c == "asymmetric") coord_ = Coord::Asymmetric;
    else if (c == "tf_half_pixel_for_nearest") coord_ = Coord::TfHalfPixelForNearest;
    else info.fail("coordinate_transformation_mode '{}' is not supported", c);
    const std::string n = info.attrs.get_string("nearest_mode", "round_prefer_floor");
    if (n == "round_prefer_floor") nearest_ = Nearest::RoundPreferFloor;
    else if (n == "round_prefer_ceil") nearest_ = Nearest::RoundPreferCeil;
    else if (n == "floor") nearest_ = Nearest::Floor;
    else if (n == "ceil") nearest_ = Nearest::Ceil;
    else info.fail("nearest_mode '{}' is not one of round_prefer_floor, round_prefer_ceil, floor, ceil", n);
    const std::vector<float> s = info.attrs.get_floats("scales", {});
    if (s.size() != 2 || !(s[0] > 0) || !(s[1] > 0) || !std::isfinite(s[0]) || !std::isfinite(s[1]))
      info.fail("attribute scales must hold 2 positive finite values (H, W), got [{}]", fmt::join(s, ","));
    scales_ = {s[0], s[1]};
  }
  KernelPlan describe(const KernelInfo&, const std::vector<const Shape*>&) const override {
    return KernelPlan{"nchwc_resize_nearest", "portable", ""};  // plain copies of 16-float pixels
  }
  void prepare(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    check_blocked(ctx, x);
    const double oh = std::floor(scales_[0] * static_cast<double>(x.dim(2)));
    const double ow = std::floor(scales_[1] * static_cast<double>(x.dim(3)));
    if (oh > static_cast<double>(INT32_MAX) || ow > static_cast<double>(INT32_MAX))
      ctx.fail("output size {} x {} (scales {} x {}) is too large", oh, ow, scales_[0], scales_[1]);
    ctx.allocate_output(0, DType::Float32,
                        {x.dim(0), x.dim(1), static_cast<int64_t>(oh), static_cast<int64_t>(ow), kNchwcBlock});
  }
  void compute(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    Tensor& y = ctx.output(0);
    ctx.stats().variant = "nchwc_resize_nearest";
    ctx.stats().isa = "portable";
    if (y.numel() == 0) return;
    const int64_t H = x.dim(2), W = x.dim(3), OH = y.dim(2), OW = y.dim(3);
    thread_local std::vector<int64_t> rows, cols;  // per calling thread: runs share the kernel
    source_indices(scales_[0], H, OH, rows);
    source_indices(scales_[1], W, OW, cols);
    const int64_t planes = x.dim(0) * x.dim(1);
    const float* px = x.data<float>();
    float* py = y.mutable_data<float>();
    const std::vector<int64_t>& r = rows;
    const std::vector<int64_t>& c = cols;
    const ParallelCost cost{y.numel(), 4 * (x.numel() + y.numel()), 4 * y.numel()};
    parallel_for(ctx.threads(), planes * OH, 1, cost, [&](int64_t t0, int64_t t1) {
      for (int64_t t = t0; t < t1; ++t) {
        const int64_t p = t / OH, oh = t % OH;
        const float* xr = px + (p * H + r[oh]) * W * kNchwcBlock;
        float* yr = py + (p * OH + oh) * OW * kNchwcBlock;
        for (int64_t ow = 0; ow < OW; ++ow)
          std::memcpy(yr + ow * kNchwcBlock, xr + c[ow] * kNchwcBlock, kNchwcBlock * sizeof(float));
      }
    });
  }

 private:
  // The source index of each output index along one axis, as resize.cc computes it (its
  // source_coordinate, then the nearest tap of the two around the coordinate, clamped).
  void source_indices(double scale, int64_t in, int64_t out, std::vector<int64_t>& idx) const {
    idx.resize(static_cast<size_t>(out));
    const double out_w = scale * static_cast<double>(in);
    if (std::abs(scale - 1.0) < 1e-9 && out == in) {  // resize.cc leaves such an axis alone
      for (int64_t o = 0; o < out; ++o) idx[o] = o;
      return;
    }
    for (int64_t o = 0; o < out; ++o) {
      const double y = static_cast<double>(o);
      double xs = 0;
      switch (coord_) {
        case Coord::AlignCorners: xs = out_w == 1 ? 0.0 : y * (in - 1) / (out_w - 1); break;
        case Coord::Asymmetric: xs = y / scale; break;
        case Coord::TfHalfPixelForNearest: xs = (y + 0.5) / scale; break;
        case Coord::PytorchHalfPixel: xs = out_w == 1 ? -0.5 : (y + 0.5) / scale - 0.5; break;
        case Coord::HalfPixel: xs = (y + 0.5) / scale - 0.5; break;
      }
      const double fl = std::floor(xs), ratio = xs - fl;
      int64_t i = static_cast<int64_t>(fl);
      bool up = false;
      switch (nearest_) {
        case Nearest::RoundPreferFloor: up = ratio > 0.5; break;
        case Nearest::RoundPreferCeil: up = ratio >= 0.5; break;
        case Nearest::Floor: up = false; break;
        case Nearest::Ceil: up = ratio > 0; break;
      }
      i += up;
      idx[o] = std::min<int64_t>(std::max<int64_t>(i, 0), in - 1);
    }
  }

  Coord coord_ = Coord::HalfPixel;
  Nearest nearest_ = Nearest::RoundPreferFloor;
  std::array<double, 2> scales_{1, 1};
};

class NchwcSqueezeExciteKernel : public Kernel {
 public:
  explicit NchwcSqueezeExciteKernel(const KernelInfo& info)
      : act1_(squeeze_excite_activation(info, "activation1")),
        act2_(squeeze_excite_activation(info, "activation2")),
        residual_(info.attrs.get_int("residual", 0) != 0) {}
  KernelPlan describe(const KernelInfo& info, const std::vector<const Shape*>&) const override {
    return pool_plan(info, "nchwc_squeeze_excite");
  }

  void prepare(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    check_blocked(ctx, x);
    const Tensor& w1 = ctx.input(1);
    const Tensor& w2 = ctx.input(3);
    for (const Tensor* w : {&w1, &w2}) {
      const char* name = w == &w1 ? "W1" : "W2";
      if (w->dtype() != DType::Float32 || w->rank() < 2)
        ctx.fail("{} has dtype {} and shape {}, expected float32 of rank >= 2", name, dtype_name(w->dtype()),
                 shape_to_string(w->shape()));
      for (size_t d = 2; d < w->rank(); ++d)
        if (w->dim(d) != 1) ctx.fail("{} has shape {}, expected a 1x1 filter", name, shape_to_string(w->shape()));
    }
    const int64_t Cm = w1.dim(0), C = w1.dim(1);
    if (nchwc_blocks(C) != x.dim(1) || w2.dim(0) != C || w2.dim(1) != Cm)
      ctx.fail("W1 {} and W2 {} do not fit the blocked X {} (expected Cm x C and C x Cm, ceil(C / 16) = {})",
               shape_to_string(w1.shape()), shape_to_string(w2.shape()), shape_to_string(x.shape()), x.dim(1));
    for (auto [i, name, want] : {std::tuple<size_t, const char*, int64_t>{2, "B1", Cm}, {4, "B2", C}}) {
      if (!ctx.has_input(i)) continue;
      const Tensor& b = ctx.input(i);
      if (b.dtype() != DType::Float32 || b.numel() != want)
        ctx.fail("{} has dtype {} and shape {}, expected {} float32 values", name, dtype_name(b.dtype()),
                 shape_to_string(b.shape()), want);
    }
    if (act1_.act == FusedActivationKind::PRelu && static_cast<int64_t>(act1_.params.size()) != Cm)
      ctx.fail("activation1 PRelu has {} slopes for {} channels", act1_.params.size(), Cm);
    if (act2_.act == FusedActivationKind::PRelu && static_cast<int64_t>(act2_.params.size()) != C)
      ctx.fail("activation2 PRelu has {} slopes for {} channels", act2_.params.size(), C);
    ctx.allocate_output(0, DType::Float32, x.shape());
  }

  void compute(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    const Tensor& w1 = ctx.input(1);
    const NchwcPoolKernels& k = pool_table(ctx);
    ctx.stats().variant = "nchwc_squeeze_excite";
    ctx.stats().isa = cpu::isa_name(k.isa);
    const int64_t N = x.dim(0), Cb = x.dim(1), hw = x.dim(2) * x.dim(3), C = w1.dim(1), Cm = w1.dim(0);
    const int64_t CP = Cb * kNchwcBlock;  // padded channels
    ctx.stats().flops = 2.0 * static_cast<double>(x.numel()) + 4.0 * static_cast<double>(N * C * Cm);
    if (N * Cb == 0) return;
    Tensor padded = ctx.scratch(DType::Float32, {N * CP});  // means, then the gate, padded per image
    Tensor means = ctx.scratch(DType::Float32, {N * C}), gate = ctx.scratch(DType::Float32, {N * C});
    Tensor hidden = ctx.scratch(DType::Float32, {N * Cm});
    float* pm = padded.mutable_data<float>();
    const float* px = x.data<float>();
    float* py = ctx.output(0).mutable_data<float>();
    const int64_t planes = N * Cb, plane = hw * kNchwcBlock;
    const ParallelCost mean_cost{planes * plane, 4 * planes * plane, 0};
    ThreadPool* pool = ctx.reference_mode() ? nullptr : ctx.threads();
    parallel_for(pool, planes, 1, mean_cost, [&](int64_t p0, int64_t p1) {
      for (int64_t p = p0; p < p1; ++p) k.global_avg(px + p * plane, hw, pm + p * kNchwcBlock);
    });
    float* m = means.mutable_data<float>();
    for (int64_t n = 0; n < N; ++n) std::copy(pm + n * CP, pm + n * CP + C, m + n * C);
    SqueezeExciteArgs a{};
    a.N = N, a.C = C, a.HW = hw, a.Cm = Cm;
    a.w1 = w1.data<float>();
    a.b1 = ctx.has_input(2) ? ctx.input(2).data<float>() : nullptr;
    a.w2 = ctx.input(3).data<float>();
    a.b2 = ctx.has_input(4) ? ctx.input(4).data<float>() : nullptr;
    act1_.set(a.act1);
    act2_.set(a.act2);
    a.residual = residual_;
    a.means = m, a.gate = gate.mutable_data<float>(), a.hidden = hidden.mutable_data<float>();
    squeeze_excite_gate(a, ctx.reference_mode() ? nullptr : &simd::f32_kernels());
    for (int64_t n = 0; n < N; ++n) {
      std::copy(a.gate + n * C, a.gate + (n + 1) * C, pm + n * CP);
      std::fill(pm + n * CP + C, pm + (n + 1) * CP, 0.0f);  // padding channels: 0 * finite
    }
    const ParallelCost scale_cost{planes * plane, 8 * planes * plane, 4 * planes * plane};
    parallel_for(pool, planes, 1, scale_cost, [&](int64_t p0, int64_t p1) {
      for (int64_t p = p0; p < p1; ++p) k.scale(px + p * plane, hw, pm + p * kNchwcBlock, py + p * plane);
    });
  }

 private:
  gemm::FusedActivation act1_, act2_;
  bool residual_;
};

std::unique_ptr<Kernel> make_nchwc_max_pool(const KernelInfo& i) { return std::make_unique<NchwcPoolKernel>(i, true); }
std::unique_ptr<Kernel> make_nchwc_avg_pool(const KernelInfo& i) { return std::make_unique<NchwcPoolKernel>(i, false); }

}  // namespace
}  // namespace nn

ONNXMINI_REGISTER_KERNEL("nchwc_pool", "ai.onnxmini", "NchwcMaxPool", 1, INT_MAX, nn::make_nchwc_max_pool);
ONNXMINI_REGISTER_KERNEL("nchwc_pool", "ai.onnxmini", "NchwcAveragePool", 1, INT_MAX, nn::make_nchwc_avg_pool);
ONNXMINI_REGISTER_KERNEL("nchwc_global_pool", "ai.onnxmini", "NchwcGlobalMaxPool", 1, INT_MAX,
                         make_kernel<nn::NchwcGlobalPoolKernel<true>>);
ONNXMINI_REGISTER_KERNEL("nchwc_global_pool", "ai.onnxmini", "NchwcGlobalAveragePool", 1, INT_MAX,
                         make_kernel<nn::NchwcGlobalPoolKernel<false>>);
ONNXMINI_REGISTER_KERNEL("nchwc_squeeze_excite", "ai.onnxmini", "NchwcSqueezeExcite", 1, INT_MAX,
                         make_kernel<nn::NchwcSqueezeExciteKernel>);
ONNXMINI_REGISTER_KERNEL("nchwc_resize", "ai.onnxmini", "NchwcResize", 1, INT_MAX, make_kernel<nn::NchwcResizeKernel>);

}  // namespace onnxmini

ONNXMINI_KERNEL_FILE(nn_nchwc_pool);
