// Element-wise semantics checked against values worked out by hand or with
// <cmath> in double precision (independent of the kernels): integer division
// and modulo signs, rounding, Pow on integers, Cast conversions, Clip across
// opsets, IsInf flags, activations; plus fast vs reference for every unary op.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "tests/common/simd_isas.h"
#include "tests/common/op_test_util.h"

namespace onnxmini {
namespace test {
namespace {

const float kNaN = std::numeric_limits<float>::quiet_NaN();
const float kInf = std::numeric_limits<float>::infinity();

TEST(ElementwiseValues, IntegerDivTruncatesTowardZero) {
  Tensor a = Tensor::from_vector<int32_t>({4}, {7, -7, 7, INT32_MIN});
  Tensor b = Tensor::from_vector<int32_t>({4}, {2, 2, -2, -1});
  Tensor y = run_op(14, "Div", {a, b});
  // INT32_MIN / -1 overflows: defined here as wrapping (it would trap in C++).
  EXPECT_TRUE(tensors_near(y, Tensor::from_vector<int32_t>({4}, {3, -3, -3, INT32_MIN})));
}

TEST(ElementwiseValues, ModFollowsPythonSignUnlessFmod) {
  Tensor a = Tensor::from_vector<int64_t>({6}, {7, -7, 7, -7, 6, -4});
  Tensor b = Tensor::from_vector<int64_t>({6}, {3, 3, -3, -3, 3, 3});
  // Python: 7 % 3 = 1, -7 % 3 = 2, 7 % -3 = -2, -7 % -3 = -1.
  EXPECT_TRUE(tensors_near(run_op(13, "Mod", {a, b}), Tensor::from_vector<int64_t>({6}, {1, 2, -2, -1, 0, 2})));
  // C fmod: the sign of the dividend.
  auto fmod = [](NodeBuilder& n) { n.attr("fmod", 1); };
  EXPECT_TRUE(tensors_near(run_op(13, "Mod", {a, b}, fmod), Tensor::from_vector<int64_t>({6}, {1, -1, 1, -1, 0, -1})));
  Tensor fa = Tensor::from_vector<float>({2}, {-7.5f, 7.5f});
  Tensor fb = Tensor::from_vector<float>({2}, {2.f, -2.f});
  EXPECT_TRUE(tensors_near(run_op(13, "Mod", {fa, fb}, fmod), Tensor::from_vector<float>({2}, {-1.5f, 1.5f})));
}

TEST(ElementwiseValues, PowIntegerAndMixed) {
  Tensor base = Tensor::from_vector<int64_t>({5}, {2, -3, 5, 1, -1});
  Tensor exp = Tensor::from_vector<int64_t>({5}, {10, 3, 0, -4, -3});
  EXPECT_TRUE(tensors_near(run_op(15, "Pow", {base, exp}), Tensor::from_vector<int64_t>({5}, {1024, -27, 1, 1, -1})));
  Tensor fexp = Tensor::from_vector<float>({5}, {0.5f, 2.f, 1.f, 3.f, 2.f});
  Tensor ib = Tensor::from_vector<int32_t>({5}, {16, 3, 4, 2, -2});
  EXPECT_TRUE(tensors_near(run_op(15, "Pow", {ib, fexp}), Tensor::from_vector<int32_t>({5}, {4, 9, 4, 8, 4})));
  Tensor fb = Tensor::from_vector<float>({3}, {2.f, 9.f, 0.5f});
  Tensor iexp = Tensor::from_vector<int32_t>({3}, {3, -1, 2});
  EXPECT_TRUE(tensors_near(run_op(15, "Pow", {fb, iexp}), Tensor::from_vector<float>({3}, {8.f, 1.f / 9.f, 0.25f})));
}

// Pow(x, 2) is the correctly rounded square: the float product of two floats computed
// in double is exact, so one rounding to float is the reference, subnormal results
// (where glibc's powf rounds twice) and overflow included. Exponents other than 2 in
// the same tensor keep std::pow. Fast and reference kernels, scalar and tensor exponent.
TEST(ElementwiseValues, PowSquareIsTheCorrectlyRoundedProduct) {
  // 0x1.15p-67 and 0x1.23p-67: squares where glibc's powf is one ulp off (found by a scan).
  std::vector<float> xs{0x1.15p-67f, -0x1.23p-67f, 1.1f, -2.5f, 3e-20f, -1.7e-20f, 1.3e-19f, 7.3e-23f, 2e19f, 1e20f, -0.f, kInf, -kInf, kNaN};
  for (int i = 0; i < 64; ++i) xs.push_back(std::ldexp(1.0f + 0.013f * i, -70 + 2 * i) * (i % 2 ? -1.f : 1.f));
  const int64_t n = static_cast<int64_t>(xs.size());
  const Tensor x = Tensor::from_vector<float>({n}, xs);
  std::vector<float> exps(xs.size(), 2.f);
  for (size_t i = 0; i < exps.size(); i += 3) exps[i] = 3.f;  // every third element cubed by std::pow
  auto same_bits = [](float a, float b) { return (std::isnan(a) && std::isnan(b)) || std::memcmp(&a, &b, 4) == 0; };
  for (const KernelMode mode : {KernelMode::Fast, KernelMode::Reference}) {
    const Tensor sq = run_op(15, "Pow", {x, Tensor::from_vector<float>({}, {2.f})}, {}, mode);
    const Tensor mixed = run_op(15, "Pow", {x, Tensor::from_vector<float>({n}, exps)}, {}, mode);
    for (int64_t i = 0; i < n; ++i) {
      const double xd = xs[i];
      const float want = static_cast<float>(xd * xd);
      EXPECT_TRUE(same_bits(sq.data<float>()[i], want)) << "x = " << xs[i] << " got " << sq.data<float>()[i];
      const float want_mixed = exps[i] == 2.f ? want : std::pow(xs[i], 3.f);
      EXPECT_TRUE(same_bits(mixed.data<float>()[i], want_mixed)) << "x = " << xs[i] << " exponent " << exps[i];
    }
  }
  // float64 base, an int64 exponent of 2.
  const Tensor xd = Tensor::from_vector<double>({3}, {1e-160, -3.25, 1e200});
  const Tensor yd = run_op(15, "Pow", {xd, Tensor::from_vector<int64_t>({}, {2})});
  for (int64_t i = 0; i < 3; ++i) EXPECT_EQ(yd.data<double>()[i], xd.data<double>()[i] * xd.data<double>()[i]);
}

TEST(ElementwiseValues, RoundHalfToEvenAndSign) {
  Tensor x = Tensor::from_vector<float>({8}, {0.5f, 1.5f, 2.5f, -0.5f, -1.5f, 2.4f, -2.6f, kNaN});
  EXPECT_TRUE(tensors_near(run_op(11, "Round", {x}), Tensor::from_vector<float>({8}, {0, 2, 2, -0.f, -2, 2, -3, kNaN})));
  Tensor s = Tensor::from_vector<int32_t>({3}, {-5, 0, 9});
  EXPECT_TRUE(tensors_near(run_op(13, "Sign", {s}), Tensor::from_vector<int32_t>({3}, {-1, 0, 1})));
}

TEST(ElementwiseValues, MaxMinPropagateNaN) {
  Tensor a = Tensor::from_vector<float>({3}, {1.f, kNaN, 3.f});
  Tensor b = Tensor::from_vector<float>({3}, {kNaN, 2.f, 1.f});
  EXPECT_TRUE(tensors_near(run_op(13, "Max", {a, b}), Tensor::from_vector<float>({3}, {kNaN, kNaN, 3.f})));
  EXPECT_TRUE(tensors_near(run_op(13, "Min", {a, b}), Tensor::from_vector<float>({3}, {kNaN, kNaN, 1.f})));
  Tensor c = Tensor::from_vector<float>({1}, {6.f});
  EXPECT_TRUE(tensors_near(run_op(13, "Mean", {Tensor::from_vector<float>({3}, {0, 3, 6}), c}),
                           Tensor::from_vector<float>({3}, {3, 4.5f, 6})));
}

TEST(ElementwiseValues, CastConversions) {
  Tensor f = Tensor::from_vector<float>({6}, {1.9f, -1.9f, 300.f, -1e20f, kNaN, 0.f});
  // Truncation toward zero; out of range clamps; NaN gives 0.
  auto to = [](DType d) { return [d](NodeBuilder& n) { n.attr("to", static_cast<int64_t>(d)); }; };
  EXPECT_TRUE(tensors_near(run_op(13, "Cast", {f}, to(DType::Int32)),
                           Tensor::from_vector<int32_t>({6}, {1, -1, 300, INT32_MIN, 0, 0})));
  EXPECT_TRUE(tensors_near(run_op(13, "Cast", {f}, to(DType::UInt8)),
                           Tensor::from_vector<uint8_t>({6}, {1, 0, 255, 0, 0, 0})));
  EXPECT_TRUE(tensors_near(run_op(13, "Cast", {f}, to(DType::Bool)),
                           Tensor::from_vector<bool>({6}, {true, true, true, true, true, false})));
  // Integer narrowing wraps like numpy.
  Tensor i = Tensor::from_vector<int64_t>({3}, {257, -1, 128});
  EXPECT_TRUE(tensors_near(run_op(13, "Cast", {i}, to(DType::UInt8)), Tensor::from_vector<uint8_t>({3}, {1, 255, 128})));
  // float16 rounds to nearest even: 2049 lies halfway between 2048 and 2050.
  Tensor h = run_op(13, "Cast", {Tensor::from_vector<float>({3}, {2049.f, 2051.f, 1e6f})}, to(DType::Float16));
  ASSERT_EQ(h.dtype(), DType::Float16);
  EXPECT_EQ(h.get_as_double(0), 2048.0);
  EXPECT_EQ(h.get_as_double(1), 2052.0);
  EXPECT_EQ(h.get_as_double(2), std::numeric_limits<double>::infinity());
  // CastLike takes the target type from its second input.
  Tensor like = run_op(15, "CastLike", {Tensor::from_vector<int32_t>({2}, {3, -4}), Tensor::scalar<double>(0)});
  EXPECT_TRUE(tensors_near(like, Tensor::from_vector<double>({2}, {3, -4})));
}

TEST(ElementwiseValues, CastStrings) {
  Tensor s = Tensor::from_vector<std::string>({4}, {"1.5", "-2", "NaN", "inf"});
  Tensor y = run_op(13, "Cast", {s}, [](NodeBuilder& n) { n.attr("to", static_cast<int64_t>(DType::Float32)); });
  EXPECT_TRUE(tensors_near(y, Tensor::from_vector<float>({4}, {1.5f, -2.f, kNaN, kInf})));
  Tensor back = run_op(13, "Cast", {Tensor::from_vector<float>({3}, {0.1f, -2.f, 1e-5f})},
                       [](NodeBuilder& n) { n.attr("to", static_cast<int64_t>(DType::String)); });
  ASSERT_EQ(back.dtype(), DType::String);
  const std::string* t = static_cast<const std::string*>(back.raw());
  EXPECT_EQ(t[0], "0.1");
  EXPECT_EQ(t[1], "-2");
  EXPECT_EQ(t[2], "1e-05");
}

TEST(ElementwiseValues, ClipAttributesAndInputs) {
  Tensor x = Tensor::from_vector<float>({5}, {-3.f, -1.f, 0.5f, 2.f, kNaN});
  // Opset 6: attributes.
  Tensor y6 = run_op(6, "Clip", {x}, [](NodeBuilder& n) { n.attr("min", -1.5f).attr("max", 1.f); });
  EXPECT_TRUE(tensors_near(y6, Tensor::from_vector<float>({5}, {-1.5f, -1.f, 0.5f, 1.f, kNaN})));
  // Opset 13: optional inputs; only max given.
  Tensor y13 = run_op(13, "Clip", {x, Tensor(), Tensor::scalar<float>(0.f)});
  EXPECT_TRUE(tensors_near(y13, Tensor::from_vector<float>({5}, {-3.f, -1.f, 0.f, 0.f, kNaN})));
  // min > max: everything becomes max.
  Tensor inv = run_op(13, "Clip", {x, Tensor::scalar<float>(2.f), Tensor::scalar<float>(1.f)});
  EXPECT_TRUE(tensors_near(inv, Tensor::from_vector<float>({5}, {1.f, 1.f, 1.f, 1.f, kNaN})));
  Tensor i8 = run_op(13, "Clip", {Tensor::from_vector<int8_t>({3}, {-100, 5, 100}), Tensor::scalar<int8_t>(-10)});
  EXPECT_TRUE(tensors_near(i8, Tensor::from_vector<int8_t>({3}, {-10, 5, 100})));
}

TEST(ElementwiseValues, IsInfFlagsAndIsNaN) {
  Tensor x = Tensor::from_vector<float>({4}, {kInf, -kInf, kNaN, 1.f});
  EXPECT_TRUE(tensors_near(run_op(10, "IsInf", {x}), Tensor::from_vector<bool>({4}, {true, true, false, false})));
  EXPECT_TRUE(tensors_near(run_op(10, "IsInf", {x}, [](NodeBuilder& n) { n.attr("detect_positive", 0); }),
                           Tensor::from_vector<bool>({4}, {false, true, false, false})));
  EXPECT_TRUE(tensors_near(run_op(13, "IsNaN", {x}), Tensor::from_vector<bool>({4}, {false, false, true, false})));
}

TEST(ElementwiseValues, BitShiftAndNot) {
  Tensor a = Tensor::from_vector<uint8_t>({3}, {1, 128, 255});
  Tensor b = Tensor::from_vector<uint8_t>({3}, {3, 1, 9});
  EXPECT_TRUE(tensors_near(run_op(11, "BitShift", {a, b}, [](NodeBuilder& n) { n.attr("direction", "LEFT"); }),
                           Tensor::from_vector<uint8_t>({3}, {8, 0, 0})));
  EXPECT_TRUE(tensors_near(run_op(11, "BitShift", {a, b}, [](NodeBuilder& n) { n.attr("direction", "RIGHT"); }),
                           Tensor::from_vector<uint8_t>({3}, {0, 64, 0})));
  EXPECT_TRUE(tensors_near(run_op(1, "Not", {Tensor::from_vector<bool>({2}, {true, false})}),
                           Tensor::from_vector<bool>({2}, {false, true})));
}

// Unary float ops against the same formula evaluated in double with <cmath>.
struct UnaryCase {
  const char* op;
  int64_t opset;
  double (*f)(double);
  double lo, hi;
};

TEST(ElementwiseValues, UnaryFloatOpsMatchDoubleFormulas) {
  const std::vector<UnaryCase> cases = {
      {"Abs", 13, [](double x) { return std::fabs(x); }, -5, 5},
      {"Neg", 13, [](double x) { return -x; }, -5, 5},
      {"Sqrt", 13, [](double x) { return std::sqrt(x); }, 0, 9},
      {"Exp", 13, [](double x) { return std::exp(x); }, -5, 5},
      {"Log", 13, [](double x) { return std::log(x); }, 0.1, 9},
      {"Reciprocal", 13, [](double x) { return 1 / x; }, 0.5, 9},
      {"Floor", 13, [](double x) { return std::floor(x); }, -5, 5},
      {"Ceil", 13, [](double x) { return std::ceil(x); }, -5, 5},
      {"Erf", 13, [](double x) { return std::erf(x); }, -3, 3},
      {"Sin", 7, [](double x) { return std::sin(x); }, -3, 3},
      {"Cos", 7, [](double x) { return std::cos(x); }, -3, 3},
      {"Tan", 7, [](double x) { return std::tan(x); }, -1, 1},
      {"Atan", 7, [](double x) { return std::atan(x); }, -3, 3},
      {"Tanh", 13, [](double x) { return std::tanh(x); }, -5, 5},
      {"Sigmoid", 13, [](double x) { return 1 / (1 + std::exp(-x)); }, -20, 20},
      {"Relu", 14, [](double x) { return x > 0 ? x : 0; }, -5, 5},
      {"LeakyRelu", 16, [](double x) { return x >= 0 ? x : 0.01 * x; }, -5, 5},
      {"Elu", 6, [](double x) { return x >= 0 ? x : std::exp(x) - 1; }, -5, 5},
      {"Selu", 6, [](double x) { return x > 0 ? 1.0507009873554805 * x : 1.0507009873554805 * 1.6732632423543772 * (std::exp(x) - 1); }, -5, 5},
      {"Celu", 12, [](double x) { return std::max(0.0, x) + std::min(0.0, std::exp(x) - 1); }, -5, 5},
      {"HardSigmoid", 6, [](double x) { return std::max(0.0, std::min(1.0, 0.2 * x + 0.5)); }, -5, 5},
      {"HardSwish", 14, [](double x) { return x * std::max(0.0, std::min(1.0, x / 6 + 0.5)); }, -5, 5},
      {"Softplus", 1, [](double x) { return std::log(1 + std::exp(x)); }, -20, 20},
      {"Softsign", 1, [](double x) { return x / (1 + std::fabs(x)); }, -5, 5},
      {"ThresholdedRelu", 10, [](double x) { return x > 1 ? x : 0; }, -5, 5},
      {"Mish", 18, [](double x) { return x * std::tanh(std::log(1 + std::exp(x))); }, -5, 5},
      {"Gelu", 20, [](double x) { return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0))); }, -5, 5},
      {"Swish", 24, [](double x) { return x / (1 + std::exp(-x)); }, -100, 100},
  };
  uint32_t seed = 900;
  for (const auto& c : cases) {
    Tensor x = random_values(DType::Float32, {50000}, seed++, c.lo, c.hi);  // > one chunk: threads split it
    Tensor expected(DType::Float32, x.shape());
    for (int64_t i = 0; i < x.numel(); ++i)
      expected.mutable_data<float>()[i] = static_cast<float>(c.f(x.data<float>()[i]));
    EXPECT_TRUE(tensors_near(run_op(c.opset, c.op, {x}, nullptr, KernelMode::Fast, 4), expected, 1e-6, 1e-5)) << c.op;
    // Exp, Tanh, Sigmoid, Gelu: the float32 fast path is a vectorised approximation
    // (fast_math.h; Gelu's erf form through erfc, activations.cc).
    const std::string op = c.op;
    const bool approx = op == "Exp" || op == "Tanh" || op == "Sigmoid" || op == "Gelu" || op == "Erf";
    EXPECT_TRUE(fast_matches_reference(c.opset, c.op, {x}, nullptr, approx ? 1e-7 : 0, approx ? 1e-6 : 0)) << c.op;
    Tensor xd = random_values(DType::Float64, {1000}, seed++, c.lo, c.hi);
    Tensor xh = random_values(DType::Float16, {1000}, seed++, c.lo, c.hi);
    EXPECT_TRUE(fast_matches_reference(c.opset, c.op, {xd})) << c.op << " double";
    // Gelu: the reference's 1 + erf(z) cancels for negative x (erf's float32 spacing near -1 is
    // 6e-8, times 0.5 |x| <= 2.5: 1.5e-7 absolute) where the fast path's erfc does not; plus one
    // float16 ulp of rounding (2^-10 relative, 6e-8 in the subnormals).
    // Erf: the SIMD erf (4 float ulp) can round to the neighbouring float16 value.
    const bool half_ulp = op == "Gelu" || op == "Erf";
    EXPECT_TRUE(fast_matches_reference(c.opset, c.op, {xh}, nullptr, half_ulp ? 2.1e-7 : 0, half_ulp ? 9.8e-4 : 0))
        << c.op << " float16";
  }
}

