#include "kernels/elementwise/broadcast.h"

#include <fmt/format.h>

#include <algorithm>

namespace onnxmini {

Shape broadcast_shapes(const std::vector<Shape>& shapes) {
  size_t rank = 0;
  for (const auto& s : shapes) rank = std::max(rank, s.size());
  Shape out(rank, 1);
  for (size_t ax = 0; ax < rank; ++ax) {
    int64_t d = 1;
    size_t owner = 0;
    for (size_t i = 0; i < shapes.size(); ++i) {
      const Shape& s = shapes[i];
      if (ax + s.size() < rank) continue;
      int64_t v = s[ax + s.size() - rank];
      if (v == 1) continue;
      if (d != 1 && v != d) {
        std::vector<std::string> parts;
        for (const auto& sh : shapes) parts.push_back(shape_to_string(sh));
        throw Error(ErrorCode::InvalidArgument,
                    fmt::format("shapes {} cannot broadcast: axis {} of the output has {} (input {}) vs {} (input {})",
                                fmt::join(parts, " and "), ax, d, owner, v, i));
      }
      d = v;
      owner = i;
    }
    out[ax] = d;
  }
  return out;
}

BroadcastPlan::BroadcastPlan(const std::vector<Shape>& shapes) : out_shape(broadcast_shapes(shapes)) {
  const size_t rank = out_shape.size(), n = shapes.size();
  // Full-rank strides per input (0 where broadcast).
  std::vector<std::vector<int64_t>> full(n, std::vector<int64_t>(rank, 0));
  for (size_t i = 0; i < n; ++i) {
    const Shape& s = shapes[i];
    int64_t stride = 1;
    for (size_t k = 0; k < s.size(); ++k) {
      size_t ax = rank - 1 - k;
      int64_t d = s[s.size() - 1 - k];
      full[i][ax] = d == 1 ? 0 : stride;
      stride *= d;
    }
  }
  // Merge axis ax into the previous merged axis when, for every input, the
  // stride pattern continues: stride[prev] == stride[ax] * dim[ax].
  strides.assign(n, {});
  for (size_t ax = 0; ax < rank; ++ax) {
    if (out_shape[ax] == 1) continue;  // size-1 axes carry no data
    bool merge = !dims.empty();
    for (size_t i = 0; merge && i < n; ++i) merge = strides[i].back() == full[i][ax] * out_shape[ax];
    if (merge) {
      dims.back() *= out_shape[ax];
      for (size_t i = 0; i < n; ++i) strides[i].back() = full[i][ax];
    } else {
      dims.push_back(out_shape[ax]);
      for (size_t i = 0; i < n; ++i) strides[i].push_back(full[i][ax]);
    }
  }
  if (dims.empty()) {  // scalar output
    dims.push_back(1);
    for (size_t i = 0; i < n; ++i) strides[i].push_back(0);
  }
  inner = dims.back();
  outer = 1;
  for (size_t k = 0; k + 1 < dims.size(); ++k) outer *= dims[k];
  if (shape_numel(out_shape) == 0) outer = 0;
}

void BroadcastPlan::run_offsets(int64_t run, std::vector<int64_t>& offsets) const {
  const size_t n = strides.size();
  offsets.assign(n, 0);
  // Decompose `run` over the outer dims (all but the last), innermost first.
  for (size_t k = dims.size() - 1; k-- > 0;) {
    int64_t idx = run % dims[k];
    run /= dims[k];
    for (size_t i = 0; i < n; ++i) offsets[i] += idx * strides[i][k];
  }
}

}  // namespace onnxmini
