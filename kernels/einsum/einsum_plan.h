// An einsum plan: a short program over "slots" (buffers) that the executor
// interprets and the exporter turns into ONNX nodes. Plans depend only on the
// equation and the shapes, so they are built once and cached.
//
// Slots: 0..n-1 are the operands, n is the output, then scratch intermediates.
// Every slot is a dense buffer whose axes are canonical letters in memory order
// (`Slot::letters`); operand slots may name a letter twice (a diagonal).
//
// Steps (each reads one or two slots through strided views and writes one):
//   Copy    out = permute(in0)                 (pure permutation, packing for GEMM)
//   Sum     out = sum of in0 over letters absent from out  (single-operand reduction)
//   Product out = sum over `reduced` of in0 * in1 (Hadamard, broadcast and outer
//           products, matrix-vector): one strided loop nest, no copies
//   Gemm    out[bt, m, n] = sum_k in0[bt, m, k] * in1[bt, k, n] on batched GEMM,
//           reading both operands in place (strided), batch loops outside
//   Zero    out = 0 (an empty reduction)
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "kernels/einsum/einsum_equation.h"

namespace onnxmini {
namespace einsum_impl {

// A loop nest over up to three strided tensors (out, in0, in1), outermost first.
// Strides are in elements; 0 means the tensor does not vary along that loop.
struct LoopNest {
  std::vector<int64_t> size;
  std::vector<int64_t> stride[3];  // [0] out, [1] in0, [2] in1
  int64_t elements() const;
  // Loops that can be split across threads: the leading loops along which `out` moves.
  size_t parallel_depth() const;
};

enum class StepKind { Copy, Sum, Product, Gemm, Zero };
const char* step_kind_name(StepKind k);

struct GemmShape {
  bool trans_a = false, trans_b = false;
  int64_t M = 1, N = 1, K = 1, lda = 0, ldb = 0, ldc = 0;
  int64_t inner_batch = 1;               // one sgemm_batched call covers these
  int64_t inner_stride[3] = {0, 0, 0};   // a, b, c strides of the inner batch
  LoopNest outer;                        // remaining batch loops ([0] c, [1] a, [2] b)
};

struct Step {
  StepKind kind = StepKind::Copy;
  int in0 = -1, in1 = -1, out = -1;  // slots
  LoopNest loops;                    // Copy/Sum/Product; Gemm: the same product as a plain loop nest
  GemmShape gemm;                    // Gemm only (in0 is A, in1 is B)
  // Letters, for export and description: batch / m / n / k groups of a Gemm (in their
  // merged order), the letters summed by Sum/Product.
  std::vector<int> batch, m, n, k, reduced;
  double flops = 0, bytes_copied = 0, cost_ns = 0;
  std::string text;  // one line for humans
};

struct Slot {
  std::vector<int> letters;  // canonical letters in memory order
  int64_t elements = 1;
};

struct Plan {
  std::string equation;
  std::vector<Shape> input_shapes;
  Shape output_shape;
  // Canonical letters (after dropping size-1 axes and merging letters that travel together).
  std::string canonical;  // "(bh)qd,(bh)kd->(bh)qk"
  std::vector<std::string> letter_name;
  std::vector<int64_t> letter_size;
  std::vector<int> output_letters;  // canonical output letters, in output order
  std::vector<Slot> slots;
  std::vector<Step> steps;
  std::string letter_order;  // the order used for intermediate layouts ("btnsh")
  std::string contraction_order;  // "(0,1),(3,2)" for 3+ operands
  double flops = 0, bytes_copied = 0, cost_ns = 0;
  std::string optimizer = "cost";  // none / cost / time
  double measured_us = -1;         // optimize=time: the winner's time
  std::string summary;             // one line: for ctx.stats().variant and the profile

  size_t num_inputs() const { return input_shapes.size(); }
  int output_slot() const { return static_cast<int>(input_shapes.size()); }
  std::string describe() const;  // multi-line, for the CLI
};

}  // namespace einsum_impl
}  // namespace onnxmini
