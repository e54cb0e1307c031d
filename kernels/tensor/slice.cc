// Slice (opsets 1-23): starts/ends/axes attributes before opset 10, inputs
// (starts, ends, axes, steps) from 10; negative steps and out-of-range
// starts/ends clamp as numpy does. Dtype-agnostic.
//
// Data layout (fast path): output axis d reads input index start_d + i*step_d,
// so the axis-offset engine gets offsets (start_d + i*step_d) * stride_d; an
// innermost step of 1 becomes one block copy per row, other steps a strided
// (or reversed) copy. Innermost axes kept whole merge into the axis before
// them, so trailing size-1 axes do not turn the copy into one-element rows.
#include "kernels/registry.h"
#include "kernels/tensor/tensor_utils.h"

namespace onnxmini {

namespace {

using namespace tensor_ops;

struct AxisSlice {
  int64_t start = 0, step = 1, count = 0;
};

// One axis of the copy: input offsets (start + i * step) * stride, i < count,
// over an input extent of `extent` (the axis length, or the product of merged axes).
struct Run {
  int64_t start, step, count, stride, extent;
};

// The slices as copy axes, with every innermost axis the slice keeps whole
// merged into the axis before it (when that one has step 1; trailing size-1
// axes are dropped whatever the step before them): a [1,512,508,1] slice of
// [1,512,508,1] is one block copy, not 260096 rows of one element.
std::vector<Run> merged_runs(const std::vector<AxisSlice>& slices, const Shape& shape,
                             const std::vector<int64_t>& strides) {
  std::vector<Run> runs;
  for (size_t d = 0; d < slices.size(); ++d)
    runs.push_back({slices[d].start, slices[d].step, slices[d].count, strides[d], shape[d]});
  while (runs.size() > 1) {
    const Run last = runs.back();
    Run& prev = runs[runs.size() - 2];
    const bool whole = last.start == 0 && last.step == 1 && last.count == last.extent;
    if (!whole) break;
    if (last.extent == 1) {  // a size-1 axis adds nothing to any offset
      runs.pop_back();
      continue;
    }
    if (prev.step != 1) break;
    // prev.stride == last.extent * last.stride (row-major): offsets stay the same.
    prev = {prev.start * last.count, 1, prev.count * last.count, last.stride, prev.extent * last.extent};
    runs.pop_back();
  }
  return runs;
}

class SliceKernel : public Kernel {
 public:
  explicit SliceKernel(const KernelInfo& info) : opset_(info.opset) {
    if (opset_ < 10) {
      starts_ = info.attrs.get_ints("starts");
      ends_ = info.attrs.get_ints("ends");
      axes_ = info.attrs.get_ints("axes", {});
    }
  }

  void prepare(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    std::vector<AxisSlice> slices = plan(ctx, x.shape());
    Shape out(x.rank());
    for (size_t d = 0; d < x.rank(); ++d) out[d] = slices[d].count;
    ctx.allocate_output(0, x.dtype(), out);
  }

  void compute(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    Tensor& y = ctx.output(0);
    if (y.numel() == 0) return;
    const std::vector<AxisSlice> slices = plan(ctx, x.shape());
    const std::vector<int64_t> strides = row_major_strides(x.shape());
    dispatch_by_width(ctx, x.dtype(), [&](auto tag) {
      using T = decltype(tag);
      const T* in = elems<T>(x);
      T* out = elems_mut<T>(y);
      if (ctx.reference_mode()) {
        // Reference: output index i_d reads input index start_d + i_d * step_d.
        std::vector<int64_t> idx(y.rank());
        for (int64_t i = 0; i < y.numel(); ++i) {
          unravel_index(i, y.shape(), idx.data());
          int64_t src = 0;
          for (size_t d = 0; d < idx.size(); ++d) src += (slices[d].start + idx[d] * slices[d].step) * strides[d];
          out[i] = in[src];
        }
        return;
      }
      const std::vector<Run> runs = merged_runs(slices, x.shape(), strides);
      if (runs.size() == 1 && runs[0].step == 1 && runs[0].stride == 1) {  // one contiguous block (often all of x)
        std::copy(in + runs[0].start, in + runs[0].start + runs[0].count, out);
        return;
      }
      AxisOffsets p;
      p.offsets.resize(runs.size());
      p.out_shape.resize(runs.size());
      for (size_t d = 0; d < runs.size(); ++d) {  // each table sized once (no growth per element)
        p.out_shape[d] = runs[d].count;
        std::vector<int64_t>& off = p.offsets[d];
        off.resize(static_cast<size_t>(runs[d].count));
        for (int64_t i = 0; i < runs[d].count; ++i) off[i] = (runs[d].start + i * runs[d].step) * runs[d].stride;
      }
      copy_by_axis_offsets(p, in, out, T(), ctx.threads());
    });
  }

