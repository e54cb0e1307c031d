// Printing Session::explain for `onnxmini run --explain` and `onnxmini info --kernels`:
// a header (optimizer level and its rewrites, where the shapes came from, threads)
// and one row per node, body nodes indented under their If/Loop/Scan.
#pragma once
#include <string>
#include <vector>

#include "onnxmini/session.h"

namespace onnxmini_cli {

struct ExplainHeader {
  std::string model;
  int optimization_level = 0;
  std::vector<onnxmini::GraphRewrite> rewrites;
  std::string shapes_from;  // "observed in one untimed run (...)" or "declared ..."
  int threads = 1;
  std::string kernels, gemm;  // the session's kernel set and GEMM backend
};

// Text: the header, then aligned columns node / op / kernel / variant / isa / threads / blocking.
std::string explain_text(const ExplainHeader& h, const std::vector<onnxmini::KernelExplanation>& rows);
// One JSON object: the header's fields and "nodes", one object per row.
std::string explain_json(const ExplainHeader& h, const std::vector<onnxmini::KernelExplanation>& rows);

}  // namespace onnxmini_cli
