// Transpose (opsets 1-23; the versions differ only in their type lists).
// perm defaults to the reversed axes; any permutation is accepted.
//
// Fast path, data layout:
//  1. Axes of size 1 are dropped and axes that stay adjacent and in order
//     (perm[d+1] == perm[d] + 1) are merged, so e.g. NCHW -> NHWC becomes a
//     batch of N (C x HW) -> (HW x C) matrix transposes.
//  2. A problem of the form (batch, R, C) -> (batch, C, R) - the last two
//     merged axes swapped - is a batch of 2-D transposes done in square tiles
//     (kTile x kTile elements), so both the rows read and the rows written of a
//     tile stay in L1 instead of striding across the whole matrix. 4-byte
//     elements (float32, int32, uint32) use the AVX-512 / AVX2 tile routines
//     of transpose_simd.h (register block transposes, full-row vector loads
//     and stores) when cpu::active_isa() has them; other widths and the
//     portable level use the scalar tiles.
//  3. Anything else goes through the axis-offset engine (tensor_utils.h):
//     output rows written contiguously, each read with the stride of the
//     input axis that became the innermost output axis.
#include "kernels/tensor/transpose.h"

#include <type_traits>

#include "kernels/registry.h"
#include "kernels/tensor/tensor_utils.h"
#include "kernels/tensor/transpose_simd.h"

