// The kernel table: (domain, op type, opset range) -> factory. Each kernel file
// registers its ops next to the kernel with ONNXMINI_REGISTER_KERNEL, naming the
// kernel explicitly (the name traces, `onnxmini info` and docs/ops.md show, so
// renaming a file changes none of them), and ends with ONNXMINI_KERNEL_FILE.
// The table is checked against docs/ops.md by a test, so coverage changes show
// up as a reviewable diff.
//
// Linking: the build generates a list of every ONNXMINI_KERNEL_FILE of kernels/
// (cmake/KernelFiles.cmake, a missing one fails the build) and registry.cc reads
// each file's anchor, so the linker keeps every kernel object file - and with it
// its static registrations - whether the library is linked static or shared.
#pragma once
#include <climits>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "kernels/kernel.h"

namespace onnxmini {

using KernelFactory = std::function<std::unique_ptr<Kernel>(const KernelInfo&)>;

struct KernelRegistration {
  std::string kernel;   // explicit kernel name ("conv"), shown in traces and docs/ops.md
  std::string domain;   // "" (ai.onnx) or "ai.onnx.ml"
  std::string op_type;
  int since_version = 1;
  int until_version = INT_MAX;  // inclusive
  KernelFactory factory;
  std::string source_file;  // where it is registered ("kernels/nn/conv.cc"), for docs/ops.md
};

class KernelRegistry {
 public:
  static KernelRegistry& instance();
  void add(KernelRegistration reg);
  // The registration covering (domain, op, opset), or nullptr.
  const KernelRegistration* find(const std::string& domain, const std::string& op_type, int opset) const;
  // True when some version of the op is registered (to tell "unknown op" from "unsupported opset").
  bool knows(const std::string& domain, const std::string& op_type) const;
  const std::vector<KernelRegistration>& all() const { return regs_; }

 private:
  std::vector<KernelRegistration> regs_;
};

struct KernelRegistrar {
  KernelRegistrar(const char* kernel, const char* domain, const char* op_type, int since, int until, KernelFactory f,
                  const char* file);
};

// Number of kernel files whose anchors registry.cc reads (the generated list).
int linked_kernel_files();

// Factory helper for kernels constructed from a KernelInfo.
template <typename K>
std::unique_ptr<Kernel> make_kernel(const KernelInfo& info) {
  return std::make_unique<K>(info);
}

#define ONNXMINI_CONCAT_INNER(a, b) a##b
#define ONNXMINI_CONCAT(a, b) ONNXMINI_CONCAT_INNER(a, b)
// ONNXMINI_REGISTER_KERNEL("activations", "", "Relu", 6, 13, make_kernel<ReluKernel>);
// (kernel name, domain, op, since, until: inclusive, INT_MAX = open, factory)
#define ONNXMINI_REGISTER_KERNEL(kernel, domain, op, since, until, factory)                 \
  static ::onnxmini::KernelRegistrar ONNXMINI_CONCAT(onnxmini_kernel_registrar_, __LINE__)( \
      kernel, domain, op, since, until, factory, __FILE__)

// Once per kernel file, at file scope outside any namespace: ONNXMINI_KERNEL_FILE(nn_conv);
// (the folder and file name). Defines the anchor registry.cc reads.
#define ONNXMINI_KERNEL_FILE(id)                        \
  namespace onnxmini::kernel_files {                    \
  extern const int id;                                  \
  const int id = 1;                                     \
  }                                                     \
  static_assert(true, "")

}  // namespace onnxmini
