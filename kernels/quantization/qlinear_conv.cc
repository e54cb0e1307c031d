// QLinearConv (ai.onnx 10) and ConvInteger (ai.onnx 10): uint8 / int8 convolutions with
// groups, pads / auto_pad, strides, dilations, per-output-channel weight zero points and
// scales, 1-D to 3-D, on the int8 GEMM engine (kernels/gemm_engine/qgemm.h).
//
// Layout: X is N x C x D x H x W (fewer spatial axes are padded to three with size-1 axes),
// W is M x C/group x kD x kH x kW, Y is N x M x oD x oH x oW. For one image n and group g
// the convolution is the transposed GEMM
//   Y[n, g]^T (P x M/g) = patches (P x Kc) * W'[g] (Kc x M/g),  Kc = taps * C/g, P = oD*oH*oW
// with k ordered (tap, channel): the weights are the engine's B operand, so their zero
// points and scales are per column there; a constant W is reordered and packed once at
// session creation. X is first copied channels-last (D x H x W x C, as uint8: an int8 X is
// flipped to x ^ 0x80 with zero point zx + 128), so each (pixel, tap) of a patch is one
// contiguous run of C/g bytes; PatchPacker writes the patches of a block of pixels straight
// into the engine's packed A layout (no im2col matrix), padding taps holding the zero point
// (they add (zx - zx) * w = 0). The engine writes Y in NCHW through its transposed store,
// with bias and requantization fused.
// Depthwise convolutions (one channel per group) skip the GEMM: direct loops per plane.
// Reference mode: direct loops with int64 sums, then the engine's output stage per element.
#include <algorithm>
#include <array>
#include <cstring>

#include "core/aligned_vector.h"
#include "kernels/nn/spatial.h"
#include "kernels/quantization/qop_common.h"
#include "core/thread_pool.h"
#include "kernels/registry.h"

namespace onnxmini {
namespace quant {
namespace {

// The geometry of one call, normalised to three spatial axes.
struct Geometry {
  int64_t N = 0, C = 0, M = 0, group = 1, Cg = 0, Mg = 0;
  std::array<int64_t, 3> in{1, 1, 1}, k{1, 1, 1}, out{1, 1, 1}, stride{1, 1, 1}, dil{1, 1, 1}, pad{0, 0, 0};
  int64_t in_size() const { return in[0] * in[1] * in[2]; }
  int64_t P() const { return out[0] * out[1] * out[2]; }
  int64_t taps() const { return k[0] * k[1] * k[2]; }
  int64_t Kc() const { return Cg * taps(); }
};

// The patches of one image and group, from the channels-last copy of X, packed for the engine.
// Row sums come from per-pixel channel sums (pixel_sum, computed once per image and group):
// a patch's sum is the sum over its taps of the pixel sums, or Cg * pad for padding taps.
// With Cg a multiple of 4 every (tap, 4 channels) is one 4-byte move into the sliver.
class PatchPacker : public gemm::QgemmAPacker {
 public:
  PatchPacker(const Geometry& g, const uint8_t* x_last, const int32_t* pixel_sum, int64_t c0, uint8_t pad)
      : g_(g), x_(x_last), pixel_sum_(pixel_sum), c0_(c0), pad_(pad) {}