namespace onnxmini {
namespace tensor_ops {

namespace {

constexpr int64_t kTile = 32;

// Batch of (rows x cols) row-major matrices -> (cols x rows), tile by tile.
template <typename T>
void transpose_2d_tiled(const T* in, T* out, int64_t batch, int64_t rows, int64_t cols, ThreadPool* pool) {
  const int64_t row_tiles = (rows + kTile - 1) / kTile;
  const int64_t col_tiles = (cols + kTile - 1) / kTile;
  const int64_t tiles = batch * row_tiles * col_tiles;
  parallel_for(pool, tiles, 4, [&](int64_t t0, int64_t t1) {
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t b = t / (row_tiles * col_tiles);
      const int64_t rt = (t / col_tiles) % row_tiles;
      const int64_t ct = t % col_tiles;
      const T* src = in + b * rows * cols;
      T* dst = out + b * rows * cols;
      const int64_t r_end = std::min(rows, (rt + 1) * kTile), c_end = std::min(cols, (ct + 1) * kTile);
      for (int64_t c = ct * kTile; c < c_end; ++c)
        for (int64_t r = rt * kTile; r < r_end; ++r) dst[c * rows + r] = src[r * cols + c];
    }
  });
}

// 4-byte elements with a SIMD tile routine (transpose_simd.h), the same
// (batch, rows, cols) problem. Layout and blocking: tiles of 32 x 32 (4 KB
// read + 4 KB written, far inside L1), transposed by register blocks inside
// the routine. Tiles are numbered with the column tile fastest, so a thread's
// chunk walks along a strip of 32 source rows: 32 sequential read streams,
// which the L2 hardware streamer still follows. A matrix of at most 64 rows
// (NCHW -> NHWC with C <= 64: 64 x 12544 for 64 x 112 x 112) is instead one
// strip of all its rows x 64 columns, so the destination (rows elements per
// output row) is written in one contiguous sweep; its 64 read streams are more
// than the streamer tracks, so the routine prefetches each row a line ahead.
// The long dimension (the column tiles) is what gets split between threads;
// the grain gives each thread several chunks (dynamic balance).
void transpose_2d_simd(Transpose32TileFn tile_fn, const uint32_t* in, uint32_t* out, int64_t batch, int64_t rows,
                       int64_t cols, ThreadPool* pool) {
  const bool one_strip = rows <= 64;
  const int64_t row_tile = one_strip ? rows : 32, col_tile = one_strip ? 64 : 32;
  const int64_t row_tiles = (rows + row_tile - 1) / row_tile;
  const int64_t col_tiles = (cols + col_tile - 1) / col_tile;
  const int64_t tiles = batch * row_tiles * col_tiles;
  const int64_t threads = pool ? pool->num_threads() : 1;
  const int64_t grain = std::clamp<int64_t>(tiles / (8 * threads), 1, 16);
  parallel_for(pool, tiles, grain, [&](int64_t t0, int64_t t1) {
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t b = t / (row_tiles * col_tiles);
      const int64_t r0 = (t / col_tiles) % row_tiles * row_tile, c0 = t % col_tiles * col_tile;
      const uint32_t* src = in + b * rows * cols + r0 * cols + c0;
      uint32_t* dst = out + b * rows * cols + c0 * rows + r0;
      tile_fn(src, cols, dst, rows, std::min(row_tile, rows - r0), std::min(col_tile, cols - c0), one_strip && rows > 32);
    }
  });
}

// Plain reference: each output element reads input index sum(out_idx[d] * in_stride[perm[d]]).
template <typename T>
void transpose_reference(const T* in, const Shape& in_shape, const std::vector<int64_t>& perm, T* out,
                         const Shape& out_shape) {
  const std::vector<int64_t> in_strides = row_major_strides(in_shape);
  std::vector<int64_t> idx(out_shape.size());
  const int64_t n = shape_numel(out_shape);
  for (int64_t i = 0; i < n; ++i) {
    unravel_index(i, out_shape, idx.data());
    int64_t src = 0;
    for (size_t d = 0; d < perm.size(); ++d) src += idx[d] * in_strides[perm[d]];
    out[i] = in[src];
  }
}

// The fast path's plan: which of the three paths (after merging axes) runs.
struct MergedTranspose {
  enum Kind { kCopy, kLastTwo, kGeneral } kind = kCopy;
  Shape merged_in;
  std::vector<int64_t> merged_perm;
};

MergedTranspose merge_axes(const Shape& in_shape, const std::vector<int64_t>& perm) {
  MergedTranspose r;
  // 1. Drop size-1 axes (they do not move data), then merge in-order runs.
  std::vector<int64_t> kept;  // input axes of size > 1, in output order
  for (int64_t p : perm)
    if (in_shape[p] != 1) kept.push_back(p);
  // Merged groups: consecutive output axes whose input axes are consecutive.
  std::vector<std::vector<int64_t>> groups;
  for (int64_t p : kept) {
    if (!groups.empty() && groups.back().back() + 1 == p) groups.back().push_back(p);
    else groups.push_back({p});
  }
  if (groups.size() <= 1) return r;  // identity after merging: a plain copy
  // Input-order list of groups gives the merged input shape.
  std::vector<size_t> by_input(groups.size());
  for (size_t g = 0; g < groups.size(); ++g) by_input[g] = g;
  std::sort(by_input.begin(), by_input.end(), [&](size_t a, size_t b) { return groups[a][0] < groups[b][0]; });
  const size_t m = groups.size();
  Shape& merged_in = r.merged_in;
  std::vector<int64_t>& merged_perm = r.merged_perm;
  merged_in.resize(m);
  merged_perm.resize(m);
  std::vector<int64_t> rank_of_group(m);
  for (size_t k = 0; k < m; ++k) rank_of_group[by_input[k]] = static_cast<int64_t>(k);
  for (size_t k = 0; k < m; ++k) {
    int64_t size = 1;
    for (int64_t a : groups[by_input[k]]) size *= in_shape[a];
    merged_in[k] = size;
  }
  for (size_t g = 0; g < m; ++g) merged_perm[g] = rank_of_group[g];

  // 2. (batch..., R, C) -> (batch..., C, R)?
  bool last_two = merged_perm[m - 1] == static_cast<int64_t>(m) - 2 && merged_perm[m - 2] == static_cast<int64_t>(m) - 1;
  for (size_t d = 0; d + 2 < m && last_two; ++d) last_two = merged_perm[d] == static_cast<int64_t>(d);
  r.kind = last_two ? MergedTranspose::kLastTwo : MergedTranspose::kGeneral;
  return r;
}

template <typename T>
TransposePath transpose_fast(const T* in, const Shape& in_shape, const std::vector<int64_t>& perm, T* out,
                             ThreadPool* pool) {
  const MergedTranspose plan_axes = merge_axes(in_shape, perm);
  const int64_t numel = shape_numel(in_shape);
  if (plan_axes.kind == MergedTranspose::kCopy) {
    std::copy(in, in + numel, out);
    return {"transpose_copy", "portable"};
  }
  const Shape& merged_in = plan_axes.merged_in;
  const std::vector<int64_t>& merged_perm = plan_axes.merged_perm;
  const size_t m = merged_in.size();
  if (plan_axes.kind == MergedTranspose::kLastTwo) {
    const int64_t rows = merged_in[m - 2], cols = merged_in[m - 1];
    const int64_t batch = numel / (rows * cols);
    if constexpr (std::is_same_v<T, uint32_t>) {
      const cpu::Isa isa = cpu::active_isa();
      if (Transpose32TileFn fn = transpose32_tile_for(isa)) {
        transpose_2d_simd(fn, in, out, batch, rows, cols, pool);
        return {isa == cpu::Isa::Avx512 ? "transpose_simd_16x16" : "transpose_simd_8x8", cpu::isa_name(isa)};
      }
    }
    transpose_2d_tiled(in, out, batch, rows, cols, pool);
    return {"transpose_tiled_32x32", "portable"};
  }
  // 3. General strided path.
  const std::vector<int64_t> strides = row_major_strides(merged_in);
  AxisOffsets plan;
  plan.out_shape.resize(m);
  plan.offsets.resize(m);
  for (size_t d = 0; d < m; ++d) {
    plan.out_shape[d] = merged_in[merged_perm[d]];
    plan.offsets[d].resize(plan.out_shape[d]);
    for (int64_t i = 0; i < plan.out_shape[d]; ++i) plan.offsets[d][i] = i * strides[merged_perm[d]];
  }
  copy_by_axis_offsets(plan, in, out, T(), pool);
  return {"transpose_axis_offsets", "portable"};
}

}  // namespace

