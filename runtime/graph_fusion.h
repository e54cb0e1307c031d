// Graph fusions, applied by the session when SessionOptions::graph_optimization_level
// > 0, after loading and before kernels are created. Level 0 (the default) keeps the
// model's nodes one for one, so profiles line up with onnxruntime's no-optimization
// traces. Every rewrite keeps the graph's outputs bit-for-bit in meaning (results equal
// the unfused graph within float rounding); see docs/performance.md.
#pragma once
#include <string>
#include <vector>

#include "runtime/graph.h"

namespace onnxmini {

class Logger;

struct FusionReport {
  std::vector<std::string> applied;  // "Conv 'n0' + PRelu 'n1'", in order
};

// Rewrites `g` in place:
//   Concat(Gemm(X, W1, b1), Gemm(X, W2, b2), ..., axis 1)
//                                     one Gemm over [W1 W2 ...] and [b1 b2 ...] (new constants)
//   Gemm -> Add(V) [-> Add(V2) ...]   the addends become extra Gemm inputs, added in the GEMM
//                                     epilogue when they are row or column vectors
//   Conv -> BatchNormalization        BN folded into the filter and bias (new constants)
//   BatchNormalization -> Conv        BN becomes the Conv's per-input-channel affine, applied
//                                     while the Conv copies its input (padding stays zero)
//   Conv -> Relu | Sigmoid | Clip | PRelu (per-channel constant slope)
//   Gemm -> Relu | Sigmoid | Clip     the activation moves into the GEMM epilogue
// A pattern applies only when the intermediate value has that single consumer, is not a
// graph output, and the weights involved are float32 constants.
// Each rewrite is logged at verbose level ("fusion conv_bn: Conv 'c' + BatchNormalization 'bn' ..."),
// the count at info.
FusionReport fuse_graph(Graph& g, int level, const Logger& log);

}  // namespace onnxmini