// The approximations of fast_math.h at the edges: overflow, underflow, NaN, tiny inputs.
TEST(ElementwiseValues, FastExpTanhSigmoidEdges) {
  const std::vector<float> xs = {100.f, 88.7f, 88.5f, 88.f, -87.f, -100.f, -103.f, -120.f, 0.f, 1e-6f, -1e-4f, 0.6f, -0.7f, 9.f, -30.f, kNaN, kInf, -kInf};
  Tensor x = Tensor::from_vector<float>({static_cast<int64_t>(xs.size())}, xs);
  struct Case { const char* op; double (*f)(double); };
  for (const Case& c : {Case{"Exp", [](double v) { return std::exp(v); }},
                        Case{"Tanh", [](double v) { return std::tanh(v); }},
                        Case{"Sigmoid", [](double v) { return 1 / (1 + std::exp(-v)); }}}) {
    Tensor expected(DType::Float32, x.shape());
    for (size_t i = 0; i < xs.size(); ++i) expected.mutable_data<float>()[i] = static_cast<float>(c.f(xs[i]));
    // Relative 2e-6, and 1e-44 absolute for the subnormal results of Exp (fewer significant bits).
    EXPECT_TRUE(tensors_near(run_op(13, c.op, {x}), expected, 1e-44, 2e-6)) << c.op;
  }
}

