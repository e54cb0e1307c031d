// Fuzz target: model bytes -> Session::load_from_bytes -> run with generated inputs.
// Every onnxmini::Error is an accepted outcome (the model was refused with a message);
// anything else - a sanitizer report, a signal, another exception type escaping the
// API, a hang past -timeout - is a finding. Inputs are small tensors shaped by the
// model's declared dims (unknown or symbolic dims: 2) with values from a fixed
// generator, so a crash reproduces from the model bytes alone.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "fuzz_limits.h"
#include "onnxmini/error.h"
#include "onnxmini/session.h"

namespace {

using onnxmini::DType;

// Inputs bigger than this are not generated: the model is only loaded. Keeps one
// execution in milliseconds; large declared shapes are the loader's business.
constexpr int64_t kMaxInputElements = 1 << 16;

void fill(onnxmini::Tensor& t) {
  uint32_t state = 12345;
  auto next = [&state]() { return state = state * 1103515245u + 12345u; };
  const int64_t n = t.numel();
  switch (t.dtype()) {
    case DType::Float32: {
      float* p = t.mutable_data<float>();
      for (int64_t i = 0; i < n; ++i) p[i] = static_cast<float>(static_cast<int>(next() >> 16) % 9 - 4) * 0.5f;
      break;
    }
    case DType::Float64: {
      double* p = t.mutable_data<double>();
      for (int64_t i = 0; i < n; ++i) p[i] = static_cast<double>(static_cast<int>(next() >> 16) % 9 - 4) * 0.5;
      break;
    }
    case DType::Int64: {  // small non-negative: valid indices, axes and counts for most ops
      int64_t* p = t.mutable_data<int64_t>();
      for (int64_t i = 0; i < n; ++i) p[i] = (next() >> 16) % 3;
      break;
    }
    case DType::Int32: {
      int32_t* p = t.mutable_data<int32_t>();
      for (int64_t i = 0; i < n; ++i) p[i] = (next() >> 16) % 3;
      break;
    }
    case DType::String: {
      std::string* p = t.mutable_data<std::string>();
      for (int64_t i = 0; i < n; ++i) p[i] = (next() >> 16) % 2 ? "a" : "bc";
      break;
    }
    default: {  // other integer, bool and half types: small bit patterns (0 or 1 in most encodings)
      auto* p = static_cast<uint8_t*>(t.raw_mut());
      const size_t bytes = t.nbytes();
      for (size_t i = 0; i < bytes; ++i) p[i] = 0;
      const size_t step = onnxmini::dtype_size(t.dtype());
      for (size_t i = 0; step != 0 && i < bytes; i += step) p[i] = static_cast<uint8_t>((next() >> 16) % 2);
    }
  }
}

// False when an input cannot be generated (not a tensor, an unknown dtype, too big).
bool make_feeds(const std::vector<onnxmini::ValueInfo>& inputs,
                std::vector<std::pair<std::string, onnxmini::Value>>& feeds) {
  for (const auto& in : inputs) {
    if (in.type.rfind("tensor(", 0) != 0 || !onnxmini::dtype_is_valid(static_cast<int32_t>(in.dtype))) return false;
    if (in.dtype == DType::Complex64 || in.dtype == DType::Complex128) return false;
    onnxmini::Shape shape;
    int64_t elements = 1;
    for (const auto& d : in.shape) {
      const int64_t dim = d.value >= 0 ? d.value : 2;
      if (dim > kMaxInputElements) return false;
      elements *= dim;  // both factors <= 2^16 after the checks, so no overflow
      if (elements > kMaxInputElements) return false;
      shape.push_back(dim);
    }
    onnxmini::Tensor t(in.dtype, shape);
    fill(t);
    feeds.emplace_back(in.name, onnxmini::Value(std::move(t)));
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  onnxmini_fuzz::set_limits();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  onnxmini::SessionOptions options;
  options.intra_op_num_threads = 1;
  // Half the inputs at the default level (all rewrites, as users run), half with none, so that a
  // fault is found both in the rewrites' pattern matching and in the kernels they would replace.
  if ((size & 1) == 0) options.graph_optimization_level = 0;
  std::unique_ptr<onnxmini::Session> session;
  try {
    session = onnxmini::Session::load_from_bytes(data, size, options);
  } catch (const onnxmini::Error&) {
    return 0;
  }
  std::vector<std::pair<std::string, onnxmini::Value>> feeds;
  if (!make_feeds(session->inputs(), feeds)) return 0;
  try {
    session->run(feeds);
    session->run(feeds);  // the second run takes the memory plan recorded by the first
  } catch (const onnxmini::Error&) {
  }
  return 0;
}
