// Winograd F(2x2, 3x3) for NchwcConv (variant nchwc_winograd), written once over the vector
// traits B of nchwc_conv_impl.h and instantiated with them by nchwc_conv.cc (portable),
// nchwc_conv_avx2.cc and nchwc_conv_avx512.cc.
//
// Math. Each 2x2 output tile is A^T [ (G g G^T) . (B^T d B) ] A, d the tile's 4x4 input patch
// (zeros outside X), g a 3x3 filter, with
//   B^T = [1 0 -1 0; 0 1 1 0; 0 -1 1 0; 0 1 0 -1], G = [1 0 0; .5 .5 .5; .5 -.5 .5; 0 0 1],
//   A^T = [1 1 1 0; 0 1 -1 -1].
// Summed over the input channels, the 16 element-wise products are 16 independent GEMMs,
// M[xi][tile][oc] = sum_ic V[xi][tile][ic] U[xi][ic][oc]: 16 multiply-adds per tile and channel
// pair where the direct convolution does 36 (2.25x fewer), plus the transforms (per tile: 32
// adds per input block, 24 per output block). The transforms' coefficients are 0, +-1 and .5,
// so rounding grows only by a few additions per output.
//
// Layout and blocking. One call computes the tiles [tx0, tx1) of tile row ty (output rows
// 2 ty, 2 ty + 1) of image n, every output block:
//   1. V[xi][ICb][T][16] = B^T d B of each tile and input block (16 loads, 32 add / sub);
//   2. for each xi, M[xi][OCb][T][16] = the 1x1 convolution of V[xi] (a row of T "pixels")
//      with U[xi] through the table's own dense_row (the strips of nchwc_conv_impl.h: T is at
//      most 32 tiles, so V[xi] (at most 32 x ICb x 64 B) stays in L1 while the output blocks'
//      U[xi] stream from L2);
//   3. A^T m A of each tile and output block, then the epilogue of the direct kernel (bias,
//      residual Z, activation, output affine) in registers, and the store of the tile's
//      pixels that lie inside Y.
// U (nchwc_pack_winograd, at kernel creation) is [16 xi][OCb][ICb][16 ic][16 oc]: for each xi
// the layout of a packed 1x1 dense filter.
#pragma once
#include <algorithm>
#include <cstdint>

#include "core/aligned_vector.h"
#include "kernels/nn/nchwc_conv_impl.h"

