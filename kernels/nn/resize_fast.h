// Fast float32 paths of Resize over the last two axes (H, W of NCHW), chosen
// per call from the general path's own (index, weight) tables (resize.cc), so a
// fast path runs only where it computes the same thing:
//   - nearest, pixel replication: every output column x reads column x / s for
//     an integer s, every output row one source row -> each source row expanded
//     s times with vector permutes, repeated output rows copied (YOLO / PP-OCR
//     2x upsampling). Exact (a copy).
//   - nearest, other one-hot tables: a per-column index gather. Exact.
//   - nearest on small output planes (either table; resize_nearest_flat): the
//     whole output plane as one stream of vectors, each filled from a window
//     of source floats by permutes (a per-plane source index table). Exact.
//   - bilinear: two taps per axis (linear mode without antialias widening, any
//     coordinate mode, no tf_crop_and_resize extrapolation): horizontally
//     interpolated source rows, blended vertically, in float32 (the general
//     path accumulates in double; the difference is bounded in the tests).
// Row primitives come per ISA through a table (portable, AVX2, AVX-512):
// resize_fast_avx2.cc / resize_fast_avx512.cc may execute those instructions,
// so callers go through resize_row_kernels_for(), which never picks a level
// above the hardware's.
#pragma once
#include <atomic>
#include <cstdint>
#include <vector>

#include "core/cpu_features.h"
#include "core/thread_pool.h"

namespace onnxmini {
namespace nn {

struct ResizeRowKernels {
  cpu::Isa isa;
  // dst[r * dst_stride + x] = src[x / s] for x < w * s and r < copies: one
  // row replicated by an integer s >= 1 into `copies` output rows, each
  // vector stored to all of them while in registers.
  void (*replicate_row)(const float* src, int64_t w, int64_t s, float* dst, int64_t copies, int64_t dst_stride);
  // dst[x] = w0[x] * src[i0[x]] + w1[x] * src[i1[x]] for x < n, src holding
  // src_w floats. `monotone`: i0 and i1 never decrease and i1 >= i0, so a
  // vector of outputs reads the window src[i0[x]] .. src[i1[x + V - 1]] and,
  // when that fits one register (upscaling), takes it with one load and two
  // permutes instead of two gathers.
  void (*lerp_gather_row)(const float* src, int64_t src_w, const int32_t* i0, const int32_t* i1, const float* w0,
                          const float* w1, int64_t n, bool monotone, float* dst);
  // dst[x] = wa * a[x] + wb * b[x] for x < n.
  void (*blend_rows)(const float* a, const float* b, float wa, float wb, int64_t n, float* dst);
  // dst[q] = src[idx[q]] for q < n, src holding src_n floats: one small output
  // plane as a stream. lo[c] / hi[c]: the smallest / largest idx of outputs
  // [8c, 8c + 8) (kFlatChunk), so a vector's sources are a window of hi - lo + 1
  // floats: one or two loads and permutes when that window fits, else a gather.
  void (*nearest_flat)(const float* src, int64_t src_n, const int32_t* idx, const int32_t* lo, const int32_t* hi,
                       int64_t n, float* dst);
};

// Outputs per entry of ResizeFastPlan::flat_lo / flat_hi (the AVX2 vector; AVX-512
// combines two).
constexpr int64_t kFlatChunk = 8;

const ResizeRowKernels& resize_row_kernels_portable();
const ResizeRowKernels& resize_row_kernels_avx2();
const ResizeRowKernels& resize_row_kernels_avx512();
// The table for `isa`, capped at what the hardware has.
const ResizeRowKernels& resize_row_kernels_for(cpu::Isa isa);

// The ISA Resize uses: cpu::active_isa(), or the test override.
cpu::Isa resize_isa();
// Tests: run Resize's fast paths at `isa` (capped by the hardware); pass
// cpu::active_isa() to restore the default.
void set_resize_isa_for_tests(cpu::Isa isa);

// One resized axis as the general path tabulates it: output o reads source
// index[o * taps + t] with weight weight[o * taps + t]; `extrapolates` when
// some output is tf_crop_and_resize's extrapolation_value instead.
struct AxisTapsView {
  int64_t in = 0, out = 0;
  int taps = 1;
  const int64_t* index = nullptr;
  const double* weight = nullptr;
  bool extrapolates = false;
};

enum class ResizeFastKind { None, NearestReplicate, NearestGather, Bilinear, NearestFlat };

// Per-call tables of a fast path (built once per plan, shared by all planes).
// Rows and columns store two taps each; a single-tap entry has weight 1 in
// tap 0 and weight 0 in tap 1 (tap 1 is then not read).
struct ResizeFastPlan {
  ResizeFastKind kind = ResizeFastKind::None;
  int64_t planes = 0, in_h = 0, in_w = 0, out_h = 0, out_w = 0;
  int64_t col_factor = 0;      // NearestReplicate: output column x reads x / col_factor
  bool cols_identity = false;  // Bilinear: out_w == in_w, column x reads x
  bool cols_monotone = false;  // Bilinear: col0, col1 non-decreasing, col1 >= col0 (see lerp_gather_row)
  std::vector<int32_t> row0, row1, col0, col1;
  std::vector<float> row_w0, row_w1, col_w0, col_w1;
  // NearestFlat: per output q of a plane its source q' (row0 * in_w + col0), and
  // per kFlatChunk outputs the smallest / largest q' (ResizeRowKernels::nearest_flat).
  std::vector<int32_t> flat_idx, flat_lo, flat_hi;
};

// NearestFlat takes nearest resizes whose output plane has at most this many
// floats and rows narrower than kFlatMaxWidth (measured: docs/kernels/nn.md, Resize);
// set_resize_flat forces it on or off for tests and benchmarks
// (ONNXMINI_RESIZE_FLAT=0 / 1, read once), Rule restores the rule.
constexpr int64_t kFlatMaxPlane = 16384, kFlatMaxWidth = 32;
enum class ResizeFlat { Rule, Never, Always };
void set_resize_flat(ResizeFlat f);

// The fast plan for an input of `in_shape` whose resized axes are `axes`
// (ascending) with tables `taps`; kind None where no fast path computes the
// same values. `linear`: the mode is linear (two taps may both weigh).
ResizeFastPlan make_resize_fast_plan(const std::vector<int64_t>& in_shape, const std::vector<size_t>& axes,
                                     const std::vector<AxisTapsView>& taps, bool nearest_mode, bool linear_mode);

// y = the resized x (planes x in_h x in_w -> planes x out_h x out_w), threaded
// over planes (and bands of output rows when there are few planes).
void run_resize_fast(const ResizeFastPlan& p, const ResizeRowKernels& k, const float* x, float* y, ThreadPool* pool);

// Calls per path since the start (tests check which way a case went).
struct ResizePathCounts {
  std::atomic<int64_t> general{0}, nearest_replicate{0}, nearest_gather{0}, bilinear{0}, nearest_flat{0};
};
ResizePathCounts& resize_path_counts();

// "resize_nearest_replicate/avx512" etc. (static strings, for KernelStats::variant).
const char* resize_fast_variant(ResizeFastKind kind, cpu::Isa isa);

}  // namespace nn
}  // namespace onnxmini
