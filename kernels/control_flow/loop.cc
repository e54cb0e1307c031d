// Loop (every opset): runs `body` while the trip count M and the condition
// allow. Body inputs: (iteration_num, cond_in, carried...); body outputs:
// (cond_out, carried..., scan_outputs...). Node outputs: the final carried
// values, then each scan output stacked along a new first axis.
//
// As in onnxruntime, cond_out ends the loop whether or not the node has a cond
// input, so a loop with neither M nor cond stops when the body says so.
// Carried values pass from one iteration to the next as shared Values (no
// copy) and may change shape; a scan output's per-iteration shape must not.
//
// Bad trip counts: a negative M is refused (onnxruntime runs no iteration; the
// spec gives M no meaning below zero, so a negative one is a model bug worth
// naming). M alone says nothing about memory - exporters write INT64_MAX for
// "until cond says stop" - so scan outputs are checked as they grow: once the
// slices held plus the stacked copy they become exceed the session's
// max_intermediate_bytes (default: the machine's memory, core/system_memory.h),
// the loop fails naming the node, M and the
// sizes, rather than in the allocator or after minutes of swapping.
#include "core/system_memory.h"
#include "kernels/control_flow/slices.h"
#include "kernels/registry.h"

#include <climits>
#include <string>

namespace onnxmini {
namespace {

class LoopKernel : public Kernel {
 public:
  explicit LoopKernel(const KernelInfo& info) : body_(info.subgraph("body")) {
    if (info.num_inputs < 2) info.fail("needs inputs M and cond (empty names when absent), got {}", info.num_inputs);
    carried_ = info.num_inputs - 2;
    if (body_.num_inputs() != carried_ + 2)
      info.fail("body takes {} inputs, expected {} (iteration_num, cond, {} loop-carried)", body_.num_inputs(),
                carried_ + 2, carried_);
    if (body_.num_outputs() != info.num_outputs + 1 || info.num_outputs < carried_)
      info.fail("body has {} outputs, expected {} (cond, {} loop-carried, scan outputs) for the node's {} outputs",
                body_.num_outputs(), info.num_outputs + 1, carried_, info.num_outputs);
    scans_ = info.num_outputs - carried_;
  }

  void prepare(KernelContext& ctx) override {
    if (ctx.has_input(0)) {
      const Tensor& m = ctx.input(0);
      if (m.dtype() != DType::Int64 || m.numel() != 1)
        ctx.fail("trip count M must be one int64, got {} {}", dtype_name(m.dtype()), shape_to_string(m.shape()));
      if (m.data<int64_t>()[0] < 0) ctx.fail("trip count M is {}; it must not be negative", m.data<int64_t>()[0]);
    }
    if (ctx.has_input(1)) check_condition(ctx, ctx.input(1), "cond");
  }