TEST(ElementwiseValues, GeluTanhApproximation) {
  Tensor x = Tensor::from_vector<float>({3}, {-1.f, 0.5f, 2.f});
  Tensor expected(DType::Float32, {3});
  for (int i = 0; i < 3; ++i) {
    const double v = x.data<float>()[i];
    expected.mutable_data<float>()[i] = static_cast<float>(
        0.5 * v * (1 + std::tanh(std::sqrt(2 / M_PI) * (v + 0.044715 * v * v * v))));
  }
  EXPECT_TRUE(tensors_near(run_op(20, "Gelu", {x}, [](NodeBuilder& n) { n.attr("approximate", "tanh"); }), expected));
}

// The tanh form's float32 fast path (blocks of 256 through the ISA's vectorised tanh, the
// path the gelu_tanh fusion runs): every element of a long row, block tails included, two
// threads, against the formula in double. fast_tanhf is within a few float32 ulps, so
// |error| <= 1e-6 + 1e-5 |y|.
TEST(ElementwiseValues, GeluTanhFastPathOverBlocks) {
  const Tensor x = random_values(DType::Float32, {3, 347}, 36, -9, 9);
  Tensor expected(DType::Float32, x.shape());
  for (int64_t i = 0; i < x.numel(); ++i) {
    const double v = x.data<float>()[i];
    expected.mutable_data<float>()[i] = static_cast<float>(
        0.5 * v * (1 + std::tanh(std::sqrt(2 / M_PI) * (v + 0.044715 * v * v * v))));
  }
  auto tanh_form = [](NodeBuilder& n) { n.attr("approximate", "tanh"); };
  EXPECT_TRUE(tensors_near(run_op(20, "Gelu", {x}, tanh_form, KernelMode::Fast, 2), expected, 1e-6, 1e-5));
  EXPECT_TRUE(tensors_near(run_op(20, "Gelu", {x}, tanh_form, KernelMode::Reference), expected, 1e-6, 1e-6));
}

