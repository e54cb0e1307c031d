// The private node attributes through which the graph fusion pass
// (runtime/graph_fusion.cc) hands fused work to the kernels that do it
// (kernels/nn/conv.cc, kernels/linalg/gemm.cc). Both sides spell the names and
// the activation values only through this header, so they cannot drift apart.
// The leading '_' keeps them apart from every ONNX attribute.
//
//   attribute                 on          value
//   _fused_activation         Conv, Gemm  string: fused_activation_name() of the activation that followed
//   _fused_activation_params  Conv, Gemm  floats: Clip [min, max]; PRelu one slope per output channel
//                                         (Conv only), already broadcast by the pass; HardSigmoid
//                                         [alpha, beta]; Swish [alpha] (absent: alpha 1)
//   _fused_addends            Gemm        int k: inputs 3 .. 3+k-1 are added to Y (fused Add nodes)
//   _fused_reshape            Gemm        int 1 (2: allowzero): input 3 + k (after the k addends) is a
//                                         Reshape's shape, applied to Y before the addends (a Gemm ->
//                                         Reshape -> Add(residual) folded by the graph pass)
//   _fused_input_scale/shift  Conv        floats, one per input channel: a BatchNormalization in
//                                         front, applied while X is copied
//   _fused_residual           Conv        int 1: input 3 is Z (Y's shape), added before the activation
//                                         (a fused Add; onnxruntime FusedConv's 4th input)
#pragma once
#include <string_view>

namespace onnxmini {
namespace fused_attr {

inline constexpr char kActivation[] = "_fused_activation";
inline constexpr char kActivationParams[] = "_fused_activation_params";
inline constexpr char kAddends[] = "_fused_addends";
inline constexpr char kInputScale[] = "_fused_input_scale";
inline constexpr char kInputShift[] = "_fused_input_shift";
inline constexpr char kResidual[] = "_fused_residual";
inline constexpr char kReshape[] = "_fused_reshape";
// y * scale + shift after the activation (NchwcConv: nchwc_output_affine): one value, or one
// per output channel.
inline constexpr char kOutputScale[] = "_fused_output_scale";
inline constexpr char kOutputShift[] = "_fused_output_shift";

}  // namespace fused_attr

// The activations a producer can absorb; also the GEMM epilogue's activation
// (gemm::Epilogue::Activation), so a kernel passes it through unchanged.
// HardSigmoid carries (alpha, beta) as parameters; HardSwish is HardSigmoid with
// alpha 1/6, beta 0.5 times x; Swish is x * sigmoid(alpha * x) (Mul(x, Sigmoid(x)), or
// Mul(x, Sigmoid(Mul(x, alpha))) with alpha as its one parameter: QuickGelu has 1.702).
// Gelu is the ONNX Gelu with approximate "none" (erf), GeluTanh with approximate "tanh"
// (attribute value "GeluTanh": no ONNX op type of its own).
enum class FusedActivationKind { None, Relu, Clip, Sigmoid, PRelu, HardSigmoid, HardSwish, Swish, Gelu, GeluTanh };

// The attribute value of `a`: the ONNX op type it replaces ("" for None).
inline const char* fused_activation_name(FusedActivationKind a) {
  switch (a) {
    case FusedActivationKind::Relu: return "Relu";
    case FusedActivationKind::Clip: return "Clip";
    case FusedActivationKind::Sigmoid: return "Sigmoid";
    case FusedActivationKind::PRelu: return "PRelu";
    case FusedActivationKind::HardSigmoid: return "HardSigmoid";
    case FusedActivationKind::HardSwish: return "HardSwish";
    case FusedActivationKind::Swish: return "Swish";
    case FusedActivationKind::Gelu: return "Gelu";
    case FusedActivationKind::GeluTanh: return "GeluTanh";
    case FusedActivationKind::None: break;
  }
  return "";
}

// The activation an ONNX op type (or attribute value) names; None when it is
// not one that can be fused.
inline FusedActivationKind fused_activation_from_name(std::string_view name) {
  using K = FusedActivationKind;
  for (K a : {K::Relu, K::Clip, K::Sigmoid, K::PRelu, K::HardSigmoid, K::HardSwish, K::Swish, K::Gelu, K::GeluTanh})
    if (name == fused_activation_name(a)) return a;
  return FusedActivationKind::None;
}

}  // namespace onnxmini
