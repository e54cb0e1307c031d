// The QDQ rule of the optimizer (level 2, extended; table in graph_optimizer.cc): a
// DequantizeLinear -> Conv / MatMul -> QuantizeLinear node unit with constant quantization
// parameters becomes one QLinearConv / QLinearMatMul, so QDQ models run on the int8 GEMM
// engine instead of emulating quantization in float. The result is plain ONNX.
// graph_fusion_qdq.cc lists the exact conditions.
#pragma once
#include "runtime/graph_optimizer.h"

namespace onnxmini {

void fuse_qdq_to_qlinear(RuleContext& ctx);

}  // namespace onnxmini
