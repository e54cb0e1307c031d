// Helpers for the sequence and optional kernel tests: typed graph inputs the
// ModelBuilder has no shorthand for, and error expectations.
#pragma once
#include <functional>
#include <initializer_list>
#include <string>

#include "tests/common/model_builder.h"

namespace onnxmini {
namespace test {

// A graph input of type seq(tensor(dtype)).
inline void sequence_input(ModelBuilder& mb, const std::string& name, DType dtype) {
  auto* vi = mb.proto().mutable_graph()->add_input();
  vi->set_name(name);
  vi->mutable_type()->mutable_sequence_type()->mutable_elem_type()->mutable_tensor_type()->set_elem_type(
      static_cast<int32_t>(dtype));
}

// A graph input of type optional(tensor(dtype)).
inline void optional_input(ModelBuilder& mb, const std::string& name, DType dtype) {
  auto* vi = mb.proto().mutable_graph()->add_input();
  vi->set_name(name);
  vi->mutable_type()->mutable_optional_type()->mutable_elem_type()->mutable_tensor_type()->set_elem_type(
      static_cast<int32_t>(dtype));
}

inline Value float_sequence(std::initializer_list<std::vector<float>> items) {
  std::vector<Value> v;
  for (const auto& x : items) v.emplace_back(Tensor::from_vector<float>({static_cast<int64_t>(x.size())}, x));
  return Value::sequence(std::move(v));
}

inline void expect_error_containing(const std::function<void()>& f, std::initializer_list<const char*> parts) {
  try {
    f();
    ADD_FAILURE() << "expected an error";
  } catch (const Error& e) {
    for (const char* p : parts) EXPECT_NE(std::string(e.what()).find(p), std::string::npos) << e.what();
  }
}

}  // namespace test
}  // namespace onnxmini
