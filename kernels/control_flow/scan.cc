// Scan: runs `body` once per position of the scan inputs, threading N state
// variables through the iterations. Body inputs: (states..., one slice of each
// scan input); body outputs: (states..., one element of each scan output).
// Node outputs: the final states, then the scan outputs stacked along an axis.
//
// Opset 9+: no batch axis; each scan input is sliced along its scan_input_axes
// entry (negative allowed), forward or reverse (scan_input_directions); each
// scan output is stacked along its scan_output_axes entry, filled from the end
// when its scan_output_directions entry is 1.
// Opset 8: inputs (sequence_lens, states [batch, ...], scan inputs [batch, seq,
// ...]); the body runs per batch entry for sequence_lens[b] positions (all when
// absent); outputs are [batch, seq, ...] with the positions past a batch
// entry's length zeroed, as onnxruntime does.
//
// A slice along axis 0 is a view; along another axis a strided block copy
// (slices.h). The per-iteration shape of a scan output must not change.
#include <climits>

#include "kernels/control_flow/slices.h"
#include "kernels/registry.h"

namespace onnxmini {
namespace {

using control_flow::place_along;
using control_flow::slice_along;
using control_flow::with_axis;

// What both versions share: the body, the counts, the per-iteration checks.
class ScanBase : public Kernel {
 protected:
  ScanBase(const KernelInfo& info, size_t leading_inputs) : body_(info.subgraph("body")) {
    const int64_t m = info.attrs.get_int("num_scan_inputs");
    if (m < 1 || static_cast<size_t>(m) + leading_inputs > info.num_inputs)
      info.fail("num_scan_inputs {} does not fit the node's {} inputs", m, info.num_inputs);
    scan_inputs_ = static_cast<size_t>(m);
    states_ = info.num_inputs - leading_inputs - scan_inputs_;
    if (body_.num_inputs() != states_ + scan_inputs_)
      info.fail("body takes {} inputs, expected {} ({} states, {} scan inputs)", body_.num_inputs(),
                states_ + scan_inputs_, states_, scan_inputs_);
    if (body_.num_outputs() != info.num_outputs || info.num_outputs < states_)
      info.fail("body has {} outputs, the node has {} ({} states)", body_.num_outputs(), info.num_outputs, states_);
    scan_outputs_ = info.num_outputs - states_;
  }

  // Per-attribute list of `count` entries (default all zeros); directions are 0 or 1.
  static std::vector<int64_t> per_scan(const KernelInfo& info, const char* attr, size_t count, bool direction) {
    std::vector<int64_t> v = info.attrs.get_ints(attr, std::vector<int64_t>(count, 0));
    if (v.size() != count) info.fail("{} has {} entries, expected {}", attr, v.size(), count);
    if (direction)
      for (int64_t d : v)
        if (d != 0 && d != 1) info.fail("{} entries must be 0 (forward) or 1 (reverse), got {}", attr, d);
    return v;
  }

  const Tensor& tensor_output(const KernelContext& ctx, const std::vector<Value>& out, size_t i) const {
    if (!out[i].is_tensor())
      ctx.fail("body output '{}' is {}, expected a tensor", body_.output_name(i), out[i].type_string());
    return out[i].tensor();
  }

  void check_same_shape(const KernelContext& ctx, size_t body_output, const Shape& first, const Tensor& piece,
                        const char* what) const {
    if (piece.shape() != first)
      ctx.fail("{} '{}' has shape {} now but {} at the first iteration; it must not change", what,
               body_.output_name(body_output), shape_to_string(piece.shape()), shape_to_string(first));
  }

  // The declared shape of a body output (unknown dims 0), for outputs when no iteration ran.
  Shape declared_shape(const KernelContext& ctx, size_t body_output, DType* dtype) const {
    const ValueInfo& declared = body_.output_info(body_output);
    if (declared.dtype == DType::Undefined)
      ctx.fail("no iteration ran and body output '{}' declares no element type", declared.name);
    *dtype = declared.dtype;
    Shape shape;
    for (const Dim& d : declared.shape) shape.push_back(d.value >= 0 ? d.value : 0);
    return shape;
  }

