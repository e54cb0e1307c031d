// CumSum and CumProd against a reference written here: every axis, exclusive
// and reverse, integer and float types (float16 accumulated in float32), and
// the axis errors.
#include "core/shape_util.h"
#include "tests/common/node_runner.h"
#include "tests/common/op_test_util.h"

namespace onnxmini {
namespace test {
namespace {

std::vector<double> cumulative_reference(const std::vector<double>& x, const Shape& s, int64_t axis, bool exclusive,
                                         bool reverse, bool product) {
  const int64_t outer = shape_product(s, 0, axis), len = s[axis], inner = shape_product(s, axis + 1, s.size());
  std::vector<double> y(x.size());
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      double acc = product ? 1 : 0;
      for (int64_t step = 0; step < len; ++step) {
        const int64_t k = reverse ? len - 1 - step : step, at = (o * len + k) * inner + i;
        if (exclusive) y[at] = acc;
        acc = product ? acc * x[at] : acc + x[at];
        if (!exclusive) y[at] = acc;
      }
    }
  return y;
}

TEST(Cumulative, MatchesReference) {
  const Shape s = {3, 4, 5};
  for (const std::string op : {"CumSum", "CumProd"})
    for (DType dt : {DType::Float32, DType::Int64, DType::Int32, DType::Float64})
      for (int64_t axis : {0, 1, -1})
        for (int exclusive : {0, 1})
          for (int reverse : {0, 1}) {
            Tensor x = random_values(dt, s, 5, op == "CumProd" ? 0.5 : -4, op == "CumProd" ? 2 : 4);
            Tensor a = dt == DType::Int32 ? Tensor::scalar<int32_t>(static_cast<int32_t>(axis))
                                          : Tensor::scalar<int64_t>(axis);
            auto y = run_node(op, op == "CumSum" ? 14 : 26, {x, a},
                              [&](NodeBuilder& n) { n.attr("exclusive", exclusive).attr("reverse", reverse); }, 1,
                              KernelMode::Fast, 4)[0];
            const auto want = cumulative_reference(values_of(x), s, axis < 0 ? axis + 3 : axis, exclusive, reverse,
                                                   op == "CumProd");
            const auto got = values_of(y);
            for (size_t i = 0; i < want.size(); ++i)
              ASSERT_NEAR(got[i], want[i], 1e-5 * (1 + std::fabs(want[i])))
                  << op << " " << dtype_name(dt) << " axis " << axis << " exclusive " << exclusive << " reverse "
                  << reverse << " element " << i;
          }
}

TEST(Cumulative, Float16AccumulatesInFloat) {
  Tensor x = random_values(DType::Float16, {300}, 2, 0.0, 1.0);
  auto y = run_node("CumSum", 14, {x, Tensor::scalar<int64_t>(0)}, nullptr, 1, KernelMode::Fast)[0];
  const auto want = cumulative_reference(values_of(x), {300}, 0, false, false, false);
  const auto got = values_of(y);
  // Each output is the float32 running sum rounded once to float16 (11 significant bits).
  for (size_t i = 0; i < want.size(); ++i) ASSERT_NEAR(got[i], want[i], std::fabs(want[i]) * 0x1p-11 + 1e-6) << i;
}

TEST(Cumulative, AxisErrors) {
  Tensor x = random_values(DType::Float32, {2, 3}, 1);
  auto msg = node_error("CumSum", 14, {x, Tensor::scalar<int64_t>(2)}, nullptr);
  EXPECT_NE(msg.find("CumSum 'n1': axis 2 is out of range [-2, 2)"), std::string::npos) << msg;
  msg = node_error("CumSum", 14, {x, i64({0, 1})}, nullptr);
  EXPECT_NE(msg.find("axis must be an int32 / int64 scalar, got int64 of shape 2"), std::string::npos) << msg;
}

}  // namespace
}  // namespace test
}  // namespace onnxmini
