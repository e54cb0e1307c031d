#include "runtime/tensor_proto.h"

#include "onnxmini/tensor_io.h"

#include <fmt/format.h>

#include "core/checked_math.h"
#include "core/minifloat.h"

#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>

namespace onnxmini {

namespace fs = std::filesystem;

namespace {

[[noreturn]] void bad(const std::string& what, const std::string& msg) {
  throw Error(ErrorCode::InvalidModel, what + ": " + msg);
}

// Copies `count` values from a repeated proto field into the tensor, converting
// each element with `conv`.
template <typename Dst, typename Field, typename Conv>
void copy_field(const Field& field, int64_t count, Tensor& t, const std::string& what, const char* field_name,
                int per_element, Conv conv) {
  // count * per_element fits: the caller compared it (checked) with the field's size already.
  if (static_cast<int64_t>(field.size()) != count * per_element)
    bad(what, fmt::format("{} has {} values, shape {} needs {}", field_name, field.size(), shape_to_string(t.shape()),
                          count * per_element));
  Dst* out = static_cast<Dst*>(t.raw_mut());
  for (int64_t i = 0; i < count * per_element; ++i) out[i] = conv(field.Get(static_cast<int>(i)));
}

// An external_data "offset" / "length" value: decimal digits that fit in int64
// (std::stoll would accept "12abc" and throw its own text on overflow).
int64_t external_field(const std::string& value, const char* field, const std::string& what) {
  int64_t v = 0;
  bool ok = !value.empty() && value.size() <= 19;
  for (char c : value) {
    if (!ok) break;
    ok = c >= '0' && c <= '9' && !__builtin_mul_overflow(v, 10, &v) && !__builtin_add_overflow(v, c - '0', &v);
  }
  if (!ok)
    bad(what, fmt::format("external data field '{}' is '{}', not a non-negative integer that fits in 64 bits", field,
                          value.size() > 40 ? value.substr(0, 40) + "..." : value));
  return v;
}

std::string read_external(const onnx::TensorProto& p, const std::string& base_dir, const std::string& what,
                          size_t expected) {
  std::string location;
  int64_t offset = 0, length = -1;
  for (const auto& kv : p.external_data()) {
    if (kv.key() == "location") location = kv.value();
    else if (kv.key() == "offset") offset = external_field(kv.value(), "offset", what);
    else if (kv.key() == "length") length = external_field(kv.value(), "length", what);
  }
  if (location.empty()) bad(what, "external data has no location");
  if (base_dir.empty()) bad(what, "external data '" + location + "' needs the model's folder (load the model from a file)");
  fs::path rel(location);
  if (rel.is_absolute()) bad(what, "external data location '" + location + "' is absolute; it must be relative to the model's folder");
  fs::path base = fs::weakly_canonical(fs::path(base_dir));
  fs::path full = fs::weakly_canonical(base / rel);
  auto [bend, fend] = std::mismatch(base.begin(), base.end(), full.begin(), full.end());
  if (bend != base.end()) bad(what, "external data location '" + location + "' escapes the model's folder");
  std::error_code ec;
  auto fsize = fs::file_size(full, ec);
  if (ec) bad(what, "cannot open external data file '" + location + "'");
  if (offset < 0) bad(what, fmt::format("external data offset {} is negative", offset));
  if (length >= 0 && static_cast<size_t>(length) != expected)
    bad(what, fmt::format("external data length {} does not match the {} bytes its shape needs", length, expected));
  if (static_cast<uint64_t>(offset) + expected > fsize)
    bad(what, fmt::format("external data file '{}' has {} bytes, reading {} at offset {} goes past its end", location,
                          fsize, expected, offset));
  std::ifstream in(full, std::ios::binary);
  in.seekg(offset);
  std::string bytes(expected, '\0');
  in.read(bytes.data(), static_cast<std::streamsize>(expected));
  if (!in) bad(what, "failed reading external data file '" + location + "'");
  return bytes;
}

// 8 / `bits` values per byte, lowest bits first -> one per byte (bits: 4 or 2).
void unpack_codes(const uint8_t* packed, int64_t n, int bits, uint8_t* out) {
  const int per_byte = 8 / bits;
  const uint8_t mask = static_cast<uint8_t>((1u << bits) - 1);
  for (int64_t i = 0; i < n; ++i)
    out[i] = static_cast<uint8_t>((packed[i / per_byte] >> (bits * (i % per_byte))) & mask);
}

// Bytes that n packed values of `bits` bits take (the last byte padded with zeros).
int64_t packed_bytes(int64_t n, int bits) {
  const int per_byte = 8 / bits;
  return n / per_byte + (n % per_byte != 0);  // not (n + per_byte - 1) / per_byte: n may be INT64_MAX
}

}  // namespace

Tensor tensor_from_proto(const onnx::TensorProto& p, const std::string& base_dir, const std::string& what) {
  if (!p.has_data_type() || !dtype_is_valid(p.data_type()))
    bad(what, fmt::format("unsupported or missing data type {}", p.data_type()));
  DType dt = static_cast<DType>(p.data_type());
  Shape shape(p.dims().begin(), p.dims().end());
  for (int64_t d : shape)
    if (d < 0) bad(what, fmt::format("negative dimension {} in shape", d));
  int64_t n;
  try {
    n = shape_numel(shape);
  } catch (const Error&) {
    bad(what, "shape " + shape_to_string(shape) + " has too many elements");
  }
  const size_t esize = dtype_size(dt);
  // INT4 / UINT4 / FLOAT4E2M1 pack two values per byte in raw_data and int32_data,
  // INT2 / UINT2 four (lowest bits first); in memory they take one byte each
  // (core/minifloat.h).
  const int bits = packed_bits(dt);

  // Raw bytes (raw_data or an external file): size checked before allocating.
  const bool external = p.data_location() == onnx::TensorProto::EXTERNAL;
  if (external || p.has_raw_data()) {
    if (dt == DType::String) bad(what, "string tensors cannot use raw_data or external data");
    if (static_cast<uint64_t>(n) > (uint64_t(1) << 62) / esize) bad(what, "shape " + shape_to_string(shape) + " is too large");
    size_t expected = bits ? static_cast<size_t>(packed_bytes(n, bits)) : static_cast<size_t>(n) * esize;
    std::string ext;
    const std::string* bytes = &p.raw_data();
    if (external) {
      ext = read_external(p, base_dir, what, expected);
      bytes = &ext;
    }
    if (bytes->size() != expected)
      bad(what, fmt::format("raw_data has {} bytes, shape {} of {} needs {}", bytes->size(), shape_to_string(shape),
                            dtype_name(dt), expected));
    Tensor t(dt, shape);
    if (bits) {
      unpack_codes(reinterpret_cast<const uint8_t*>(bytes->data()), n, bits, static_cast<uint8_t*>(t.raw_mut()));
      return t;
    }
    if (expected) std::memcpy(t.raw_mut(), bytes->data(), expected);  // ONNX raw data is little-endian, as is x86-64
    return t;
  }

  // Typed fields: count checked first, then allocate.
  auto field_size = [&]() -> int64_t {
    switch (dt) {
      case DType::Float32: case DType::Complex64: return p.float_data_size();
      case DType::Float64: case DType::Complex128: return p.double_data_size();
      case DType::Int64: return p.int64_data_size();
      case DType::UInt32: case DType::UInt64: return p.uint64_data_size();
      case DType::String: return p.string_data_size();
      default: return p.int32_data_size();
    }
  }();
  int per = (dt == DType::Complex64 || dt == DType::Complex128) ? 2 : 1;
  const auto needed = bits ? std::optional<int64_t>(packed_bytes(n, bits)) : try_mul(n, per);
  if (!needed || field_size != *needed)
    bad(what, fmt::format("holds {} values, shape {} needs {}", field_size, shape_to_string(shape),
                          needed ? std::to_string(*needed) : std::to_string(n) + " x " + std::to_string(per)));

  Tensor t(dt, shape);
  auto id = [](auto v) { return v; };
  switch (dt) {
    case DType::Float32: copy_field<float>(p.float_data(), n, t, what, "float_data", 1, id); break;
    case DType::Complex64: copy_field<float>(p.float_data(), n, t, what, "float_data", 2, id); break;
    case DType::Float64: copy_field<double>(p.double_data(), n, t, what, "double_data", 1, id); break;
    case DType::Complex128: copy_field<double>(p.double_data(), n, t, what, "double_data", 2, id); break;
    case DType::Int64: copy_field<int64_t>(p.int64_data(), n, t, what, "int64_data", 1, id); break;
    case DType::UInt64: copy_field<uint64_t>(p.uint64_data(), n, t, what, "uint64_data", 1, id); break;
    case DType::UInt32:
      copy_field<uint32_t>(p.uint64_data(), n, t, what, "uint64_data", 1, [](uint64_t v) { return static_cast<uint32_t>(v); });
      break;
    case DType::Int32: copy_field<int32_t>(p.int32_data(), n, t, what, "int32_data", 1, id); break;
    case DType::Int8:
      copy_field<int8_t>(p.int32_data(), n, t, what, "int32_data", 1, [](int32_t v) { return static_cast<int8_t>(v); });
      break;
    case DType::UInt8:
      copy_field<uint8_t>(p.int32_data(), n, t, what, "int32_data", 1, [](int32_t v) { return static_cast<uint8_t>(v); });
      break;
    case DType::Int16:
      copy_field<int16_t>(p.int32_data(), n, t, what, "int32_data", 1, [](int32_t v) { return static_cast<int16_t>(v); });
      break;
    case DType::UInt16: case DType::Float16: case DType::BFloat16:  // 16-bit patterns stored in int32_data
      copy_field<uint16_t>(p.int32_data(), n, t, what, "int32_data", 1, [](int32_t v) { return static_cast<uint16_t>(v); });
      break;
    case DType::Float8E4M3FN: case DType::Float8E4M3FNUZ: case DType::Float8E5M2: case DType::Float8E5M2FNUZ:
    case DType::Float8E8M0:
      copy_field<uint8_t>(p.int32_data(), n, t, what, "int32_data", 1, [](int32_t v) { return static_cast<uint8_t>(v); });
      break;
    case DType::Int4: case DType::UInt4: case DType::Float4E2M1:
    case DType::Int2: case DType::UInt2: {  // one int32 per packed byte
      std::string bytes(static_cast<size_t>(packed_bytes(n, bits)), '\0');
      for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<char>(p.int32_data(static_cast<int>(i)));
      unpack_codes(reinterpret_cast<const uint8_t*>(bytes.data()), n, bits, static_cast<uint8_t*>(t.raw_mut()));
      break;
    }
    case DType::Bool:
      copy_field<bool>(p.int32_data(), n, t, what, "int32_data", 1, [](int32_t v) { return v != 0; });
      break;
    case DType::String: {
      auto* out = static_cast<std::string*>(t.raw_mut());
      for (int64_t i = 0; i < n; ++i) out[i] = p.string_data(static_cast<int>(i));
      break;
    }
    default: bad(what, fmt::format("unsupported data type {}", dtype_name(dt)));
  }
  return t;
}

void tensor_to_proto(const Tensor& t, onnx::TensorProto* p) {
  p->Clear();
  p->set_data_type(static_cast<int32_t>(t.dtype()));
  for (int64_t d : t.shape()) p->add_dims(d);
  if (t.dtype() == DType::String) {
    const auto* s = static_cast<const std::string*>(t.raw());
    for (int64_t i = 0; i < t.numel(); ++i) p->add_string_data(s[i]);
  } else if (const int bits = packed_bits(t.dtype())) {  // 8 / bits per byte, lowest bits first
    const auto* v = static_cast<const uint8_t*>(t.raw());
    const int per_byte = 8 / bits;
    const unsigned mask = (1u << bits) - 1;
    std::string bytes(static_cast<size_t>(packed_bytes(t.numel(), bits)), '\0');
    for (int64_t i = 0; i < t.numel(); ++i)
      bytes[i / per_byte] = static_cast<char>(bytes[i / per_byte] | ((v[i] & mask) << (bits * (i % per_byte))));
    p->set_raw_data(bytes);
  } else {
    p->set_raw_data(std::string(static_cast<const char*>(t.raw()), t.nbytes()));
  }
}

// The .pb halves of include/onnxmini/tensor_io.h (the file I/O is in tensor_io.cc).
Tensor parse_tensor_pb(const std::string& bytes, std::string* name) {
  onnx::TensorProto p;
  if (!p.ParseFromString(bytes)) throw Error(ErrorCode::InvalidArgument, "not a valid TensorProto (protobuf parsing failed)");
  if (name) *name = p.name();
  return tensor_from_proto(p, "", "TensorProto '" + p.name() + "'");
}

std::string serialize_tensor_pb(const Tensor& t, const std::string& name) {
  onnx::TensorProto p;
  tensor_to_proto(t, &p);
  p.set_name(name);
  return p.SerializeAsString();
}

// ---- SequenceProto and OptionalProto (onnx-data.proto) ----
// libonnx-dev's onnx.proto, which the build generates code from, lacks these two
// messages, so they are read and written here with the protobuf wire format by
// hand; their tensors go through the generated TensorProto. Both messages number
// their fields alike: name=1, elem_type=2, then tensor=3, sparse tensor=4,
// sequence=5, map=6, optional=7 (repeated in SequenceProto, single in OptionalProto).
namespace {

enum ElemType : uint64_t { kUndefined = 0, kTensor = 1, kSparseTensor = 2, kSequence = 3, kMap = 4, kOptional = 5 };
enum class Message { Sequence, Optional };

void put_varint(std::string& out, uint64_t v) {
  while (v >= 0x80) {
    out += static_cast<char>((v & 0x7f) | 0x80);
    v >>= 7;
  }
  out += static_cast<char>(v);
}

void put_bytes(std::string& out, int field, const std::string& bytes) {
  put_varint(out, static_cast<uint64_t>(field) << 3 | 2);
  put_varint(out, bytes.size());
  out += bytes;
}

// One field of a message being read.
struct Field {
  int number = 0;
  uint64_t varint = 0;    // wire type 0
  std::string bytes;      // wire type 2
};

class WireReader {
 public:
  WireReader(const std::string& data, const std::string& what) : p_(data.data()), end_(p_ + data.size()), what_(what) {}
  bool next(Field& f) {
    if (p_ == end_) return false;
    const uint64_t tag = varint();
    f.number = static_cast<int>(tag >> 3);
    switch (tag & 7) {
      case 0: f.varint = varint(); break;
      case 1: skip(8); break;
      case 2: {
        const uint64_t n = varint();
        if (n > static_cast<uint64_t>(end_ - p_)) fail("a field runs past the end");
        f.bytes.assign(p_, static_cast<size_t>(n));
        p_ += n;
        break;
      }
      case 5: skip(4); break;
      default: fail(fmt::format("field {} has unsupported wire type {}", f.number, tag & 7));
    }
    return true;
  }

