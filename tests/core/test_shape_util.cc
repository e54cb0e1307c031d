// core/shape_util.h: axis normalisation, strides, flat index <-> coordinates.
// Each round trip is checked against an independent walk of the shape (an
// odometer), not against values written down by hand.
#include <gtest/gtest.h>

#include <vector>

#include "core/shape_util.h"

using namespace onnxmini;

TEST(ShapeUtil, NormalizeAxisAcceptsExactlyMinusRankToRank) {
  for (int64_t rank : {1, 3, 5})
    for (int64_t axis = -rank - 2; axis < rank + 2; ++axis) {
      const auto a = normalize_axis(axis, rank);
      ASSERT_EQ(a.has_value(), axis >= -rank && axis < rank) << axis << " rank " << rank;
      if (a) EXPECT_EQ(*a, (axis + rank) % rank) << axis << " rank " << rank;
    }
  EXPECT_FALSE(normalize_axis(0, 0));  // a scalar has no axis
}

TEST(ShapeUtil, SplitAxisAlsoAcceptsRank) {
  for (int64_t rank : {0, 2, 4})
    for (int64_t axis = -rank - 2; axis <= rank + 2; ++axis) {
      const auto a = normalize_split_axis(axis, rank);
      ASSERT_EQ(a.has_value(), axis >= -rank && axis <= rank) << axis << " rank " << rank;
      if (a) EXPECT_EQ(*a, axis < 0 ? axis + rank : axis);
    }
}

// Walks every coordinate of `shape` in row-major order (last axis fastest).
std::vector<std::vector<int64_t>> odometer(const Shape& shape) {
  std::vector<std::vector<int64_t>> all;
  if (shape_numel(shape) == 0) return all;
  std::vector<int64_t> c(shape.size(), 0);
  for (;;) {
    all.push_back(c);
    size_t d = shape.size();
    while (d > 0 && ++c[d - 1] == shape[d - 1]) c[--d] = 0;
    if (d == 0) return all;
  }
}

TEST(ShapeUtil, UnravelRavelAndStridesAgreeWithRowMajorOrder) {
  for (const Shape& shape : {Shape{}, Shape{7}, Shape{2, 3}, Shape{4, 1, 5}, Shape{2, 3, 1, 4}}) {
    const auto coords = odometer(shape);
    ASSERT_EQ(static_cast<int64_t>(coords.size()), shape_numel(shape));
    const std::vector<int64_t> strides = row_major_strides(shape);
    ASSERT_EQ(strides.size(), shape.size());
    std::vector<int64_t> c(shape.size());
    for (int64_t flat = 0; flat < static_cast<int64_t>(coords.size()); ++flat) {
      unravel_index(flat, shape, c.data());
      EXPECT_EQ(c, coords[flat]) << shape_to_string(shape) << " element " << flat;
      EXPECT_EQ(ravel_index(coords[flat].data(), shape), flat);
      int64_t dot = 0;
      for (size_t d = 0; d < shape.size(); ++d) dot += coords[flat][d] * strides[d];
      EXPECT_EQ(dot, flat) << shape_to_string(shape);
    }
  }
}

TEST(ShapeUtil, UnravelGivesZerosForAZeroSizeAxis) {
  std::vector<int64_t> c = {9, 9, 9};
  unravel_index(0, Shape{2, 0, 3}, c.data());
  EXPECT_EQ(c, (std::vector<int64_t>{0, 0, 0}));
}

TEST(ShapeUtil, ShapeProductOfARange) {
  const Shape s{2, 3, 5, 7};
  for (size_t b = 0; b <= s.size(); ++b)
    for (size_t e = b; e <= s.size() + 1; ++e) {
      int64_t want = 1;
      for (size_t d = b; d < e && d < s.size(); ++d) want *= s[d];
      EXPECT_EQ(shape_product(s, b, e), want) << b << ".." << e;
    }
  EXPECT_EQ(shape_product(s, 0, s.size()), shape_numel(s));
}