// The erf form's float32 fast path (GeluErfOp: erfc from a fitted polynomial and fast_expf,
// vectorised) against 0.5 x erfc(-x / sqrt 2) in double, two threads, a long row: within
// 4e-7 absolute (the fit's bound, measured when fitting) plus 1e-5 relative; NaN and the
// infinities as the formula gives them. The reference path keeps std::erf.
TEST(ElementwiseValues, GeluErfFastPath) {
  Tensor x = random_values(DType::Float32, {3, 347}, 37, -12, 12);
  const std::vector<float> specials = {0.f, -0.f, 1e-30f, -1e-30f, 5.f, -5.f, 30.f, -30.f, kInf, kNaN};
  for (size_t i = 0; i < specials.size(); ++i) x.mutable_data<float>()[i] = specials[i];
  Tensor expected(DType::Float32, x.shape());
  for (int64_t i = 0; i < x.numel(); ++i) {
    const double v = x.data<float>()[i];
    expected.mutable_data<float>()[i] = static_cast<float>(0.5 * v * std::erfc(-v / std::sqrt(2.0)));
  }
  EXPECT_TRUE(tensors_near(run_op(20, "Gelu", {x}, nullptr, KernelMode::Fast, 2), expected, 4e-7, 1e-5));
  EXPECT_TRUE(tensors_near(run_op(20, "Gelu", {x}, nullptr, KernelMode::Reference), expected, 1e-6, 1e-6));
}

