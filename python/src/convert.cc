#include "convert.h"

#include <cstring>
#include <map>

namespace onnxmini_py {

using onnxmini::DType;
using onnxmini::Error;
using onnxmini::ErrorCode;
using onnxmini::Shape;
using onnxmini::Tensor;
using onnxmini::Value;

namespace {
// The 8-, 4- and 2-bit types numpy lacks, by their ml_dtypes names (one byte per
// element in both ml_dtypes and onnxmini, the 4- and 2-bit codes in the low bits;
// int2 / uint2 / float8_e8m0fnu need ml_dtypes 0.5 or later).
struct MlDtype {
  DType type;
  const char* name;
};
constexpr MlDtype kMlDtypes[] = {
    {DType::Float8E4M3FN, "float8_e4m3fn"}, {DType::Float8E4M3FNUZ, "float8_e4m3fnuz"},
    {DType::Float8E5M2, "float8_e5m2"},     {DType::Float8E5M2FNUZ, "float8_e5m2fnuz"},
    {DType::UInt4, "uint4"},                {DType::Int4, "int4"},
    {DType::Float4E2M1, "float4_e2m1fn"},   {DType::Float8E8M0, "float8_e8m0fnu"},
    {DType::UInt2, "uint2"},                {DType::Int2, "int2"},
};
}  // namespace

DType dtype_from_numpy(const py::dtype& dt) {
  const char kind = dt.kind();
  const size_t size = static_cast<size_t>(dt.itemsize());
  if (size == 1 && (kind == 'V' || kind == 'f')) {  // an ml_dtypes type?
    const std::string name = py::str(dt.attr("name"));
    for (const MlDtype& m : kMlDtypes)
      if (name == m.name) return m.type;
  }
  switch (kind) {
    case 'b': return DType::Bool;
    case 'f':
      if (size == 4) return DType::Float32;
      if (size == 8) return DType::Float64;
      if (size == 2) return DType::Float16;
      return DType::Undefined;
    case 'i':
      if (size == 1) return DType::Int8;
      if (size == 2) return DType::Int16;
      if (size == 4) return DType::Int32;
      if (size == 8) return DType::Int64;
      return DType::Undefined;
    case 'u':
      if (size == 1) return DType::UInt8;
      if (size == 2) return DType::UInt16;
      if (size == 4) return DType::UInt32;
      if (size == 8) return DType::UInt64;
      return DType::Undefined;
    case 'U': case 'S': case 'O': return DType::String;
    case 'V':  // ml_dtypes.bfloat16 (what onnx.numpy_helper uses) is a 2-byte void-kind dtype
      if (size == 2 && py::str(dt).cast<std::string>() == "bfloat16") return DType::BFloat16;
      return DType::Undefined;
    default: return DType::Undefined;
  }
}

py::dtype numpy_dtype(DType t) {
  // py::dtype::of<T>() asks numpy for its cached descriptor: cheap on every output.
  switch (t) {
    case DType::Float32: return py::dtype::of<float>();
    case DType::Float64: return py::dtype::of<double>();
    case DType::Float16: return py::dtype("float16");
    case DType::BFloat16: {  // ml_dtypes (an onnx dependency) registers bfloat16 with numpy
      static const py::object bf16 = py::module_::import("ml_dtypes").attr("bfloat16");
      return py::dtype::from_args(bf16);
    }
    case DType::Int8: return py::dtype::of<int8_t>();
    case DType::Int16: return py::dtype::of<int16_t>();
    case DType::Int32: return py::dtype::of<int32_t>();
    case DType::Int64: return py::dtype::of<int64_t>();
    case DType::UInt8: return py::dtype::of<uint8_t>();
    case DType::UInt16: return py::dtype::of<uint16_t>();
    case DType::UInt32: return py::dtype::of<uint32_t>();
    case DType::UInt64: return py::dtype::of<uint64_t>();
    case DType::Bool: return py::dtype::of<bool>();
    case DType::String: return py::dtype("O");
    case DType::Float8E4M3FN: case DType::Float8E4M3FNUZ: case DType::Float8E5M2: case DType::Float8E5M2FNUZ:
    case DType::UInt4: case DType::Int4: case DType::Float4E2M1:
    case DType::Float8E8M0: case DType::UInt2: case DType::Int2:
      for (const MlDtype& m : kMlDtypes)
        if (m.type == t) {
          try {  // ml_dtypes (what onnx and onnxruntime use for these types) when installed
            return py::dtype::from_args(py::module_::import("ml_dtypes").attr(m.name));
          } catch (const py::error_already_set&) {
            throw Error(ErrorCode::NotImplemented, std::string("tensors of type ") + onnxmini::dtype_name(t) +
                                                       " need the ml_dtypes package to be returned to numpy");
          }
        }
      [[fallthrough]];
    default:
      throw Error(ErrorCode::NotImplemented,
                  std::string("tensors of type ") + onnxmini::dtype_name(t) + " cannot be returned to numpy");
  }
}

namespace {

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
constexpr bool kLittleEndian = false;
#else
constexpr bool kLittleEndian = true;
#endif

Shape shape_of(const py::array& a) {
  Shape s(static_cast<size_t>(a.ndim()));
  for (size_t i = 0; i < s.size(); ++i) s[i] = static_cast<int64_t>(a.shape(static_cast<py::ssize_t>(i)));
  return s;
}

// The keep-alive of a wrapped array: a heap py::object whose deleter takes the
// GIL, since the last Tensor view may die on a thread that released it.
std::shared_ptr<void> hold(const py::array& a) {
  return std::shared_ptr<void>(new py::object(a), [](void* p) {
    py::gil_scoped_acquire gil;
    delete static_cast<py::object*>(p);
  });
}

Tensor string_tensor(const py::array& a) {
  Tensor t(DType::String, shape_of(a));
  std::string* out = t.mutable_data<std::string>();
  py::object flat = a.attr("reshape")(-1);
  int64_t i = 0;
  for (py::handle item : flat) {
    if (py::isinstance<py::bytes>(item)) out[i++] = item.cast<std::string>();
    else out[i++] = py::str(item).cast<std::string>();
  }
  return t;
}

}  // namespace

Tensor tensor_from_array(py::handle obj, const std::string& what, bool allow_copy, bool writable) {
  py::array a;
  if (py::isinstance<py::array>(obj)) a = py::reinterpret_borrow<py::array>(obj);
  else a = py::array::ensure(obj);  // lists and scalars: numpy's default dtype (explicit, documented)
  if (!a) throw Error(ErrorCode::InvalidArgument, what + ": expected a numpy array, got " +
                                                      py::str(py::type::of(obj).attr("__name__")).cast<std::string>());
  const DType dt = dtype_from_numpy(a.dtype());
  if (dt == DType::Undefined)
    throw Error(ErrorCode::InvalidArgument,
                what + ": numpy dtype " + py::str(a.dtype()).cast<std::string>() + " has no ONNX equivalent");
  if (dt == DType::String) {
    if (writable) throw Error(ErrorCode::InvalidArgument, what + ": string arrays cannot be bound in place");
    return string_tensor(a);
  }
  const char order = a.dtype().byteorder();  // '=' native, '|' n/a, '<' / '>' explicit
  const bool native = order == '=' || order == '|' || order == (kLittleEndian ? '<' : '>');
  if (!native) {
    if (!allow_copy)
      throw Error(ErrorCode::InvalidArgument, what + ": array is not in native byte order; use arr.astype(arr.dtype.newbyteorder('='))");
    a = a.attr("astype")(a.dtype().attr("newbyteorder")("="));
  }
  const int flags = py::detail::array_proxy(a.ptr())->flags;
  const bool contiguous = (flags & py::detail::npy_api::NPY_ARRAY_C_CONTIGUOUS_) != 0;
  const bool aligned = (flags & py::detail::npy_api::NPY_ARRAY_ALIGNED_) != 0;
  if (!contiguous || !aligned) {
    if (!allow_copy)
      throw Error(ErrorCode::InvalidArgument,
                  what + ": array must be C-contiguous and aligned to be used in place; pass numpy.ascontiguousarray(arr)");
    a = a.attr("copy")("C");  // a fresh array is contiguous and aligned
  }
  if (writable && !a.writeable())
    throw Error(ErrorCode::InvalidArgument, what + ": array is read-only, an output needs a writable array");
  return Tensor::wrap(dt, shape_of(a), const_cast<void*>(a.data()), hold(a));
}

py::object tensor_to_array(const Tensor& t) {
  if (t.dtype() == DType::String) {
    std::vector<py::ssize_t> shape(t.shape().begin(), t.shape().end());
    py::array out(py::dtype("O"), shape);
    py::object flat = out.attr("reshape")(-1);
    const std::string* s = t.data<std::string>();
    for (int64_t i = 0; i < t.numel(); ++i) flat.attr("__setitem__")(i, py::str(s[i]));
    return std::move(out);
  }
  py::dtype dt = numpy_dtype(t.dtype());
  std::vector<py::ssize_t> shape(t.shape().begin(), t.shape().end());
  // Sole owner: the array adopts the buffer. Shared: an independent copy.
  if (t.buffer() && t.buffer().use_count() == 1 && t.numel() > 0) {
    auto* keep = new Tensor(t);
    py::capsule base(keep, [](void* p) { delete static_cast<Tensor*>(p); });
    return py::array(dt, shape, {}, t.raw(), base);
  }
  py::array out(dt, shape);
  if (t.nbytes() > 0) std::memcpy(out.mutable_data(), t.raw(), t.nbytes());
  return std::move(out);
}

namespace {
py::object scalar_at(const Tensor& t, int64_t i) {
  switch (t.dtype()) {
    case DType::String: return py::str(t.data<std::string>()[i]);
    case DType::Float32: case DType::Float64: case DType::Float16: return py::float_(t.get_as_double(i));
    case DType::Bool: return py::bool_(t.get_as_double(i) != 0);
    case DType::Int64: return py::int_(t.data<int64_t>()[i]);
    default: return py::int_(static_cast<int64_t>(t.get_as_double(i)));
  }
}
}  // namespace

py::object value_to_python(const Value& v) {
  switch (v.kind()) {
    case Value::Kind::Tensor: return tensor_to_array(v.tensor());
    case Value::Kind::Sequence: {
      py::list out;
      for (const Value& item : v.sequence_items()) out.append(value_to_python(item));
      return std::move(out);
    }
    case Value::Kind::Map: {
      const onnxmini::Map& m = v.map_value();
      py::dict out;
      for (int64_t i = 0; i < m.keys.numel(); ++i) out[scalar_at(m.keys, i)] = scalar_at(m.values, i);
      return std::move(out);
    }
    // An optional is its element, or None when empty (as onnxruntime returns it).
    case Value::Kind::Optional: return v.has_element() ? value_to_python(v.optional_element()) : py::none();
    default: return py::none();
  }
}

namespace {
// "seq(tensor(float))" -> "tensor(float)" when `type` is "<prefix>(...)"; empty otherwise.
std::string inner_type(const std::string& type, const std::string& prefix) {
  if (type.size() < prefix.size() + 2 || type.compare(0, prefix.size() + 1, prefix + "(") != 0 || type.back() != ')')
    return "";
  return type.substr(prefix.size() + 1, type.size() - prefix.size() - 2);
}
}  // namespace

Value value_from_python(py::handle obj, const std::string& onnx_type, const std::string& what) {
  const std::string seq_item = inner_type(onnx_type, "seq");
  if (!seq_item.empty()) {
    if (!py::isinstance<py::list>(obj) && !py::isinstance<py::tuple>(obj))
      throw Error(ErrorCode::InvalidArgument, what + ": expected a list of arrays for " + onnx_type + ", got " +
                                                  py::str(py::type::of(obj).attr("__name__")).cast<std::string>());
    std::vector<Value> items;
    size_t i = 0;
    for (py::handle item : obj)
      items.push_back(value_from_python(item, seq_item, what + " item " + std::to_string(i++)));
    return Value::sequence(std::move(items));
  }
  // map(K,tensor(V)) from a dict (DictVectorizer's input): keys and values become two 1-D tensors.
  const std::string map_inner = inner_type(onnx_type, "map");
  if (!map_inner.empty()) {
    if (!py::isinstance<py::dict>(obj))
      throw Error(ErrorCode::InvalidArgument, what + ": expected a dict for " + onnx_type + ", got " +
                                                  py::str(py::type::of(obj).attr("__name__")).cast<std::string>());
    const size_t comma = map_inner.find(',');
    const std::string key_type = map_inner.substr(0, comma);
    const std::string value_type = inner_type(map_inner.substr(comma + 1), "tensor");
    static const std::map<std::string, const char*> kNumpy = {
        {"float", "float32"}, {"double", "float64"}, {"int64", "int64"}, {"int32", "int32"}, {"string", "object"}};
    auto np_type = [&](const std::string& t) {
      auto it = kNumpy.find(t);
      if (it == kNumpy.end()) throw Error(ErrorCode::NotImplemented, what + ": map element type " + t + " is not supported");
      return py::dtype(it->second);
    };
    py::dict d = py::reinterpret_borrow<py::dict>(obj);
    py::module_ np = py::module_::import("numpy");
    py::array keys = np.attr("array")(py::list(d.attr("keys")()), np_type(key_type));
    py::array values = np.attr("array")(py::list(d.attr("values")()), np_type(value_type));
    return Value::map(onnxmini::Map{tensor_from_array(keys, what + " keys", true).clone(),
                                    tensor_from_array(values, what + " values", true).clone()});
  }
  const std::string element = inner_type(onnx_type, "optional");
  if (!element.empty()) {
    if (obj.is_none()) return Value::optional();
    return Value::optional(value_from_python(obj, element, what));
  }
  return Value(tensor_from_array(obj, what, /*allow_copy=*/true));
}

}  // namespace onnxmini_py
