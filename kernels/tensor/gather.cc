// Gather (opsets 1-23) and GatherElements (opsets 11-23). Dtype-agnostic data,
// int32 or int64 indices, negative indices count from the end. Every index is
// checked before any data moves: "Gather 'g1': index 10 out of range [-5, 5)".
//
// Gather data layout: data is (outer, dim, inner) around `axis`; the output is
// (outer, num_indices, inner), and each (outer, index) pair copies one
// contiguous block of `inner` elements. Pairs are split across threads.
//
// GatherElements data layout: the output has the indices' shape; it is written
// row by row (innermost axis), each element reading data at the same position
// except along `axis`, where the index replaces the coordinate.
#include "kernels/registry.h"
#include "kernels/tensor/tensor_utils.h"

namespace onnxmini {

namespace {

using namespace tensor_ops;

// Indices as int64, normalised to [0, dim); fails on the first bad one.
std::vector<int64_t> checked_indices(const KernelContext& ctx, const Tensor& indices, int64_t dim) {
  if (indices.dtype() != DType::Int32 && indices.dtype() != DType::Int64)
    ctx.fail("indices must be int32 or int64, got {}", dtype_name(indices.dtype()));
  std::vector<int64_t> idx = indices.to_int64_vector();
  for (int64_t& i : idx) {
    if (i < -dim || i >= dim) ctx.fail("index {} out of range [{}, {})", i, -dim, dim);
    if (i < 0) i += dim;
  }
  return idx;
}

class GatherKernel : public Kernel {
 public:
  explicit GatherKernel(const KernelInfo& info) : axis_(info.attrs.get_int("axis", 0)) {}
  void prepare(KernelContext& ctx) override {
    const Tensor& data = ctx.input(0);
    const Tensor& indices = ctx.input(1);
    const int64_t r = static_cast<int64_t>(data.rank());
    if (r == 0) ctx.fail("data must have rank >= 1 (got a scalar)");
    const int64_t axis = normalize_axis(ctx, axis_, r);
    Shape out(data.shape().begin(), data.shape().begin() + axis);
    out.insert(out.end(), indices.shape().begin(), indices.shape().end());
    out.insert(out.end(), data.shape().begin() + axis + 1, data.shape().end());
    ctx.allocate_output(0, data.dtype(), out);
  }
  void compute(KernelContext& ctx) override {
    const Tensor& data = ctx.input(0);
    Tensor& y = ctx.output(0);
    const int64_t axis = normalize_axis(ctx, axis_, static_cast<int64_t>(data.rank()));
    const int64_t dim = data.dim(axis);
    const std::vector<int64_t> idx = checked_indices(ctx, ctx.input(1), dim);
    if (y.numel() == 0) return;
    const int64_t outer = shape_product(data.shape(), 0, axis);
    const int64_t inner = shape_product(data.shape(), axis + 1, data.rank());
    const int64_t n = static_cast<int64_t>(idx.size());
    dispatch_by_width(ctx, data.dtype(), [&](auto tag) {
      using T = decltype(tag);
      const T* in = elems<T>(data);
      T* out = elems_mut<T>(y);
      if (ctx.reference_mode()) {
        // Reference: output element (o, j, i) = data[o, idx[j], i].
        for (int64_t o = 0; o < outer; ++o)
          for (int64_t j = 0; j < n; ++j)
            for (int64_t i = 0; i < inner; ++i) out[(o * n + j) * inner + i] = in[(o * dim + idx[j]) * inner + i];
        return;
      }
      parallel_for(ctx.threads(), outer * n, std::max<int64_t>(1, 16384 / inner), [&](int64_t w0, int64_t w1) {
        for (int64_t w = w0; w < w1; ++w) {
          const T* src = in + ((w / n) * dim + idx[w % n]) * inner;
          std::copy(src, src + inner, out + w * inner);
        }
      });
    });
  }

 private:
  int64_t axis_;
};

class GatherElementsKernel : public Kernel {
 public:
  explicit GatherElementsKernel(const KernelInfo& info) : axis_(info.attrs.get_int("axis", 0)) {}
  void prepare(KernelContext& ctx) override {
    const Tensor& data = ctx.input(0);
    const Tensor& indices = ctx.input(1);
    const int64_t r = static_cast<int64_t>(data.rank());
    if (r == 0) ctx.fail("data must have rank >= 1 (got a scalar)");
    const int64_t axis = normalize_axis(ctx, axis_, r);
    if (indices.rank() != data.rank())
      ctx.fail("indices have rank {} (shape {}), data has rank {}", indices.rank(), shape_to_string(indices.shape()), r);
    for (int64_t d = 0; d < r; ++d)
      if (d != axis && indices.dim(d) > data.dim(d))
        ctx.fail("indices shape {} exceeds data shape {} on dimension {}", shape_to_string(indices.shape()),
                 shape_to_string(data.shape()), d);
    ctx.allocate_output(0, data.dtype(), indices.shape());
  }
  void compute(KernelContext& ctx) override {
    const Tensor& data = ctx.input(0);
    Tensor& y = ctx.output(0);
    const int64_t rank = static_cast<int64_t>(data.rank());
    const int64_t axis = normalize_axis(ctx, axis_, rank);
    const std::vector<int64_t> idx = checked_indices(ctx, ctx.input(1), data.dim(axis));
    if (y.numel() == 0) return;
    const std::vector<int64_t> strides = row_major_strides(data.shape());
    const Shape& ishape = y.shape();
    dispatch_by_width(ctx, data.dtype(), [&](auto tag) {
      using T = decltype(tag);
      const T* in = elems<T>(data);
      T* out = elems_mut<T>(y);
      if (ctx.reference_mode()) {
        // Reference: the output position, with coordinate `axis` replaced by the index.
        std::vector<int64_t> pos(ishape.size());
        for (int64_t i = 0; i < y.numel(); ++i) {
          unravel_index(i, ishape, pos.data());
          pos[axis] = idx[i];
          int64_t src = 0;
          for (int64_t d = 0; d < rank; ++d) src += pos[d] * strides[d];
          out[i] = in[src];
        }
        return;
      }
      const int64_t inner = ishape.back(), rows = y.numel() / inner;
      const bool along_row = axis == rank - 1;
      parallel_for(ctx.threads(), rows, std::max<int64_t>(1, 16384 / inner), [&](int64_t r0, int64_t r1) {
        for (int64_t r = r0; r < r1; ++r) {
          int64_t base = 0;  // data offset of the row start, coordinate `axis` taken as 0
          for (int64_t d = rank - 2, rest = r; d >= 0; --d) {
            const int64_t c = rest % ishape[d];
            rest /= ishape[d];
            if (d != axis) base += c * strides[d];
          }
          const int64_t* row_idx = idx.data() + r * inner;
          T* dst = out + r * inner;
          if (along_row) {
            for (int64_t j = 0; j < inner; ++j) dst[j] = in[base + row_idx[j]];
          } else {
            const int64_t s = strides[axis];
            for (int64_t j = 0; j < inner; ++j) dst[j] = in[base + j + row_idx[j] * s];
          }
        }
      });
    });
  }

 private:
  int64_t axis_;
};

}  // namespace

ONNXMINI_REGISTER_KERNEL("gather", "", "Gather", 1, INT_MAX, make_kernel<GatherKernel>);
ONNXMINI_REGISTER_KERNEL("gather", "", "GatherElements", 11, INT_MAX, make_kernel<GatherElementsKernel>);

}  // namespace onnxmini

ONNXMINI_KERNEL_FILE(tensor_gather);
