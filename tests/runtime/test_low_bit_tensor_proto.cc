// TensorProto storage of int2 / uint2 (four codes per byte, lowest bits first,
// the last byte zero-padded; raw_data or one int32_data value per packed byte)
// and float8e8m0 (one code per byte / per int32_data value), checked against
// the packing written out here (onnx.numpy_helper's layout), both ways.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "onnxmini/tensor_io.h"
#include "tests/common/model_builder.h"

namespace onnxmini {
namespace test {
namespace {

// codes[i] lands in byte i / 4 at bit 2 * (i % 4).
std::string pack_2bit(const std::vector<uint8_t>& codes) {
  std::string bytes((codes.size() + 3) / 4, '\0');
  for (size_t i = 0; i < codes.size(); ++i)
    bytes[i / 4] = static_cast<char>(static_cast<uint8_t>(bytes[i / 4]) | ((codes[i] & 3) << (2 * (i % 4))));
  return bytes;
}

std::vector<uint8_t> some_codes(size_t n, int seed) {
  std::vector<uint8_t> c(n);
  for (size_t i = 0; i < n; ++i) c[i] = static_cast<uint8_t>((i * 7 + static_cast<size_t>(seed)) % 4);
  return c;
}

onnx::TensorProto header(DType t, int64_t n) {
  onnx::TensorProto p;
  p.set_name("w");
  p.set_data_type(static_cast<int32_t>(t));
  p.add_dims(n);
  return p;
}

std::vector<uint8_t> codes_of(const Tensor& t) {
  const auto* p = static_cast<const uint8_t*>(t.raw());
  return std::vector<uint8_t>(p, p + t.numel());
}

TEST(LowBitTensorProto, TwoBitRawAndInt32DataBothWays) {
  for (DType t : {DType::Int2, DType::UInt2})
    for (size_t n : {0, 1, 3, 4, 5, 8, 9, 30}) {
      const std::vector<uint8_t> c = some_codes(n, static_cast<int>(n));
      onnx::TensorProto raw = header(t, static_cast<int64_t>(n));
      raw.set_raw_data(pack_2bit(c));
      const Tensor from_raw = parse_tensor_pb(raw.SerializeAsString());
      ASSERT_EQ(from_raw.dtype(), t);
      EXPECT_EQ(codes_of(from_raw), c) << n;

      onnx::TensorProto ints = header(t, static_cast<int64_t>(n));
      for (char b : pack_2bit(c)) ints.add_int32_data(static_cast<uint8_t>(b));
      EXPECT_EQ(codes_of(parse_tensor_pb(ints.SerializeAsString())), c) << n;

      onnx::TensorProto back;
      ASSERT_TRUE(back.ParseFromString(serialize_tensor_pb(from_raw, "w")));
      EXPECT_EQ(back.data_type(), static_cast<int32_t>(t));
      EXPECT_EQ(back.raw_data(), pack_2bit(c)) << n;
    }
}

TEST(LowBitTensorProto, TwoBitSizeMismatchNamesTheCounts) {
  onnx::TensorProto p = header(DType::Int2, 5);  // needs 2 packed bytes
  p.set_raw_data(std::string(1, '\0'));
  try {
    parse_tensor_pb(p.SerializeAsString());
    FAIL() << "no error";
  } catch (const Error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("raw_data has 1 bytes"), std::string::npos) << m;
    EXPECT_NE(m.find("needs 2"), std::string::npos) << m;
  }
  onnx::TensorProto q = header(DType::UInt2, 5);
  for (int i = 0; i < 5; ++i) q.add_int32_data(0);  // one per element instead of one per packed byte
  EXPECT_THROW(parse_tensor_pb(q.SerializeAsString()), Error);
}

// A packed type with INT64_MAX elements (fuzz_tensor_proto, 2026-12-07): the packed byte
// count rounded up by adding 1 first, which overflowed int64 (undefined behaviour, caught by
// UBSan); now it is an error about the size, from int32_data and from raw_data alike.
TEST(LowBitTensorProto, PackedCountOfInt64MaxElementsIsAnError) {
  for (DType t : {DType::Int4, DType::Int2}) {
    onnx::TensorProto p;
    p.set_data_type(static_cast<int32_t>(t));
    p.add_dims(INT64_MAX);
    EXPECT_THROW(parse_tensor_pb(p.SerializeAsString()), Error);
    p.set_raw_data(std::string(1, '\0'));
    EXPECT_THROW(parse_tensor_pb(p.SerializeAsString()), Error);
  }
}

TEST(LowBitTensorProto, E8M0OneCodePerByte) {
  std::vector<uint8_t> c(256);
  for (int i = 0; i < 256; ++i) c[i] = static_cast<uint8_t>(255 - i);
  onnx::TensorProto raw = header(DType::Float8E8M0, 256);
  raw.set_raw_data(std::string(c.begin(), c.end()));
  const Tensor t = parse_tensor_pb(raw.SerializeAsString());
  ASSERT_EQ(t.dtype(), DType::Float8E8M0);
  EXPECT_EQ(codes_of(t), c);
  onnx::TensorProto ints = header(DType::Float8E8M0, 256);
  for (uint8_t v : c) ints.add_int32_data(v);
  EXPECT_EQ(codes_of(parse_tensor_pb(ints.SerializeAsString())), c);
  onnx::TensorProto back;
  ASSERT_TRUE(back.ParseFromString(serialize_tensor_pb(t)));
  EXPECT_EQ(back.raw_data(), std::string(c.begin(), c.end()));
}

}  // namespace
}  // namespace test
}  // namespace onnxmini
