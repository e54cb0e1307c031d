// ai.onnx.ml LabelEncoder (opsets 1 to 4): maps every element of X through a
// key -> value table; elements without a key get the default value.
//
// Layout: X any shape, Y the same shape with the values' dtype. The table is
// built once at session creation: a hash map from the key (string, int64, or
// a floating key held as double) to its position in the values tensor. Float
// keys match by value, and a NaN key matches a NaN input (onnxruntime does the
// same), so a model can map "missing" to a category.
//
// Attribute forms:
// - opset 1: classes_strings; string X -> int64 position (default_int64, -1)
//   and int64 X -> string (default_string, "_Unused");
// - opset 2+: keys_strings / keys_int64s / keys_floats and values_strings /
//   values_int64s / values_floats, default_string / default_int64 /
//   default_float (-0.0);
// - opset 4: keys_tensor / values_tensor / default_tensor (any of the key
//   and value dtypes, including double and int16).
#include <cmath>
#include <cstring>
#include <unordered_map>

#include "kernels/registry.h"

namespace onnxmini {
namespace ml {
namespace {

bool is_int_type(DType t) { return t == DType::Int64 || t == DType::Int32 || t == DType::Int16; }
bool is_float_type(DType t) { return t == DType::Float32 || t == DType::Float64; }

// One column of typed values (keys or values), kept as a 1-D tensor.
Tensor tensor_of(const std::vector<std::string>& v) {
  return Tensor::from_vector<std::string>({static_cast<int64_t>(v.size())}, v);
}
Tensor tensor_of(const std::vector<int64_t>& v) {
  return Tensor::from_vector<int64_t>({static_cast<int64_t>(v.size())}, v);
}
Tensor tensor_of(const std::vector<float>& v) { return Tensor::from_vector<float>({static_cast<int64_t>(v.size())}, v); }

// Writes element `i` of `src` (same dtype) to element `j` of `dst`.
void copy_element(const Tensor& src, int64_t i, Tensor& dst, int64_t j) {
  if (src.dtype() == DType::String) {
    dst.mutable_data<std::string>()[j] = src.data<std::string>()[i];
    return;
  }
  const size_t size = dtype_size(src.dtype());
  std::memcpy(static_cast<char*>(dst.raw_mut()) + j * size, static_cast<const char*>(src.raw()) + i * size, size);
}

class LabelEncoderKernel : public Kernel {
 public:
  explicit LabelEncoderKernel(const KernelInfo& info) {
    if (info.attrs.has("classes_strings")) {
      init_v1(info);
      return;
    }
    keys_ = read_column(info, "keys");
    values_ = read_column(info, "values");
    if (keys_.numel() != values_.numel())
      info.fail("has {} keys but {} values; they must be equal", keys_.numel(), values_.numel());
    default_ = read_default(info, values_.dtype());
    index_keys(keys_);
  }

  void prepare(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    const Direction d = select_direction(ctx, x.dtype());
    ctx.allocate_output(0, d.values->dtype(), x.shape());
  }

  void compute(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    const Direction d = select_direction(ctx, x.dtype());
    Tensor& y = ctx.output(0);
    const int64_t n = x.numel();
    for (int64_t i = 0; i < n; ++i) {
      const int64_t k = lookup(x, i, d.reverse);
      if (k < 0) copy_element(*d.fallback, 0, y, i);
      else copy_element(*d.values, k, y, i);
    }
  }

 private:
  // Opset 1: one string list, both directions.
  void init_v1(const KernelInfo& info) {
    const auto classes = info.attrs.get_strings("classes_strings");
    std::vector<int64_t> positions(classes.size());
    for (size_t i = 0; i < classes.size(); ++i) positions[i] = static_cast<int64_t>(i);
    v1_ = true;
    keys_ = tensor_of(classes);
    values_ = tensor_of(positions);
    default_ = Tensor::from_vector<int64_t>({1}, {info.attrs.get_int("default_int64", -1)});
    v1_default_string_ = Tensor::from_vector<std::string>({1}, {info.attrs.get_string("default_string", "_Unused")});
    index_keys(keys_);
  }

  // `prefix`_tensor, or `prefix`_strings / _int64s / _floats (exactly one).
  static Tensor read_column(const KernelInfo& info, const std::string& prefix) {
    const std::string names[] = {prefix + "_strings", prefix + "_int64s", prefix + "_floats", prefix + "_tensor"};
    int given = 0;
    for (const auto& n : names) given += info.attrs.has(n) ? 1 : 0;
    if (given != 1)
      info.fail("expected exactly one of {}, {}, {}, {} (got {})", names[0], names[1], names[2], names[3], given);
    if (info.attrs.has(names[0])) return tensor_of(info.attrs.get_strings(names[0]));
    if (info.attrs.has(names[1])) return tensor_of(info.attrs.get_ints(names[1]));
    if (info.attrs.has(names[2])) return tensor_of(info.attrs.get_floats(names[2]));
    const Tensor& t = info.attrs.get_tensor(names[3]);
    const DType d = t.dtype();
    if (d != DType::String && !is_int_type(d) && !is_float_type(d))
      info.fail("{} has dtype {}; expected string, int64, int32, int16, float or double", names[3], dtype_name(d));
    return t.view({t.numel()});
  }