  const Subgraph& body_;
  size_t states_ = 0;
  size_t scan_inputs_ = 0;
  size_t scan_outputs_ = 0;
};

class Scan9Kernel : public ScanBase {
 public:
  explicit Scan9Kernel(const KernelInfo& info) : ScanBase(info, 0) {
    input_axes_ = per_scan(info, "scan_input_axes", scan_inputs_, false);
    input_reverse_ = per_scan(info, "scan_input_directions", scan_inputs_, true);
    output_axes_ = per_scan(info, "scan_output_axes", scan_outputs_, false);
    output_reverse_ = per_scan(info, "scan_output_directions", scan_outputs_, true);
  }

  void prepare(KernelContext& ctx) override {
    for (size_t j = 0; j < scan_inputs_; ++j) {
      const Tensor& t = ctx.input(states_ + j);
      const int64_t axis = normalized(ctx, input_axes_[j], static_cast<int64_t>(t.rank()), "scan_input_axes", j);
      if (j > 0 && t.dim(axis) != ctx.input(states_).dim(normalized_input_axis(ctx, 0)))
        ctx.fail("scan input {} has {} positions along axis {}, scan input 0 has {}", j, t.dim(axis), axis,
                 ctx.input(states_).dim(normalized_input_axis(ctx, 0)));
    }
  }

  void compute(KernelContext& ctx) override {
    const int64_t length = ctx.input(states_).dim(normalized_input_axis(ctx, 0));
    std::vector<int64_t> in_axes(scan_inputs_);
    for (size_t j = 0; j < scan_inputs_; ++j) in_axes[j] = normalized_input_axis(ctx, j);
    std::vector<Value> states(states_);
    for (size_t i = 0; i < states_; ++i) states[i] = ctx.input_value(i);
    std::vector<Tensor> outs(scan_outputs_);
    std::vector<int64_t> out_axes(scan_outputs_);
    std::vector<Shape> first_shapes(scan_outputs_);
    std::vector<Value> body_in(states_ + scan_inputs_), body_out;

    for (int64_t it = 0; it < length; ++it) {
      for (size_t i = 0; i < states_; ++i) body_in[i] = std::move(states[i]);
      for (size_t j = 0; j < scan_inputs_; ++j)
        body_in[states_ + j] =
            slice_along(ctx, ctx.input(states_ + j), in_axes[j], input_reverse_[j] ? length - 1 - it : it);
      body_.run(ctx, body_in, body_out);
      for (Value& v : body_in) v = Value();
      for (size_t i = 0; i < states_; ++i) states[i] = std::move(body_out[i]);
      for (size_t k = 0; k < scan_outputs_; ++k) {
        const Tensor& piece = tensor_output(ctx, body_out, states_ + k);
        if (it == 0) {
          out_axes[k] = normalized(ctx, output_axes_[k], static_cast<int64_t>(piece.rank()) + 1, "scan_output_axes", k);
          first_shapes[k] = piece.shape();
          if (ctx.output_wanted(states_ + k))
            outs[k] = ctx.allocate_output(states_ + k, piece.dtype(), with_axis(piece.shape(), out_axes[k], length));
        } else {
          check_same_shape(ctx, states_ + k, first_shapes[k], piece, "scan output");
        }
        if (outs[k].defined())
          place_along(outs[k], out_axes[k], output_reverse_[k] ? length - 1 - it : it, piece);
      }
    }

    for (size_t i = 0; i < states_; ++i) ctx.set_output(i, std::move(states[i]));
    if (length == 0)
      for (size_t k = 0; k < scan_outputs_; ++k) {
        if (!ctx.output_wanted(states_ + k)) continue;
        DType dt;
        const Shape piece = declared_shape(ctx, states_ + k, &dt);
        const int64_t axis =
            normalized(ctx, output_axes_[k], static_cast<int64_t>(piece.size()) + 1, "scan_output_axes", k);
        ctx.allocate_output(states_ + k, dt, with_axis(piece, axis, 0));
      }
  }

