// Expand (opsets 8-23) and Tile (opsets 1-23; opset 1 repeats `tiles` times along
// `axis`, both scalar inputs). Dtype-agnostic.
//
// Both are per-axis index maps, run through the axis-offset engine
// (tensor_utils.h):
//  - Expand: output axis d reads input index i where the input dim equals the
//    output dim, and index 0 where the input dim is 1 (broadcast). Offsets are
//    i * stride or 0; an innermost broadcast becomes a fill of the row.
//  - Tile:   output axis d reads input index i mod dim_d, so an output row is
//    `repeats` block copies of the input row.
#include "core/checked_math.h"
#include "kernels/registry.h"
#include "kernels/tensor/tensor_utils.h"

namespace onnxmini {

namespace {

using namespace tensor_ops;

// Input index along one axis for an output index, per op.
struct ExpandMap {
  static int64_t index(int64_t i, int64_t in_dim) { return in_dim == 1 ? 0 : i; }
};
struct TileMap {
  static int64_t index(int64_t i, int64_t in_dim) { return i % in_dim; }
};

// out = in read through Map, input axes right-aligned with output axes.
template <typename Map>
void map_axes(KernelContext& ctx, const Tensor& x, Tensor& y) {
  if (y.numel() == 0) return;
  const int64_t out_rank = static_cast<int64_t>(y.rank());
  const int64_t lead = out_rank - static_cast<int64_t>(x.rank());  // axes the input lacks
  const std::vector<int64_t> strides = row_major_strides(x.shape());
  dispatch_by_width(ctx, x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* in = elems<T>(x);
    T* out = elems_mut<T>(y);
    if (ctx.reference_mode()) {
      // Reference: each output element computes its input index axis by axis.
      std::vector<int64_t> idx(y.rank());
      for (int64_t i = 0; i < y.numel(); ++i) {
        unravel_index(i, y.shape(), idx.data());
        int64_t src = 0;
        for (int64_t d = lead; d < out_rank; ++d) src += Map::index(idx[d], x.dim(d - lead)) * strides[d - lead];
        out[i] = in[src];
      }
      return;
    }
    AxisOffsets p;
    p.out_shape = y.shape();
    p.offsets.resize(out_rank);
    for (int64_t d = 0; d < out_rank; ++d)
      for (int64_t i = 0; i < y.dim(d); ++i)
        p.offsets[d].push_back(d < lead ? 0 : Map::index(i, x.dim(d - lead)) * strides[d - lead]);
    copy_by_axis_offsets(p, in, out, T(), ctx.threads());
  });
}

std::vector<int64_t> int64_input(const KernelContext& ctx, size_t i, const char* what) {
  const Tensor& t = ctx.input(i);
  if (t.dtype() != DType::Int64) ctx.fail("{} must be int64, got {}", what, dtype_name(t.dtype()));
  if (t.rank() != 1) ctx.fail("{} must be 1-D, got shape {}", what, shape_to_string(t.shape()));
  return t.to_int64_vector();
}

class ExpandKernel : public Kernel {
 public:
  explicit ExpandKernel(const KernelInfo&) {}
  void prepare(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    const std::vector<int64_t> shape = int64_input(ctx, 1, "shape");
    for (int64_t d : shape)
      if (d < 0) ctx.fail("shape [{}] has a negative dimension", fmt::join(shape, ","));
    // Bidirectional broadcast: dims of 1 in `shape` keep the input's dim.
    const size_t rank = std::max(x.rank(), shape.size());
    Shape out(rank);
    for (size_t k = 0; k < rank; ++k) {
      const int64_t a = k + x.rank() >= rank ? x.dim(k + x.rank() - rank) : 1;
      const int64_t b = k + shape.size() >= rank ? shape[k + shape.size() - rank] : 1;
      if (a != b && a != 1 && b != 1)
        ctx.fail("cannot expand input of shape {} to shape [{}]: dimension {} is {} vs {}", shape_to_string(x.shape()),
                 fmt::join(shape, ","), k, a, b);
      out[k] = a == 1 ? b : a;
    }
    ctx.allocate_output(0, x.dtype(), out);
  }
  void compute(KernelContext& ctx) override { map_axes<ExpandMap>(ctx, ctx.input(0), ctx.output(0)); }
};

class TileKernel : public Kernel {
 public:
  explicit TileKernel(const KernelInfo& info) : opset_(info.opset) {}
  void prepare(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    const std::vector<int64_t> repeats = opset_ < 6 ? repeats_from_tiles_and_axis(ctx) : int64_input(ctx, 1, "repeats");
    if (repeats.size() != x.rank())
      ctx.fail("repeats [{}] has {} entries, the input has rank {}", fmt::join(repeats, ","), repeats.size(), x.rank());
    Shape out(x.rank());
    for (size_t d = 0; d < x.rank(); ++d) {
      if (repeats[d] < 0) ctx.fail("repeats [{}] has a negative entry {}", fmt::join(repeats, ","), repeats[d]);
      out[d] = checked_mul(x.dim(d), repeats[d], [&] { return fmt::format("{}: axis {} size x repeats", ctx.info().label(), d); });
    }
    ctx.allocate_output(0, x.dtype(), out);
  }
  void compute(KernelContext& ctx) override { map_axes<TileMap>(ctx, ctx.input(0), ctx.output(0)); }

 private:
  // Tile 1: scalar inputs `tiles` (copies) and `axis`, i.e. repeats of 1 except at axis.
  static std::vector<int64_t> repeats_from_tiles_and_axis(const KernelContext& ctx) {
    const Tensor& x = ctx.input(0);
    const std::vector<int64_t> tiles = integer_values(ctx, ctx.input(1), "tiles");
    const std::vector<int64_t> axis = integer_values(ctx, ctx.input(2), "axis");
    if (tiles.size() != 1 || axis.size() != 1)
      ctx.fail("tiles ({} values) and axis ({} values) must be scalars", tiles.size(), axis.size());
    std::vector<int64_t> repeats(x.rank(), 1);
    repeats[normalize_axis(ctx, axis[0], static_cast<int64_t>(x.rank()))] = tiles[0];
    return repeats;
  }
  int opset_;
};

}  // namespace

ONNXMINI_REGISTER_KERNEL("expand_tile", "", "Expand", 8, INT_MAX, make_kernel<ExpandKernel>);
ONNXMINI_REGISTER_KERNEL("expand_tile", "", "Tile", 1, INT_MAX, make_kernel<TileKernel>);

}  // namespace onnxmini

ONNXMINI_KERNEL_FILE(tensor_expand_tile);
