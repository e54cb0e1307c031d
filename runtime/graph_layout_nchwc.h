// The load-time layout rule `nchwc_layout` (level 3 ORT_ENABLE_LAYOUT and 99; onnxmini-only,
// so never in a saved model; the table is in graph_optimizer.cc, where it runs last, after
// every fusion): chains of float32 2-D convolutions run in the blocked channel layout NCHW16c
// (kernels/nn/nchwc_conv.h) and are reordered once at the chain's ends.
//
// Nodes that can run on blocked data:
//   Conv         float32 constant 4-D filter, constant (or no) bias, group 1 or depthwise
//                (group == C == M), no fused input BatchNormalization, and little channel
//                padding (at most 1.5x the true counts); any fused activation / residual Z is kept
//                -> NchwcConv (Z reordered to blocked if it comes from outside the region)
//   unary        Relu, LeakyRelu, Sigmoid, Tanh, HardSigmoid, HardSwish, Clip, Elu, Softplus,
//                Gelu, Neg, Abs on a blocked value: unchanged (elementwise on the 5-D tensor;
//                padding channels hold f(0), finite)
//   binary       Add / Sub / Mul of two blocked values with the same channel count, or of a
//                blocked value and a constant with one element or one value per channel
//                ([1, C, 1, 1] / [C, 1, 1], rewritten to [1, Cb, 1, 1, 16]); Div by such a
//                constant (padding 1, so padding channels stay finite)
//   Concat       axis 1 of blocked values whose channel counts are multiples of 16
//   Split        axis 1 of a blocked value into parts that are multiples of 16 (sizes / 16)
//   pools        2-D MaxPool (opset >= 8, no Indices output, storage_order 0) / AveragePool
//                -> NchwcMaxPool / NchwcAveragePool; GlobalMaxPool / GlobalAveragePool ->
//                NchwcGlobal*Pool (output [N, Cb, 1, 1, 16], so an SE block's 1x1 Convs and
//                broadcast Mul stay in the region) (kernels/nn/nchwc_pool.h)
//   Resize       nearest (opset >= 11), constant scales [1, 1, sh, sw], no axes / sizes, a
//                coordinate mode NchwcResize implements -> NchwcResize (attribute scales [sh, sw])
//   SqueezeExcite  the fused ai.onnxmini op (graph_fusion_se.cc) -> NchwcSqueezeExcite
// Anything else (linear Resize, MaxPool with Indices, LpPool, ...) is a region boundary.
// Regions = connected sets of such nodes grown from Convs; trailing non-Conv nodes whose
// outputs no region node reads are left in NCHW (unless that needs more reorders: an Add of
// two region values). The cost rule: a region pays with at least 2 Convs and at most 0.5
// reorders per Conv, or with one heavy dense Conv (graph_layout_nchwc.cc: kLoneConvIntensity,
// and kLoneWinogradIntensity for a layer NchwcConv runs as Winograd; the numbers in
// docs/performance.md "Blocked layout (NCHW16c)" and "Lone layers and Winograd"). A value
// entering a region gets one ReorderToBlocked; a region value read outside it or a graph output
// gets one ReorderFromBlocked (which keeps the original value's name).
// ONNXMINI_NCHWC in the environment (read once): 0 turns the rule off, `all` turns its cost
// rule off (every region with a Conv is blocked: for measurements).
#pragma once
#include "runtime/graph_optimizer.h"

namespace onnxmini {

void apply_nchwc_layout(RuleContext& ctx);

// Tests: override ONNXMINI_NCHWC (true: on, false: off); reset_nchwc_layout_override restores it.
void set_nchwc_layout_enabled_for_tests(bool on);
void reset_nchwc_layout_override();
// Tests: false keeps every region with a Conv (the structure without the cost rule).
void set_nchwc_cost_rule_for_tests(bool on);

}  // namespace onnxmini
