// ai.onnx.ml OneHotEncoder and CategoryMapper: categorical values to indices.
//
// Layout: X any shape. OneHotEncoder writes Y = X.shape + [categories] float,
// one row of zeros with a 1 at the category's position per element (numeric
// X is truncated to int64 first, as onnxruntime does). CategoryMapper maps
// string -> int64 or int64 -> string through the paired cats_strings /
// cats_int64s lists, elementwise, same shape. Lookup tables are hash maps
// built at session creation.
#include <algorithm>
#include <unordered_map>

#include "kernels/registry.h"

namespace onnxmini {
namespace ml {
namespace {

class OneHotEncoderKernel : public Kernel {
 public:
  explicit OneHotEncoderKernel(const KernelInfo& info) : zeros_(info.attrs.get_int("zeros", 1) != 0) {
    const auto ints = info.attrs.get_ints("cats_int64s", {});
    const auto strings = info.attrs.get_strings("cats_strings", {});
    if (ints.empty() == strings.empty())
      info.fail("exactly one of cats_int64s and cats_strings must be given (got {} ints, {} strings)", ints.size(),
                strings.size());
    strings_ = !strings.empty();
    categories_ = static_cast<int64_t>(strings_ ? strings.size() : ints.size());
    // A repeated category keeps its first position.
    for (size_t i = 0; i < ints.size(); ++i) int_index_.emplace(ints[i], static_cast<int64_t>(i));
    for (size_t i = 0; i < strings.size(); ++i) string_index_.emplace(strings[i], static_cast<int64_t>(i));
  }

  void prepare(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    const DType t = x.dtype();
    if (strings_ ? t != DType::String
                 : (t != DType::Int64 && t != DType::Int32 && t != DType::Float32 && t != DType::Float64))
      ctx.fail("input has dtype {}; the categories are {}", dtype_name(t),
               strings_ ? "strings (expected string input)" : "int64 (expected int64, int32, float or double input)");
    Shape out = x.shape();
    out.push_back(categories_);
    ctx.allocate_output(0, DType::Float32, out);
  }

  void compute(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    float* y = ctx.output(0).mutable_data<float>();
    std::fill(y, y + x.numel() * categories_, 0.0f);
    for (int64_t i = 0; i < x.numel(); ++i) {
      const int64_t k = position(x, i);
      if (k >= 0) {
        y[i * categories_ + k] = 1.0f;
      } else if (!zeros_) {
        if (strings_) ctx.fail("input element {} ('{}') is not a category and zeros is 0", i, x.data<std::string>()[i]);
        ctx.fail("input element {} ({}) is not a category and zeros is 0", i, int_value(x, i));
      }
    }
  }

 private:
  static int64_t int_value(const Tensor& x, int64_t i) {
    switch (x.dtype()) {
      case DType::Int64: return x.data<int64_t>()[i];
      case DType::Int32: return x.data<int32_t>()[i];
      case DType::Float32: return static_cast<int64_t>(x.data<float>()[i]);
      default: return static_cast<int64_t>(x.data<double>()[i]);
    }
  }

  int64_t position(const Tensor& x, int64_t i) const {
    if (strings_) {
      auto it = string_index_.find(x.data<std::string>()[i]);
      return it == string_index_.end() ? -1 : it->second;
    }
    auto it = int_index_.find(int_value(x, i));
    return it == int_index_.end() ? -1 : it->second;
  }

  bool zeros_, strings_ = false;
  int64_t categories_ = 0;
  std::unordered_map<int64_t, int64_t> int_index_;
  std::unordered_map<std::string, int64_t> string_index_;
};

class CategoryMapperKernel : public Kernel {
 public:
  explicit CategoryMapperKernel(const KernelInfo& info)
      : default_int_(info.attrs.get_int("default_int64", -1)),
        default_string_(info.attrs.get_string("default_string", "_Unused")) {
    const auto ints = info.attrs.get_ints("cats_int64s");
    const auto strings = info.attrs.get_strings("cats_strings");
    if (ints.size() != strings.size())
      info.fail("cats_int64s has {} values but cats_strings has {}; they must be equal", ints.size(), strings.size());
    // A repeated key keeps its first partner.
    for (size_t i = 0; i < ints.size(); ++i) {
      to_string_.emplace(ints[i], strings[i]);
      to_int_.emplace(strings[i], ints[i]);
    }
  }

  void prepare(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    if (x.dtype() == DType::String) ctx.allocate_output(0, DType::Int64, x.shape());
    else if (x.dtype() == DType::Int64) ctx.allocate_output(0, DType::String, x.shape());
    else ctx.fail("input has dtype {}; expected string or int64", dtype_name(x.dtype()));
  }

  void compute(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    Tensor& y = ctx.output(0);
    if (x.dtype() == DType::String) {
      const std::string* in = x.data<std::string>();
      int64_t* out = y.mutable_data<int64_t>();
      for (int64_t i = 0; i < x.numel(); ++i) {
        auto it = to_int_.find(in[i]);
        out[i] = it == to_int_.end() ? default_int_ : it->second;
      }
    } else {
      const int64_t* in = x.data<int64_t>();
      std::string* out = y.mutable_data<std::string>();
      for (int64_t i = 0; i < x.numel(); ++i) {
        auto it = to_string_.find(in[i]);
        out[i] = it == to_string_.end() ? default_string_ : it->second;
      }
    }
  }

 private:
  int64_t default_int_;
  std::string default_string_;
  std::unordered_map<int64_t, std::string> to_string_;
  std::unordered_map<std::string, int64_t> to_int_;
};

ONNXMINI_REGISTER_KERNEL("category_encoders", "ai.onnx.ml", "OneHotEncoder", 1, INT_MAX,
                         make_kernel<OneHotEncoderKernel>);
ONNXMINI_REGISTER_KERNEL("category_encoders", "ai.onnx.ml", "CategoryMapper", 1, INT_MAX,
                         make_kernel<CategoryMapperKernel>);

}  // namespace
}  // namespace ml
}  // namespace onnxmini

ONNXMINI_KERNEL_FILE(ml_category_encoders);
