// Concat (opsets 1-23; axis defaults to 1 before opset 4) and Split (opsets 1-23; opset 1 also
// takes the sizes as an optional input, typed like the data). Dtype-agnostic.
//
// Data layout: with outer = product of the dims before `axis` and
// inner = product of the dims after it, every tensor is (outer, dim_axis, inner)
// and input k's slab for one outer index is one contiguous block of
// dim_axis_k * inner elements. Concat writes, for each outer index, the blocks of
// all inputs one after the other; Split does the reverse. The fast path copies
// whole blocks (memmove for plain types), in parallel over (outer, tensor)
// pairs; the reference path maps every element on its own.
#include <numeric>

#include "core/checked_math.h"
#include "kernels/registry.h"
#include "kernels/tensor/tensor_utils.h"

namespace onnxmini {

namespace {

using namespace tensor_ops;

// Copies (outer x block) slabs between one big tensor and `parts`; `gather`
// true: parts -> big (Concat), false: big -> parts (Split). part_blocks[k] is
// part k's block length, big_block their sum.
template <typename T>
void move_blocks(T* big, const std::vector<T*>& parts, const std::vector<int64_t>& part_blocks, int64_t outer,
                 bool gather, ThreadPool* pool) {
  const int64_t n = static_cast<int64_t>(parts.size());
  std::vector<int64_t> start(n + 1, 0);
  for (int64_t k = 0; k < n; ++k) start[k + 1] = start[k] + part_blocks[k];
  const int64_t big_block = start[n];
  const int64_t avg = std::max<int64_t>(1, big_block / std::max<int64_t>(1, n));
  parallel_for(pool, outer * n, std::max<int64_t>(1, 32768 / avg), [&](int64_t w0, int64_t w1) {
    for (int64_t w = w0; w < w1; ++w) {
      const int64_t o = w / n, k = w % n, len = part_blocks[k];
      T* b = big + o * big_block + start[k];
      T* p = parts[k] + o * len;
      if (gather) std::copy(p, p + len, b);
      else std::copy(b, b + len, p);
    }
  });
}

// Reference: element by element, finding the part that owns each axis index.
template <typename T>
void move_blocks_reference(T* big, const Shape& big_shape, int64_t axis, const std::vector<T*>& parts,
                           const std::vector<int64_t>& part_dims, bool gather) {
  std::vector<int64_t> idx(big_shape.size());
  for (int64_t i = 0; i < shape_numel(big_shape); ++i) {
    unravel_index(i, big_shape, idx.data());
    int64_t k = 0, a = idx[axis];
    while (a >= part_dims[k]) a -= part_dims[k++];  // axis index -> (part k, index a in it)
    Shape part_shape = big_shape;
    part_shape[axis] = part_dims[k];
    idx[axis] = a;
    const int64_t j = ravel_index(idx.data(), part_shape);
    if (gather) big[i] = parts[k][j];
    else parts[k][j] = big[i];
  }
}

template <typename T>
void move(KernelContext& ctx, T* big, const Shape& big_shape, int64_t axis, const std::vector<T*>& parts,
          const std::vector<int64_t>& part_dims, bool gather) {
  if (ctx.reference_mode()) return move_blocks_reference(big, big_shape, axis, parts, part_dims, gather);
  const int64_t inner = shape_product(big_shape, axis + 1, big_shape.size());
  std::vector<int64_t> blocks;
  for (int64_t d : part_dims) blocks.push_back(d * inner);
  move_blocks(big, parts, blocks, shape_product(big_shape, 0, axis), gather, ctx.threads());
}

class ConcatKernel : public Kernel {
 public:
  explicit ConcatKernel(const KernelInfo& info) : axis_(info.attrs.get_int("axis", 1)) {
    if (info.opset >= 4 && !info.attrs.has("axis")) info.fail("attribute 'axis' is required");
  }
  void prepare(KernelContext& ctx) override {
    const Tensor& first = ctx.input(0);
    const int64_t rank = static_cast<int64_t>(first.rank());
    if (rank == 0) ctx.fail("cannot concatenate scalars (input 0 has rank 0)");
    const int64_t axis = normalize_axis(ctx, axis_, rank);
    Shape out = first.shape();
    out[axis] = 0;
    for (size_t k = 0; k < ctx.num_inputs(); ++k) {
      const Tensor& x = ctx.input(k);
      if (x.dtype() != first.dtype())
        ctx.fail("input {} is {}, input 0 is {}", k, dtype_name(x.dtype()), dtype_name(first.dtype()));
      if (static_cast<int64_t>(x.rank()) != rank)
        ctx.fail("input {} has rank {} (shape {}), input 0 has rank {}", k, x.rank(), shape_to_string(x.shape()), rank);
      for (int64_t d = 0; d < rank; ++d)
        if (d != axis && x.dim(d) != first.dim(d))
          ctx.fail("input {} has shape {}, input 0 has {}: dimension {} differs ({} vs {}) and is not the concat axis {}",
                   k, shape_to_string(x.shape()), shape_to_string(first.shape()), d, x.dim(d), first.dim(d), axis);
      // Inputs with a zero-size axis may still have huge dims along the concat axis: checked.
      out[axis] = checked_add(out[axis], x.dim(axis), [&] { return ctx.info().label() + ": concat axis size"; });
    }
    ctx.allocate_output(0, first.dtype(), out);
  }
  void compute(KernelContext& ctx) override {
    Tensor& y = ctx.output(0);
    const int64_t axis = axis_ < 0 ? axis_ + static_cast<int64_t>(y.rank()) : axis_;
    if (y.numel() == 0) return;
    dispatch_by_width(ctx, y.dtype(), [&](auto tag) {
      using T = decltype(tag);
      std::vector<T*> parts;
      std::vector<int64_t> dims;
      for (size_t k = 0; k < ctx.num_inputs(); ++k) {
        parts.push_back(const_cast<T*>(elems<T>(ctx.input(k))));  // only read (gather = true)
        dims.push_back(ctx.input(k).dim(axis));
      }
      move(ctx, elems_mut<T>(y), y.shape(), axis, parts, dims, /*gather=*/true);
    });
  }