  void pack(int64_t m0, int64_t rows, int64_t kp, int mr, uint8_t* dst, int32_t* rowsum) const override {
    thread_local AlignedVector<uint8_t> row;
    const int64_t K = g_.Kc(), Cg = g_.Cg;
    const bool by4 = Cg % 4 == 0;
    if (!by4 && static_cast<int64_t>(row.size()) < K) row.resize(static_cast<size_t>(K));
    uint32_t pad4;
    std::memset(&pad4, pad_, 4);
    for (int64_t r = 0; r < rows; ++r) {
      const int64_t p = m0 + r;
      const int64_t ow = p % g_.out[2], oh = (p / g_.out[2]) % g_.out[1], od = p / (g_.out[2] * g_.out[1]);
      uint8_t* sliver = dst + (r / mr) * mr * kp + (r % mr) * 4;  // this row's k group 0
      int64_t k = 0;
      int32_t sum = 0;
      for (int64_t kd = 0; kd < g_.k[0]; ++kd) {
        const int64_t id = od * g_.stride[0] - g_.pad[0] + kd * g_.dil[0];
        for (int64_t kh = 0; kh < g_.k[1]; ++kh) {
          const int64_t ih = oh * g_.stride[1] - g_.pad[1] + kh * g_.dil[1];
          for (int64_t kw = 0; kw < g_.k[2]; ++kw, k += Cg) {
            const int64_t iw = ow * g_.stride[2] - g_.pad[2] + kw * g_.dil[2];
            const bool inside = id >= 0 && id < g_.in[0] && ih >= 0 && ih < g_.in[1] && iw >= 0 && iw < g_.in[2];
            const int64_t pix = (id * g_.in[1] + ih) * g_.in[2] + iw;
            const uint8_t* src = inside ? x_ + pix * g_.C + c0_ : nullptr;
            sum += inside ? pixel_sum_[pix] : static_cast<int32_t>(Cg * pad_);
            if (by4) {
              uint8_t* d = sliver + (k / 4) * mr * 4;
              for (int64_t c = 0; c < Cg; c += 4, d += mr * 4)
                if (src) std::memcpy(d, src + c, 4);
                else std::memcpy(d, &pad4, 4);
            } else if (src) {
              std::memcpy(row.data() + k, src, static_cast<size_t>(Cg));
            } else {
              std::memset(row.data() + k, pad_, static_cast<size_t>(Cg));
            }
          }
        }
      }
      rowsum[r] = sum;
      if (!by4) gemm::qgemm_pack_row(row.data(), K, mr, static_cast<int>(r % mr), dst + (r / mr) * mr * kp);
    }
  }

 private:
  const Geometry& g_;
  const uint8_t* x_;
  const int32_t* pixel_sum_;
  int64_t c0_;
  uint8_t pad_;
};

class QConvKernel : public Kernel {
 public:
  QConvKernel(const KernelInfo& info, bool qlinear)
      : qlinear_(qlinear),
        attrs_(nn::read_window_attrs(info)),
        group_(info.attrs.get_int("group", 1)),
        x_(0),
        w_(qlinear ? 3 : 1) {
    if (group_ < 1) info.fail("group must be >= 1, got {}", group_);
    const Tensor* w = info.constant_input(w_);
    if (w && info.mode == KernelMode::Fast && is_int8_type(w->dtype()) && w->rank() >= 3 && w->dim(0) % group_ == 0) {
      const int64_t M = w->dim(0), Mg = M / group_, Kc = w->numel() / std::max<int64_t>(M, 1);
      std::vector<uint8_t> wt(static_cast<size_t>(Kc * Mg));
      const uint8_t* src = static_cast<const uint8_t*>(w->raw());
      for (int64_t g = 0; g < group_; ++g) {
        transpose_weights(src + g * Mg * Kc, Mg, w->dim(1), Kc / w->dim(1), wt.data());
        packed_.push_back(gemm::qgemm_pack_b(gemm::active_qisa(), Kc, Mg, wt.data(), w->dtype() == DType::Int8, Mg));
      }
    }
  }

  void prepare(KernelContext& ctx) override {
    const Tensor& x = ctx.input(x_);
    const Tensor& w = ctx.input(w_);
    require_int8(ctx, x, "x");
    require_int8(ctx, w, "w");
    const Geometry geo = geometry(ctx, x, w);
    Shape ys{geo.N, geo.M};
    for (size_t d = 0; d + 2 < x.rank(); ++d) ys.push_back(geo.out[3 - (x.rank() - 2) + d]);
    DType yt = DType::Int32;
    if (qlinear_) {
      if (!ctx.has_input(7)) ctx.fail("y_zero_point is required (it gives the output type)");
      require_int8(ctx, ctx.input(7), "y_zero_point");
      yt = ctx.input(7).dtype();
    }
    ctx.allocate_output(0, yt, ys);
  }

