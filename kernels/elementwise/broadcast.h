// Numpy-style broadcasting without materialising broadcast copies.
//
// A BroadcastPlan aligns N input shapes to the output shape, gives each input
// element strides (0 along broadcast axes), and merges adjacent axes that are
// contiguous in every operand. Kernels then loop over "runs": the innermost
// axis, where each operand advances by 0 or 1 element - a vector or a scalar.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "onnxmini/tensor.h"

namespace onnxmini {

// Output shape of broadcasting `shapes`; throws InvalidArgument naming the
// mismatching axis ("shapes 2x3 and 4x3 cannot broadcast: axis 0 has 2 vs 4").
Shape broadcast_shapes(const std::vector<Shape>& shapes);

struct BroadcastPlan {
  Shape out_shape;
  std::vector<int64_t> dims;                  // merged output dims, outermost first
  std::vector<std::vector<int64_t>> strides;  // per input, per merged dim (elements)
  int64_t inner = 1;                          // length of the innermost run (= dims.back())
  int64_t outer = 1;                          // number of runs

  explicit BroadcastPlan(const std::vector<Shape>& input_shapes);

  // Calls fn(run_index, offsets) for each run; offsets[i] is input i's element
  // offset at the start of the run; the output offset is run_index * inner.
  // inner_stride(i) tells whether input i advances (1) or stays (0) along the run.
  int64_t inner_stride(size_t input) const { return strides[input].empty() ? 0 : strides[input].back(); }

  // Offsets of each input for runs [run_begin, run_end); `offsets` has
  // (run_end-run_begin) * num_inputs entries, input-major within a run.
  void run_offsets(int64_t run, std::vector<int64_t>& offsets) const;
};

}  // namespace onnxmini