 private:
  int64_t axis_;
};

class SplitKernel : public Kernel {
 public:
  explicit SplitKernel(const KernelInfo& info)
      : opset_(info.opset), axis_(info.attrs.get_int("axis", 0)), num_outputs_(info.attrs.get_int("num_outputs", 0)) {
    if (opset_ < 13) split_attr_ = info.attrs.get_ints("split", {});
    if (opset_ >= 18 && info.attrs.has("num_outputs") && num_outputs_ != static_cast<int64_t>(info.num_outputs))
      info.fail("num_outputs is {} but the node has {} outputs", num_outputs_, info.num_outputs);
  }
  void prepare(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    const int64_t axis = normalize_axis(ctx, axis_, static_cast<int64_t>(x.rank()));
    const int64_t dim = x.dim(axis);
    const int64_t n = static_cast<int64_t>(ctx.num_outputs());
    std::vector<int64_t> split = split_attr_;
    if (opset_ >= 13 && ctx.has_input(1)) split = ctx.input(1).to_int64_vector();
    if (opset_ < 2 && ctx.has_input(1)) split = integer_values(ctx, ctx.input(1), "split");  // opset 1: input wins
    if (!split.empty()) {
      if (static_cast<int64_t>(split.size()) != n)
        ctx.fail("split [{}] has {} entries for {} outputs", fmt::join(split, ","), split.size(), n);
      int64_t sum = 0;
      for (int64_t s : split) {
        if (s < 0) ctx.fail("split [{}] has a negative size {}", fmt::join(split, ","), s);
        sum = checked_add(sum, s, [&] { return fmt::format("{}: split [{}]", ctx.info().label(), fmt::join(split, ",")); });
      }
      if (sum != dim)
        ctx.fail("split sizes [{}] sum to {}, but dimension {} of input {} has size {}", fmt::join(split, ","), sum,
                 axis, shape_to_string(x.shape()), dim);
    } else if (opset_ >= 18 && num_outputs_ > 0) {
      // num_outputs: chunks of ceil(dim / n), the last one smaller.
      const int64_t chunk = (dim + n - 1) / n;
      for (int64_t k = 0, left = dim; k < n; ++k, left -= chunk) split.push_back(std::max<int64_t>(0, std::min(chunk, left)));
    } else {
      if (dim % n != 0)
        ctx.fail("dimension {} of input {} has size {}, which does not split evenly into {} outputs", axis,
                 shape_to_string(x.shape()), dim, n);
      split.assign(n, dim / n);
    }
    for (int64_t k = 0; k < n; ++k) {
      Shape s = x.shape();
      s[axis] = split[k];
      ctx.allocate_output(k, x.dtype(), s);
    }
  }
  void compute(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    const int64_t axis = axis_ < 0 ? axis_ + static_cast<int64_t>(x.rank()) : axis_;
    if (x.numel() == 0) return;
    dispatch_by_width(ctx, x.dtype(), [&](auto tag) {
      using T = decltype(tag);
      std::vector<T*> parts;
      std::vector<int64_t> dims;
      for (size_t k = 0; k < ctx.num_outputs(); ++k) {
        parts.push_back(elems_mut<T>(ctx.output(k)));
        dims.push_back(ctx.output(k).dim(axis));
      }
      move(ctx, const_cast<T*>(elems<T>(x)), x.shape(), axis, parts, dims, /*gather=*/false);  // x only read
    });
  }

 private:
  int opset_;
  int64_t axis_, num_outputs_;
  std::vector<int64_t> split_attr_;
};

}  // namespace

ONNXMINI_REGISTER_KERNEL("concat_split", "", "Concat", 1, INT_MAX, make_kernel<ConcatKernel>);
ONNXMINI_REGISTER_KERNEL("concat_split", "", "Split", 1, INT_MAX, make_kernel<SplitKernel>);

}  // namespace onnxmini

ONNXMINI_KERNEL_FILE(tensor_concat_split);