 private:
  static int64_t normalized(const KernelContext& ctx, int64_t axis, int64_t rank, const char* attr, size_t index) {
    const int64_t a = axis < 0 ? axis + rank : axis;
    if (a < 0 || a >= rank) ctx.fail("{}[{}] = {} is out of range for rank {}", attr, index, axis, rank);
    return a;
  }
  int64_t normalized_input_axis(const KernelContext& ctx, size_t j) const {
    return normalized(ctx, input_axes_[j], static_cast<int64_t>(ctx.input(states_ + j).rank()), "scan_input_axes", j);
  }

  std::vector<int64_t> input_axes_, input_reverse_, output_axes_, output_reverse_;
};

class Scan8Kernel : public ScanBase {
 public:
  explicit Scan8Kernel(const KernelInfo& info) : ScanBase(info, 1) {
    reverse_ = per_scan(info, "directions", scan_inputs_, true);
  }

  void prepare(KernelContext& ctx) override {
    const Tensor& first = ctx.input(1 + states_);
    if (first.rank() < 2)
      ctx.fail("scan input 0 must be [batch, sequence, ...], got {}", shape_to_string(first.shape()));
    const int64_t batch = first.dim(0), length = first.dim(1);
    for (size_t j = 1; j < scan_inputs_; ++j) {
      const Tensor& t = ctx.input(1 + states_ + j);
      if (t.rank() < 2 || t.dim(0) != batch || t.dim(1) != length)
        ctx.fail("scan input {} has shape {}, expected [{}, {}, ...] as scan input 0", j, shape_to_string(t.shape()),
                 batch, length);
    }
    for (size_t i = 0; i < states_; ++i) {
      const Tensor& s = ctx.input(1 + i);
      if (s.rank() < 1 || s.dim(0) != batch)
        ctx.fail("state {} has shape {}, expected a batch axis of {}", i, shape_to_string(s.shape()), batch);
    }
    if (ctx.has_input(0)) {
      const Tensor& lens = ctx.input(0);
      if (lens.dtype() != DType::Int64 || lens.shape() != Shape{batch})
        ctx.fail("sequence_lens must be int64 [{}], got {} {}", batch, dtype_name(lens.dtype()),
                 shape_to_string(lens.shape()));
      for (int64_t b = 0; b < batch; ++b) {
        const int64_t n = lens.data<int64_t>()[b];
        if (n < 0 || n > length) ctx.fail("sequence_lens[{}] = {} is outside [0, {}]", b, n, length);
      }
    }
  }