// The Erf op's float32 fast path (the SIMD erf of kernels/simd/erf_impl.h on AVX2 /
// AVX-512, std::erf on the portable level) within test_erf.cc's 4 ulp of erf in double,
// 4 threads over a long input, every tail length 1..40 and the special values.
TEST(ElementwiseValues, ErfFastPathWithin4Ulp) {
  auto check = [](const Tensor& x, const Tensor& y) {
    for (int64_t i = 0; i < x.numel(); ++i) {
      const float v = x.data<float>()[i], got = y.data<float>()[i];
      if (std::isnan(v)) {
        EXPECT_TRUE(std::isnan(got));
        continue;
      }
      const double ref = std::erf(static_cast<double>(v));
      int e;
      std::frexp(std::fabs(ref), &e);
      const double ulp = std::fabs(ref) < 1.1754943508222875e-38 ? 1.401298464324817e-45 : std::ldexp(1.0, e - 24);
      ASSERT_LE(std::fabs(got - ref), 4 * ulp) << "x = " << v;
    }
  };
  Tensor x = random_values(DType::Float32, {50001}, 61, -6, 6);
  const std::vector<float> specials = {0.f, -0.f, 1e-40f, -1e-30f, 1.f, -1.f, 0.99999994f, 4.f, -9.f, kInf, -kInf, kNaN};
  for (size_t i = 0; i < specials.size(); ++i) x.mutable_data<float>()[i * 997] = specials[i];
  check(x, run_op(13, "Erf", {x}, nullptr, KernelMode::Fast, 4));
  for (int64_t n = 1; n <= 40; ++n) {
    Tensor xs = random_values(DType::Float32, {n}, 62 + static_cast<uint32_t>(n), -3, 3);
    check(xs, run_op(13, "Erf", {xs}, nullptr, KernelMode::Fast, 1));
  }
}

