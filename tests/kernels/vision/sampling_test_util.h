// Helpers of the detection / sampling kernel tests (NonMaxSuppression, RoiAlign,
// GridSample, AffineGrid): tensors of any float dtype from doubles, and the
// normalised pixel coordinates GridSample and AffineGrid share.
#pragma once
#include <vector>

#include "core/float16.h"
#include "tests/common/node_runner.h"

namespace onnxmini {
namespace test {

// A float32 / float64 / float16 / bfloat16 tensor holding `values` (rounded to the dtype).
inline Tensor float_tensor(DType dtype, const Shape& shape, const std::vector<double>& values) {
  Tensor t(dtype, shape);
  if (static_cast<int64_t>(values.size()) != t.numel())
    throw Error(ErrorCode::InvalidArgument, "float_tensor: value count does not match the shape");
  void* p = t.raw_mut();
  for (size_t i = 0; i < values.size(); ++i) {
    const double v = values[i];
    switch (dtype) {
      case DType::Float32:
        static_cast<float*>(p)[i] = static_cast<float>(v);
        break;
      case DType::Float64:
        static_cast<double*>(p)[i] = v;
        break;
      case DType::Float16:
        static_cast<uint16_t*>(p)[i] = float_to_half(static_cast<float>(v));
        break;
      case DType::BFloat16:
        static_cast<uint16_t*>(p)[i] = float_to_bfloat16(static_cast<float>(v));
        break;
      default:
        throw Error(ErrorCode::InvalidArgument, "float_tensor: not a float dtype");
    }
  }
  return t;
}

inline Tensor f32(const Shape& shape, const std::vector<double>& values) {
  return float_tensor(DType::Float32, shape, values);
}

// Normalised coordinate of pixel i of an axis of `length` pixels:
// align_corners puts the first and last pixel centres on -1 and 1, otherwise their outer edges.
inline double pixel_coordinate(int64_t i, int64_t length, bool align_corners) {
  if (align_corners) return length > 1 ? -1.0 + 2.0 * static_cast<double>(i) / static_cast<double>(length - 1) : 0.0;
  return -1.0 + (2.0 * static_cast<double>(i) + 1.0) / static_cast<double>(length);
}

inline bool contains(const std::string& message, const std::string& part) {
  return message.find(part) != std::string::npos;
}

}  // namespace test
}  // namespace onnxmini
