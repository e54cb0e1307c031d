// Runs one ONNX node (built with tests/common/model_builder.h) in fast or
// reference mode, for the layout / indexing / reduction kernel tests.
#pragma once
#include <functional>
#include <numeric>
#include <random>

#include "tests/common/model_builder.h"

namespace onnxmini {
namespace test {

using AttrSetter = std::function<void(NodeBuilder&)>;

// Runs `op` with `inputs` fed as graph inputs (an undefined Tensor is an
// absent optional input). The node is named "n1".
inline std::vector<Tensor> run_node(const std::string& op, int opset, const std::vector<Tensor>& inputs,
                                    const AttrSetter& attrs, size_t num_outputs, KernelMode mode, int threads = 1) {
  ModelBuilder mb(opset);
  std::vector<std::string> names;
  std::vector<std::pair<std::string, Tensor>> feeds;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i].defined()) {
      names.push_back("");
      continue;
    }
    const std::string name = "in" + std::to_string(i);
    mb.input(name, inputs[i].dtype(), {}, false);
    names.push_back(name);
    feeds.emplace_back(name, inputs[i]);
  }
  std::vector<std::string> outs;
  for (size_t i = 0; i < num_outputs; ++i) outs.push_back("out" + std::to_string(i));
  NodeBuilder nb = mb.node(op, names, outs);
  nb.name("n1");
  if (attrs) attrs(nb);
  for (const auto& o : outs) mb.output(o);
  auto session = mb.session(options_for(mode, threads));
  return run_all(*session, feeds);
}

// Fast (4 threads) and reference (1 thread) results, compared exactly for
// data movement ops or within tolerance for arithmetic ones.
inline ::testing::AssertionResult fast_matches_reference(const std::string& op, int opset,
                                                         const std::vector<Tensor>& inputs, const AttrSetter& attrs,
                                                         size_t num_outputs = 1, double atol = 0, double rtol = 0) {
  auto fast = run_node(op, opset, inputs, attrs, num_outputs, KernelMode::Fast, 4);
  auto ref = run_node(op, opset, inputs, attrs, num_outputs, KernelMode::Reference, 1);
  for (size_t i = 0; i < num_outputs; ++i) {
    if (fast[i].dtype() == DType::String && ref[i].dtype() == DType::String) {  // tensors_near reads numbers only
      if (fast[i].shape() != ref[i].shape()) return ::testing::AssertionFailure() << "string shapes differ";
      for (int64_t k = 0; k < fast[i].numel(); ++k)
        if (fast[i].data<std::string>()[k] != ref[i].data<std::string>()[k])
          return ::testing::AssertionFailure() << "string element " << k << " differs";
      continue;
    }
    auto r = tensors_near(fast[i], ref[i], atol, rtol);
    if (!r) return r << " (output " << i << ")";
  }
  return ::testing::AssertionSuccess();
}

// The error message of running the node in fast mode ("" if it succeeded).
inline std::string node_error(const std::string& op, int opset, const std::vector<Tensor>& inputs,
                              const AttrSetter& attrs, size_t num_outputs = 1) {
  return error_message([&] { run_node(op, opset, inputs, attrs, num_outputs, KernelMode::Fast); });
}

inline Tensor iota_tensor(DType dtype, const Shape& shape) {
  Tensor t(dtype, shape);
  for (int64_t i = 0; i < t.numel(); ++i) {
    switch (dtype) {
      case DType::Float32: t.mutable_data<float>()[i] = static_cast<float>(i); break;
      case DType::Float64: t.mutable_data<double>()[i] = static_cast<double>(i); break;
      case DType::Int32: t.mutable_data<int32_t>()[i] = static_cast<int32_t>(i); break;
      case DType::Int64: t.mutable_data<int64_t>()[i] = i; break;
      case DType::UInt8: t.mutable_data<uint8_t>()[i] = static_cast<uint8_t>(i * 7); break;
      case DType::String: t.mutable_data<std::string>()[i] = "s" + std::to_string(i); break;
      default: throw Error(ErrorCode::InvalidArgument, "iota_tensor: unsupported dtype");
    }
  }
  return t;
}

inline Tensor i64(const std::vector<int64_t>& v) { return Tensor::from_vector<int64_t>({static_cast<int64_t>(v.size())}, v); }

inline std::vector<double> values_of(const Tensor& t) {
  std::vector<double> v;
  for (int64_t i = 0; i < t.numel(); ++i) v.push_back(t.get_as_double(i));
  return v;
}

inline Shape random_shape(std::mt19937& rng, int rank, int64_t max_dim) {
  Shape s;
  for (int d = 0; d < rank; ++d) s.push_back(std::uniform_int_distribution<int64_t>(1, max_dim)(rng));
  return s;
}

}  // namespace test
}  // namespace onnxmini
