// Attention fusion (level 2; the table is in graph_optimizer.cc): scaled dot-product
// attention written out as MatMul -> scale -> mask -> Softmax -> MatMul becomes one ONNX
// Attention node (opset 23), run by the fused flash-style kernel (kernels/attention/).
//
//   scores = MatMul(Q * sq, Transpose(K0 * sk, p) * sk')   Q, K0, V 4-D, Q [B, H, Sq, D], V [B, H, Sk, Dv]
//   scores = scores * c | scores / c   (any number of them, any side of the MatMul)
//   [scores = scores + mask]           float additive mask of rank <= 4 (either Add order)
//   P = Softmax(scores, last axis)     (opset < 13: axis 3 or -1, where the flattening from
//                                       `axis` is the last axis alone)
//   Y = MatMul(P, V)
//   -> Y = Attention(Q, K, V, [mask], scale = product of the scalars, every Div inverting)
//      K = K0 for p = [0, 1, 3, 2], else a new Transpose(K0, p with its last two entries
//      swapped) in place of the matched one (HF BERT after cancel_transposes: p = [0, 2, 3, 1])
//
// Every scale is a float32 constant with one element (any rank <= 4, finite, a divisor
// non-zero); a scale after the mask Add is not matched (it would scale the mask). Every
// intermediate (scores, its scaled forms, the transposed K, P) has the pattern's next node
// as its only reader and is not a graph output. The K side must be a Transpose (a K fed
// already transposed is not matched). Q, K0 and V must have
// rank 4, proved from declarations, constants or the producers' attributes (rank_of).
//
// The kernel masks keys past the mask's last dim instead of broadcasting along it, so a
// mask whose last dim is not provably the key length (a fixed dim > 1 is: the unfused Add
// then only runs when it equals the key length; so is the symbolic dim that K0 or V declare
// for the keys) goes through Expand(mask, Shape(K)[2:3]),
// which broadcasts exactly as the Add did (3 small nodes: Shape, Gather, Expand).
//
// Every key length fuses: the kernel's short-sequence path (up to 512 keys) and its flash
// path (beyond) are at least as fast as the unfused nodes (measured, docs/optimizer.md).
//
//   fuse_attention                the pattern in a model importing ai.onnx opset >= 23:
//                                 plain ONNX, saved as the Attention node
//   fuse_attention_before_opset23 the same in a model importing opset < 23 (every export
//                                 today): the node asks for the opset-23 kernel, so the graph
//                                 is onnxmini-only and a saved model keeps the original nodes
//
// A row masked entirely with -inf: the kernel writes 0, the unfused Softmax NaN.
// Not checked: Q, K, V broadcast against each other along batch / heads (MatMul would
// broadcast; the kernel reports the shapes instead). Not matched: float16 graphs with declared
// types, the 3-D [B, S, H*D] form with the heads split by Reshape / Transpose around the pattern.
#pragma once
#include "runtime/graph_optimizer.h"

namespace onnxmini {

void fuse_attention(RuleContext& ctx);
void fuse_attention_before_opset23(RuleContext& ctx);

}  // namespace onnxmini