  void compute(KernelContext& ctx) override {
    const Tensor& first = ctx.input(1 + states_);
    const int64_t batch = first.dim(0), length = first.dim(1);
    const bool has_lens = ctx.has_input(0);
    // Scan inputs and outputs seen as [batch * sequence, ...]: position (b, t) is row b * length + t.
    std::vector<Tensor> flat_in(scan_inputs_);
    for (size_t j = 0; j < scan_inputs_; ++j) {
      const Tensor& t = ctx.input(1 + states_ + j);
      Shape s(t.shape().begin() + 1, t.shape().end());
      s[0] = batch * length;
      flat_in[j] = t.view(s);
    }
    std::vector<Tensor> final_states(states_), outs(scan_outputs_);
    std::vector<Shape> state_shapes(states_), out_shapes(scan_outputs_);
    std::vector<Value> states(states_), body_in(states_ + scan_inputs_), body_out;

    for (int64_t b = 0; b < batch; ++b) {
      const int64_t n = has_lens ? ctx.input(0).data<int64_t>()[b] : length;
      for (size_t i = 0; i < states_; ++i) states[i] = slice_along(ctx, ctx.input(1 + i), 0, b);
      for (int64_t it = 0; it < n; ++it) {
        for (size_t i = 0; i < states_; ++i) body_in[i] = std::move(states[i]);
        for (size_t j = 0; j < scan_inputs_; ++j)
          body_in[states_ + j] = slice_along(ctx, flat_in[j], 0, b * length + (reverse_[j] ? n - 1 - it : it));
        body_.run(ctx, body_in, body_out);
        for (Value& v : body_in) v = Value();
        for (size_t i = 0; i < states_; ++i) states[i] = std::move(body_out[i]);
        for (size_t k = 0; k < scan_outputs_; ++k) {
          const Tensor& piece = tensor_output(ctx, body_out, states_ + k);
          if (!outs[k].defined()) {
            out_shapes[k] = piece.shape();
            outs[k] = allocate_stacked(ctx, states_ + k, piece.dtype(), with_axis(piece.shape(), 0, length), batch);
            // Positions past a batch entry's length stay zero; without lengths every one is written.
            if (has_lens) control_flow::zero_rows(outs[k], 0, batch * length);
          } else {
            check_same_shape(ctx, states_ + k, out_shapes[k], piece, "scan output");
          }
          place_along(outs[k], 0, b * length + it, piece);
        }
      }
      // The state after n iterations (the initial one when n is 0) goes to row b of its output.
      for (size_t i = 0; i < states_; ++i) {
        if (!states[i].is_tensor())
          ctx.fail("state '{}' is {}, expected a tensor", body_.output_name(i), states[i].type_string());
        const Tensor& s = states[i].tensor();
        if (!final_states[i].defined()) {
          state_shapes[i] = s.shape();
          final_states[i] = output_or_scratch(ctx, i, s.dtype(), with_axis(s.shape(), 0, batch));
        } else {
          check_same_shape(ctx, i, state_shapes[i], s, "state");
        }
        place_along(final_states[i], 0, b, s);
      }
    }
    // Outputs no iteration sized: from the body's declared shapes, all zeros.
    for (size_t k = 0; k < scan_outputs_; ++k) {
      if (outs[k].defined()) continue;
      DType dt;
      const Shape piece = declared_shape(ctx, states_ + k, &dt);
      Tensor t = allocate_stacked(ctx, states_ + k, dt, with_axis(piece, 0, length), batch);
      control_flow::zero_rows(t, 0, batch * length);
    }
    for (size_t i = 0; i < states_; ++i)
      if (!final_states[i].defined()) ctx.allocate_output(i, ctx.input(1 + i).dtype(), ctx.input(1 + i).shape());
  }

 private:
  // Output `i` of shape [batch, per_batch...] (per_batch = [sequence, ...]), returned as
  // [batch * sequence, ...]
  // so that batch entry b, position t is row b * per_batch[0] + t.
  static Tensor output_or_scratch(KernelContext& ctx, size_t i, DType dt, const Shape& shape) {
    return ctx.output_wanted(i) ? ctx.allocate_output(i, dt, shape) : ctx.scratch(dt, shape);
  }
  static Tensor allocate_stacked(KernelContext& ctx, size_t i, DType dt, const Shape& per_batch, int64_t batch) {
    Tensor out = output_or_scratch(ctx, i, dt, with_axis(per_batch, 0, batch));
    Shape flat = per_batch;
    flat[0] *= batch;
    return out.view(flat);
  }

  std::vector<int64_t> reverse_;
};

}  // namespace

ONNXMINI_REGISTER_KERNEL("scan", "", "Scan", 8, 8, make_kernel<Scan8Kernel>);
ONNXMINI_REGISTER_KERNEL("scan", "", "Scan", 9, INT_MAX, make_kernel<Scan9Kernel>);

}  // namespace onnxmini

ONNXMINI_KERNEL_FILE(control_flow_scan);
