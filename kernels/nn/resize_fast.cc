// Resize fast paths: the per-call tables (from the general path's axis tables),
// the portable row primitives, the per-ISA dispatch and the plane driver.
//
// Which nearest modes are pixel replication at an integer scale s (output o,
// o = k*s + r, 0 <= r < s, expected source k):
//   asymmetric           x = o/s = k + r/s:      floor -> k always; round_prefer_floor
//                        -> k only for s = 2 (r/s = 1/2 ties down; s >= 3 has r/s > 1/2);
//                        round_prefer_ceil and ceil go up for r > 0 (not replication).
//   half_pixel (also pytorch_half_pixel, and half_pixel_symmetric, whose offset
//   is 0 when s * in is an integer)
//                        x = k + (r + 1/2)/s - 1/2, fraction in [-1/2 + 1/(2s), 1/2 - 1/(2s)]:
//                        both round modes -> k (no ties); floor moves off k where the fraction is
//                        negative (r < (s-1)/2), ceil where it is positive (r > (s-1)/2).
//   tf_half_pixel_for_nearest  x = k + (r + 1/2)/s, fraction in (0, 1): floor -> k; ceil moves off k
//                        always, the round modes for r > (s-1)/2 (round_prefer_ceil also at equality).
//   align_corners        x = o (in - 1) / (s in - 1): not replication.
// Rather than trust that derivation in code, make_resize_fast_plan reads the
// general path's tables themselves: replication is taken exactly when every
// output column x has the single source column x / s and every output row a
// single source row, so the fast path copies the values the general path would.
#include "kernels/nn/resize_fast.h"

#include <algorithm>
#include <atomic>
#include <cstring>

#include "core/aligned_vector.h"
#include "core/env_override.h"
#include "core/shape_util.h"