  void compute(KernelContext& ctx) override {
    const Tensor& x = ctx.input(x_);
    const Tensor& w = ctx.input(w_);
    Tensor& y = ctx.output(0);
    const Geometry geo = geometry(ctx, x, w);
    ctx.stats().flops = 2.0 * geo.N * geo.M * geo.P() * geo.Kc();
    const int32_t x_zero = read_zero_point(ctx, qlinear_ ? 2 : 2, x.dtype(), 1, "x_zero_point")[0];
    const std::vector<int32_t> w_zero = read_zero_point(ctx, qlinear_ ? 5 : 3, w.dtype(), geo.M, "w_zero_point");

    // The output stage for the whole of one image (channels are the GEMM's columns).
    gemm::QgemmOutput out;
    out.transposed = true;
    out.ldy = geo.P();
    std::vector<float> scale;
    std::vector<int32_t> bias;
    if (qlinear_) {
      const float x_scale = read_scale(ctx, 1, 1, "x_scale")[0];
      const std::vector<float> w_scale = read_scale(ctx, 4, geo.M, "w_scale");
      const float y_scale = read_scale(ctx, 6, 1, "y_scale")[0];
      out.y_zero = read_zero_point(ctx, 7, y.dtype(), 1, "y_zero_point")[0];
      out.kind = y.dtype() == DType::UInt8 ? gemm::QgemmOutput::UInt8 : gemm::QgemmOutput::Int8;
      scale.resize(static_cast<size_t>(geo.M));
      for (int64_t m = 0; m < geo.M; ++m) scale[m] = x_scale * w_scale[w_scale.size() > 1 ? m : 0] / y_scale;
      out.scale = scale.data();
      out.scale_per_column = true;
      if (ctx.has_input(8)) {
        const Tensor& b = ctx.input(8);
        if (b.dtype() != DType::Int32 || b.numel() != geo.M)
          ctx.fail("B must be int32 with M = {} values, got {} {}", geo.M, dtype_name(b.dtype()), shape_to_string(b.shape()));
        out.bias_i32 = b.data<int32_t>();
      }
    }
    if (y.numel() == 0) return;
    const size_t esize = dtype_size(y.dtype());
    if (ctx.reference_mode()) {
      ctx.stats().variant = "qconv_reference";
      return reference(geo, x, w, x_zero, w_zero, out, static_cast<uint8_t*>(y.raw_mut()), esize);
    }
    if (geo.Cg == 1 && geo.Mg == 1) {  // depthwise: a GEMM with N = 1 would waste its tile width
      ctx.stats().variant = "qconv_depthwise_direct";
      return depthwise(ctx, geo, x, w, x_zero, w_zero, out, static_cast<uint8_t*>(y.raw_mut()), esize);
    }
    ctx.stats().variant = "qconv_patches_gemm";

    const int64_t P = geo.P(), Kc = geo.Kc(), S = geo.in_size();
    // X channels-last as uint8 (int8 flipped by ^ 0x80, its zero point moved by 128).
    Tensor x_last = ctx.scratch(DType::UInt8, {S, geo.C});
    Tensor pixel_sum = ctx.scratch(DType::Int32, {S});
    const uint8_t flip = x.dtype() == DType::Int8 ? 0x80 : 0;
    const int32_t zx = x_zero + (flip ? 128 : 0);
    Tensor wt;
    if (packed_.empty()) wt = ctx.scratch(DType::UInt8, {Kc, geo.Mg});
    const uint8_t* xb = static_cast<const uint8_t*>(x.raw());
    const uint8_t* wb = static_cast<const uint8_t*>(w.raw());
    uint8_t* xl = x_last.mutable_data<uint8_t>();
    for (int64_t n = 0; n < geo.N; ++n) {
      const uint8_t* xn = xb + n * geo.C * S;
      for (int64_t i0 = 0; i0 < S; i0 += 64)  // blocks of 64 pixels: reads and writes stay in L1
        for (int64_t c = 0; c < geo.C; ++c)
          for (int64_t i = i0; i < std::min(S, i0 + 64); ++i) xl[i * geo.C + c] = xn[c * S + i] ^ flip;
      for (int64_t g = 0; g < geo.group; ++g) {
        int32_t* ps = pixel_sum.mutable_data<int32_t>();
        for (int64_t i = 0; i < S; ++i) {
          int32_t sum = 0;
          for (int64_t c = 0; c < geo.Cg; ++c) sum += xl[i * geo.C + g * geo.Cg + c];
          ps[i] = sum;
        }
        PatchPacker packer(geo, xl, ps, g * geo.Cg, static_cast<uint8_t>(zx));
        gemm::QgemmArgs args;
        args.M = P, args.N = geo.Mg, args.K = Kc;
        args.a_packer = &packer;
        args.a_zero = zx;
        args.b_signed = w.dtype() == DType::Int8;
        args.b_zero_per_column = w_zero.size() > 1;
        args.b_zero = w_zero.data() + (args.b_zero_per_column ? g * geo.Mg : 0);
        if (packed_.empty()) {
          transpose_weights(wb + g * geo.Mg * Kc, geo.Mg, geo.Cg, geo.taps(), wt.mutable_data<uint8_t>());
          args.B = wt.data<uint8_t>(), args.ldb = geo.Mg;
        }
        args.out = out;
        args.out.y = static_cast<uint8_t*>(y.raw_mut()) + (n * geo.M + g * geo.Mg) * P * esize;
        if (out.scale) args.out.scale = out.scale + g * geo.Mg;
        if (out.bias_i32) args.out.bias_i32 = out.bias_i32 + g * geo.Mg;
        gemm::qgemm(args, packed_.empty() ? nullptr : packed_[static_cast<size_t>(g)].get(), ctx.threads());
      }
    }
  }

