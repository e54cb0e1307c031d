// Identity, Reshape, Flatten, Squeeze, Unsqueeze: the output is a view of the
// input's buffer with a new shape (no copy). All work happens in prepare();
// compute() has nothing to do.
#include <algorithm>

#include "core/checked_math.h"
#include "kernels/registry.h"
#include "kernels/tensor/tensor_utils.h"

namespace onnxmini {

namespace {

using tensor_ops::normalize_axis;  // fails naming the node

class ViewKernel : public Kernel {
 public:
  void compute(KernelContext&) override {}
};

class IdentityKernel : public ViewKernel {
 public:
  explicit IdentityKernel(const KernelInfo&) {}
  void prepare(KernelContext& ctx) override { ctx.set_output(0, ctx.input_value(0)); }
};

class ReshapeKernel : public ViewKernel {
 public:
  explicit ReshapeKernel(const KernelInfo& info) : allowzero_(info.attrs.get_int("allowzero", 0) != 0) {
    if (info.opset < 5) shape_attr_ = info.attrs.get_ints("shape");
  }
  void prepare(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    std::vector<int64_t> spec = ctx.num_inputs() > 1 ? ctx.input(1).to_int64_vector() : shape_attr_;
    Shape out(spec.size());
    int64_t known = 1, infer = -1;
    for (size_t i = 0; i < spec.size(); ++i) {
      int64_t d = spec[i];
      if (d == 0 && !allowzero_) {
        if (i >= x.rank()) ctx.fail("shape {} copies dimension {} (0) but the input has rank {}", fmt::join(spec, ","), i, x.rank());
        d = x.dim(i);
      }
      if (d == -1) {
        if (infer >= 0) ctx.fail("shape {} has more than one -1", fmt::join(spec, ","));
        infer = static_cast<int64_t>(i);
        continue;
      }
      if (d < 0) ctx.fail("shape {} has invalid dimension {}", fmt::join(spec, ","), d);
      out[i] = d;
      known = checked_mul(known, d, [&] { return fmt::format("{}: shape [{}]", ctx.info().label(), fmt::join(spec, ",")); });
    }
    if (infer >= 0) {
      if (known == 0 || x.numel() % known != 0)
        ctx.fail("cannot reshape {} into {}", shape_to_string(x.shape()), fmt::join(spec, ","));
      out[infer] = x.numel() / known;
    }
    if (shape_numel(out) != x.numel())
      ctx.fail("cannot reshape {} ({} elements) into {} ({} elements)", shape_to_string(x.shape()), x.numel(),
               fmt::join(spec, ","), shape_numel(out));
    ctx.set_output(0, x.view(out));
  }

 private:
  bool allowzero_;
  std::vector<int64_t> shape_attr_;
};

class FlattenKernel : public ViewKernel {
 public:
  explicit FlattenKernel(const KernelInfo& info) : axis_(info.attrs.get_int("axis", 1)) {}
  void prepare(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    const int64_t rank = static_cast<int64_t>(x.rank());
    const auto axis = normalize_split_axis(axis_, rank);
    if (!axis) ctx.fail("axis {} is out of range [{}, {}]", axis_, -rank, rank);
    const int64_t outer = shape_product(x.shape(), 0, static_cast<size_t>(*axis));
    ctx.set_output(0, x.view({outer, outer == 0 ? 0 : x.numel() / std::max<int64_t>(outer, 1)}));
  }

 private:
  int64_t axis_;
};

class SqueezeKernel : public ViewKernel {
 public:
  explicit SqueezeKernel(const KernelInfo& info) {
    if (info.opset < 13) axes_attr_ = info.attrs.get_ints("axes", {});
  }
  void prepare(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    int64_t rank = static_cast<int64_t>(x.rank());
    std::vector<int64_t> axes = ctx.num_inputs() > 1 && ctx.has_input(1) ? ctx.input(1).to_int64_vector() : axes_attr_;
    std::vector<bool> drop(rank, false);
    if (axes.empty()) {
      for (int64_t i = 0; i < rank; ++i) drop[i] = x.dim(i) == 1;
    }
    for (int64_t a : axes) {
      int64_t ax = normalize_axis(ctx, a, rank, "axis");
      if (x.dim(ax) != 1) ctx.fail("cannot squeeze axis {} of size {}", a, x.dim(ax));
      drop[ax] = true;
    }
    Shape out;
    for (int64_t i = 0; i < rank; ++i)
      if (!drop[i]) out.push_back(x.dim(i));
    ctx.set_output(0, x.view(out));
  }

 private:
  std::vector<int64_t> axes_attr_;
};

class UnsqueezeKernel : public ViewKernel {
 public:
  explicit UnsqueezeKernel(const KernelInfo& info) {
    if (info.opset < 13) axes_attr_ = info.attrs.get_ints("axes");
  }
  void prepare(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    std::vector<int64_t> axes = ctx.num_inputs() > 1 ? ctx.input(1).to_int64_vector() : axes_attr_;
    int64_t out_rank = static_cast<int64_t>(x.rank() + axes.size());
    std::vector<bool> inserted(out_rank, false);
    for (int64_t a : axes) {
      int64_t ax = normalize_axis(ctx, a, out_rank, "axis");
      if (inserted[ax]) ctx.fail("axis {} is repeated", a);
      inserted[ax] = true;
    }
    Shape out;
    size_t k = 0;
    for (int64_t i = 0; i < out_rank; ++i) out.push_back(inserted[i] ? 1 : x.dim(k++));
    ctx.set_output(0, x.view(out));
  }

 private:
  std::vector<int64_t> axes_attr_;
};

}  // namespace

ONNXMINI_REGISTER_KERNEL("views", "", "Identity", 1, INT_MAX, make_kernel<IdentityKernel>);
ONNXMINI_REGISTER_KERNEL("views", "", "Reshape", 1, INT_MAX, make_kernel<ReshapeKernel>);
ONNXMINI_REGISTER_KERNEL("views", "", "Flatten", 1, INT_MAX, make_kernel<FlattenKernel>);
ONNXMINI_REGISTER_KERNEL("views", "", "Squeeze", 1, INT_MAX, make_kernel<SqueezeKernel>);
ONNXMINI_REGISTER_KERNEL("views", "", "Unsqueeze", 1, INT_MAX, make_kernel<UnsqueezeKernel>);

}  // namespace onnxmini

ONNXMINI_KERNEL_FILE(tensor_views);