 private:
  // Per input axis: first index, step and output length after clamping.
  std::vector<AxisSlice> plan(const KernelContext& ctx, const Shape& shape) const {
    const int64_t rank = static_cast<int64_t>(shape.size());
    std::vector<int64_t> starts = starts_, ends = ends_, axes = axes_, steps;
    if (opset_ >= 10) {
      starts = ctx.input(1).to_int64_vector();
      ends = ctx.input(2).to_int64_vector();
      if (ctx.has_input(3)) axes = ctx.input(3).to_int64_vector();
      if (ctx.has_input(4)) steps = ctx.input(4).to_int64_vector();
    }
    if (starts.size() != ends.size())
      ctx.fail("starts has {} entries, ends has {}", starts.size(), ends.size());
    if (axes.empty())
      for (size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<int64_t>(i));
    if (steps.empty()) steps.assign(starts.size(), 1);
    if (axes.size() != starts.size() || steps.size() != starts.size())
      ctx.fail("starts, ends, axes and steps must have the same length ({}, {}, {}, {})", starts.size(), ends.size(),
               axes.size(), steps.size());
    std::vector<AxisSlice> out(rank);
    for (int64_t d = 0; d < rank; ++d) out[d].count = shape[d];
    std::vector<bool> seen(rank, false);
    for (size_t i = 0; i < starts.size(); ++i) {
      const int64_t a = normalize_axis(ctx, axes[i], rank);
      if (seen[a]) ctx.fail("axis {} appears more than once in axes [{}]", axes[i], fmt::join(axes, ","));
      seen[a] = true;
      const int64_t dim = shape[a], step = steps[i];
      if (step == 0) ctx.fail("step for axis {} is 0", axes[i]);
      if (dim == 0) {
        out[a] = {0, step, 0};
        continue;
      }
      int64_t start = starts[i], end = ends[i];
      if (start < 0) start += dim;
      if (end < 0) end += dim;
      if (step > 0) {
        start = std::clamp<int64_t>(start, 0, dim);
        end = std::clamp<int64_t>(end, 0, dim);
      } else {
        start = std::clamp<int64_t>(start, 0, dim - 1);
        end = std::clamp<int64_t>(end, -1, dim - 1);
      }
      // Number of indices start, start+step, ... strictly before end.
      // |step| in uint64 (step may be INT64_MIN; end - start + step could wrap): ceil(span / |step|).
      const int64_t span = step > 0 ? end - start : start - end;  // within [-dim, dim]
      const uint64_t magnitude = step > 0 ? static_cast<uint64_t>(step) : uint64_t{0} - static_cast<uint64_t>(step);
      const int64_t count = span <= 0 ? 0 : static_cast<int64_t>((static_cast<uint64_t>(span) - 1) / magnitude + 1);
      out[a] = {start, step, count};
    }
    return out;
  }

  int opset_;
  std::vector<int64_t> starts_, ends_, axes_;
};

}  // namespace

ONNXMINI_REGISTER_KERNEL("slice", "", "Slice", 1, INT_MAX, make_kernel<SliceKernel>);

}  // namespace onnxmini

ONNXMINI_KERNEL_FILE(tensor_slice);