  static Tensor read_default(const KernelInfo& info, DType values_type) {
    if (info.attrs.has("default_tensor")) {
      const Tensor& t = info.attrs.get_tensor("default_tensor");
      if (t.dtype() != values_type || t.numel() != 1)
        info.fail("default_tensor is {} with {} element(s); expected one {} (the values' dtype)",
                  dtype_name(t.dtype()), t.numel(), dtype_name(values_type));
      return t.view({1});
    }
    switch (values_type) {
      case DType::String:
        return Tensor::from_vector<std::string>({1}, {info.attrs.get_string("default_string", "_Unused")});
      case DType::Int64: return Tensor::from_vector<int64_t>({1}, {info.attrs.get_int("default_int64", -1)});
      case DType::Float32: return Tensor::from_vector<float>({1}, {info.attrs.get_float("default_float", -0.0f)});
      default: {
        // values_tensor of another dtype without default_tensor: the dtype's -0 / -1 / "_Unused".
        Tensor t(values_type, {1});
        if (values_type == DType::Float64) t.mutable_data<double>()[0] = -0.0;
        else if (values_type == DType::Int32) t.mutable_data<int32_t>()[0] = -1;
        else if (values_type == DType::Int16) t.mutable_data<int16_t>()[0] = -1;
        return t;
      }
    }
  }

  // Key -> position; a repeated key keeps its first position (emplace does not overwrite).
  void index_keys(const Tensor& keys) {
    for (int64_t i = 0; i < keys.numel(); ++i) {
      switch (keys.dtype()) {
        case DType::String: string_index_.emplace(keys.data<std::string>()[i], i); break;
        case DType::Float32:
        case DType::Float64: {
          const double v = keys.get_as_double(i);
          if (!std::isnan(v)) float_index_.emplace(v, i);
          else if (nan_index_ < 0) nan_index_ = i;
          break;
        }
        default: int_index_.emplace(static_cast<int64_t>(keys.get_as_double(i)), i); break;
      }
    }
  }

  // What a run reads: the value table, the default, and for opset 1 whether
  // X holds positions (int64 -> string). Computed per run, so the kernel holds
  // no per-run state.
  struct Direction {
    const Tensor* values;
    const Tensor* fallback;
    bool reverse;
  };

  // Checks X's dtype against the keys; for opset 1 picks the direction.
  Direction select_direction(const KernelContext& ctx, DType x_type) const {
    if (v1_) {
      if (x_type == DType::String) return {&values_, &default_, false};
      if (x_type == DType::Int64) return {&keys_, &v1_default_string_, true};
      ctx.fail("input has dtype {}; expected string or int64", dtype_name(x_type));
    }
    const DType k = keys_.dtype();
    const bool ok = (k == DType::String && x_type == DType::String) || (is_int_type(k) && is_int_type(x_type)) ||
                    (is_float_type(k) && is_float_type(x_type));
    if (!ok) ctx.fail("input has dtype {} but the keys are {}", dtype_name(x_type), dtype_name(k));
    return {&values_, &default_, false};
  }

  // Position of X[i]'s key in the table, or -1.
  int64_t lookup(const Tensor& x, int64_t i, bool reverse) const {
    if (reverse) {
      const int64_t v = x.data<int64_t>()[i];
      return v >= 0 && v < keys_.numel() ? v : -1;
    }
    switch (x.dtype()) {
      case DType::String: {
        auto it = string_index_.find(x.data<std::string>()[i]);
        return it == string_index_.end() ? -1 : it->second;
      }
      case DType::Float32:
      case DType::Float64: {
        const double v = x.dtype() == DType::Float32 ? x.data<float>()[i] : x.data<double>()[i];
        if (std::isnan(v)) return nan_index_;
        auto it = float_index_.find(v);
        return it == float_index_.end() ? -1 : it->second;
      }
      default: {
        const int64_t v = x.dtype() == DType::Int64   ? x.data<int64_t>()[i]
                          : x.dtype() == DType::Int32 ? x.data<int32_t>()[i]
                                                      : x.data<int16_t>()[i];
        auto it = int_index_.find(v);
        return it == int_index_.end() ? -1 : it->second;
      }
    }
  }

  Tensor keys_, values_, default_, v1_default_string_;
  bool v1_ = false;
  std::unordered_map<std::string, int64_t> string_index_;
  std::unordered_map<int64_t, int64_t> int_index_;
  std::unordered_map<double, int64_t> float_index_;
  int64_t nan_index_ = -1;
};

ONNXMINI_REGISTER_KERNEL("label_encoder", "ai.onnx.ml", "LabelEncoder", 1, INT_MAX, make_kernel<LabelEncoderKernel>);

}  // namespace
}  // namespace ml
}  // namespace onnxmini

ONNXMINI_KERNEL_FILE(ml_label_encoder);
