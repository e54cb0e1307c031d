// The newest opset of every operator domain, and the newest IR version, that
// this build knows: a model importing a newer one is refused (the meaning of
// its ops may have changed), unless SessionOptions::allow_unknown_opsets says
// to try anyway. A node of a domain not listed here is always refused.
//
// The ONE place these numbers live. tests/runtime/test_known_opsets.cc checks
// them against pip's onnx (onnx.defs.onnx_opset_version(), onnx.IR_VERSION,
// the ai.onnx.ml schemas), so an onnx upgrade shows up as a test failure.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace onnxmini {

struct Graph;

struct KnownDomain {
  const char* domain;  // "" for ai.onnx
  int64_t newest_opset;
};

// ai.onnx, ai.onnx.ml, com.microsoft, ai.onnx.preview.training, ai.onnx.preview.
const std::vector<KnownDomain>& known_domains();
// The newest ModelProto.ir_version this build reads.
int64_t newest_ir_version();

// Refuses (onnxmini::Error, InvalidModel) an IR version or opset import newer than
// known (skipped when `allow_unknown_opsets`), and a node - in any subgraph too -
// whose domain is unknown (always: no kernel could run it). Messages name the
// domain and opset, or the node.
void check_known_opsets(const Graph& g, bool allow_unknown_opsets);

}  // namespace onnxmini
