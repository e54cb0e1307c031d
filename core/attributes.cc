#include "core/attributes.h"

#include <fmt/format.h>

#include "onnxmini/error.h"

namespace onnxmini {

namespace {
template <typename T>
const char* type_label();
template <> const char* type_label<int64_t>() { return "int"; }
template <> const char* type_label<float>() { return "float"; }
template <> const char* type_label<std::string>() { return "string"; }
template <> const char* type_label<Tensor>() { return "tensor"; }
template <> const char* type_label<std::vector<int64_t>>() { return "ints"; }
template <> const char* type_label<std::vector<float>>() { return "floats"; }
template <> const char* type_label<std::vector<std::string>>() { return "strings"; }

template <typename T>
const T& typed(const Attributes::Item& item, const std::string& name) {
  if (auto* v = std::get_if<T>(&item)) return *v;
  throw Error(ErrorCode::InvalidModel, fmt::format("attribute '{}' is not of type {}", name, type_label<T>()));
}
}  // namespace

const Attributes::Item& Attributes::at(const std::string& name) const {
  auto it = items_.find(name);
  if (it == items_.end()) throw Error(ErrorCode::InvalidModel, fmt::format("required attribute '{}' is missing", name));
  return it->second;
}

int64_t Attributes::get_int(const std::string& name) const { return typed<int64_t>(at(name), name); }
int64_t Attributes::get_int(const std::string& name, int64_t fallback) const {
  return has(name) ? get_int(name) : fallback;
}
float Attributes::get_float(const std::string& name) const { return typed<float>(at(name), name); }
float Attributes::get_float(const std::string& name, float fallback) const {
  return has(name) ? get_float(name) : fallback;
}
std::string Attributes::get_string(const std::string& name) const { return typed<std::string>(at(name), name); }
std::string Attributes::get_string(const std::string& name, const std::string& fallback) const {
  return has(name) ? get_string(name) : fallback;
}
const Tensor& Attributes::get_tensor(const std::string& name) const { return typed<Tensor>(at(name), name); }
std::vector<int64_t> Attributes::get_ints(const std::string& name) const {
  return typed<std::vector<int64_t>>(at(name), name);
}
std::vector<int64_t> Attributes::get_ints(const std::string& name, const std::vector<int64_t>& fallback) const {
  return has(name) ? get_ints(name) : fallback;
}
std::vector<float> Attributes::get_floats(const std::string& name) const {
  return typed<std::vector<float>>(at(name), name);
}
std::vector<float> Attributes::get_floats(const std::string& name, const std::vector<float>& fallback) const {
  return has(name) ? get_floats(name) : fallback;
}
std::vector<std::string> Attributes::get_strings(const std::string& name) const {
  return typed<std::vector<std::string>>(at(name), name);
}
std::vector<std::string> Attributes::get_strings(const std::string& name,
                                                 const std::vector<std::string>& fallback) const {
  return has(name) ? get_strings(name) : fallback;
}

std::string Attributes::render(const Item& item) {
  struct Visitor {
    std::string operator()(int64_t v) const { return std::to_string(v); }
    std::string operator()(float v) const { return fmt::format("{}", v); }
    std::string operator()(const std::string& v) const { return "'" + v + "'"; }
    std::string operator()(const Tensor& t) const {
      return fmt::format("tensor({}, {})", dtype_name(t.dtype()), shape_to_string(t.shape()));
    }
    std::string operator()(const std::vector<int64_t>& v) const { return fmt::format("[{}]", fmt::join(v, ", ")); }
    std::string operator()(const std::vector<float>& v) const { return fmt::format("[{}]", fmt::join(v, ", ")); }
    std::string operator()(const std::vector<std::string>& v) const {
      std::string s = "[";
      for (size_t i = 0; i < v.size(); ++i) s += (i ? ", '" : "'") + v[i] + "'";
      return s + "]";
    }
  };
  return std::visit(Visitor{}, item);
}

}  // namespace onnxmini