TransposePath transpose_path(size_t elem_bytes, const Shape& in_shape, const std::vector<int64_t>& perm,
                             bool reference) {
  if (reference) return {};
  switch (merge_axes(in_shape, perm).kind) {
    case MergedTranspose::kCopy: return {"transpose_copy", "portable"};
    case MergedTranspose::kGeneral: return {"transpose_axis_offsets", "portable"};
    case MergedTranspose::kLastTwo: break;
  }
  const cpu::Isa isa = cpu::active_isa();
  if (elem_bytes == 4 && transpose32_tile_for(isa))
    return {isa == cpu::Isa::Avx512 ? "transpose_simd_16x16" : "transpose_simd_8x8", cpu::isa_name(isa)};
  return {"transpose_tiled_32x32", "portable"};
}

Shape transposed_shape(const Shape& in, const std::vector<int64_t>& perm) {
  Shape out(perm.size());
  for (size_t d = 0; d < perm.size(); ++d) out[d] = in[perm[d]];
  return out;
}

TransposePath transpose(const KernelContext& ctx, const Tensor& in, const std::vector<int64_t>& perm, Tensor& out,
                        bool reference) {
  TransposePath path;
  if (in.numel() == 0) return path;
  dispatch_by_width(ctx, in.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if (reference) transpose_reference(elems<T>(in), in.shape(), perm, elems_mut<T>(out), out.shape());
    else path = transpose_fast(elems<T>(in), in.shape(), perm, elems_mut<T>(out), ctx.threads());
  });
  return path;
}

}  // namespace tensor_ops

namespace {

class TransposeKernel : public Kernel {
 public:
  explicit TransposeKernel(const KernelInfo& info) : perm_(info.attrs.get_ints("perm", {})) {}
  void prepare(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    const int64_t rank = static_cast<int64_t>(x.rank());
    std::vector<int64_t> perm = perm_;
    if (perm.empty()) {  // default: reverse the axes
      for (int64_t d = rank - 1; d >= 0; --d) perm.push_back(d);
    }
    if (static_cast<int64_t>(perm.size()) != rank)
      ctx.fail("perm [{}] has {} entries, the input has rank {}", fmt::join(perm, ","), perm.size(), rank);
    std::vector<bool> seen(rank, false);
    for (int64_t& p : perm) {
      if (p < 0 || p >= rank || seen[p])
        ctx.fail("invalid perm [{}] for rank {}: each axis in [0, {}) must appear once", fmt::join(perm, ","), rank,
                 rank);
      seen[p] = true;
    }
    ctx.allocate_output(0, x.dtype(), tensor_ops::transposed_shape(x.shape(), perm));
  }
  KernelPlan describe(const KernelInfo& info, const std::vector<const Shape*>& in) const override {
    const DType dt = info.input_dtypes.empty() ? DType::Undefined : info.input_dtypes[0];
    if (in.empty() || !in[0] || dt == DType::Undefined || dt == DType::String) return KernelPlan::at_run_time();
    std::vector<int64_t> perm = perm_;
    if (perm.empty())
      for (int64_t d = static_cast<int64_t>(in[0]->size()) - 1; d >= 0; --d) perm.push_back(d);
    if (perm.size() != in[0]->size()) return KernelPlan::at_run_time();
    const tensor_ops::TransposePath p = tensor_ops::transpose_path(dtype_size(dt), *in[0], perm, false);
    const std::string v = p.variant;
    const char* strip = " in 32x32 tiles (matrices of <= 64 rows: one strip of rows x 64)";
    std::string blocking;
    if (v == "transpose_simd_16x16") blocking = std::string("16x16 zmm register blocks") + strip;
    else if (v == "transpose_simd_8x8") blocking = std::string("8x8 ymm register blocks") + strip;
    else if (v == "transpose_tiled_32x32") blocking = "32x32 scalar tiles";
    return KernelPlan{p.variant, p.isa, blocking};
  }

  void compute(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    std::vector<int64_t> perm = perm_;
    const int64_t rank = static_cast<int64_t>(x.rank());
    if (perm.empty())
      for (int64_t d = rank - 1; d >= 0; --d) perm.push_back(d);
    const tensor_ops::TransposePath path = tensor_ops::transpose(ctx, x, perm, ctx.output(0), ctx.reference_mode());
    ctx.stats().variant = path.variant;
    ctx.stats().isa = path.isa;
  }

 private:
  std::vector<int64_t> perm_;
};

}  // namespace

ONNXMINI_REGISTER_KERNEL("transpose", "", "Transpose", 1, INT_MAX, make_kernel<TransposeKernel>);

}  // namespace onnxmini

ONNXMINI_KERNEL_FILE(tensor_transpose);