TEST(ElementwiseValues, SwishAlpha) {
  const std::vector<float> xs = {-100.f, -3.f, -0.5f, 0.f, 0.25f, 2.f, 50.f, kInf, -kInf};
  Tensor x = Tensor::from_vector<float>({static_cast<int64_t>(xs.size())}, xs);
  Tensor expected(DType::Float32, x.shape());
  for (size_t i = 0; i < xs.size(); ++i) {
    const double v = xs[i];
    // x * sigmoid(alpha x) as written, like onnxruntime: -inf * 0 is NaN.
    expected.mutable_data<float>()[i] = std::isinf(v) ? (v > 0 ? kInf : kNaN) : static_cast<float>(v / (1 + std::exp(-1.5 * v)));
  }
  EXPECT_TRUE(tensors_near(run_op(24, "Swish", {x}, [](NodeBuilder& n) { n.attr("alpha", 1.5f); }), expected, 1e-30, 1e-6));
}

TEST(ElementwiseValues, SwiGlu) {
  const Tensor a = random_values(DType::Float32, {3, 70}, 31, -8, 8), b = random_values(DType::Float32, {3, 70}, 32);
  Tensor expected(DType::Float32, a.shape());
  for (int64_t i = 0; i < a.numel(); ++i) {
    const double x = a.data<float>()[i];
    expected.mutable_data<float>()[i] = static_cast<float>(x / (1 + std::exp(-0.5 * x)) * b.data<float>()[i]);
  }
  auto alpha = [](NodeBuilder& n) { n.attr("alpha", 0.5f); };
  EXPECT_TRUE(tensors_near(run_op(28, "SwiGLU", {a, b}, alpha, KernelMode::Fast, 2), expected, 1e-6, 1e-5));
  EXPECT_TRUE(fast_matches_reference(28, "SwiGLU", {random_values(DType::Float16, {40}, 33), random_values(DType::Float16, {40}, 34)}));
  EXPECT_NE(op_error(28, "SwiGLU", {a, random_values(DType::Float32, {70}, 35)})
                .find("SwiGLU 'n1': A has shape 3x70 and B 70: they must be identical (no broadcasting)"),
            std::string::npos);
}

