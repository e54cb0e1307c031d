// CenterCropPad (opsets 18-23): each selected axis is cropped or zero-padded
// to the target size, centred. Dtype-agnostic (moved by element width).
//   crop (target < dim): keep [ (dim - target) / 2, + target )
//   pad  (target > dim): the input starts at (target - dim) / 2 (floor: an
//        odd excess puts the extra element at the end, as ONNX's reference).
// One run of the axis-offset copy engine (kernels/tensor/tensor_utils.h):
// per output axis, the input offset of each index, or kFill for padding.
#include "kernels/registry.h"
#include "kernels/tensor/tensor_utils.h"

namespace onnxmini {

namespace {

using namespace tensor_ops;

class CenterCropPadKernel : public Kernel {
 public:
  explicit CenterCropPadKernel(const KernelInfo& info) : axes_(info.attrs.get_ints("axes", {})) {}
  void prepare(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    const Tensor& s = ctx.input(1);
    if ((s.dtype() != DType::Int64 && s.dtype() != DType::Int32) || s.rank() != 1)
      ctx.fail("shape must be a 1-D int64 or int32 tensor, got {} of shape {}", dtype_name(s.dtype()),
               shape_to_string(s.shape()));
    const std::vector<int64_t> target = s.to_int64_vector();
    const int64_t rank = static_cast<int64_t>(x.rank());
    std::vector<int64_t> axes = axes_;
    if (axes.empty())
      for (int64_t d = 0; d < rank; ++d) axes.push_back(d);
    if (target.size() != axes.size())
      ctx.fail("shape [{}] has {} entries for {} axes", fmt::join(target, ","), target.size(), axes.size());
    Shape out = x.shape();
    std::vector<bool> seen(x.rank(), false);
    for (size_t i = 0; i < axes.size(); ++i) {
      const int64_t a = normalize_axis(ctx, axes[i], rank, "axes entry");
      if (seen[a]) ctx.fail("axes [{}] name axis {} twice", fmt::join(axes_, ","), a);
      seen[a] = true;
      if (target[i] < 0) ctx.fail("shape [{}] has a negative entry {}", fmt::join(target, ","), target[i]);
      out[a] = target[i];
    }
    ctx.allocate_output(0, x.dtype(), out);
  }
  void compute(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    Tensor& y = ctx.output(0);
    if (y.numel() == 0) return;
    const std::vector<int64_t> strides = row_major_strides(x.shape());
    AxisOffsets plan;
    plan.out_shape = y.shape();
    plan.offsets.resize(y.rank());
    for (size_t d = 0; d < y.rank(); ++d) {
      const int64_t in = x.dim(d), out = y.dim(d);
      // Input index of output index i: i + shift, padding where outside [0, in).
      const int64_t shift = out <= in ? (in - out) / 2 : -((out - in) / 2);
      for (int64_t i = 0; i < out; ++i) {
        const int64_t src = i + shift;
        plan.offsets[d].push_back(src >= 0 && src < in ? src * strides[d] : kFill);
      }
    }
    dispatch_by_width(ctx, x.dtype(), [&](auto tag) {
      using T = decltype(tag);
      copy_by_axis_offsets(plan, elems<T>(x), elems_mut<T>(y), T(), ctx.threads());
    });
  }

 private:
  std::vector<int64_t> axes_;
};

}  // namespace

ONNXMINI_REGISTER_KERNEL("center_crop_pad", "", "CenterCropPad", 18, INT_MAX, make_kernel<CenterCropPadKernel>);

}  // namespace onnxmini

ONNXMINI_KERNEL_FILE(vision_center_crop_pad);
