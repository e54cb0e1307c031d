// TensorScatter (opset 24): present_cache = past_cache with `update` written along
// `axis` (the sequence axis of a KV cache) at write_indices[batch] onwards.
// Dtype-agnostic (moves elements by width).
//
// Layout: with the shape split as [outer = dims before axis][seq][inner = dims after axis],
// the update of one outer index and one sequence position is a contiguous run of `inner`
// elements, so the kernel copies the past cache once and then one run per
// (outer index, sequence position). Linear mode refuses writes past max_sequence_length;
// circular mode wraps them.
#include <cstring>

#include "core/checked_math.h"
#include "kernels/registry.h"
#include "kernels/tensor/tensor_utils.h"

namespace onnxmini {

namespace {

using namespace tensor_ops;

class TensorScatterKernel : public Kernel {
 public:
  explicit TensorScatterKernel(const KernelInfo& info) : axis_(info.attrs.get_int("axis", -2)) {
    const std::string mode = info.attrs.get_string("mode", "linear");
    if (mode != "linear" && mode != "circular") info.fail("mode must be 'linear' or 'circular', got '{}'", mode);
    circular_ = mode == "circular";
  }

  void prepare(KernelContext& ctx) override {
    const Tensor& past = ctx.input(0);
    const Tensor& update = ctx.input(1);
    const int64_t rank = static_cast<int64_t>(past.rank());
    if (rank < 2) ctx.fail("past_cache must have rank >= 2 (batch, ..., sequence, ...), got shape {}", shape_to_string(past.shape()));
    axis_n_ = normalize_axis(ctx, axis_, rank);
    if (axis_n_ == 0) ctx.fail("axis {} is the batch axis; the sequence axis must come after it", axis_);
    if (update.dtype() != past.dtype())
      ctx.fail("update has dtype {}, past_cache {}", dtype_name(update.dtype()), dtype_name(past.dtype()));
    if (update.rank() != past.rank())
      ctx.fail("update has shape {}, past_cache {}: ranks differ", shape_to_string(update.shape()), shape_to_string(past.shape()));
    for (int64_t d = 0; d < rank; ++d) {
      if (d == axis_n_ ? update.dim(d) > past.dim(d) : update.dim(d) != past.dim(d))
        ctx.fail("update has shape {}, past_cache {}: axis {} {}", shape_to_string(update.shape()),
                 shape_to_string(past.shape()), d,
                 d == axis_n_ ? "(the sequence axis) is longer than max_sequence_length" : "differs");
    }
    if (ctx.has_input(2)) {
      const Tensor& w = ctx.input(2);
      if (w.dtype() != DType::Int64 || w.rank() != 1 || w.dim(0) != past.dim(0))
        ctx.fail("write_indices must be int64 of shape [{}] (one per batch entry), got {} {}", past.dim(0),
                 dtype_name(w.dtype()), shape_to_string(w.shape()));
    }
    ctx.allocate_output(0, past.dtype(), past.shape());
  }

  void compute(KernelContext& ctx) override {
    const Tensor& past = ctx.input(0);
    const Tensor& update = ctx.input(1);
    Tensor& present = ctx.output(0);
    const int64_t batch = past.dim(0);
    const int64_t max_seq = past.dim(axis_n_), seq = update.dim(axis_n_);
    int64_t outer_per_batch = 1, inner = 1;  // checked: the output was allocated with these dims
    for (int64_t d = 1; d < axis_n_; ++d) outer_per_batch *= past.dim(d);
    for (size_t d = axis_n_ + 1; d < past.rank(); ++d) inner *= past.dim(d);
    const int64_t* writes = ctx.has_input(2) ? ctx.input(2).data<int64_t>() : nullptr;
    for (int64_t b = 0; b < batch; ++b) {
      const int64_t start = writes ? writes[b] : 0;
      if (start < 0 || start >= max_seq + (seq == 0 ? 1 : 0))
        ctx.fail("write_indices[{}] = {} is outside [0, {})", b, start, max_seq);
      if (!circular_ && seq > max_seq - start)
        ctx.fail("write_indices[{}] = {} + sequence length {} exceeds max_sequence_length {} (mode linear)", b, start,
                 seq, max_seq);
    }
    dispatch_by_width(ctx, past.dtype(), [&](auto tag) {
      using T = decltype(tag);
      const T* src_past = elems<T>(past);
      const T* src_update = elems<T>(update);
      T* out = elems_mut<T>(present);
      std::copy(src_past, src_past + past.numel(), out);
      for (int64_t b = 0; b < batch; ++b) {
        const int64_t start = writes ? writes[b] : 0;
        for (int64_t o = 0; o < outer_per_batch; ++o) {
          const int64_t outer = b * outer_per_batch + o;
          for (int64_t s = 0; s < seq; ++s) {
            const int64_t pos = circular_ ? (start + s) % max_seq : start + s;
            const T* from = src_update + (outer * seq + s) * inner;
            std::copy(from, from + inner, out + (outer * max_seq + pos) * inner);
          }
        }
      }
    });
  }

 private:
  int64_t axis_;
  int64_t axis_n_ = 0;
  bool circular_ = false;
};

}  // namespace

ONNXMINI_REGISTER_KERNEL("tensor_scatter", "", "TensorScatter", 24, INT_MAX, make_kernel<TensorScatterKernel>);

}  // namespace onnxmini

ONNXMINI_KERNEL_FILE(tensor_tensor_scatter);
