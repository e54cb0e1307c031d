#include "onnxmini/kernel_options.h"

#include "onnxmini/error.h"

namespace onnxmini {

const char* to_string(GemmBackend b) {
  switch (b) {
    case GemmBackend::Builtin: return "builtin";
    case GemmBackend::OpenBLAS: return "openblas";
    case GemmBackend::Eigen: return "eigen";
  }
  return "?";
}
const char* to_string(KernelMode m) { return m == KernelMode::Fast ? "fast" : "reference"; }
GemmBackend gemm_backend_from_string(const std::string& s) {
  if (s == "builtin") return GemmBackend::Builtin;
  if (s == "openblas") return GemmBackend::OpenBLAS;
  if (s == "eigen") return GemmBackend::Eigen;
  throw Error(ErrorCode::InvalidArgument, "unknown GEMM backend '" + s + "' (expected builtin, openblas or eigen)");
}
KernelMode kernel_mode_from_string(const std::string& s) {
  if (s == "fast") return KernelMode::Fast;
  if (s == "reference") return KernelMode::Reference;
  throw Error(ErrorCode::InvalidArgument, "unknown kernel mode '" + s + "' (expected fast or reference)");
}

}  // namespace onnxmini