namespace onnxmini {
namespace nn {
namespace {

// Tiles one call holds at most (the caller cuts longer tile rows into equal chunks).
constexpr int64_t kWinogradTiles = 32;

// B^T d B of one 4 x 4 patch, one output row r at a time: row r of B^T d combines two input
// rows (r0: d0 - d2, r1: d1 + d2, r2: d2 - d1, r3: d1 - d3) column by column, then (.) B
// combines that row's four values the same way. tap(i, c) loads d[i][c]; out(r, c, v) takes
// the result. Eight loads and eight add / sub per output row, four values live: holding the
// whole patch (16 blocks) took 32 ymm on AVX2, whose 16 registers spilled it to the stack
// (the transforms took 2.2x AVX-512's time on the same FMA rate, AMD EPYC Zen 4). Each output
// is the same expression, operand for operand, as with the patch in registers.
template <class B, class Tap, class Out>
ONNXMINI_NCHWC_INLINE void winograd_input_transform(Tap&& tap, Out&& out) {
  using R = typename B::Reg;
  constexpr int kFirst[4] = {0, 1, 2, 1}, kSecond[4] = {2, 2, 1, 3};  // r1 adds, the others subtract
  auto combine = [](int i, R x, R y) ONNXMINI_NCHWC_LAMBDA_INLINE { return i == 1 ? B::add(x, y) : B::sub(x, y); };
  for (int r = 0; r < 4; ++r) {
    R t[4];
    for (int c = 0; c < 4; ++c) t[c] = combine(r, tap(kFirst[r], c), tap(kSecond[r], c));
    for (int c = 0; c < 4; ++c) out(r, c, combine(c, t[kFirst[c]], t[kSecond[c]]));
  }
}

template <class B>
void nchwc_winograd_tiles(const NchwcKernels& k, const NchwcConvArgs& a, const float* u, int64_t n, int64_t ty,
                          int64_t tx0, int64_t tx1) {
  using R = typename B::Reg;
  const int64_t T = tx1 - tx0;
  thread_local AlignedVector<float> v_buf, m_buf;
  const size_t v_need = static_cast<size_t>(16 * a.ICb * T * 16), m_need = static_cast<size_t>(16 * a.OCb * T * 16);
  if (v_buf.size() < v_need) v_buf.resize(v_need);
  if (m_buf.size() < m_need) m_buf.resize(m_need);
  float* V = v_buf.data();
  float* M = m_buf.data();

  // 1. Input transform.
  const int64_t ih0 = 2 * ty - a.ph;
  for (int64_t icb = 0; icb < a.ICb; ++icb) {
    const float* xc = a.x + (n * a.ICb + icb) * a.H * a.W * 16;
    for (int64_t t = tx0; t < tx1; ++t) {
      const int64_t iw0 = 2 * t - a.pw;
      float* vt = V + (icb * T + (t - tx0)) * 16;  // + xi * ICb * T * 16
      auto out = [&](int r, int c, R v) ONNXMINI_NCHWC_LAMBDA_INLINE { B::store(vt + (r * 4 + c) * a.ICb * T * 16, v); };
      if (ih0 >= 0 && ih0 + 4 <= a.H && iw0 >= 0 && iw0 + 4 <= a.W) {
        const float* d = xc + (ih0 * a.W + iw0) * 16;
        winograd_input_transform<B>([&](int i, int c) ONNXMINI_NCHWC_LAMBDA_INLINE { return B::load(d + (i * a.W + c) * 16); },
                                    out);
      } else {
        winograd_input_transform<B>(
            [&](int i, int c) ONNXMINI_NCHWC_LAMBDA_INLINE {
              const int64_t ih = ih0 + i, iw = iw0 + c;
              return ih >= 0 && ih < a.H && iw >= 0 && iw < a.W ? B::load(xc + (ih * a.W + iw) * 16) : B::zero();
            },
            out);
      }
    }
  }

  // 2. Sixteen 1x1 convolutions over a row of T tiles.
  NchwcConvArgs g;
  g.N = 1, g.ICb = a.ICb, g.OCb = a.OCb, g.H = 1, g.W = T, g.OH = 1, g.OW = T;
  g.ic_last = a.ic_last;
  const int64_t nb = k.dense_nb;
  const bool odd3 = k.dense_odd3 && nb == 2 && a.OCb % 2 == 1 && a.OCb >= 3;
  const int64_t groups = odd3 ? a.OCb / 2 : (a.OCb + nb - 1) / nb;
  for (int xi = 0; xi < 16; ++xi) {
    g.x = V + xi * a.ICb * T * 16;
    g.w = u + xi * a.OCb * a.ICb * 256;
    g.y = M + xi * a.OCb * T * 16;
    for (int64_t grp = 0; grp < groups; ++grp) {
      const int64_t ob = grp * nb, blocks = odd3 && grp == groups - 1 ? 3 : std::min(nb, a.OCb - ob);
      k.dense_row(g, 0, ob, blocks, 0, 0, T);
    }
  }

  // 3. Output transform and epilogue.
  for (int64_t ob = 0; ob < a.OCb; ++ob) {
    const R bias = a.bias ? B::load(a.bias + ob * 16) : B::zero();
    const R slope = a.act == NchwcAct::PRelu ? B::load(a.slope + ob * 16) : B::zero();
    const R oscale = a.out_scale ? B::load(a.out_scale + ob * 16) : B::zero();
    const R oshift = a.out_scale ? B::load(a.out_shift + ob * 16) : B::zero();
    const int64_t plane = (n * a.OCb + ob) * a.OH * a.OW;
    nchwc_with_activation<B>(a, slope, [&](auto act) ONNXMINI_NCHWC_LAMBDA_INLINE {
      for (int64_t t = tx0; t < tx1; ++t) {
        // One output row at a time (row i of A^T m: four values live, as the input transform).
        const float* mt = M + (ob * T + (t - tx0)) * 16;  // + xi * OCb * T * 16
        auto m = [&](int r, int c) ONNXMINI_NCHWC_LAMBDA_INLINE { return B::load(mt + (r * 4 + c) * a.OCb * T * 16); };
        for (int i = 0; i < 2; ++i) {
          const int64_t oh = 2 * ty + i;
          if (oh >= a.OH) break;
          R s[4];  // row i of A^T m
          for (int c = 0; c < 4; ++c)
            s[c] = i == 0 ? B::add(B::add(m(0, c), m(1, c)), m(2, c)) : B::sub(B::sub(m(1, c), m(2, c)), m(3, c));
          const R y0 = B::add(B::add(s[0], s[1]), s[2]);  // (A^T m) A
          const R y1 = B::sub(B::sub(s[1], s[2]), s[3]);
          for (int j = 0; j < 2; ++j) {
            const int64_t ow = 2 * t + j;
            if (ow >= a.OW) break;
            const int64_t off = (plane + oh * a.OW + ow) * 16;
            R v = B::add(j == 0 ? y0 : y1, bias);
            if (a.z) v = B::add(v, B::load(a.z + off));
            v = act(v);
            if (a.out_scale) v = B::fma(v, oscale, oshift);
            B::store(a.y + off, v);
          }
        }
      }
    });
  }
}

}  // namespace
}  // namespace nn
}  // namespace onnxmini