TEST(ElementwiseValues, IntegerUnaryOps) {
  Tensor x = Tensor::from_vector<int32_t>({4}, {-7, 0, 3, INT32_MIN + 1});
  EXPECT_TRUE(tensors_near(run_op(13, "Abs", {x}), Tensor::from_vector<int32_t>({4}, {7, 0, 3, INT32_MAX})));
  EXPECT_TRUE(tensors_near(run_op(13, "Neg", {x}), Tensor::from_vector<int32_t>({4}, {7, 0, -3, INT32_MAX})));
  EXPECT_TRUE(tensors_near(run_op(14, "Relu", {x}), Tensor::from_vector<int32_t>({4}, {0, 0, 3, 0})));
  EXPECT_TRUE(tensors_near(run_op(18, "BitwiseNot", {x}), Tensor::from_vector<int32_t>({4}, {6, -1, -4, INT32_MAX - 1})));
}

// Sqrt's float32 fast path (SIMD or errno-free loop) is exact: the same value
// as std::sqrt for every length 1..40 (SIMD tails), specials included.
std::vector<float> sqrt_inputs(int64_t n, uint32_t seed) {
  const float specials[] = {0.0f, -0.0f, kInf, -kInf, kNaN, -1.0f, 1e-45f, 3.4e38f, 2.0f};
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(0.0f, 100.0f);
  std::vector<float> v(n);
  for (int64_t i = 0; i < n; ++i) v[i] = i % 5 == 3 ? specials[(i / 5) % 9] : d(rng);
  return v;
}

