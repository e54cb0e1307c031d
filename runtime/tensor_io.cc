// .npy (numpy format version 1.0/2.0, little-endian, C order) and TensorProto .pb files.
#include "onnxmini/tensor_io.h"

#include <fmt/format.h>

#include <cstring>
#include <fstream>
#include <sstream>

#include "core/checked_math.h"


namespace onnxmini {

namespace {

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(ErrorCode::IoError, "cannot open '" + path + "'");
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void spit(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary);
  if (!out) throw Error(ErrorCode::IoError, "cannot write '" + path + "'");
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out) throw Error(ErrorCode::IoError, "failed writing '" + path + "'");
}

struct NpyType {
  const char* descr;
  DType dtype;
};
const NpyType kNpyTypes[] = {{"<f4", DType::Float32}, {"<f8", DType::Float64}, {"|i1", DType::Int8},
                             {"|u1", DType::UInt8},   {"<i2", DType::Int16},   {"<u2", DType::UInt16},
                             {"<i4", DType::Int32},   {"<u4", DType::UInt32},  {"<i8", DType::Int64},
                             {"<u8", DType::UInt64},  {"|b1", DType::Bool},    {"<f2", DType::Float16}};

// Value of `key` in the header dict, e.g. 'descr': '<f4'.
std::string header_field(const std::string& header, const std::string& key, const std::string& path) {
  auto k = header.find("'" + key + "'");
  if (k == std::string::npos) throw Error(ErrorCode::InvalidArgument, fmt::format("'{}': .npy header has no '{}'", path, key));
  auto colon = header.find(':', k);
  return header.substr(colon + 1);
}

}  // namespace

Tensor read_npy(const std::string& path) {
  std::string bytes = slurp(path);
  if (bytes.size() < 10 || std::memcmp(bytes.data(), "\x93NUMPY", 6) != 0)
    throw Error(ErrorCode::InvalidArgument, "'" + path + "' is not a .npy file");
  uint8_t major = static_cast<uint8_t>(bytes[6]);
  size_t header_len, header_start;
  if (major == 1) {
    header_len = static_cast<uint8_t>(bytes[8]) | (static_cast<uint8_t>(bytes[9]) << 8);
    header_start = 10;
  } else {
    if (bytes.size() < 12) throw Error(ErrorCode::InvalidArgument, "'" + path + "': truncated .npy header");
    uint32_t len;
    std::memcpy(&len, bytes.data() + 8, 4);
    header_len = len;
    header_start = 12;
  }
  if (header_start + header_len > bytes.size()) throw Error(ErrorCode::InvalidArgument, "'" + path + "': truncated .npy header");
  std::string header = bytes.substr(header_start, header_len);
  std::string descr = header_field(header, "descr", path);
  DType dt = DType::Undefined;
  for (const auto& t : kNpyTypes)
    if (descr.find(std::string("'") + t.descr + "'") != std::string::npos) dt = t.dtype;
  if (dt == DType::Undefined)
    throw Error(ErrorCode::InvalidArgument, fmt::format("'{}': unsupported .npy dtype {}", path, descr.substr(0, descr.find(','))));
  if (header_field(header, "fortran_order", path).find("True") < header_field(header, "fortran_order", path).find(','))
    throw Error(ErrorCode::InvalidArgument, "'" + path + "': Fortran-order .npy files are not supported");
  std::string shape_text = header_field(header, "shape", path);
  auto open = shape_text.find('('), close = shape_text.find(')');
  Shape shape;
  std::stringstream ss(shape_text.substr(open + 1, close - open - 1));
  std::string item;
  while (std::getline(ss, item, ',')) {
    const size_t first = item.find_first_not_of(" ");
    if (first == std::string::npos) continue;
    const size_t last = item.find_last_not_of(" ");
    // Decimal digits that fit in int64 (std::stoll would let its own message out, or accept "3x").
    int64_t d = 0;
    bool ok = last - first < 19;
    for (size_t i = first; ok && i <= last; ++i)
      ok = item[i] >= '0' && item[i] <= '9' && !__builtin_mul_overflow(d, 10, &d) && !__builtin_add_overflow(d, item[i] - '0', &d);
    if (!ok) throw Error(ErrorCode::InvalidArgument, fmt::format("'{}': .npy shape entry '{}' is not a dimension", path, item));
    shape.push_back(d);
  }
  // The bytes the shape needs (checked) must be the bytes the file holds: compared before allocating.
  const size_t data_start = header_start + header_len;
  const int64_t needed = checked_byte_size(shape, dtype_size(dt), "'" + path + "': .npy shape", ErrorCode::InvalidArgument);
  if (bytes.size() - data_start != static_cast<uint64_t>(needed))
    throw Error(ErrorCode::InvalidArgument, fmt::format("'{}': .npy holds {} data bytes, shape {} needs {}", path,
                                                        bytes.size() - data_start, shape_to_string(shape), needed));
  Tensor t(dt, shape);
  std::memcpy(t.raw_mut(), bytes.data() + data_start, t.nbytes());
  return t;
}

void write_npy(const std::string& path, const Tensor& t) {
  const char* descr = nullptr;
  for (const auto& nt : kNpyTypes)
    if (nt.dtype == t.dtype()) descr = nt.descr;
  if (!descr) throw Error(ErrorCode::InvalidArgument, std::string("cannot write dtype ") + dtype_name(t.dtype()) + " to .npy");
  std::string shape = "(";
  for (size_t i = 0; i < t.rank(); ++i) shape += std::to_string(t.dim(i)) + (t.rank() == 1 || i + 1 < t.rank() ? "," : "");
  shape += ")";
  std::string header = fmt::format("{{'descr': '{}', 'fortran_order': False, 'shape': {}, }}", descr, shape);
  size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  std::string out = "\x93NUMPY";
  out += '\x01';
  out += '\x00';
  out += static_cast<char>(header.size() & 0xff);
  out += static_cast<char>((header.size() >> 8) & 0xff);
  out += header;
  out.append(static_cast<const char*>(t.raw()), t.nbytes());
  spit(path, out);
}

Tensor read_tensor_pb(const std::string& path, std::string* name) {
  try {
    return parse_tensor_pb(slurp(path), name);
  } catch (const Error& e) {
    throw Error(e.code(), "'" + path + "': " + e.what());
  }
}

void write_tensor_pb(const std::string& path, const Tensor& t, const std::string& name) {
  spit(path, serialize_tensor_pb(t, name));
}

Value read_value_pb(const std::string& path, const std::string& onnx_type, std::string* name) {
  try {
    return parse_value_pb(slurp(path), onnx_type, name);
  } catch (const Error& e) {
    throw Error(e.code(), "'" + path + "': " + e.what());
  }
}

void write_value_pb(const std::string& path, const Value& value, const std::string& name) {
  spit(path, serialize_value_pb(value, name));
}

}  // namespace onnxmini
