// The rule table and the loop applying it (graph_optimizer.h).
#include "runtime/graph_optimizer.h"

#include <algorithm>

#include "core/logging.h"
#include "runtime/constant_folding.h"
#include "runtime/graph_cleanup.h"
#include "runtime/graph_fusion.h"
#include "runtime/graph_fusion_affine.h"
#include "runtime/graph_fusion_attention.h"
#include "runtime/graph_fusion_norm.h"
#include "runtime/graph_fusion_qdq.h"
#include "runtime/graph_fusion_residual.h"
#include "runtime/graph_fusion_one_hot.h"
#include "runtime/graph_fusion_se.h"
#include "runtime/graph_layout_nchwc.h"
#include "runtime/graph_sinking.h"

namespace onnxmini {

void RuleContext::applied(const char* rule, std::string nodes) {
  ONNXMINI_VLOG(log, 0, "optimizer {}: {}", rule, nodes);
  rewrites.push_back({rule, std::move(nodes)});
}

namespace {

void constant_folding(RuleContext& ctx) {
  for (std::string& node : fold_constants(ctx.g, ctx.options, ctx.log)) ctx.rewrites.push_back({"constant_folding", node});
  for (std::string& node : fold_subgraph_constants(ctx.g, ctx.options, ctx.log))
    ctx.rewrites.push_back({"constant_folding", node});
}

}  // namespace

const std::vector<GraphRule>& graph_rules() {
  constexpr int kBasic = ORT_ENABLE_BASIC, kExtended = ORT_ENABLE_EXTENDED, kLayout = ORT_ENABLE_LAYOUT;
  static const std::vector<GraphRule> rules = {
      // Level 1 (basic): plain ONNX, every value bit for bit.
      {"eliminate_identity", kBasic, true, eliminate_identity, "Identity(x) -> x"},
      {"eliminate_dropout", kBasic, true, eliminate_dropout,
       "Dropout(x) -> x (inference; mask unused; training_mode absent or constant false)"},
      {"eliminate_noop_cast", kBasic, true, eliminate_noop_cast, "Cast(x, to = type of x) -> x"},
      {"fold_known_shapes", kBasic, true, fold_known_shapes,
       "Shape(x) / Size(x) with x's declared shape fixed -> constant"},
      {"constant_folding", kBasic, true, constant_folding,
       "a node whose inputs are all constants (inside If/Loop/Scan bodies too, outer constants included) -> its outputs as constants (runtime/constant_folding.h)"},
      {"eliminate_noop_reshape", kBasic, true, eliminate_noop_reshape,
       "Reshape(x, s) with s = x's declared fixed shape -> x"},
      // Level 1 although it serves level-2 fusions: it is plain ONNX and bit for bit, and it
      // must run before collapse_reshapes (the moved Reshape often meets the next Dense
      // layer's Reshape) and before matmul_add_gemm.
      {"sink_reshape_bias", kBasic, true, sink_reshape_bias,
       "Add(Reshape(x, s), bias const [1,..,1,N]) [-> unary elementwise ops], s keeping x's last dim N "
       "(s's last entry a constant, also through Concat / Cast) -> Add(x, bias [N]) [-> ops] -> Reshape(s) "
       "(runtime/graph_sinking.h)"},
      {"sink_reshape", kBasic, true, sink_reshape,
       "Reshape(x, s1) -> unary elementwise ops (scalar constant operands) -> Reshape(s2 without 0) -> "
       "ops(x) -> Reshape(s2) (runtime/graph_sinking.h)"},
      {"collapse_reshapes", kBasic, true, collapse_reshapes,
       "Reshape(Reshape(x, s1), s2) with s2 without 0 -> Reshape(x, s2)"},
      {"sink_transpose", kBasic, true, sink_transpose,
       "Transpose(x, p) -> elementwise ops (other operands constants, permuted at load, or scalars) -> Transpose(q) "
       "-> ops(x) -> Transpose(p then q) (identity: cancel_transposes drops it), also when every one of several readers "
       "leads to a Transpose; Op(Transpose(a, p), Transpose(b, p)) "
       "with a, b of one declared shape -> Transpose(Op(a, b), p) (runtime/graph_sinking.h)"},
      {"cancel_transposes", kBasic, true, cancel_transposes,
       "Transpose(Transpose(x, p1), p2) -> x when the composition is the identity, else one Transpose; "
       "identity Transpose -> x"},
      {"transpose_to_reshape", kBasic, true, transpose_to_reshape,
       "Transpose(x, p) moving only axes of size 1 (x's declared shape) -> Reshape (a view: no copy)"},
      {"eliminate_dead_nodes", kBasic, true, eliminate_dead_nodes, "nodes whose outputs nothing reads -> removed"},
      // Level 2 (extended), plain ONNX results.
      {"qdq_to_qlinear", kExtended, true, fuse_qdq_to_qlinear,
       "DequantizeLinear(x) + DequantizeLinear(w const) [+ DequantizeLinear(b int32)] -> Conv | MatMul -> "
       "QuantizeLinear -> QLinearConv | QLinearMatMul (runtime/graph_fusion_qdq.h)"},
      {"concat_gemms", kExtended, true, fuse_concat_gemms,
       "Concat(Gemm(X, W1, b1), Gemm(X, W2, b2), .., axis 1) -> Gemm(X, [W1 W2 ..], [b1 b2 ..])"},
      {"matmul_add_gemm", kExtended, true, fuse_matmul_add,
       "MatMul(A 2-D, B constant) -> Add(C constant [N] / [1,N] / scalar) -> Gemm(A, B, C)"},
      {"conv_bn", kExtended, true, fuse_conv_bn,
       "Conv -> BatchNormalization (inference) -> Conv with BN folded into W and B"},
      // After conv_bn (a BN folds first), before the activation rules (the scale must reach
      // the product, not the activation's output).
      {"conv_scale_shift", kExtended, true, fuse_conv_scale_shift,
       "Conv -> Mul(c) | Add(d) | Sub(d) [-> ..], c and d constants of one element or one per output channel -> "
       "Conv with W * c and B * c + d (runtime/graph_fusion_affine.h)"},
      {"scale_shift_conv", kExtended, true, fuse_scale_shift_conv,
       "Mul(x, s) | Add(x, d) | Sub(x, d) [-> ..] (scalar constants) -> Conv without padding -> Conv with W * s and "
       "B + d * sum(W) per output channel"},
      {"hard_swish", kExtended, true, fuse_hard_swish,
       "x * Clip(x + 3, 0, 6) / 6 (or * 1/6, either grouping) -> HardSwish(x) (opset 14+)"},
      {"conv_add", kExtended, true, fuse_conv_add, "Conv -> Add(Z of the Conv output's shape) -> Conv adding Z in its epilogue before the activation (com.microsoft FusedConv's Z; runtime/graph_fusion_residual.h)"},
      {"conv_activation", kExtended, true, fuse_conv_activation,
       "Conv -> Relu | Sigmoid | Clip -> Conv with the activation in its epilogue (saved as onnxruntime's "
       "com.microsoft FusedConv)"},
      {"layer_norm", kExtended, true, fuse_layer_norm,
       "ReduceMean(X, last axis) -> Sub -> Pow 2 | Mul self -> ReduceMean -> Add(eps) -> Sqrt -> Div -> [Mul(gamma), else ones] "
       "[-> Add(beta)] -> LayerNormalization (opset 17+; runtime/graph_fusion_norm.h)"},
      {"gelu", kExtended, true, fuse_gelu,
       "0.5 * x * (1 + Erf(x / sqrt 2)) (any grouping) -> Gelu (opset 20+; runtime/graph_fusion_norm.h)"},
      {"layer_norm_tf", kExtended, true, fuse_layer_norm_tf,
       "TF LayerNorm: GlobalAveragePool | ReduceMean mean and variance, Reciprocal(Sqrt(var + eps)) [* gamma] = sg, "
       "X * sg + (beta - mean * sg | -mean * sg) -> LayerNormalization (opset 17+; runtime/graph_fusion_norm.h)"},
      {"rms_norm", kExtended, true, fuse_rms_norm,
       "x * Reciprocal(Sqrt(ReduceMean(x^2, last axis) + eps)) [* gamma, else ones] [optional Casts] -> RMSNormalization "
       "(opset 23+; runtime/graph_fusion_norm.h)"},
      {"gelu_tanh", kExtended, true, fuse_gelu_tanh,
       "0.5 * x * (1 + Tanh(sqrt(2/pi) * (x + 0.044715 * x^3))) (any grouping) -> Gelu approximate tanh (opset 20+)"},
      // Attention: the opset-23 form is plain ONNX; its before-opset twin (onnxmini-only) is the
      // first rule not saved as ONNX, so the snapshot keeps such a model's original nodes.
      {"attention", kExtended, true, fuse_attention,
       "MatMul(Q [*|/ c], Transpose(K, [0,1,3,2]) [*|/ c]) [*|/ c] [+ mask] -> Softmax(last axis) -> MatMul(., V), "
       "Q K V 4-D -> Attention(Q, K, V, mask, scale = product of c) (opset 23+; runtime/graph_fusion_attention.h)"},
      {"attention_before_opset23", kExtended, false, fuse_attention_before_opset23,
       "the attention pattern in a model importing opset < 23 -> Attention (the opset-23 kernel)"},
      // Level 2 (extended), onnxmini-only results (kernels/fused_attributes.h): saved unfused.
      {"gemm_add", kExtended, false, fuse_gemm_add,
       "Gemm -> Add(V) [-> Add ..] -> Gemm adding V in its epilogue (_fused_addends)"},
      {"gemm_reshape_residual", kExtended, false, fuse_gemm_reshape_residual,
       "Gemm -> Reshape(s) -> Add(R) -> Gemm reshaping Y then adding R (R of that shape: in its epilogue)"},
      {"bn_conv", kExtended, false, fuse_bn_conv,
       "BatchNormalization -> Conv -> Conv applying BN per input channel (_fused_input_scale/shift)"},
      {"conv_prelu", kExtended, false, fuse_conv_prelu,
       "Conv -> PRelu (scalar or per-channel constant slope) -> Conv with PRelu in its epilogue"},
      {"hard_swish_before_opset14", kExtended, false, fuse_hard_swish_before_opset14,
       "the hard_swish pattern in a model importing opset < 14 -> HardSwish (the opset-14 kernel)"},
      {"conv_activation_extra", kExtended, false, fuse_conv_activation_extra,
       "Conv -> HardSigmoid | HardSwish | Swish | Mul(x, Sigmoid(x)) -> Conv with it in its epilogue"},
      // After the conv activation rules: the SE's 1x1 Convs carry their activations by now.
      {"squeeze_excite", kExtended, false, fuse_squeeze_excite,
       "GlobalAveragePool(X) -> Conv 1x1 [act] -> Conv 1x1 [act] -> Mul(X, gate) [-> Add(X, product)] -> "
       "SqueezeExcite (one node; runtime/graph_fusion_se.h)"},
      {"layer_norm_before_opset17", kExtended, false, fuse_layer_norm_before_opset17,
       "the layer_norm pattern in a model importing opset < 17 -> LayerNormalization (the opset-17 kernel)"},
      {"gelu_before_opset20", kExtended, false, fuse_gelu_before_opset20,
       "the gelu pattern in a model importing opset < 20 -> Gelu (the opset-20 kernel)"},
      {"layer_norm_tf_before_opset17", kExtended, false, fuse_layer_norm_tf_before_opset17,
       "the layer_norm_tf pattern in a model importing opset < 17 -> LayerNormalization (the opset-17 kernel)"},
      {"rms_norm_before_opset23", kExtended, false, fuse_rms_norm_before_opset23,
       "the rms_norm pattern in a model importing opset < 23 -> RMSNormalization (the opset-23 kernel)"},
      {"gelu_tanh_before_opset20", kExtended, false, fuse_gelu_tanh_before_opset20,
       "the gelu_tanh pattern in a model importing opset < 20 -> Gelu approximate tanh (the opset-20 kernel)"},
      // After the gelu twins, so the Gelu they make in an opset < 20 model is fused too.
      {"conv_gelu", kExtended, false, fuse_conv_gelu,
       "Conv -> Gelu (approximate none | tanh) -> Conv with it in its epilogue"},
      {"gemm_activation", kExtended, false, fuse_gemm_activation,
       "Gemm -> Relu | Sigmoid | Clip | HardSigmoid | HardSwish | Swish | Gelu | Mul(x, Sigmoid(x)) -> Gemm with "
       "the activation in its epilogue; MatMul(A any rank, B const) -> Add(bias const [N]) [-> one of those] -> "
       "MatMul with the bias [and activation] in its epilogue"},
      // After gemm_activation: the MatMul carries its bias by now.
      {"one_hot_matmul", kExtended, false, fuse_one_hot_matmul,
       "Equal(X, V constant [N]) -> Cast(float) -> MatMul(., W constant [N, D]) [bias] -> OneHotMatMul (a row of W "
       "per X value, runtime/graph_fusion_one_hot.h)"},
      {"reduce_mean_max", kExtended, false, fuse_reduce_mean_max,
       "ReduceMean(X) + ReduceMax(X) over the same single axis -> ReduceMeanMax (one pass over X)"},
      // Level 3 (layout), last: it sees the Convs with every fusion already in their attributes.
      {"nchwc_layout", kLayout, false, apply_nchwc_layout,
       "chains of float32 2-D Convs (dense, pointwise, depthwise) with the elementwise ops, per-channel constants, "
       "Concat / Split on channels between them -> NchwcConv etc. on blocked NCHW16c data, reordered once at the "
       "chain's ends (ONNXMINI_NCHWC=0: off; runtime/graph_layout_nchwc.h)"},
      {"nchwc_output_affine", kLayout, false, fuse_nchwc_output_affine,
       "NchwcConv -> Mul(c) | Add(d) | Sub(d) [-> ..] (one-element or blocked per-channel constants) -> NchwcConv "
       "applying y * S + D after its activation (runtime/graph_fusion_affine.h)"},
  };
  return rules;
}

std::vector<GraphRuleInfo> graph_optimization_rules() {
  std::vector<GraphRuleInfo> out;
  for (const GraphRule& r : graph_rules()) out.push_back({r.name, r.level, r.saved_as_onnx, r.pattern});
  return out;
}

std::vector<GraphRewrite> optimize_graph(Graph& g, const SessionOptions& options, const Logger& log,
                                         Graph* onnx_snapshot, const std::vector<std::string>* only) {
  std::vector<GraphRewrite> rewrites;
  RuleContext ctx{g, options, log, rewrites};
  const size_t nodes_before = g.nodes.size();
  bool snapshot_taken = false;
  auto take_snapshot = [&] {
    if (!onnx_snapshot || snapshot_taken) return;
    *onnx_snapshot = g;
    drop_unused_constants(*onnx_snapshot, log);
    snapshot_taken = true;
  };
  for (const GraphRule& rule : graph_rules()) {
    const bool wanted = only ? std::find(only->begin(), only->end(), rule.name) != only->end()
                             : rule.level <= options.graph_optimization_level;
    if (!wanted) continue;
    if (!rule.saved_as_onnx) take_snapshot();
    // A rule that trips over a malformed node (a missing input, an attribute of
    // the wrong type) is undone and skipped: the graph goes on as it was, and the
    // node's kernel reports the fault naming the node when the session creates it.
    // Copying the graph is cheap: tensors share their buffers.
    Graph before = g;
    const size_t rewrites_before = rewrites.size();
    try {
      rule.run(ctx);
    } catch (const std::exception& e) {
      g = std::move(before);
      rewrites.resize(rewrites_before);
      ONNXMINI_LOG(log, Warning, "optimizer rule '{}' skipped: {}", rule.name, e.what());
    }
  }
  drop_unused_constants(g, log);  // the inputs of folded nodes, weights replaced by fused ones
  take_snapshot();
  if (!rewrites.empty())
    ONNXMINI_LOG(log, Info, "optimizer: {} rewrite(s), {} -> {} nodes", rewrites.size(), nodes_before, g.nodes.size());
  return rewrites;
}

}  // namespace onnxmini