 private:
  // dst (Kc x Mg, k = tap * Cg + c) from one group's Mg x Cg x taps weights.
  static void transpose_weights(const uint8_t* w, int64_t Mg, int64_t Cg, int64_t taps, uint8_t* dst) {
    for (int64_t m = 0; m < Mg; ++m)
      for (int64_t c = 0; c < Cg; ++c)
        for (int64_t t = 0; t < taps; ++t) dst[(t * Cg + c) * Mg + m] = w[(m * Cg + c) * taps + t];
  }

  Geometry geometry(const KernelContext& ctx, const Tensor& x, const Tensor& w) const {
    if (x.rank() < 3 || x.rank() > 5) ctx.unsupported("x has rank {}; 1-D to 3-D convolutions are supported", x.rank());
    if (w.rank() != x.rank()) ctx.fail("w has rank {}, x has rank {}", w.rank(), x.rank());
    Geometry geo;
    geo.N = x.dim(0), geo.C = x.dim(1), geo.M = w.dim(0), geo.group = group_;
    if (geo.C % group_ != 0 || geo.M % group_ != 0)
      ctx.fail("group {} does not divide the {} input channels and the {} output channels", group_, geo.C, geo.M);
    geo.Cg = geo.C / group_, geo.Mg = geo.M / group_;
    if (w.dim(1) != geo.Cg) ctx.fail("w {} has {} input channels per group, x {} with group {} needs {}",
                                     shape_to_string(w.shape()), w.dim(1), shape_to_string(x.shape()), group_, geo.Cg);
    std::vector<int64_t> in(x.shape().begin() + 2, x.shape().end()), k(w.shape().begin() + 2, w.shape().end());
    if (!attrs_.kernel.empty() && attrs_.kernel != k)
      ctx.fail("kernel_shape {} differs from the weights' {}", shape_to_string(attrs_.kernel), shape_to_string(k));
    const nn::Window win = nn::resolve_window(ctx, attrs_, in, k);
    const size_t off = 3 - win.rank;
    for (size_t d = 0; d < win.rank; ++d) {
      geo.in[off + d] = win.in[d], geo.k[off + d] = win.kernel[d], geo.out[off + d] = win.out[d];
      geo.stride[off + d] = win.stride[d], geo.dil[off + d] = win.dilation[d], geo.pad[off + d] = win.pad_begin[d];
    }
    return geo;
  }

