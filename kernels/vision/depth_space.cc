// DepthToSpace (opset 1 on, DCR and CRD modes from 11) and SpaceToDepth
// (opset 1 on, DCR and CRD modes from 28). Dtype-agnostic: both only move elements.
//
// Each is a reshape to 6-D, a transpose and a reshape back, so the kernels
// build the 6-D views of the input and of the (already allocated) output and
// hand them to the shared transpose routine: no copy of our own, and the
// transpose's tiled / threaded paths apply.
//   DepthToSpace DCR: [N, b, b, C/b², H, W] -> perm (0,3,4,1,5,2)
//   DepthToSpace CRD: [N, C/b², b, b, H, W] -> perm (0,1,4,2,5,3)
//   SpaceToDepth DCR: [N, C, H/b, b, W/b, b] -> perm (0,3,5,1,2,4)
//   SpaceToDepth CRD: [N, C, H/b, b, W/b, b] -> perm (0,1,3,5,2,4)
#include "core/checked_math.h"
#include "kernels/registry.h"
#include "kernels/tensor/transpose.h"

namespace onnxmini {

namespace {

// The blocksize attribute, checked at session creation.
int64_t blocksize_attr(const KernelInfo& info) {
  const int64_t b = info.attrs.get_int("blocksize", 0);
  if (b < 1) info.fail("blocksize must be a positive integer, got {}", b);
  return b;
}

// The mode attribute: true for CRD. Both ops default to DCR (the only order before
// DepthToSpace-11 and SpaceToDepth-28).
bool crd_mode_attr(const KernelInfo& info) {
  const std::string mode = info.attrs.get_string("mode", "DCR");
  if (mode != "DCR" && mode != "CRD") info.fail("mode must be DCR or CRD, got '{}'", mode);
  return mode == "CRD";
}

void require_rank4(const KernelContext& ctx, const Tensor& x) {
  if (x.rank() != 4) ctx.fail("input must be 4-D [N, C, H, W], got shape {}", shape_to_string(x.shape()));
}

// out (allocated by the caller) = transpose(x viewed as `in6`, perm) viewed as the output.
void move_through_6d(const KernelContext& ctx, const Tensor& x, const Shape& in6, const std::vector<int64_t>& perm,
                     Tensor& out) {
  if (out.numel() == 0) return;
  Tensor out6 = out.view(tensor_ops::transposed_shape(in6, perm));
  tensor_ops::transpose(ctx, x.view(in6), perm, out6, ctx.reference_mode());
}

class DepthToSpaceKernel : public Kernel {
 public:
  explicit DepthToSpaceKernel(const KernelInfo& info) : blocksize_(blocksize_attr(info)), crd_(crd_mode_attr(info)) {}
  void prepare(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    require_rank4(ctx, x);
    // blocksize comes from the model: its square and the scaled spatial dims are checked.
    auto where = [&ctx] { return ctx.info().label() + ": blocksize x dims"; };
    const int64_t bb = checked_mul(blocksize_, blocksize_, where);
    if (x.dim(1) % bb != 0)
      ctx.fail("channel count {} is not divisible by blocksize² = {} (blocksize {})", x.dim(1), bb, blocksize_);
    ctx.allocate_output(0, x.dtype(),
                        {x.dim(0), x.dim(1) / bb, checked_mul(x.dim(2), blocksize_, where),
                         checked_mul(x.dim(3), blocksize_, where)});
  }
  void compute(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    const int64_t b = blocksize_, n = x.dim(0), c = x.dim(1) / (b * b), h = x.dim(2), w = x.dim(3);
    if (crd_)
      move_through_6d(ctx, x, {n, c, b, b, h, w}, {0, 1, 4, 2, 5, 3}, ctx.output(0));
    else
      move_through_6d(ctx, x, {n, b, b, c, h, w}, {0, 3, 4, 1, 5, 2}, ctx.output(0));
  }

 private:
  int64_t blocksize_;
  bool crd_;
};

class SpaceToDepthKernel : public Kernel {
 public:
  explicit SpaceToDepthKernel(const KernelInfo& info) : blocksize_(blocksize_attr(info)), crd_(crd_mode_attr(info)) {}
  void prepare(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    require_rank4(ctx, x);
    const int64_t b = blocksize_;
    if (x.dim(2) % b != 0 || x.dim(3) % b != 0)
      ctx.fail("spatial dims {}x{} are not divisible by blocksize {}", x.dim(2), x.dim(3), b);
    auto where = [&ctx] { return ctx.info().label() + ": channels x blocksize²"; };
    ctx.allocate_output(0, x.dtype(),
                        {x.dim(0), checked_mul(checked_mul(x.dim(1), b, where), b, where), x.dim(2) / b, x.dim(3) / b});
  }
  void compute(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    const int64_t b = blocksize_;
    const Shape in6 = {x.dim(0), x.dim(1), x.dim(2) / b, b, x.dim(3) / b, b};
    if (crd_)
      move_through_6d(ctx, x, in6, {0, 1, 3, 5, 2, 4}, ctx.output(0));
    else
      move_through_6d(ctx, x, in6, {0, 3, 5, 1, 2, 4}, ctx.output(0));
  }

 private:
  int64_t blocksize_;
  bool crd_;
};

}  // namespace

ONNXMINI_REGISTER_KERNEL("depth_space", "", "DepthToSpace", 1, INT_MAX, make_kernel<DepthToSpaceKernel>);
ONNXMINI_REGISTER_KERNEL("depth_space", "", "SpaceToDepth", 1, INT_MAX, make_kernel<SpaceToDepthKernel>);

}  // namespace onnxmini

ONNXMINI_KERNEL_FILE(vision_depth_space);
