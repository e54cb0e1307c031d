// ScatterElements (opsets 11-18), Scatter (opsets 9-10, the same op under its
// old name) and ScatterND (opsets 11-18): the output is a copy of data with
// the updates written at the indexed positions, replacing or combined by
// `reduction` (scatter_reduction.h). Any dtype for reduction none. Every index
// is checked (and negative ones wrapped) before any element moves.
//
// ScatterElements layout: updates and indices share a shape; update element
// (i0, .., ir) goes to data position (i0, .., indices[i], .., ir), the index
// replacing coordinate `axis`. The walk is row by row over the innermost axis.
//
// ScatterND layout: indices [..., k] address a slab of data: the first k
// coordinates fixed, the remaining axes whole (slab = prod(data.shape[k:])
// contiguous elements); updates hold one slab per index tuple. Tuples are
// applied in order (duplicate indices with reduction none: the last wins).
#include "core/checked_math.h"
#include "kernels/registry.h"
#include "kernels/tensor/scatter_reduction.h"
#include "kernels/tensor/tensor_utils.h"

namespace onnxmini {

namespace {

using namespace tensor_ops;

void check_index_dtype(const KernelContext& ctx, const Tensor& indices) {
  if (indices.dtype() != DType::Int32 && indices.dtype() != DType::Int64)
    ctx.fail("indices must be int32 or int64, got {}", dtype_name(indices.dtype()));
}

class ScatterElementsKernel : public Kernel {
 public:
  explicit ScatterElementsKernel(const KernelInfo& info)
      : axis_(info.attrs.get_int("axis", 0)), reduction_(parse_scatter_reduction(info)) {}

  void prepare(KernelContext& ctx) override {
    const Tensor& data = ctx.input(0);
    const Tensor& indices = ctx.input(1);
    const Tensor& updates = ctx.input(2);
    const int64_t r = static_cast<int64_t>(data.rank());
    if (r == 0) ctx.fail("data must have rank >= 1 (got a scalar)");
    const int64_t axis = normalize_axis(ctx, axis_, r);
    check_index_dtype(ctx, indices);
    if (updates.dtype() != data.dtype())
      ctx.fail("updates dtype {} differs from data dtype {}", dtype_name(updates.dtype()), dtype_name(data.dtype()));
    if (indices.shape() != updates.shape())
      ctx.fail("indices shape {} differs from updates shape {}", shape_to_string(indices.shape()),
               shape_to_string(updates.shape()));
    if (indices.rank() != data.rank())
      ctx.fail("indices have rank {}, data has rank {}", indices.rank(), data.rank());
    for (int64_t d = 0; d < r; ++d)
      if (d != axis && indices.dim(d) > data.dim(d))
        ctx.fail("indices shape {} exceeds data shape {} on dimension {}", shape_to_string(indices.shape()),
                 shape_to_string(data.shape()), d);
    ctx.allocate_output(0, data.dtype(), data.shape());
  }

  void compute(KernelContext& ctx) override {
    const Tensor& data = ctx.input(0);
    const Tensor& updates = ctx.input(2);
    Tensor& y = ctx.output(0);
    const int64_t rank = static_cast<int64_t>(data.rank());
    const int64_t axis = normalize_axis(ctx, axis_, rank);
    const int64_t dim = data.dim(axis);
    std::vector<int64_t> idx = ctx.input(1).to_int64_vector();
    for (size_t i = 0; i < idx.size(); ++i) {
      if (idx[i] < -dim || idx[i] >= dim)
        ctx.fail("index {} at position {} is out of range [{}, {}) on axis {}", idx[i], i, -dim, dim, axis);
      if (idx[i] < 0) idx[i] += dim;
    }
    const std::vector<int64_t> strides = row_major_strides(data.shape());
    const Shape& ushape = updates.shape();
    dispatch_scatter(ctx, data.dtype(), reduction_, [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* src = static_cast<const T*>(data.raw());
      T* out = static_cast<T*>(y.raw_mut());
      std::copy(src, src + data.numel(), out);
      const T* upd = static_cast<const T*>(updates.raw());
      std::vector<int64_t> pos(ushape.size());
      for (int64_t i = 0; i < updates.numel(); ++i) {
        unravel_index(i, ushape, pos.data());
        pos[axis] = idx[i];
        int64_t at = 0;
        for (int64_t d = 0; d < rank; ++d) at += pos[d] * strides[d];
        if constexpr (std::is_arithmetic_v<T> || std::is_same_v<T, ew::Float16> || std::is_same_v<T, ew::BFloat16>)
          out[at] = reduction_ == ScatterReduction::None ? upd[i] : scatter_combine(reduction_, out[at], upd[i]);
        else
          out[at] = upd[i];
      }
    });
  }

