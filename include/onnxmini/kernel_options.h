// Which kernels run: the GEMM backend and fast vs reference kernels, plus the
// node layout of profiles. Plain enums shared by every layer (core/kernel_options.cc).
#pragma once
#include "onnxmini/export.h"
#include <string>

ONNXMINI_API_BEGIN
namespace onnxmini {

// Which implementation serves the GEMM interface (Gemm, MatMul, Conv, Einsum).
enum class GemmBackend { Builtin, OpenBLAS, Eigen };
// Fast kernels, or the plain loop-by-loop reference kernels used as test oracles.
enum class KernelMode { Fast, Reference };
// Node events in a profile: the fence triple (onnxruntime <= 1.20) or kernel_time only (>= 1.21).
enum class ProfileLayout { Fences, KernelOnly };

const char* to_string(GemmBackend b);
const char* to_string(KernelMode m);
GemmBackend gemm_backend_from_string(const std::string& s);  // throws InvalidArgument
KernelMode kernel_mode_from_string(const std::string& s);    // throws InvalidArgument

}  // namespace onnxmini
ONNXMINI_API_END