  // Depthwise (one input and one output channel per group): per (image, channel) plane,
  // direct int32 sums over the taps inside the input (padding adds (zx - zx) * w = 0), the
  // taps' (w - zw) read once per plane; planes are spread over the threads. The output stage
  // is the engine's, per element (channel = column of the transposed output).
  static void depthwise(KernelContext& ctx, const Geometry& g, const Tensor& x, const Tensor& w, int32_t zx,
                        const std::vector<int32_t>& zw, const gemm::QgemmOutput& out0, uint8_t* y, size_t esize) {
    const bool xs = x.dtype() == DType::Int8, ws = w.dtype() == DType::Int8;
    const uint8_t* xb = static_cast<const uint8_t*>(x.raw());
    const uint8_t* wb = static_cast<const uint8_t*>(w.raw());
    const int64_t P = g.P(), S = g.in_size(), T = g.taps();
    auto plane = [&](int64_t b, int64_t e) {
      std::vector<int32_t> wt(static_cast<size_t>(T));
      for (int64_t nc = b; nc < e; ++nc) {
        const int64_t n = nc / g.M, c = nc % g.M;
        const int32_t z = zw[zw.size() > 1 ? c : 0];
        for (int64_t t = 0; t < T; ++t) wt[t] = (ws ? int32_t(int8_t(wb[c * T + t])) : int32_t(wb[c * T + t])) - z;
        const uint8_t* xp = xb + (n * g.C + c) * S;
        gemm::QgemmOutput o = out0;
        o.y = y + n * g.M * P * esize;
        for (int64_t od = 0; od < g.out[0]; ++od)
          for (int64_t oh = 0; oh < g.out[1]; ++oh)
            for (int64_t ow = 0; ow < g.out[2]; ++ow) {
              uint32_t acc = 0;  // int32 sums, wrapping like the engine's
              for (int64_t kd = 0; kd < g.k[0]; ++kd) {
                const int64_t id = od * g.stride[0] - g.pad[0] + kd * g.dil[0];
                if (id < 0 || id >= g.in[0]) continue;
                for (int64_t kh = 0; kh < g.k[1]; ++kh) {
                  const int64_t ih = oh * g.stride[1] - g.pad[1] + kh * g.dil[1];
                  if (ih < 0 || ih >= g.in[1]) continue;
                  const uint8_t* row = xp + (id * g.in[1] + ih) * g.in[2];
                  const int32_t* wk = wt.data() + (kd * g.k[1] + kh) * g.k[2];
                  for (int64_t kw = 0; kw < g.k[2]; ++kw) {
                    const int64_t iw = ow * g.stride[2] - g.pad[2] + kw * g.dil[2];
                    if (iw < 0 || iw >= g.in[2]) continue;
                    const int32_t v = (xs ? int32_t(int8_t(row[iw])) : int32_t(row[iw])) - zx;
                    acc += static_cast<uint32_t>(v * wk[kw]);
                  }
                }
              }
              gemm::qgemm_store(o, (od * g.out[1] + oh) * g.out[2] + ow, c, static_cast<int32_t>(acc));
            }
      }
    };
    if (ctx.threads()) ctx.threads()->parallel_for(g.N * g.M, 1, plane);
    else plane(0, g.N * g.M);
  }

