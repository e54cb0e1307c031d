// GatherND (opsets 11-13): indices [..., k] (int64) select slabs of data.
// With batch_dims = b (opset 12+), the first b axes of data and indices are
// batch axes that must match; within batch i, tuple t of k indices fixes data
// coordinates b .. b+k-1 and the slab is the remaining axes (slab =
// prod(data.shape[b+k:]) contiguous elements).
// Output shape: indices.shape[:-1] + data.shape[b+k:].
//
// Layout: data is (batches, batch block) and the indices are (batches, tuples
// per batch, k); every index is checked and turned into a slab offset first,
// then slabs are copied, split across threads. Any dtype (data movement by width).
#include "kernels/registry.h"
#include "kernels/tensor/tensor_utils.h"

namespace onnxmini {

namespace {

using namespace tensor_ops;

class GatherNDKernel : public Kernel {
 public:
  explicit GatherNDKernel(const KernelInfo& info) : batch_dims_(info.attrs.get_int("batch_dims", 0)) {}

  void prepare(KernelContext& ctx) override {
    const Tensor& data = ctx.input(0);
    const Tensor& indices = ctx.input(1);
    if (indices.dtype() != DType::Int64) ctx.fail("indices must be int64, got {}", dtype_name(indices.dtype()));
    const int64_t r = static_cast<int64_t>(data.rank()), q = static_cast<int64_t>(indices.rank());
    const int64_t b = batch_dims_;
    if (r < 1 || q < 1) ctx.fail("data and indices must have rank >= 1, got ranks {} and {}", r, q);
    if (b < 0 || b >= std::min(r, q))
      ctx.fail("batch_dims {} must be in [0, min(data rank {}, indices rank {}))", b, r, q);
    for (int64_t d = 0; d < b; ++d)
      if (data.dim(d) != indices.dim(d))
        ctx.fail("batch dimension {} differs: data shape {}, indices shape {}", d, shape_to_string(data.shape()),
                 shape_to_string(indices.shape()));
    const int64_t k = indices.dim(q - 1);
    if (k < 1 || k > r - b)
      ctx.fail("indices' last dimension {} must be in [1, {}] (data rank {} - batch_dims {})", k, r - b, r, b);
    Shape out(indices.shape().begin(), indices.shape().end() - 1);
    out.insert(out.end(), data.shape().begin() + b + k, data.shape().end());
    ctx.allocate_output(0, data.dtype(), out);
  }

  void compute(KernelContext& ctx) override {
    const Tensor& data = ctx.input(0);
    const Tensor& indices = ctx.input(1);
    Tensor& y = ctx.output(0);
    const int64_t b = batch_dims_, q = static_cast<int64_t>(indices.rank());
    const int64_t k = indices.dim(q - 1);
    const int64_t batches = shape_product(data.shape(), 0, b);
    const int64_t batch_block = shape_product(data.shape(), b, data.rank());
    const int64_t slab = shape_product(data.shape(), b + k, data.rank());
    const int64_t tuples = batches == 0 ? 0 : indices.numel() / k / batches;  // per batch
    const std::vector<int64_t> strides = row_major_strides(data.shape());
    const int64_t* ind = indices.data<int64_t>();
    Tensor offsets_t = ctx.scratch(DType::Int64, {batches * tuples});  // from the run's pool: no allocation once warm
    int64_t* offsets = offsets_t.mutable_data<int64_t>();
    for (int64_t t = 0; t < batches * tuples; ++t) {
      int64_t off = (t / std::max<int64_t>(tuples, 1)) * batch_block;
      for (int64_t j = 0; j < k; ++j) {
        int64_t v = ind[t * k + j];
        const int64_t dim = data.dim(b + j);
        if (v < -dim || v >= dim)
          ctx.fail("index {} (tuple {}, entry {}) is out of range [{}, {}) for data dimension {}", v, t, j, -dim, dim,
                   b + j);
        if (v < 0) v += dim;
        off += v * strides[b + j];
      }
      offsets[t] = off;
    }
    if (y.numel() == 0) return;
    dispatch_by_width(ctx, data.dtype(), [&](auto tag) {
      using T = decltype(tag);
      const T* in = elems<T>(data);
      T* out = elems_mut<T>(y);
      const int64_t n = batches * tuples;
      parallel_for(ctx.threads(), n, std::max<int64_t>(1, 16384 / std::max<int64_t>(slab, 1)),
                   [&](int64_t t0, int64_t t1) {
                     for (int64_t t = t0; t < t1; ++t) std::copy(in + offsets[t], in + offsets[t] + slab, out + t * slab);
                   });
    });
  }

 private:
  int64_t batch_dims_;
};

}  // namespace

ONNXMINI_REGISTER_KERNEL("gather_nd", "", "GatherND", 11, INT_MAX, make_kernel<GatherNDKernel>);

}  // namespace onnxmini

ONNXMINI_KERNEL_FILE(tensor_gather_nd);