  void compute(KernelContext& ctx) override {
    const int64_t max_trips = ctx.has_input(0) ? ctx.input(0).data<int64_t>()[0] : INT64_MAX;
    bool cond = ctx.has_input(1) ? ctx.input(1).data<bool>()[0] : true;
    std::vector<Value> carried(carried_);
    for (size_t j = 0; j < carried_; ++j) carried[j] = ctx.input_value(2 + j);
    std::vector<std::vector<Tensor>> scans(scans_);
    std::vector<Value> body_in(2 + carried_), body_out;

    int64_t iteration = 0;
    for (; iteration < max_trips && cond; ++iteration) {
      Tensor num = ctx.scratch(DType::Int64, {});
      num.mutable_data<int64_t>()[0] = iteration;
      Tensor cond_in = ctx.scratch(DType::Bool, {});
      cond_in.mutable_data<bool>()[0] = cond;
      body_in[0] = std::move(num);
      body_in[1] = std::move(cond_in);
      for (size_t j = 0; j < carried_; ++j) body_in[2 + j] = std::move(carried[j]);
      body_.run(ctx, body_in, body_out);
      for (Value& v : body_in) v = Value();  // the body's frame is gone: drop the inputs now

      check_condition(ctx, tensor_output(ctx, body_out, 0, iteration), "body output cond");
      cond = body_out[0].tensor().data<bool>()[0];
      for (size_t j = 0; j < carried_; ++j) carried[j] = std::move(body_out[1 + j]);
      for (size_t k = 0; k < scans_; ++k) {
        const Tensor& piece = tensor_output(ctx, body_out, 1 + carried_ + k, iteration);
        if (!scans[k].empty() && piece.shape() != scans[k].front().shape())
          ctx.fail("scan output '{}' has shape {} at iteration {} but {} at iteration 0; it must not change",
                   body_.output_name(1 + carried_ + k), shape_to_string(piece.shape()), iteration,
                   shape_to_string(scans[k].front().shape()));
        scans[k].push_back(piece);
      }
      if (scans_ > 0) check_scan_memory(ctx, scans, iteration, max_trips);
    }

    for (size_t j = 0; j < carried_; ++j) ctx.set_output(j, std::move(carried[j]));
    for (size_t k = 0; k < scans_; ++k) {
      const size_t out = carried_ + k;
      if (!ctx.output_wanted(out)) continue;
      if (scans[k].empty()) {
        empty_scan_output(ctx, out);
        continue;
      }
      const Tensor& first = scans[k].front();
      Tensor& stacked = ctx.allocate_output(out, first.dtype(),
                                            control_flow::with_axis(first.shape(), 0, iteration));
      for (int64_t i = 0; i < iteration; ++i) control_flow::place_along(stacked, 0, i, scans[k][i]);
    }
  }

 private:
  static void check_condition(const KernelContext& ctx, const Tensor& c, const char* what) {
    if (c.dtype() != DType::Bool || c.numel() != 1)
      ctx.fail("{} must be one bool, got {} {}", what, dtype_name(c.dtype()), shape_to_string(c.shape()));
  }

  // The slices held after `iteration` + 1 iterations, plus the stacked outputs
  // they will be copied into, must fit in memory.
  void check_scan_memory(const KernelContext& ctx, const std::vector<std::vector<Tensor>>& scans, int64_t iteration,
                         int64_t max_trips) const {
    const int64_t limit = ctx.info().max_intermediate_bytes;
    int64_t held = 0;
    for (size_t k = 0; k < scans_; ++k) held += static_cast<int64_t>(scans[k].front().nbytes()) * (iteration + 1);
    if (held > limit / 2)
      ctx.fail("after {} iterations (trip count M {}) the scan outputs hold {} bytes; stacking them needs as much "
               "again, more than the {} bytes of max_intermediate_bytes (default: the machine's memory)",
               iteration + 1, max_trips == INT64_MAX ? std::string("not given") : std::to_string(max_trips), held,
               limit);
  }

  const Tensor& tensor_output(const KernelContext& ctx, const std::vector<Value>& out, size_t i,
                              int64_t iteration) const {
    if (!out[i].is_tensor())
      ctx.fail("body output '{}' is {} at iteration {}, expected a tensor", body_.output_name(i),
               out[i].type_string(), iteration);
    return out[i].tensor();
  }

  // No iteration ran: as onnxruntime, shape {0, declared dims...} (unknown dims 0, rank 1 when undeclared).
  void empty_scan_output(KernelContext& ctx, size_t out) const {
    const ValueInfo& declared = body_.output_info(1 + out);
    if (declared.dtype == DType::Undefined)
      ctx.fail("no iteration ran and body output '{}' declares no element type", declared.name);
    Shape shape{0};
    if (declared.has_shape)
      for (const Dim& d : declared.shape) shape.push_back(d.value >= 0 ? d.value : 0);
    ctx.allocate_output(out, declared.dtype, shape);
  }

  const Subgraph& body_;
  size_t carried_ = 0;
  size_t scans_ = 0;
};

}  // namespace

ONNXMINI_REGISTER_KERNEL("loop", "", "Loop", 1, INT_MAX, make_kernel<LoopKernel>);

}  // namespace onnxmini

ONNXMINI_KERNEL_FILE(control_flow_loop);