 private:
  uint64_t varint() {
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (p_ == end_) fail("truncated varint");
      const auto b = static_cast<uint8_t>(*p_++);
      v |= static_cast<uint64_t>(b & 0x7f) << shift;
      if (!(b & 0x80)) return v;
    }
    fail("varint too long");
  }
  void skip(size_t n) {
    if (n > static_cast<size_t>(end_ - p_)) fail("a field runs past the end");
    p_ += n;
  }
  [[noreturn]] void fail(const std::string& why) const {
    throw Error(ErrorCode::InvalidArgument, fmt::format("{}: not a valid protobuf message ({})", what_, why));
  }
  const char* p_;
  const char* end_;
  const std::string& what_;
};

Value parse_container(const std::string& bytes, Message kind, const std::string& what, std::string* name);

Tensor parse_tensor_field(const std::string& bytes, const std::string& what) {
  onnx::TensorProto p;
  if (!p.ParseFromString(bytes)) throw Error(ErrorCode::InvalidArgument, what + ": not a valid TensorProto");
  return tensor_from_proto(p, "", what);
}

// A SequenceProto or OptionalProto: its elements by field number.
Value parse_container(const std::string& bytes, Message kind, const std::string& what, std::string* name) {
  const char* message = kind == Message::Sequence ? "SequenceProto" : "OptionalProto";
  WireReader reader(bytes, what);
  std::vector<Value> items;
  Field f;
  while (reader.next(f)) {
    const std::string item_what = fmt::format("{} item {}", what, items.size());
    switch (f.number) {
      case 1: if (name) *name = f.bytes; break;
      case 2: break;  // elem_type: the fields present say it
      case 3: items.emplace_back(parse_tensor_field(f.bytes, item_what)); break;
      case 5: items.push_back(parse_container(f.bytes, Message::Sequence, item_what, nullptr)); break;
      case 7: items.push_back(parse_container(f.bytes, Message::Optional, item_what, nullptr)); break;
      case 4:
      case 6:
        throw Error(ErrorCode::NotImplemented,
                    fmt::format("{}: {} holds {}, which onnxmini does not read", what, message,
                                f.number == 4 ? "sparse tensors" : "maps"));
      default: break;  // unknown fields are skipped, as protobuf does
    }
  }
  if (kind == Message::Sequence) return Value::sequence(std::move(items));
  if (items.size() > 1) throw Error(ErrorCode::InvalidArgument, fmt::format("{}: OptionalProto holds {} values", what, items.size()));
  return items.empty() ? Value::optional() : Value::optional(std::move(items.front()));
}

uint64_t elem_type_of(const Value& v) {
  switch (v.kind()) {
    case Value::Kind::Tensor: return kTensor;
    case Value::Kind::Sequence: return kSequence;
    case Value::Kind::Optional: return kOptional;
    case Value::Kind::Map: return kMap;
    case Value::Kind::None: break;
  }
  return kUndefined;
}

// The bytes of `v` as the message its kind calls for (TensorProto, SequenceProto, OptionalProto).
std::string serialize_any(const Value& v, const std::string& name) {
  if (v.is_tensor()) return serialize_tensor_pb(v.tensor(), name);
  if (v.is_map()) throw Error(ErrorCode::NotImplemented, "cannot write a map as a .pb file");
  if (v.is_none()) throw Error(ErrorCode::InvalidArgument, "cannot write a missing value as a .pb file");
  std::string out;
  if (!name.empty()) put_bytes(out, 1, name);
  auto put_item = [&out](const Value& item) {
    if (item.is_map() || item.is_none())
      throw Error(ErrorCode::NotImplemented, "cannot write " + item.type_string() + " inside a sequence or optional");
    const uint64_t t = elem_type_of(item);
    put_bytes(out, t == kTensor ? 3 : t == kSequence ? 5 : 7, serialize_any(item, ""));
  };
  if (v.is_sequence()) {
    const auto& items = v.sequence_items();
    // elem_type: TENSOR for an empty sequence too (onnx writes a typed one).
    put_varint(out, 2 << 3 | 0);
    put_varint(out, items.empty() ? kTensor : elem_type_of(items.front()));
    for (const Value& item : items) put_item(item);
  } else {  // optional
    if (v.has_element()) {
      put_varint(out, 2 << 3 | 0);
      put_varint(out, elem_type_of(v.optional_element()));
      put_item(v.optional_element());
    }
  }
  return out;
}

}  // namespace

Value parse_value_pb(const std::string& bytes, const std::string& onnx_type, std::string* name) {
  if (onnx_type.rfind("seq(", 0) == 0) return parse_container(bytes, Message::Sequence, "SequenceProto", name);
  if (onnx_type.rfind("optional(", 0) == 0) return parse_container(bytes, Message::Optional, "OptionalProto", name);
  return Value(parse_tensor_pb(bytes, name));
}

std::string serialize_value_pb(const Value& value, const std::string& name) { return serialize_any(value, name); }

}  // namespace onnxmini