namespace onnxmini {
namespace nn {
namespace {

void replicate_row_portable(const float* src, int64_t w, int64_t s, float* dst, int64_t copies, int64_t dst_stride) {
  if (s == 1) {
    std::memcpy(dst, src, static_cast<size_t>(w) * sizeof(float));
  } else {
    for (int64_t i = 0; i < w; ++i) std::fill(dst + i * s, dst + (i + 1) * s, src[i]);
  }
  for (int64_t r = 1; r < copies; ++r)
    std::memcpy(dst + r * dst_stride, dst, static_cast<size_t>(w * s) * sizeof(float));
}

void lerp_gather_row_portable(const float* src, int64_t, const int32_t* i0, const int32_t* i1, const float* w0,
                              const float* w1, int64_t n, bool, float* dst) {
  for (int64_t x = 0; x < n; ++x) dst[x] = w0[x] * src[i0[x]] + w1[x] * src[i1[x]];
}

void blend_rows_portable(const float* a, const float* b, float wa, float wb, int64_t n, float* dst) {
  for (int64_t x = 0; x < n; ++x) dst[x] = wa * a[x] + wb * b[x];
}

void nearest_flat_portable(const float* src, int64_t, const int32_t* idx, const int32_t*, const int32_t*, int64_t n,
                           float* dst) {
  for (int64_t q = 0; q < n; ++q) dst[q] = src[idx[q]];
}

// ONNXMINI_RESIZE_FLAT (read once): "0" = never, "1" = always (nearest, any plane), otherwise the rule.
std::atomic<int> g_flat{
    static_cast<int>(env_override("ONNXMINI_RESIZE_FLAT", ResizeFlat::Rule, ResizeFlat::Never, ResizeFlat::Always))};

std::atomic<int> g_isa_override{-1};

// A resized axis's table as (tap0, tap1) pairs; false when some output reads
// more than two taps with non-zero weight, or (nearest) is not one-hot.
bool two_tap_table(const AxisTapsView& a, bool one_hot, std::vector<int32_t>& i0, std::vector<int32_t>& i1,
                   std::vector<float>& w0, std::vector<float>& w1) {
  if (a.extrapolates || a.in > INT32_MAX) return false;
  i0.assign(a.out, 0), i1.assign(a.out, 0), w0.assign(a.out, 0.f), w1.assign(a.out, 0.f);
  for (int64_t o = 0; o < a.out; ++o) {
    int used = 0;
    for (int t = 0; t < a.taps; ++t) {
      const double w = a.weight[o * a.taps + t];
      if (w == 0) continue;  // the general path skips zero weights too
      if (used == 2 || (one_hot && w != 1.0)) return false;
      (used == 0 ? i0 : i1)[o] = static_cast<int32_t>(a.index[o * a.taps + t]);
      (used == 0 ? w0 : w1)[o] = static_cast<float>(w);
      ++used;
    }
    if (used == 0 || (one_hot && used != 1)) return false;  // an all-zero row (exclude_outside): general path
    if (used == 1) i1[o] = i0[o];
  }
  return true;
}

void identity_table(int64_t n, std::vector<int32_t>& i0, std::vector<int32_t>& i1, std::vector<float>& w0,
                    std::vector<float>& w1) {
  i0.resize(n), i1.resize(n), w0.assign(n, 1.f), w1.assign(n, 0.f);
  for (int64_t k = 0; k < n; ++k) i0[k] = i1[k] = static_cast<int32_t>(k);
}

// Two source rows of out_w horizontally interpolated floats, tagged by source
// row; thread-local so a warmed-up run allocates nothing.
struct RowCache {
  AlignedVector<float> data;
  int64_t tag[2] = {-1, -1};
  float* slot(int k, int64_t w) { return data.data() + k * w; }
};

// The horizontally interpolated source row y (a pointer into the source when
// the columns are the identity), computed into a slot not holding `keep`.
const float* horizontal_row(const ResizeFastPlan& p, const ResizeRowKernels& k, const float* plane, int64_t y,
                            int64_t keep, RowCache& c) {
  const float* src = plane + y * p.in_w;
  if (p.cols_identity) return src;
  for (int s = 0; s < 2; ++s)
    if (c.tag[s] == y) return c.slot(s, p.out_w);
  const int s = c.tag[0] == keep ? 1 : 0;
  k.lerp_gather_row(src, p.in_w, p.col0.data(), p.col1.data(), p.col_w0.data(), p.col_w1.data(), p.out_w,
                    p.cols_monotone, c.slot(s, p.out_w));
  c.tag[s] = y;
  return c.slot(s, p.out_w);
}

// Output rows [r0, r1) of one plane, bilinear.
void bilinear_band(const ResizeFastPlan& p, const ResizeRowKernels& k, const float* plane, float* out, int64_t r0,
                   int64_t r1) {
  thread_local RowCache cache;
  if (cache.data.size() < static_cast<size_t>(2 * p.out_w)) cache.data.resize(static_cast<size_t>(2 * p.out_w));
  cache.tag[0] = cache.tag[1] = -1;
  for (int64_t oy = r0; oy < r1; ++oy) {
    float* d = out + oy * p.out_w;
    const float* a = horizontal_row(p, k, plane, p.row0[oy], p.row1[oy], cache);
    if (p.row_w1[oy] == 0) {
      if (p.row_w0[oy] == 1) std::memcpy(d, a, static_cast<size_t>(p.out_w) * sizeof(float));
      else k.blend_rows(a, a, p.row_w0[oy], 0.f, p.out_w, d);
      continue;
    }
    const float* b = horizontal_row(p, k, plane, p.row1[oy], p.row0[oy], cache);
    k.blend_rows(a, b, p.row_w0[oy], p.row_w1[oy], p.out_w, d);
  }
}

// Output rows [r0, r1) of one plane, nearest: a run of output rows reading the
// same source row is written in one replicate_row call (or gathered once and
// copied).
void nearest_band(const ResizeFastPlan& p, const ResizeRowKernels& k, const float* plane, float* out, int64_t r0,
                  int64_t r1) {
  const size_t row_bytes = static_cast<size_t>(p.out_w) * sizeof(float);
  for (int64_t oy = r0; oy < r1;) {
    int64_t run = 1;
    while (oy + run < r1 && p.row0[oy + run] == p.row0[oy]) ++run;
    float* d = out + oy * p.out_w;
    const float* src = plane + p.row0[oy] * p.in_w;
    if (p.kind == ResizeFastKind::NearestReplicate) {
      k.replicate_row(src, p.in_w, p.col_factor, d, run, p.out_w);
    } else {
      const int32_t* c = p.col0.data();
      for (int64_t x = 0; x < p.out_w; ++x) d[x] = src[c[x]];
      for (int64_t r = 1; r < run; ++r) std::memcpy(d + r * p.out_w, d, row_bytes);
    }
    oy += run;
  }
}

}  // namespace

const ResizeRowKernels& resize_row_kernels_portable() {
  static const ResizeRowKernels k{cpu::Isa::Portable, replicate_row_portable, lerp_gather_row_portable,
                                  blend_rows_portable, nearest_flat_portable};
  return k;
}

const ResizeRowKernels& resize_row_kernels_for(cpu::Isa isa) {
  if (isa == cpu::Isa::Avx512 && cpu::hw_has_avx512()) return resize_row_kernels_avx512();
  if (isa != cpu::Isa::Portable && cpu::hw_has_avx2_fma()) return resize_row_kernels_avx2();
  return resize_row_kernels_portable();
}

cpu::Isa resize_isa() {
  const int o = g_isa_override.load(std::memory_order_relaxed);
  return o < 0 ? cpu::active_isa() : static_cast<cpu::Isa>(o);
}

void set_resize_isa_for_tests(cpu::Isa isa) { g_isa_override.store(static_cast<int>(isa)); }

void set_resize_flat(ResizeFlat f) { g_flat.store(static_cast<int>(f)); }

ResizeFastPlan make_resize_fast_plan(const std::vector<int64_t>& in_shape, const std::vector<size_t>& axes,
                                     const std::vector<AxisTapsView>& taps, bool nearest_mode, bool linear_mode) {
  ResizeFastPlan p;
  const size_t rank = in_shape.size();
  if (rank < 2 || axes.empty() || (!nearest_mode && !linear_mode)) return p;
  for (size_t a : axes)
    if (a + 2 < rank) return p;  // N or C resized: general path
  p.planes = shape_product(in_shape, 0, rank - 2);
  p.in_h = in_shape[rank - 2], p.in_w = in_shape[rank - 1];
  p.out_h = p.in_h, p.out_w = p.in_w;
  if (p.in_h > INT32_MAX || p.in_w > INT32_MAX) return p;
  bool rows_done = false, cols_done = false;
  for (size_t k = 0; k < axes.size(); ++k) {
    const bool rows = axes[k] == rank - 2;
    bool ok = rows ? two_tap_table(taps[k], nearest_mode, p.row0, p.row1, p.row_w0, p.row_w1)
                   : two_tap_table(taps[k], nearest_mode, p.col0, p.col1, p.col_w0, p.col_w1);
    if (!ok) return ResizeFastPlan{};
    (rows ? p.out_h : p.out_w) = taps[k].out;
    (rows ? rows_done : cols_done) = true;
  }
  if (!rows_done) identity_table(p.out_h, p.row0, p.row1, p.row_w0, p.row_w1);
  if (!cols_done) identity_table(p.out_w, p.col0, p.col1, p.col_w0, p.col_w1);
  if (nearest_mode) {
    // Replication: output column x reads x / s for one integer s.
    const int64_t s = p.out_w / p.in_w;
    bool replicate = s >= 1 && s * p.in_w == p.out_w;
    for (int64_t x = 0; replicate && x < p.out_w; ++x) replicate = p.col0[x] == x / s;
    p.kind = replicate ? ResizeFastKind::NearestReplicate : ResizeFastKind::NearestGather;
    p.col_factor = replicate ? s : 0;
    const int64_t out_plane = p.out_h * p.out_w;
    const auto flat = static_cast<ResizeFlat>(g_flat.load(std::memory_order_relaxed));
    const bool small = out_plane <= kFlatMaxPlane && p.out_w < kFlatMaxWidth;
    if (flat == ResizeFlat::Always || (flat == ResizeFlat::Rule && small)) {
      // The whole output plane as one stream (resize_fast.h): q -> source q'.
      if (p.in_h * p.in_w > INT32_MAX || out_plane > INT32_MAX) return p;
      p.kind = ResizeFastKind::NearestFlat;
      p.flat_idx.resize(static_cast<size_t>(out_plane));
      for (int64_t oy = 0; oy < p.out_h; ++oy)
        for (int64_t ox = 0; ox < p.out_w; ++ox)
          p.flat_idx[oy * p.out_w + ox] = static_cast<int32_t>(p.row0[oy] * p.in_w + p.col0[ox]);
      const int64_t chunks = (out_plane + kFlatChunk - 1) / kFlatChunk;
      p.flat_lo.resize(static_cast<size_t>(chunks)), p.flat_hi.resize(static_cast<size_t>(chunks));
      for (int64_t c = 0; c < chunks; ++c) {
        const auto first = p.flat_idx.begin() + c * kFlatChunk;
        const auto last = p.flat_idx.begin() + std::min(out_plane, (c + 1) * kFlatChunk);
        p.flat_lo[c] = *std::min_element(first, last), p.flat_hi[c] = *std::max_element(first, last);
      }
    }
    return p;
  }
  // Bilinear: a lone non-zero weight goes in tap 0 (tap 1 has weight 0 and is never multiplied
  // into a row; lerp_gather_row reads it with weight 0, which matters only for inf / NaN inputs).
  p.cols_identity = p.out_w == p.in_w;
  for (int64_t x = 0; p.cols_identity && x < p.out_w; ++x)
    p.cols_identity = p.col0[x] == x && p.col_w0[x] == 1.f && p.col_w1[x] == 0.f;
  p.cols_monotone = true;
  for (int64_t x = 0; p.cols_monotone && x < p.out_w; ++x)
    p.cols_monotone = p.col1[x] >= p.col0[x] && (x == 0 || (p.col0[x] >= p.col0[x - 1] && p.col1[x] >= p.col1[x - 1]));
  p.kind = ResizeFastKind::Bilinear;
  return p;
}

void run_resize_fast(const ResizeFastPlan& p, const ResizeRowKernels& k, const float* x, float* y, ThreadPool* pool) {
  // Work units: planes x bands of output rows. With few planes (one image at
  // the detector's head) the rows are split so every thread gets work; each
  // band restarts its row cache, costing at most one extra horizontal row.
  if (p.planes == 0 || p.out_h == 0 || p.out_w == 0) return;
  const int64_t in_plane = p.in_h * p.in_w, out_plane = p.out_h * p.out_w;
  if (p.kind == ResizeFastKind::NearestFlat) {  // whole planes (small by the rule)
    const ParallelCost cost{p.planes * out_plane, static_cast<int64_t>(sizeof(float)) * p.planes * (in_plane + out_plane),
                            static_cast<int64_t>(sizeof(float)) * p.planes * out_plane};
    parallel_for(pool, p.planes, 1, cost, [&](int64_t q0, int64_t q1) {
      for (int64_t q = q0; q < q1; ++q)
        k.nearest_flat(x + q * in_plane, in_plane, p.flat_idx.data(), p.flat_lo.data(), p.flat_hi.data(), out_plane,
                       y + q * out_plane);
    });
    return;
  }
  const int64_t bands = std::clamp<int64_t>((32 + p.planes - 1) / std::max<int64_t>(p.planes, 1), 1, p.out_h);
  const int64_t band_rows = (p.out_h + bands - 1) / bands;
  parallel_for(pool, p.planes * bands, 1, [&](int64_t u0, int64_t u1) {
    for (int64_t u = u0; u < u1; ++u) {
      const int64_t plane = u / bands, r0 = (u % bands) * band_rows, r1 = std::min(p.out_h, r0 + band_rows);
      if (r0 >= r1) continue;
      const float* src = x + plane * in_plane;
      float* dst = y + plane * out_plane;
      if (p.kind == ResizeFastKind::Bilinear) bilinear_band(p, k, src, dst, r0, r1);
      else nearest_band(p, k, src, dst, r0, r1);
    }
  });
}

ResizePathCounts& resize_path_counts() {
  static ResizePathCounts c;
  return c;
}

const char* resize_fast_variant(ResizeFastKind kind, cpu::Isa isa) {
  static const char* names[5][3] = {
      {"resize_separable", "resize_separable", "resize_separable"},
      {"resize_nearest_replicate/portable", "resize_nearest_replicate/avx2", "resize_nearest_replicate/avx512"},
      {"resize_nearest_gather/portable", "resize_nearest_gather/avx2", "resize_nearest_gather/avx512"},
      {"resize_bilinear/portable", "resize_bilinear/avx2", "resize_bilinear/avx512"},
      {"resize_nearest_flat/portable", "resize_nearest_flat/avx2", "resize_nearest_flat/avx512"}};
  return names[static_cast<int>(kind)][static_cast<int>(isa)];
}

}  // namespace nn
}  // namespace onnxmini
