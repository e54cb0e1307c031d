#include "kernels/registry.h"

#include <algorithm>
#include <filesystem>

namespace onnxmini {

std::string KernelInfo::label() const {
  return op_type + " '" + name + "'";
}

void KernelInfo::require_dtype(size_t i, std::initializer_list<DType> allowed) const {
  if (i >= input_dtypes.size() || input_dtypes[i] == DType::Undefined) return;
  std::string names;
  for (DType d : allowed) {
    if (d == input_dtypes[i]) return;
    names += std::string(names.empty() ? "" : ", ") + dtype_name(d);
  }
  unsupported("input {} has dtype {}, which this kernel does not support (supported: {})", i,
              dtype_name(input_dtypes[i]), names);
}

KernelRegistry& KernelRegistry::instance() {
  static KernelRegistry registry;
  return registry;
}

void KernelRegistry::add(KernelRegistration reg) { regs_.push_back(std::move(reg)); }

const KernelRegistration* KernelRegistry::find(const std::string& domain, const std::string& op_type,
                                               int opset) const {
  for (const auto& r : regs_)
    if (r.op_type == op_type && r.domain == domain && opset >= r.since_version && opset <= r.until_version) return &r;
  return nullptr;
}

bool KernelRegistry::knows(const std::string& domain, const std::string& op_type) const {
  for (const auto& r : regs_)
    if (r.op_type == op_type && r.domain == domain) return true;
  return false;
}

KernelRegistrar::KernelRegistrar(const char* domain, const char* op_type, int since, int until, KernelFactory f,
                                 const char* file) {
  KernelRegistry::instance().add({domain, op_type, since, until, std::move(f), file});
}

std::vector<OpSupport> supported_ops() {
  std::vector<OpSupport> ops;
  for (const auto& r : KernelRegistry::instance().all()) {
    std::filesystem::path file(r.source_file);
    std::string kernel = file.parent_path().filename().string() + "/" + file.filename().string();
    ops.push_back({r.domain, r.op_type, r.since_version, r.until_version, kernel});
  }
  std::sort(ops.begin(), ops.end(), [](const OpSupport& a, const OpSupport& b) {
    return std::tie(a.domain, a.op_type, a.since_version) < std::tie(b.domain, b.op_type, b.since_version);
  });
  return ops;
}

// ---- KernelContext ----

const Value& KernelContext::input_value(size_t i) const {
  if (!has_input(i)) fail("input {} is missing", i);
  return *inputs_[i];
}

const Tensor& KernelContext::input(size_t i) const {
  const Value& v = input_value(i);
  if (!v.is_tensor()) fail("input {} is a {}, expected a tensor", i, v.type_string());
  return v.tensor();
}

Tensor& KernelContext::allocate_output(size_t i, DType dtype, const Shape& shape) {
  if (i >= outputs_.size()) fail("output {} does not exist", i);
  Tensor t;
  if (bound_) t = bound_(i, dtype, shape);
  if (!t.defined()) t = allocator_(dtype, shape);
  outputs_[i] = Value(std::move(t));
  return const_cast<Tensor&>(outputs_[i].tensor());
}

void KernelContext::set_output(size_t i, Value value) {
  if (i >= outputs_.size()) fail("output {} does not exist", i);
  outputs_[i] = std::move(value);
}

Tensor& KernelContext::output(size_t i) {
  if (i >= outputs_.size() || !outputs_[i].is_tensor()) fail("output {} was not allocated", i);
  return const_cast<Tensor&>(outputs_[i].tensor());
}

}  // namespace onnxmini
