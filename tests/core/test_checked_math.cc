// core/checked_math.h: overflow is reported (with the caller's label and the
// values), never wrapped; exact results where no overflow happens.
#include <gtest/gtest.h>

#include <climits>

#include "core/checked_math.h"

namespace onnxmini {
namespace {

TEST(CheckedMath, TryFormsMatchWideArithmetic) {
  const int64_t values[] = {0, 1, -1, 2, 3, 1LL << 31, 1LL << 32, 1LL << 62, INT64_MAX, INT64_MIN, -(1LL << 40)};
  for (int64_t a : values)
    for (int64_t b : values) {
      const __int128 prod = static_cast<__int128>(a) * b, sum = static_cast<__int128>(a) + b;
      const bool prod_fits = prod >= INT64_MIN && prod <= INT64_MAX, sum_fits = sum >= INT64_MIN && sum <= INT64_MAX;
      ASSERT_EQ(try_mul(a, b).has_value(), prod_fits) << a << " * " << b;
      ASSERT_EQ(try_add(a, b).has_value(), sum_fits) << a << " + " << b;
      if (prod_fits) {
        EXPECT_EQ(*try_mul(a, b), static_cast<int64_t>(prod));
      }
      if (sum_fits) {
        EXPECT_EQ(*try_add(a, b), static_cast<int64_t>(sum));
      }
    }
}

TEST(CheckedMath, ThrowingFormsNameTheCallerAndTheValues) {
  try {
    checked_mul(int64_t{3}, int64_t{1} << 62, "Conv 'c1': weight channels x group");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), "Conv 'c1': weight channels x group: 3 * 4611686018427387904 overflows int64");
    EXPECT_EQ(e.code(), ErrorCode::RuntimeError);
  }
  bool called = false;
  auto label = [&] { called = true; return std::string("Pad 'p': begin + end"); };
  EXPECT_EQ(checked_add(2, 3, label), 5);
  EXPECT_FALSE(called) << "the label is built only on failure";
  EXPECT_THROW(checked_add(INT64_MAX, 1, label, ErrorCode::InvalidModel), Error);
  EXPECT_TRUE(called);
}

TEST(CheckedMath, ElementCountAndBytes) {
  EXPECT_EQ(checked_numel({2, 3, 4}, "x"), 24);
  EXPECT_EQ(checked_numel({}, "x"), 1);
  EXPECT_EQ(checked_numel({5, 0, INT64_MAX}, "x"), 0);
  EXPECT_EQ(checked_byte_size({2, 3}, 8, "x"), 48);
  try {
    checked_numel({1LL << 32, 1LL << 32}, "Expand 'e': output");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), "Expand 'e': output: shape 4294967296x4294967296 has more elements than int64 can count");
  }
  try {
    checked_numel({2, -3}, "Reshape 'r'");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("negative dimension -3"), std::string::npos) << e.what();
  }
  EXPECT_THROW(checked_byte_size({1LL << 61}, 8, "t"), Error);  // 2^61 elements fit, 2^64 bytes do not
  EXPECT_FALSE(try_numel({INT64_MAX, 2}).has_value());
}

}  // namespace
}  // namespace onnxmini
