// An activation fused into a Conv or Gemm node by the graph fusion pass
// (runtime/graph_fusion.cc), read back from the node's private attributes
// (kernels/fused_attributes.h). The kernel turns it into the GEMM epilogue (or
// applies it after its non-GEMM paths), so the activation costs no extra pass
// over memory.
#pragma once
#include <string>
#include <vector>

#include "kernels/fused_attributes.h"
#include "kernels/gemm_engine/gemm.h"
#include "kernels/kernel.h"

namespace onnxmini {
namespace gemm {

struct FusedActivation {
  Epilogue::Activation act = Epilogue::Activation::None;
  std::vector<float> params;

  static FusedActivation read(const KernelInfo& info) {
    FusedActivation f;
    const std::string name = info.attrs.get_string(fused_attr::kActivation, "");
    if (name.empty()) return f;
    f.params = info.attrs.get_floats(fused_attr::kActivationParams, {});
    f.act = fused_activation_from_name(name);
    const bool params_ok = f.act == FusedActivationKind::Clip    ? f.params.size() == 2
                           : f.act == FusedActivationKind::PRelu ? !f.params.empty()
                           : f.act == FusedActivationKind::HardSigmoid ? f.params.size() == 2
                           : f.act == FusedActivationKind::Swish       ? f.params.size() <= 1  // [alpha], default 1
                                                                 : true;
    if (f.act == FusedActivationKind::None || !params_ok)
      info.fail("fused activation '{}' with {} parameters is not supported", name, f.params.size());
    return f;
  }
  bool active() const { return act != Epilogue::Activation::None; }

  // Sets the activation part of `e` (its bias is left alone). PRelu slopes are
  // indexed like the bias (per row for Conv).
  void set(Epilogue& e) const {
    e.activation = act;
    if (act == Epilogue::Activation::Clip) e.clip_min = params[0], e.clip_max = params[1];
    if (act == Epilogue::Activation::PRelu) e.prelu_slope = params.data();
    if (act == Epilogue::Activation::HardSigmoid) e.hard_alpha = params[0], e.hard_beta = params[1];
    if (act == Epilogue::Activation::HardSwish) e.hard_alpha = 1.0f / 6.0f, e.hard_beta = 0.5f;
    if (act == Epilogue::Activation::Swish) e.swish_alpha = params.empty() ? 1.0f : params[0];
  }
};

}  // namespace gemm
}  // namespace onnxmini
