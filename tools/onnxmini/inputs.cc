#include "tools/onnxmini/inputs.h"

#include <fmt/format.h>

#include <filesystem>

#include "onnxmini/tensor_io.h"

namespace fs = std::filesystem;
using namespace onnxmini;

namespace onnxmini_cli {

namespace {
[[noreturn]] void bad(const std::string& msg) { throw Error(ErrorCode::InvalidArgument, msg); }

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

template <typename T>
void fill(Tensor& t, T v) {
  T* p = t.mutable_data<T>();
  for (int64_t i = 0; i < t.numel(); ++i) p[i] = v;
}

Tensor constant_tensor(DType dtype, const Shape& shape, double v) {
  Tensor t(dtype, shape);
  switch (dtype) {
    case DType::Float32: fill<float>(t, static_cast<float>(v)); break;
    case DType::Float64: fill<double>(t, v); break;
    case DType::Int32: fill<int32_t>(t, static_cast<int32_t>(v)); break;
    case DType::Int64: fill<int64_t>(t, static_cast<int64_t>(v)); break;
    case DType::Int8: fill<int8_t>(t, static_cast<int8_t>(v)); break;
    case DType::UInt8: fill<uint8_t>(t, static_cast<uint8_t>(v)); break;
    case DType::Bool: fill<bool>(t, v != 0); break;
    default: bad(fmt::format("cannot generate inputs of dtype {}", dtype_name(dtype)));
  }
  return t;
}
}  // namespace

std::pair<std::string, std::string> split_assignment(const std::string& text, const std::string& option) {
  auto eq = text.find('=');
  if (eq == std::string::npos || eq == 0) bad(fmt::format("{} expects NAME=VALUE, got '{}'", option, text));
  return {text.substr(0, eq), text.substr(eq + 1)};
}

Shape parse_shape(const std::string& text) {
  Shape shape;
  if (text.empty() || text == "scalar") return shape;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t x = text.find_first_of("x,", pos);
    std::string item = text.substr(pos, x == std::string::npos ? std::string::npos : x - pos);
    if (item.empty() || item.find_first_not_of("0123456789") != std::string::npos || item.size() > 12)
      bad(fmt::format("invalid shape '{}' (expected dims like 1x3x224x224)", text));
    shape.push_back(std::stoll(item));
    if (x == std::string::npos) break;
    pos = x + 1;
  }
  shape_numel(shape);  // overflow check
  return shape;
}

Tensor random_tensor(DType dtype, const Shape& shape, std::mt19937& rng) {
  Tensor t(dtype, shape);
  const int64_t n = t.numel();
  std::uniform_real_distribution<double> real(-1.0, 1.0);
  std::uniform_int_distribution<int> small(0, 9);
  switch (dtype) {
    case DType::Float32: { float* p = t.mutable_data<float>(); for (int64_t i = 0; i < n; ++i) p[i] = static_cast<float>(real(rng)); break; }
    case DType::Float64: { double* p = t.mutable_data<double>(); for (int64_t i = 0; i < n; ++i) p[i] = real(rng); break; }
    case DType::Int32: { int32_t* p = t.mutable_data<int32_t>(); for (int64_t i = 0; i < n; ++i) p[i] = small(rng); break; }
    case DType::Int64: { int64_t* p = t.mutable_data<int64_t>(); for (int64_t i = 0; i < n; ++i) p[i] = small(rng); break; }
    case DType::Int8: { int8_t* p = t.mutable_data<int8_t>(); for (int64_t i = 0; i < n; ++i) p[i] = static_cast<int8_t>(small(rng)); break; }
    case DType::UInt8: { uint8_t* p = t.mutable_data<uint8_t>(); for (int64_t i = 0; i < n; ++i) p[i] = static_cast<uint8_t>(small(rng)); break; }
    case DType::Bool: { bool* p = t.mutable_data<bool>(); for (int64_t i = 0; i < n; ++i) p[i] = small(rng) % 2; break; }
    default: bad(fmt::format("cannot generate random inputs of dtype {}", dtype_name(dtype)));
  }
  return t;
}