 private:
  int64_t axis_;
  ScatterReduction reduction_;
};

class ScatterNDKernel : public Kernel {
 public:
  explicit ScatterNDKernel(const KernelInfo& info) : reduction_(parse_scatter_reduction(info)) {}

  void prepare(KernelContext& ctx) override {
    const Tensor& data = ctx.input(0);
    const Tensor& indices = ctx.input(1);
    const Tensor& updates = ctx.input(2);
    if (indices.dtype() != DType::Int64) ctx.fail("indices must be int64, got {}", dtype_name(indices.dtype()));
    if (updates.dtype() != data.dtype())
      ctx.fail("updates dtype {} differs from data dtype {}", dtype_name(updates.dtype()), dtype_name(data.dtype()));
    if (indices.rank() < 1) ctx.fail("indices must have rank >= 1 (got a scalar)");
    const int64_t k = indices.dim(indices.rank() - 1);
    if (k < 1 || k > static_cast<int64_t>(data.rank()))
      ctx.fail("indices' last dimension {} must be in [1, {}] (the data rank)", k, data.rank());
    Shape want(indices.shape().begin(), indices.shape().end() - 1);
    want.insert(want.end(), data.shape().begin() + k, data.shape().end());
    if (updates.shape() != want)
      ctx.fail("updates shape {} should be {} (indices shape {} with data shape {})", shape_to_string(updates.shape()),
               shape_to_string(want), shape_to_string(indices.shape()), shape_to_string(data.shape()));
    ctx.allocate_output(0, data.dtype(), data.shape());
  }

  void compute(KernelContext& ctx) override {
    const Tensor& data = ctx.input(0);
    const Tensor& indices = ctx.input(1);
    const Tensor& updates = ctx.input(2);
    Tensor& y = ctx.output(0);
    const int64_t k = indices.dim(indices.rank() - 1), tuples = indices.numel() / k;
    const int64_t slab = shape_product(data.shape(), k, data.rank());
    const std::vector<int64_t> strides = row_major_strides(data.shape());
    // Element offset of each index tuple's slab, all checked first.
    Tensor offsets_t = ctx.scratch(DType::Int64, {tuples});  // from the run's pool: no allocation once warm
    int64_t* offsets = offsets_t.mutable_data<int64_t>();
    const int64_t* ind = indices.data<int64_t>();
    for (int64_t t = 0; t < tuples; ++t) {
      int64_t off = 0;
      for (int64_t j = 0; j < k; ++j) {
        int64_t v = ind[t * k + j];
        const int64_t dim = data.dim(j);
        if (v < -dim || v >= dim)
          ctx.fail("index {} (tuple {}, entry {}) is out of range [{}, {}) for data dimension {}", v, t, j, -dim, dim,
                   j);
        if (v < 0) v += dim;
        off += v * strides[j];
      }
      offsets[t] = off;
    }
    dispatch_scatter(ctx, data.dtype(), reduction_, [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* src = static_cast<const T*>(data.raw());
      T* out = static_cast<T*>(y.raw_mut());
      std::copy(src, src + data.numel(), out);
      const T* upd = static_cast<const T*>(updates.raw());
      for (int64_t t = 0; t < tuples; ++t) {
        T* dst = out + offsets[t];
        const T* from = upd + t * slab;
        if constexpr (std::is_arithmetic_v<T> || std::is_same_v<T, ew::Float16> || std::is_same_v<T, ew::BFloat16>) {
          if (reduction_ != ScatterReduction::None) {
            for (int64_t i = 0; i < slab; ++i) dst[i] = scatter_combine(reduction_, dst[i], from[i]);
            continue;
          }
        }
        std::copy(from, from + slab, dst);
      }
    });
  }

 private:
  ScatterReduction reduction_;
};

}  // namespace

ONNXMINI_REGISTER_KERNEL("scatter", "", "Scatter", 9, 10, make_kernel<ScatterElementsKernel>);
ONNXMINI_REGISTER_KERNEL("scatter", "", "ScatterElements", 11, INT_MAX, make_kernel<ScatterElementsKernel>);
ONNXMINI_REGISTER_KERNEL("scatter", "", "ScatterND", 11, INT_MAX, make_kernel<ScatterNDKernel>);

}  // namespace onnxmini

ONNXMINI_KERNEL_FILE(tensor_scatter);
