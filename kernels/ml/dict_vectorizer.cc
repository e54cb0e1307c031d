// ai.onnx.ml DictVectorizer: one map {key: value} to a dense row over the
// vocabulary; keys outside the vocabulary are dropped, missing entries are 0
// (or "" for string values).
//
// Layout: X is a map value (keys and values as two 1-D tensors, see
// include/onnxmini/value.h); Y is [1, vocabulary] in the values' dtype, as
// onnxruntime shapes it. The vocabulary index (key -> column) is a hash map
// built at session creation.
#include <cstring>
#include <unordered_map>

#include "kernels/registry.h"

namespace onnxmini {
namespace ml {
namespace {

class DictVectorizerKernel : public Kernel {
 public:
  explicit DictVectorizerKernel(const KernelInfo& info) {
    const auto strings = info.attrs.get_strings("string_vocabulary", {});
    const auto ints = info.attrs.get_ints("int64_vocabulary", {});
    if (strings.empty() == ints.empty())
      info.fail("exactly one of string_vocabulary and int64_vocabulary must be given (got {} strings, {} ints)",
                strings.size(), ints.size());
    string_keys_ = !strings.empty();
    size_ = static_cast<int64_t>(string_keys_ ? strings.size() : ints.size());
    for (size_t i = 0; i < strings.size(); ++i) string_column_.emplace(strings[i], static_cast<int64_t>(i));
    for (size_t i = 0; i < ints.size(); ++i) int_column_.emplace(ints[i], static_cast<int64_t>(i));
  }

  void prepare(KernelContext& ctx) override {
    const Map& m = input_map(ctx);
    ctx.allocate_output(0, m.values.dtype(), {1, size_});
  }

  void compute(KernelContext& ctx) override {
    const Map& m = input_map(ctx);
    Tensor& y = ctx.output(0);
    const DType vt = m.values.dtype();
    if (vt == DType::String) {
      std::string* out = y.mutable_data<std::string>();
      for (int64_t i = 0; i < size_; ++i) out[i].clear();
    } else {
      std::memset(y.raw_mut(), 0, y.nbytes());
    }
    const size_t esize = dtype_size(vt);
    for (int64_t i = 0; i < m.keys.numel(); ++i) {
      const int64_t col = column(m.keys, i);
      if (col < 0) continue;
      if (vt == DType::String) y.mutable_data<std::string>()[col] = m.values.data<std::string>()[i];
      else std::memcpy(static_cast<char*>(y.raw_mut()) + col * esize,
                       static_cast<const char*>(m.values.raw()) + i * esize, esize);
    }
  }

 private:
  const Map& input_map(const KernelContext& ctx) const {
    const Value& v = ctx.input_value(0);
    if (!v.is_map()) ctx.fail("input is a {}; expected a map", v.type_string());
    const Map& m = v.map_value();
    const DType kt = m.keys.dtype();
    if (string_keys_ ? kt != DType::String : kt != DType::Int64)
      ctx.fail("input map has {} keys but the vocabulary is {}", dtype_name(kt), string_keys_ ? "string" : "int64");
    const DType vt = m.values.dtype();
    if (vt != DType::Float32 && vt != DType::Float64 && vt != DType::Int64 && vt != DType::String)
      ctx.fail("input map has {} values; expected float, double, int64 or string", dtype_name(vt));
    if (m.keys.numel() != m.values.numel())
      ctx.fail("input map has {} keys but {} values", m.keys.numel(), m.values.numel());
    return m;
  }

  int64_t column(const Tensor& keys, int64_t i) const {
    if (string_keys_) {
      auto it = string_column_.find(keys.data<std::string>()[i]);
      return it == string_column_.end() ? -1 : it->second;
    }
    auto it = int_column_.find(keys.data<int64_t>()[i]);
    return it == int_column_.end() ? -1 : it->second;
  }

  bool string_keys_ = true;
  int64_t size_ = 0;
  std::unordered_map<std::string, int64_t> string_column_;
  std::unordered_map<int64_t, int64_t> int_column_;
};

ONNXMINI_REGISTER_KERNEL("dict_vectorizer", "ai.onnx.ml", "DictVectorizer", 1, INT_MAX,
                         make_kernel<DictVectorizerKernel>);

}  // namespace
}  // namespace ml
}  // namespace onnxmini

ONNXMINI_KERNEL_FILE(ml_dict_vectorizer);
