// The kernel table: (domain, op type, opset range) -> factory. Each kernel file
// registers its ops next to the kernel with ONNXMINI_REGISTER_KERNEL; the
// table is checked against docs/ops.md by a test, so coverage changes show up
// as a reviewable diff.
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
  std::string domain;   // "" (ai.onnx) or "ai.onnx.ml"
  std::string op_type;
  int since_version = 1;
  int until_version = INT_MAX;  // inclusive
  KernelFactory factory;
  std::string source_file;
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
  KernelRegistrar(const char* domain, const char* op_type, int since, int until, KernelFactory f, const char* file);
};

// Factory helper for kernels constructed from a KernelInfo.
template <typename K>
std::unique_ptr<Kernel> make_kernel(const KernelInfo& info) {
  return std::make_unique<K>(info);
}

#define ONNXMINI_CONCAT_INNER(a, b) a##b
#define ONNXMINI_CONCAT(a, b) ONNXMINI_CONCAT_INNER(a, b)
// ONNXMINI_REGISTER_KERNEL("", "Relu", 6, 13, make_kernel<ReluKernel>);  (until: inclusive, INT_MAX = open)
#define ONNXMINI_REGISTER_KERNEL(domain, op, since, until, factory)                         \
  static ::onnxmini::KernelRegistrar ONNXMINI_CONCAT(onnxmini_kernel_registrar_, __LINE__)( \
      domain, op, since, until, factory, __FILE__)

}  // namespace onnxmini
