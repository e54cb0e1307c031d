// Einsum equations: parsing an equation against the operand shapes.
//
//   "bsnh,btnh->bnts"   explicit output
//   "ij,jk"             implicit output: letters used once, in alphabetical order
//   "...ij,...jk->...ik" ellipsis: the unnamed leading dims, broadcast numpy-style
//   "ii->i"             a repeated letter in one operand reads its diagonal
//
// Every letter (and every dimension covered by an ellipsis) becomes a numbered
// "letter" with one size. A dim of size 1 broadcasts against the letter's size in
// other operands. Errors are onnxmini::Error(InvalidArgument) whose message names
// the position in the equation and draws a caret under it.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "onnxmini/tensor.h"

namespace onnxmini {
namespace einsum_impl {

struct EinsumSpec {
  std::string equation;                        // as given
  std::vector<Shape> operand_shapes;           // as given
  std::vector<std::vector<int>> operand_axes;  // operand -> axis -> letter id
  std::vector<int> output_axes;                // output axis -> letter id
  std::vector<int64_t> letter_size;            // letter id -> size (the broadcast size)
  std::vector<std::string> letter_name;        // "a".."Z", ".0", ".1" for ellipsis dims
  Shape output_shape;

  size_t num_letters() const { return letter_size.size(); }
};

// Parses `equation` for operands of `shapes`. Throws onnxmini::Error (InvalidArgument).
EinsumSpec parse_equation(const std::string& equation, const std::vector<Shape>& shapes);

}  // namespace einsum_impl
}  // namespace onnxmini