  // The oracle: sum over the taps inside the input of (x - zx)(w - zw) in int64.
  static void reference(const Geometry& g, const Tensor& x, const Tensor& w, int32_t zx, const std::vector<int32_t>& zw,
                        const gemm::QgemmOutput& out0, uint8_t* y, size_t esize) {
    const bool xs = x.dtype() == DType::Int8, ws = w.dtype() == DType::Int8;
    const uint8_t* xb = static_cast<const uint8_t*>(x.raw());
    const uint8_t* wb = static_cast<const uint8_t*>(w.raw());
    auto xv = [&](int64_t i) -> int64_t { return xs ? int64_t(int8_t(xb[i])) : int64_t(xb[i]); };
    auto wv = [&](int64_t i) -> int64_t { return ws ? int64_t(int8_t(wb[i])) : int64_t(wb[i]); };
    const int64_t P = g.P();
    for (int64_t n = 0; n < g.N; ++n) {
      gemm::QgemmOutput o = out0;
      o.y = y + n * g.M * P * esize;
      for (int64_t m = 0; m < g.M; ++m) {
        const int64_t grp = m / g.Mg, z = zw[zw.size() > 1 ? m : 0];
        for (int64_t od = 0; od < g.out[0]; ++od)
          for (int64_t oh = 0; oh < g.out[1]; ++oh)
            for (int64_t ow = 0; ow < g.out[2]; ++ow) {
              int64_t acc = 0;
              for (int64_t c = 0; c < g.Cg; ++c)
                for (int64_t kd = 0; kd < g.k[0]; ++kd)
                  for (int64_t kh = 0; kh < g.k[1]; ++kh)
                    for (int64_t kw = 0; kw < g.k[2]; ++kw) {
                      const int64_t id = od * g.stride[0] - g.pad[0] + kd * g.dil[0];
                      const int64_t ih = oh * g.stride[1] - g.pad[1] + kh * g.dil[1];
                      const int64_t iw = ow * g.stride[2] - g.pad[2] + kw * g.dil[2];
                      if (id < 0 || id >= g.in[0] || ih < 0 || ih >= g.in[1] || iw < 0 || iw >= g.in[2]) continue;
                      const int64_t xi = (((n * g.C + grp * g.Cg + c) * g.in[0] + id) * g.in[1] + ih) * g.in[2] + iw;
                      const int64_t wi = (((m * g.Cg + c) * g.k[0] + kd) * g.k[1] + kh) * g.k[2] + kw;
                      acc += (xv(xi) - zx) * (wv(wi) - z);
                    }
              const int64_t p = (od * g.out[1] + oh) * g.out[2] + ow;
              gemm::qgemm_store(o, p, m, static_cast<int32_t>(static_cast<uint32_t>(static_cast<uint64_t>(acc))));
            }
      }
    }
  }

  bool qlinear_;
  nn::WindowAttrs attrs_;
  int64_t group_;
  size_t x_, w_;
  std::vector<std::shared_ptr<gemm::QPackedB>> packed_;  // per group, constant w only
};

std::unique_ptr<Kernel> make_qlinear_conv(const KernelInfo& info) { return std::make_unique<QConvKernel>(info, true); }
std::unique_ptr<Kernel> make_conv_integer(const KernelInfo& info) { return std::make_unique<QConvKernel>(info, false); }

}  // namespace

ONNXMINI_REGISTER_KERNEL("qlinear_conv", "", "QLinearConv", 10, INT_MAX, make_qlinear_conv);
ONNXMINI_REGISTER_KERNEL("qlinear_conv", "", "ConvInteger", 10, INT_MAX, make_conv_integer);

}  // namespace quant
}  // namespace onnxmini

ONNXMINI_KERNEL_FILE(quantization_qlinear_conv);
