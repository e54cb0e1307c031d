// Node attributes, parsed once at session creation from onnx.AttributeProto into
// plain C++ values, so kernels never touch protobuf.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <variant>
#include <vector>

#include "onnxmini/tensor.h"

namespace onnxmini {

class Attributes {
 public:
  using Item = std::variant<int64_t, float, std::string, Tensor, std::vector<int64_t>, std::vector<float>,
                            std::vector<std::string>>;

  void set(const std::string& name, Item value) { items_[name] = std::move(value); }
  bool has(const std::string& name) const { return items_.count(name) != 0; }
  const std::map<std::string, Item>& items() const { return items_; }

  // Typed getters. The one-argument forms throw InvalidModel naming the attribute
  // when it is missing; all throw when it has another type.
  int64_t get_int(const std::string& name) const;
  int64_t get_int(const std::string& name, int64_t fallback) const;
  float get_float(const std::string& name) const;
  float get_float(const std::string& name, float fallback) const;
  std::string get_string(const std::string& name) const;
  std::string get_string(const std::string& name, const std::string& fallback) const;
  const Tensor& get_tensor(const std::string& name) const;
  std::vector<int64_t> get_ints(const std::string& name) const;
  std::vector<int64_t> get_ints(const std::string& name, const std::vector<int64_t>& fallback) const;
  std::vector<float> get_floats(const std::string& name) const;
  std::vector<float> get_floats(const std::string& name, const std::vector<float>& fallback) const;
  std::vector<std::string> get_strings(const std::string& name) const;
  std::vector<std::string> get_strings(const std::string& name, const std::vector<std::string>& fallback) const;

  // For `onnxmini info`: "3", "[1, 2]", "'NOTSET'", "tensor(float, 2x3)".
  static std::string render(const Item& item);

 private:
  const Item& at(const std::string& name) const;
  std::map<std::string, Item> items_;
};

}  // namespace onnxmini
