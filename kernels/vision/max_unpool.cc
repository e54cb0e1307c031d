// MaxUnpool (opsets 9-23): scatters X into a zero-filled output at the flat
// positions MaxPool's Indices output gave (indices over the whole tensor,
// batch and channel included, as MaxPool computes them).
// The indices address the default unpooled shape [N, C, (in - 1) * stride +
// kernel - pad_begin - pad_end, ...]. An output_shape input only enlarges the
// canvas (to undo a MaxPool whose input was not a whole number of strides): an
// element keeps its coordinates, so its index is unravelled in the default
// shape and ravelled again in output_shape (as the ONNX node test expects).
// Dtype-agnostic (moved by element width). The scatter is serial: indices may
// repeat (last write wins, as in onnxruntime) and the op is memory bound.
#include <cstring>

#include "core/checked_math.h"
#include "kernels/registry.h"
#include "kernels/tensor/tensor_utils.h"

namespace onnxmini {

namespace {

using namespace tensor_ops;

class MaxUnpoolKernel : public Kernel {
 public:
  explicit MaxUnpoolKernel(const KernelInfo& info)
      : kernel_(info.attrs.get_ints("kernel_shape", {})),
        strides_(info.attrs.get_ints("strides", {})),
        pads_(info.attrs.get_ints("pads", {})) {
    if (kernel_.empty()) info.fail("kernel_shape attribute is required");
    const size_t k = kernel_.size();
    if (strides_.empty()) strides_.assign(k, 1);
    if (pads_.empty()) pads_.assign(2 * k, 0);
    if (strides_.size() != k || pads_.size() != 2 * k)
      info.fail("kernel_shape has {} entries but strides has {} and pads {} (want {} and {})", k, strides_.size(),
                pads_.size(), k, 2 * k);
    for (size_t d = 0; d < k; ++d)
      if (kernel_[d] < 1 || strides_[d] < 1 || pads_[d] < 0 || pads_[d + k] < 0)
        info.fail("bad pooling attributes on axis {}: kernel {}, stride {}, pads {} and {}", d, kernel_[d],
                  strides_[d], pads_[d], pads_[d + k]);
  }
  void prepare(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    const Tensor& idx = ctx.input(1);
    const size_t k = kernel_.size();
    if (x.rank() != k + 2)
      ctx.fail("input X has shape {}, want rank {} ([N, C] + {} spatial axes of kernel_shape)",
               shape_to_string(x.shape()), k + 2, k);
    if (idx.dtype() != DType::Int64) ctx.fail("indices I must be int64, got {}", dtype_name(idx.dtype()));
    if (idx.shape() != x.shape())
      ctx.fail("indices I have shape {}, X has shape {}", shape_to_string(idx.shape()), shape_to_string(x.shape()));
    Shape out = default_shape(ctx, x);
    for (size_t d = 2; d < out.size(); ++d)
      if (out[d] < 0)
        ctx.fail("the unpooled shape {} has a negative dimension (pads larger than the pooled extent)",
                 shape_to_string(out));
    if (ctx.has_input(2)) {
      const Tensor& s = ctx.input(2);
      if (s.dtype() != DType::Int64 || s.rank() != 1)
        ctx.fail("output_shape must be a 1-D int64 tensor, got {} of shape {}", dtype_name(s.dtype()),
                 shape_to_string(s.shape()));
      out = s.to_int64_vector();
      if (out.size() != x.rank())
        ctx.fail("output_shape has {} entries, X has rank {}", out.size(), x.rank());
      for (int64_t d : out)
        if (d < 0) ctx.fail("output_shape [{}] has a negative dimension", fmt::join(out, ","));
    }
    ctx.allocate_output(0, x.dtype(), out);
  }
  // (in - 1) * stride + kernel - pads per spatial axis; strides and kernel come from the
  // model, so the product and sum are checked (pads are non-negative: the difference cannot wrap).
  Shape default_shape(const KernelContext& ctx, const Tensor& x) const {
    Shape out = {x.dim(0), x.dim(1)};
    auto where = [&ctx] { return ctx.info().label() + ": unpooled size (input - 1) x stride + kernel"; };
    for (size_t d = 0; d < kernel_.size(); ++d)
      out.push_back(checked_add(checked_mul(x.dim(d + 2) - 1, strides_[d], where), kernel_[d], where) - pads_[d] -
                    pads_[d + kernel_.size()]);
    return out;
  }
  // Flat position in the output of flat index `index` of the default shape (-1 when outside).
  static int64_t reposition(int64_t index, const Shape& from, const Shape& to) {
    int64_t pos = 0;
    for (size_t d = 0, r = from.size(); d < r; ++d) {
      int64_t inner = 1;
      for (size_t e = d + 1; e < r; ++e) inner *= from[e];
      const int64_t coord = index / inner % from[d];
      if (coord >= to[d]) return -1;
      pos = pos * to[d] + coord;
    }
    return pos;
  }
  void compute(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    Tensor& y = ctx.output(0);
    if (x.dtype() == DType::String) ctx.unsupported("string tensors are not supported");
    const int64_t* where = ctx.input(1).data<int64_t>();
    const Shape from = default_shape(ctx, x);
    const bool same = from == y.shape();
    const int64_t total = shape_numel(from);
    if (y.nbytes() > 0) std::memset(y.raw_mut(), 0, y.nbytes());
    dispatch_by_width(ctx, x.dtype(), [&](auto tag) {
      using T = decltype(tag);
      if constexpr (!std::is_same_v<T, std::string>) {
        const T* in = elems<T>(x);
        T* out = elems_mut<T>(y);
        for (int64_t i = 0; i < x.numel(); ++i) {
          if (where[i] < 0 || where[i] >= total)
            ctx.fail("index {} at position {} is outside the unpooled shape {} ({} elements)", where[i], i,
                     shape_to_string(from), total);
          const int64_t pos = same ? where[i] : reposition(where[i], from, y.shape());
          if (pos < 0)
            ctx.fail("index {} at position {} lies outside output_shape {}", where[i], i, shape_to_string(y.shape()));
          out[pos] = in[i];
        }
      }
    });
  }

 private:
  std::vector<int64_t> kernel_, strides_, pads_;
};

}  // namespace

ONNXMINI_REGISTER_KERNEL("max_unpool", "", "MaxUnpool", 9, INT_MAX, make_kernel<MaxUnpoolKernel>);

}  // namespace onnxmini

ONNXMINI_KERNEL_FILE(vision_max_unpool);
