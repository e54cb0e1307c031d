// Parameter layout checks shared by the quantization kernels (quant_common.h).
#include "kernels/quantization/quant_common.h"


namespace onnxmini {
namespace quant {

ParamLayout param_layout(const KernelContext& ctx, const Shape& x, const Shape& scale, int64_t axis,
                         int64_t block_size) {
  ParamLayout p;
  const int64_t rank = static_cast<int64_t>(x.size());
  const bool scalar_scale = scale.empty() || (scale.size() == 1 && scale[0] == 1 && block_size == 0);
  if (scalar_scale) {
    int64_t n = 1;
    for (int64_t d : x) n *= d;
    p.inner = n;
    return p;
  }
  if (rank == 0) ctx.fail("x is a scalar but the scale has shape {}", shape_to_string(scale));
  const int64_t a = axis < 0 ? axis + rank : axis;
  if (a < 0 || a >= rank) ctx.fail("axis {} is out of range for x of rank {}", axis, rank);
  for (int64_t d = 0; d < a; ++d) p.outer *= x[d];
  p.axis_dim = x[a];
  for (int64_t d = a + 1; d < rank; ++d) p.inner *= x[d];
  if (block_size <= 0) {
    if (scale.size() != 1 || scale[0] != p.axis_dim)
      ctx.fail("per-axis scale must be 1-D of length x.shape[{}] = {}, got shape {}", a, p.axis_dim,
               shape_to_string(scale));
    p.kind = ParamLayout::Kind::PerAxis;
    return p;
  }
  p.kind = ParamLayout::Kind::Blocked;
  p.block = block_size;
  p.blocks = (p.axis_dim + block_size - 1) / block_size;
  Shape want = x;
  want[a] = p.blocks;
  if (scale != want)
    ctx.fail("blocked scale (block_size {}, axis {}) must have shape {} for x of shape {}, got {}", block_size, a,
             shape_to_string(want), shape_to_string(x), shape_to_string(scale));
  return p;
}

float scalar_scale(const KernelContext& ctx, size_t i, const char* what) {
  const Tensor& t = ctx.input(i);
  if (!is_scale_type(t.dtype()) || t.numel() != 1)
    ctx.fail("{} must be one float value, got {} of shape {}", what, dtype_name(t.dtype()), shape_to_string(t.shape()));
  return float_at(t, 0);
}

int32_t scalar_zero_point(const KernelContext& ctx, size_t i, DType type, const char* what) {
  if (!ctx.has_input(i)) return 0;
  const Tensor& t = ctx.input(i);
  if (t.dtype() != type || t.numel() != 1)
    ctx.fail("{} must be one {} value, got {} of shape {}", what, dtype_name(type), dtype_name(t.dtype()),
             shape_to_string(t.shape()));
  return int_at(t, 0);
}

void check_zero_point_shape(const KernelContext& ctx, size_t zp_index, const Shape& scale) {
  if (!ctx.has_input(zp_index)) return;
  const Shape& zp = ctx.input(zp_index).shape();
  auto numel = [](const Shape& s) {
    int64_t n = 1;
    for (int64_t d : s) n *= d;
    return n;
  };
  // A scalar and a [1] tensor are the same per-tensor parameter.
  if (zp != scale && !(numel(zp) == 1 && numel(scale) == 1))
    ctx.fail("zero point shape {} differs from scale shape {}", shape_to_string(zp), shape_to_string(scale));
}

}  // namespace quant
}  // namespace onnxmini
