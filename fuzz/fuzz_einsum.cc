// Fuzz target: einsum equations. Input: the equation (up to the first newline, at
// most 64 characters), then bytes choosing the sizes: one flag byte (bit 0: the
// optimizer, bit 1: shapes that disagree on one letter, bits 2-3: rank of "..."),
// then one byte per distinct letter and per ellipsis axis (size 1 + byte % 4).
// The harness shapes the operands from the equation's terms, then plans and runs
// the einsum with the fast kernels and with the nested-loop reference. Values are
// in {-1, 0, 1} and a full iteration space is at most 2^16 points, so every sum is
// an integer below 2^24, exact in float32: the two results must be bit-identical
// (a mismatch aborts). onnxmini::Error is the accepted way to refuse an equation.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "fuzz_limits.h"
#include "onnxmini/einsum.h"
#include "onnxmini/error.h"

namespace {

constexpr size_t kMaxEquation = 64;
constexpr size_t kMaxOperands = 6;
constexpr int64_t kMaxIterationSpace = 1 << 16;

struct Reader {
  const uint8_t* p;
  size_t n;
  uint8_t next() { return n ? (--n, *p++) : 0; }
};

bool is_letter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  onnxmini_fuzz::set_limits();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto* newline = static_cast<const uint8_t*>(std::memchr(data, '\n', size));
  const size_t eq_len = newline ? static_cast<size_t>(newline - data) : size;
  if (eq_len > kMaxEquation) return 0;
  const std::string equation(reinterpret_cast<const char*>(data), eq_len);
  Reader bytes{data + eq_len + (newline ? 1 : 0), size - eq_len - (newline ? 1 : 0)};
  const uint8_t flags = bytes.next();

  // Operand terms: the left-hand side split at commas.
  const size_t arrow = equation.find("->");
  const std::string lhs = equation.substr(0, arrow);
  std::vector<std::string> terms(1);
  for (char c : lhs) {
    if (c == ',') terms.emplace_back(); else terms.back() += c;
  }
  if (terms.size() > kMaxOperands) return 0;

  std::map<char, int64_t> letter_size;
  const int ellipsis_rank = (flags >> 2) & 3;
  std::vector<int64_t> ellipsis_dims;
  int64_t space = 1;
  for (int i = 0; i < ellipsis_rank; ++i) {
    ellipsis_dims.push_back(1 + bytes.next() % 4);
    space *= ellipsis_dims.back();
  }
  std::vector<onnxmini::Shape> shapes;
  for (const std::string& term : terms) {
    onnxmini::Shape shape;
    for (size_t i = 0; i < term.size(); ++i) {
      if (term.compare(i, 3, "...") == 0) {
        shape.insert(shape.end(), ellipsis_dims.begin(), ellipsis_dims.end());
        i += 2;
      } else if (is_letter(term[i])) {
        auto it = letter_size.find(term[i]);
        if (it == letter_size.end()) {
          it = letter_size.emplace(term[i], 1 + bytes.next() % 4).first;
          if (space <= kMaxIterationSpace) space *= it->second;  // stays below 2^18: no overflow
        }
        shape.push_back(it->second);
      }
    }
    shapes.push_back(shape);
  }
  if ((flags & 2) && !shapes.empty() && !shapes.back().empty()) shapes.back().back() += 1;

  onnxmini::EinsumOptions options;
  options.optimize = (flags & 1) ? onnxmini::EinsumOptimize::None : onnxmini::EinsumOptimize::Cost;
  try {
    onnxmini::einsum_output_shape(equation, shapes);
    onnxmini::einsum_plan(equation, shapes, options);
  } catch (const onnxmini::Error&) {
    return 0;
  }
  if (space > kMaxIterationSpace) return 0;  // planned only: running it is the memory caps' business
  // A letter repeated inside a term (a diagonal, "aDDDDDDDDDDD") counts once in the iteration
  // space but once per occurrence in the operand's size: bound the operands too.
  for (const auto& shape : shapes) {
    int64_t numel = 1;
    for (int64_t d : shape)
      if ((numel *= d) > kMaxIterationSpace) return 0;  // d <= 5 and numel <= 2^18 before: no overflow
  }

  uint32_t state = 7;
  std::vector<onnxmini::Tensor> operands;
  for (const auto& shape : shapes) {
    onnxmini::Tensor t(onnxmini::DType::Float32, shape);
    float* p = t.mutable_data<float>();
    for (int64_t i = 0; i < t.numel(); ++i) p[i] = static_cast<float>(static_cast<int>((state = state * 1103515245u + 12345u) >> 16) % 3 - 1);
    operands.push_back(t);
  }
  onnxmini::Tensor fast, reference;
  try {
    fast = onnxmini::einsum(equation, operands, options);
  } catch (const onnxmini::Error&) {
    return 0;
  }
  options.kernels = onnxmini::KernelMode::Reference;
  reference = onnxmini::einsum(equation, operands, options);  // planned and ran fast: must run here too
  if (fast.shape() != reference.shape() || fast.dtype() != reference.dtype() ||
      std::memcmp(fast.raw(), reference.raw(), fast.nbytes()) != 0)
    std::abort();
  return 0;
}