Tensor tensor_from_spec(const std::string& spec, DType dtype, std::mt19937& rng) {
  auto colon = spec.find(':');
  if (colon != std::string::npos) {
    std::string kind = spec.substr(0, colon);
    Shape shape = parse_shape(spec.substr(colon + 1));
    if (kind == "random") return random_tensor(dtype, shape, rng);
    if (kind == "zeros") return constant_tensor(dtype, shape, 0);
    if (kind == "ones") return constant_tensor(dtype, shape, 1);
    bad(fmt::format("unknown input kind '{}' in '{}' (expected random, zeros, ones, a .npy or a .pb file)", kind, spec));
  }
  if (ends_with(spec, ".npy")) return read_npy(spec);
  if (ends_with(spec, ".pb")) return read_tensor_pb(spec);
  bad(fmt::format("cannot read input spec '{}' (expected random:SHAPE, zeros:SHAPE, ones:SHAPE, FILE.npy or FILE.pb)", spec));
}

Shape concrete_shape(const ValueInfo& info, const std::map<std::string, int64_t>& dims) {
  Shape shape;
  for (const Dim& d : info.shape) {
    if (d.value >= 0) {
      shape.push_back(d.value);
      continue;
    }
    auto it = dims.find(d.param);
    shape.push_back(it != dims.end() ? it->second : 1);
  }
  return shape;
}

std::vector<std::pair<std::string, Value>> build_feeds(const Session& session, const std::vector<std::string>& specs,
                                                       const std::string& inputs_dir,
                                                       const std::map<std::string, int64_t>& dims, unsigned seed) {
  std::mt19937 rng(seed);
  std::map<std::string, Value> given;
  auto declared = [&](const std::string& name) -> const ValueInfo& {
    for (const auto& in : session.inputs())
      if (in.name == name) return in;
    std::string names;
    for (const auto& in : session.inputs()) names += (names.empty() ? "" : ", ") + in.name;
    bad(fmt::format("unknown input '{}' (model inputs: {})", name, names));
  };
  for (const auto& s : specs) {
    auto [name, spec] = split_assignment(s, "--input");
    const ValueInfo& info = declared(name);
    // A .pb may hold a sequence or an optional: read it as the input's declared type.
    if (ends_with(spec, ".pb")) {
      given[name] = read_value_pb(spec, info.type);
      continue;
    }
    given[name] = tensor_from_spec(spec, info.dtype == DType::Undefined ? DType::Float32 : info.dtype, rng);
  }
  if (!inputs_dir.empty()) {
    if (!fs::is_directory(inputs_dir)) bad(fmt::format("--inputs: '{}' is not a directory", inputs_dir));
    const auto& ins = session.inputs();
    for (size_t k = 0;; ++k) {
      fs::path p = fs::path(inputs_dir) / fmt::format("input_{}.pb", k);
      if (!fs::exists(p)) break;
      // The file holds a TensorProto, SequenceProto or OptionalProto as the input's type says:
      // read it as input k's type, then again as the named input's when its name says otherwise.
      std::string name;
      const std::string positional_type = k < ins.size() ? ins[k].type : "";
      Value v = read_value_pb(p.string(), positional_type, &name);
      if (name.empty()) {
        if (k >= ins.size()) bad(fmt::format("'{}' has no name and the model has only {} inputs", p.string(), ins.size()));
        name = ins[k].name;
      }
      const ValueInfo& info = declared(name);
      if (info.type != positional_type) v = read_value_pb(p.string(), info.type);
      if (!given.count(name)) given[name] = v;
    }
  }
  std::vector<std::pair<std::string, Value>> feeds;
  for (const auto& in : session.inputs()) {
    auto it = given.find(in.name);
    if (it != given.end()) {
      feeds.emplace_back(in.name, it->second);
      continue;
    }
    if (in.type.rfind("tensor(", 0) != 0) bad(fmt::format("input '{}' of type {} must be given", in.name, in.type));
    feeds.emplace_back(in.name, random_tensor(in.dtype, concrete_shape(in, dims), rng));
  }
  return feeds;
}

}  // namespace onnxmini_cli
