// Reference einsum: the definition, with no planning at all.
//
//   for every assignment of a value to every letter:
//       output[output letters] += operand_0[its letters] * operand_1[...] * ...
//
// Each operand gets one stride per letter: the sum of the strides of the axes
// named by that letter (a repeated letter walks the diagonal), 0 for a letter it
// does not have and for an axis of size 1 (broadcast). Floating-point sums are
// accumulated in double so the reference is more exact than what it checks.
#include <fmt/format.h>

#include <type_traits>

#include "kernels/einsum/einsum_executor.h"

namespace onnxmini {
namespace einsum_impl {

namespace {

// Stride of every letter in a dense tensor of `shape` whose axes are `axes`.
std::vector<int64_t> letter_strides(const std::vector<int>& axes, const Shape& shape, size_t num_letters) {
  std::vector<int64_t> s(num_letters, 0);
  int64_t st = 1;
  for (size_t a = axes.size(); a-- > 0;) {
    if (shape[a] != 1) s[axes[a]] += st;
    st *= shape[a];
  }
  return s;
}

template <typename T>
void reference(const EinsumSpec& spec, const std::vector<const Tensor*>& operands, Tensor& output) {
  using Acc = typename std::conditional<std::is_floating_point<T>::value, double, int64_t>::type;
  const size_t L = spec.num_letters();
  std::vector<std::vector<int64_t>> strides;
  for (size_t k = 0; k < operands.size(); ++k)
    strides.push_back(letter_strides(spec.operand_axes[k], spec.operand_shapes[k], L));
  const std::vector<int64_t> out_strides = letter_strides(spec.output_axes, spec.output_shape, L);

  std::vector<Acc> acc(static_cast<size_t>(output.numel()), Acc(0));
  int64_t total = 1;
  for (int64_t s : spec.letter_size) total *= s;
  std::vector<int64_t> value(L, 0);  // the current value of every letter
  for (int64_t it = 0; it < total; ++it) {
    // offsets of this assignment in the output and in each operand
    int64_t out_off = 0;
    for (size_t l = 0; l < L; ++l) out_off += value[l] * out_strides[l];
    Acc prod = 1;
    for (size_t k = 0; k < operands.size(); ++k) {
      int64_t off = 0;
      for (size_t l = 0; l < L; ++l) off += value[l] * strides[k][l];
      prod *= static_cast<Acc>(operands[k]->data<T>()[off]);
    }
    acc[out_off] += prod;
    // next assignment: count up, last letter fastest
    for (size_t l = L; l-- > 0;) {
      if (++value[l] < spec.letter_size[l]) break;
      value[l] = 0;
    }
  }
  T* out = output.mutable_data<T>();
  for (size_t i = 0; i < acc.size(); ++i) out[i] = static_cast<T>(acc[i]);
}

}  // namespace

void reference_einsum(const EinsumSpec& spec, const std::vector<const Tensor*>& operands, Tensor& output) {
  switch (output.dtype()) {
    case DType::Float32: return reference<float>(spec, operands, output);
    case DType::Float64: return reference<double>(spec, operands, output);
    case DType::Int32: return reference<int32_t>(spec, operands, output);
    case DType::Int64: return reference<int64_t>(spec, operands, output);
    default:
      throw Error(ErrorCode::NotImplemented, fmt::format("einsum: dtype {} is not supported", dtype_name(output.dtype())));
  }
}

}  // namespace einsum_impl
}  // namespace onnxmini
