// An activation fused into a Conv or Gemm node by the graph fusion pass
// (runtime/graph_fusion.cc). The pass records it in private node attributes;
// the kernel turns it into the GEMM epilogue (or applies it after its non-GEMM
// paths), so the activation costs no extra pass over memory.
//
//   _fused_activation         "Relu" | "Sigmoid" | "Clip" | "PRelu"
//   _fused_activation_params  Clip: [min, max]; PRelu: one slope per output
//                             channel (Conv) - already broadcast by the pass
#pragma once
#include <string>
#include <vector>

#include "kernels/gemm_engine/gemm.h"
#include "kernels/kernel.h"

namespace onnxmini {
namespace gemm {

constexpr const char* kFusedActivationAttr = "_fused_activation";
constexpr const char* kFusedActivationParamsAttr = "_fused_activation_params";

struct FusedActivation {
  Epilogue::Activation act = Epilogue::Activation::None;
  std::vector<float> params;

  static FusedActivation read(const KernelInfo& info) {
    FusedActivation f;
    const std::string name = info.attrs.get_string(kFusedActivationAttr, "");
    if (name.empty()) return f;
    f.params = info.attrs.get_floats(kFusedActivationParamsAttr, {});
    if (name == "Relu") f.act = Epilogue::Activation::Relu;
    else if (name == "Sigmoid") f.act = Epilogue::Activation::Sigmoid;
    else if (name == "Clip" && f.params.size() == 2) f.act = Epilogue::Activation::Clip;
    else if (name == "PRelu" && !f.params.empty()) f.act = Epilogue::Activation::PRelu;
    else info.fail("fused activation '{}' with {} parameters is not supported", name, f.params.size());
    return f;
  }
  bool active() const { return act != Epilogue::Activation::None; }

  // Sets the activation part of `e` (its bias is left alone). PRelu slopes are
  // indexed like the bias (per row for Conv).
  void set(Epilogue& e) const {
    e.activation = act;
    if (act == Epilogue::Activation::Clip) e.clip_min = params[0], e.clip_max = params[1];
    if (act == Epilogue::Activation::PRelu) e.prelu_slope = params.data();
  }
};

}  // namespace gemm
}  // namespace onnxmini
