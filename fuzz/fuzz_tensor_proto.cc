// Fuzz target: serialized onnx.TensorProto / SequenceProto / OptionalProto bytes ->
// parse_value_pb (the reader of test_data_set_N/*.pb files and of the Python
// package's tensor bytes). An onnxmini::Error is an accepted outcome. A tensor that
// parses must survive a round trip: serialize, parse again, same dtype, shape and
// bytes - a mismatch aborts (a finding), as does any crash or other exception.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>

#include "fuzz_limits.h"
#include "onnxmini/error.h"
#include "onnxmini/tensor_io.h"

namespace {

bool same_tensor(const onnxmini::Tensor& a, const onnxmini::Tensor& b) {
  if (a.dtype() != b.dtype() || a.shape() != b.shape()) return false;
  if (a.dtype() == onnxmini::DType::String) {
    for (int64_t i = 0; i < a.numel(); ++i)
      if (a.data<std::string>()[i] != b.data<std::string>()[i]) return false;
    return true;
  }
  return a.nbytes() == 0 || std::memcmp(a.raw(), b.raw(), a.nbytes()) == 0;
}

void parse_as(const std::string& bytes, const char* onnx_type) {
  onnxmini::Value value;
  try {
    value = onnxmini::parse_value_pb(bytes, onnx_type);
  } catch (const onnxmini::Error&) {
    return;
  }
  if (!value.is_tensor()) return;
  const onnxmini::Tensor& t = value.tensor();
  const onnxmini::Tensor again = onnxmini::parse_tensor_pb(onnxmini::serialize_tensor_pb(t));
  if (!same_tensor(t, again)) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  onnxmini_fuzz::set_limits();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  // The bytes do not say which message they hold: the same bytes through each reader.
  parse_as(bytes, "tensor(float)");
  parse_as(bytes, "seq(tensor(float))");
  parse_as(bytes, "optional(tensor(float))");
  return 0;
}
