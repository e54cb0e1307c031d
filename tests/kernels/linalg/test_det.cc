// Det against a reference written here (Laplace expansion along the first row,
// exact enough for small matrices in float64), batched, singular and
// permuted inputs, float16; and the shape error.
#include <cmath>

#include "tests/common/node_runner.h"
#include "tests/common/op_test_util.h"

namespace onnxmini {
namespace test {
namespace {

double laplace_det(const std::vector<double>& a, int64_t m) {
  if (m == 1) return a[0];
  double det = 0;
  for (int64_t c = 0; c < m; ++c) {
    std::vector<double> minor;
    for (int64_t r = 1; r < m; ++r)
      for (int64_t j = 0; j < m; ++j)
        if (j != c) minor.push_back(a[r * m + j]);
    det += (c % 2 ? -1 : 1) * a[c] * laplace_det(minor, m - 1);
  }
  return det;
}

TEST(Det, MatchesLaplaceExpansion) {
  for (int64_t m : {1, 2, 3, 5}) {
    Tensor x = random_values(DType::Float64, {2, 3, m, m}, static_cast<uint32_t>(m), -2, 2);
    auto y = run_node("Det", 22, {x}, nullptr, 1, KernelMode::Fast)[0];
    ASSERT_EQ(y.shape(), (Shape{2, 3}));
    const auto v = values_of(x);
    for (int64_t k = 0; k < 6; ++k) {
      const double want = laplace_det(std::vector<double>(v.begin() + k * m * m, v.begin() + (k + 1) * m * m), m);
      EXPECT_NEAR(y.data<double>()[k], want, 1e-12 * (1 + std::fabs(want))) << "m " << m << " matrix " << k;
    }
  }
}

TEST(Det, SingularPermutedAndHalf) {
  // A row swap flips the sign; a repeated row gives 0.
  auto y = run_node("Det", 11, {Tensor::from_vector<float>({3, 2, 2}, {0, 1, 1, 0, 1, 2, 2, 4, 2, 0, 0, 3})}, nullptr, 1,
                    KernelMode::Fast)[0];
  EXPECT_EQ(values_of(y), (std::vector<double>{-1, 0, 6}));
  y = run_node("Det", 22, {random_values(DType::Float16, {3, 3}, 1)}, nullptr, 1, KernelMode::Fast)[0];
  EXPECT_EQ(y.dtype(), DType::Float16);
  auto msg = node_error("Det", 22, {random_values(DType::Float32, {2, 3}, 1)}, nullptr);
  EXPECT_NE(msg.find("Det 'n1': input must be [*, M, M] (square matrices), got shape 2x3"), std::string::npos) << msg;
}

}  // namespace
}  // namespace test
}  // namespace onnxmini