TEST(ElementwiseValues, SqrtIsExact) {
  for (int64_t n : {1, 2, 7, 8, 9, 15, 16, 17, 31, 33, 40, 100000}) {
    Tensor x = Tensor::from_vector<float>({n}, sqrt_inputs(n, static_cast<uint32_t>(n)));
    Tensor y = run_op(14, "Sqrt", {x}, nullptr, KernelMode::Fast, 4);
    for (int64_t i = 0; i < n; ++i) {
      const float want = std::sqrt(x.data<float>()[i]), got = y.data<float>()[i];
      ASSERT_TRUE(got == want || (std::isnan(got) && std::isnan(want))) << n << " [" << i << "] " << got << " vs " << want;
    }
  }
}

TEST(ElementwiseValues, SimdSqrtEveryIsa) {
  for (const simd::F32Kernels* k : simd_tables())
    for (int64_t n = 0; n <= 40; ++n) {
      std::vector<float> x = sqrt_inputs(n, 7), y(n + 1, -5.0f);
      k->sqrt(x.data(), y.data(), n);
      for (int64_t i = 0; i < n; ++i) {
        const float want = std::sqrt(x[i]);
        ASSERT_TRUE(y[i] == want || (std::isnan(y[i]) && std::isnan(want))) << isa_of(*k) << " n " << n << " [" << i << "]";
      }
      EXPECT_EQ(y[n], -5.0f) << isa_of(*k) << " wrote past n = " << n;
    }
}

// The vector Exp / Sigmoid / Tanh of every ISA table against <cmath> in double:
// lengths 0..40 (full vectors and masked tails), the edge values of
// FastExpTanhSigmoidEdges mixed in, nothing written past n. Same tolerance as
// the scalar approximations (2e-6 relative, 1e-44 absolute for subnormal exp).
TEST(ElementwiseValues, SimdExpSigmoidTanhEveryIsa) {
  const float edges[] = {100.f, 88.7f, 88.f, -87.f, -100.f, -103.f, -120.f, 0.f, 1e-6f, -1e-4f, 0.6f, -0.7f, 9.f, -30.f, kNaN, kInf, -kInf};
  struct Case { const char* name; simd::UnaryFn simd::F32Kernels::*fn; double (*f)(double); };
  const Case cases[] = {{"Exp", &simd::F32Kernels::exp, [](double v) { return std::exp(v); }},
                        {"Sigmoid", &simd::F32Kernels::sigmoid, [](double v) { return 1 / (1 + std::exp(-v)); }},
                        {"Tanh", &simd::F32Kernels::tanh, [](double v) { return std::tanh(v); }}};
  std::mt19937 rng(77);
  std::uniform_real_distribution<float> d(-12.0f, 12.0f);
  for (const simd::F32Kernels* k : simd_tables())
    for (const Case& c : cases)
      for (int64_t n = 0; n <= 40; ++n) {
        std::vector<float> x(n), y(n + 1, -5.0f);
        for (int64_t i = 0; i < n; ++i) x[i] = i % 3 == 1 ? edges[(i / 3 + n) % 17] : d(rng);
        (k->*c.fn)(x.data(), y.data(), n);
        for (int64_t i = 0; i < n; ++i) {
          const double want = static_cast<float>(c.f(x[i]));  // overflow is inf in float
          if (std::isnan(want)) {
            EXPECT_TRUE(std::isnan(y[i])) << isa_of(*k) << " " << c.name << "(" << x[i] << ")";
          } else {
            const double tol = 1e-44 + 2e-6 * std::fabs(want);
            EXPECT_TRUE(std::isinf(want) ? y[i] == want : std::fabs(y[i] - want) <= tol)
                << isa_of(*k) << " " << c.name << "(" << x[i] << ") = " << y[i] << ", want " << want;
          }
        }
        EXPECT_EQ(y[n], -5.0f) << isa_of(*k) << " " << c.name << " wrote past n = " << n;
      }
}

}  // namespace
}  // namespace test
}  // namespace onnxmini
