// Helpers for the element-wise kernel tests: random tensors of every numeric
// dtype, and one-node models run in fast and reference mode (via the public
// Session API and tests/common/model_builder.h).
#pragma once
#include <functional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "core/float16.h"
#include "tests/common/model_builder.h"

namespace onnxmini {
namespace test {

// Uniform values in [lo, hi): floats as is, integers floored, bool as (v > 0).
inline Tensor random_values(DType dtype, const Shape& shape, uint32_t seed, double lo = -4.0, double hi = 4.0) {
  Tensor t(dtype, shape);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> dist(lo, hi);
  void* p = t.raw_mut();
  for (int64_t i = 0; i < t.numel(); ++i) {
    const double v = dist(rng);
    const auto iv = static_cast<int64_t>(std::floor(v));
    switch (dtype) {
      case DType::Float32: static_cast<float*>(p)[i] = static_cast<float>(v); break;
      case DType::Float64: static_cast<double*>(p)[i] = v; break;
      case DType::Float16: static_cast<uint16_t*>(p)[i] = float_to_half(static_cast<float>(v)); break;
      case DType::BFloat16: static_cast<uint16_t*>(p)[i] = float_to_bfloat16(static_cast<float>(v)); break;
      case DType::Int8: static_cast<int8_t*>(p)[i] = static_cast<int8_t>(iv); break;
      case DType::Int16: static_cast<int16_t*>(p)[i] = static_cast<int16_t>(iv); break;
      case DType::Int32: static_cast<int32_t*>(p)[i] = static_cast<int32_t>(iv); break;
      case DType::Int64: static_cast<int64_t*>(p)[i] = iv; break;
      case DType::UInt8: static_cast<uint8_t*>(p)[i] = static_cast<uint8_t>(iv); break;
      case DType::UInt16: static_cast<uint16_t*>(p)[i] = static_cast<uint16_t>(iv); break;
      case DType::UInt32: static_cast<uint32_t*>(p)[i] = static_cast<uint32_t>(iv); break;
      case DType::UInt64: static_cast<uint64_t*>(p)[i] = static_cast<uint64_t>(iv); break;
      case DType::Bool: static_cast<bool*>(p)[i] = v > 0.5 * (lo + hi); break;
      default: throw Error(ErrorCode::InvalidArgument, "random_values: unsupported dtype");
    }
  }
  return t;
}

// Integer tensors with no zero (divisors): |v| in [1, 4], random sign when signed.
inline Tensor random_nonzero(DType dtype, const Shape& shape, uint32_t seed) {
  Tensor t = random_values(dtype, shape, seed, 1.0, 5.0);
  Tensor sign = random_values(DType::Bool, shape, seed + 1, 0.0, 1.0);
  const bool is_signed = dtype == DType::Int8 || dtype == DType::Int16 || dtype == DType::Int32 ||
                         dtype == DType::Int64;
  if (!is_signed) return t;
  for (int64_t i = 0; i < t.numel(); ++i) {
    if (!sign.data<bool>()[i]) continue;
    switch (dtype) {
      case DType::Int8: t.mutable_data<int8_t>()[i] *= -1; break;
      case DType::Int16: t.mutable_data<int16_t>()[i] *= -1; break;
      case DType::Int32: t.mutable_data<int32_t>()[i] *= -1; break;
      default: t.mutable_data<int64_t>()[i] *= -1; break;
    }
  }
  return t;
}

using NodeSetup = std::function<void(NodeBuilder&)>;

// One node `op` with inputs named I0, I1, ... (an undefined Tensor = absent
// optional input) and output Y; returns the session.
inline std::unique_ptr<Session> one_node_session(int64_t opset, const std::string& op, const std::vector<Tensor>& inputs,
                                                 const NodeSetup& setup, const SessionOptions& options) {
  ModelBuilder mb(opset);
  std::vector<std::string> names;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i].defined()) {
      names.emplace_back("");
      continue;
    }
    names.push_back("I" + std::to_string(i));
    mb.input(names.back(), inputs[i].dtype(), inputs[i].shape());
  }
  NodeBuilder n = mb.node(op, names, {"Y"});
  n.name("n1");
  if (setup) setup(n);
  mb.output("Y");
  return mb.session(options);
}

// Runs the node once and returns Y.
inline Tensor run_op(int64_t opset, const std::string& op, const std::vector<Tensor>& inputs,
                     const NodeSetup& setup = nullptr, KernelMode mode = KernelMode::Fast, int threads = 1) {
  auto s = one_node_session(opset, op, inputs, setup, options_for(mode, threads));
  std::vector<std::pair<std::string, Tensor>> feeds;
  for (size_t i = 0; i < inputs.size(); ++i)
    if (inputs[i].defined()) feeds.emplace_back("I" + std::to_string(i), inputs[i]);
  return run_single(*s, feeds);
}

// The fast kernels (4 threads) must agree bit for bit with the reference kernels
// (both apply the same scalar function, only the traversal differs), except
// where the fast path uses an approximation: pass its tolerance then.
inline ::testing::AssertionResult fast_matches_reference(int64_t opset, const std::string& op,
                                                         const std::vector<Tensor>& inputs,
                                                         const NodeSetup& setup = nullptr, double atol = 0.0,
                                                         double rtol = 0.0) {
  Tensor fast = run_op(opset, op, inputs, setup, KernelMode::Fast, 4);
  Tensor ref = run_op(opset, op, inputs, setup, KernelMode::Reference, 1);
  return tensors_near(fast, ref, atol, rtol);
}

// Error message of running the node ("" when it succeeds).
inline std::string op_error(int64_t opset, const std::string& op, const std::vector<Tensor>& inputs,
                            const NodeSetup& setup = nullptr) {
  return error_message([&] { run_op(opset, op, inputs, setup); });
}

}  // namespace test
}  // namespace onnxmini
