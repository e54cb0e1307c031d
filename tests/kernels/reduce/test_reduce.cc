// Reduce* and ArgMin/ArgMax: hand-computed values, fast (pairwise, 4 threads)
// vs reference (double accumulation) on random and large shapes, opset
// variants of the axes, keepdims, noop_with_empty_axes, zero-size reductions,
// float32 summation accuracy and the error cases; short float32 rows (SIMD
// row reductions, ArgMin/ArgMax across rows) on every ISA, NaN / inf included.
#include <cmath>
#include <limits>

#include "tests/common/simd_isas.h"
#include "tests/common/node_runner.h"

namespace onnxmini {
namespace test {
namespace {

const std::vector<std::string> kReduceOps = {"ReduceSum", "ReduceSumSquare", "ReduceMean",  "ReduceMax",
                                             "ReduceMin", "ReduceProd",      "ReduceL1",    "ReduceL2",
                                             "ReduceLogSum", "ReduceLogSumExp"};

// Axes as an input from opset 18 (13 for ReduceSum); tests use 18.
Tensor run_reduce(const std::string& op, const Tensor& x, std::vector<int64_t> axes, int64_t keepdims,
                  KernelMode mode = KernelMode::Fast, int threads = 1) {
  return run_node(op, 18, {x, i64(axes)}, [&](NodeBuilder& n) { n.attr("keepdims", keepdims); }, 1, mode, threads)[0];
}

TEST(Reduce, HandComputed) {
  auto x = Tensor::from_vector<float>({2, 3}, {1, 2, 3, 4, 5, 6});
  auto v = [&](const std::string& op, std::vector<int64_t> axes) { return values_of(run_reduce(op, x, axes, 0)); };
  EXPECT_EQ(v("ReduceSum", {1}), (std::vector<double>{6, 15}));
  EXPECT_EQ(v("ReduceSum", {}), (std::vector<double>{21}));  // empty axes: all
  EXPECT_EQ(v("ReduceSumSquare", {0}), (std::vector<double>{17, 29, 45}));
  EXPECT_EQ(v("ReduceMean", {-1}), (std::vector<double>{2, 5}));
  EXPECT_EQ(v("ReduceMax", {0}), (std::vector<double>{4, 5, 6}));
  EXPECT_EQ(v("ReduceMin", {1}), (std::vector<double>{1, 4}));
  EXPECT_EQ(v("ReduceProd", {1}), (std::vector<double>{6, 120}));
  EXPECT_EQ(v("ReduceL1", {0, 1}), (std::vector<double>{21}));
  EXPECT_NEAR(v("ReduceL2", {1})[0], std::sqrt(14.0), 1e-6);
  EXPECT_NEAR(v("ReduceLogSum", {1})[1], std::log(15.0), 1e-6);
  EXPECT_NEAR(v("ReduceLogSumExp", {1})[0], std::log(std::exp(1.0) + std::exp(2.0) + std::exp(3.0)), 1e-6);
  auto k = run_reduce("ReduceSum", x, {1}, 1);
  EXPECT_EQ(k.shape(), (Shape{2, 1}));
}

TEST(Reduce, LogSumExpDoesNotOverflow) {
  auto x = Tensor::from_vector<float>({2}, {1000, 1000});
  EXPECT_NEAR(run_reduce("ReduceLogSumExp", x, {0}, 0).get_as_double(0), 1000 + std::log(2.0), 1e-3);
}

TEST(Reduce, AxesAttributeBeforeOpset18) {
  auto x = iota_tensor(DType::Float32, {2, 3});
  auto y = run_node("ReduceMax", 13, {x}, [](NodeBuilder& n) { n.attr("axes", std::vector<int64_t>{-2}).attr("keepdims", int64_t{0}); },
                    1, KernelMode::Fast)[0];
  EXPECT_EQ(values_of(y), (std::vector<double>{3, 4, 5}));
  y = run_node("ReduceSum", 11, {x}, [](NodeBuilder& n) { n.attr("axes", std::vector<int64_t>{1}); }, 1, KernelMode::Fast)[0];
  EXPECT_EQ(values_of(y), (std::vector<double>{3, 12}));
  // ReduceSum takes axes as an input from opset 13
  y = run_node("ReduceSum", 13, {x, i64({0})}, nullptr, 1, KernelMode::Fast)[0];
  EXPECT_EQ(values_of(y), (std::vector<double>{3, 5, 7}));
}

TEST(Reduce, NoopWithEmptyAxes) {
  auto x = Tensor::from_vector<float>({2, 2}, {-1, 2, 3, -4});
  auto set = [](NodeBuilder& n) { n.attr("noop_with_empty_axes", int64_t{1}); };
  // no reduction: each element goes through the op's map (onnxruntime does the same)
  EXPECT_EQ(values_of(run_node("ReduceSum", 13, {x, i64({})}, set, 1, KernelMode::Fast)[0]), (std::vector<double>{-1, 2, 3, -4}));
  EXPECT_EQ(values_of(run_node("ReduceSumSquare", 18, {x}, set, 1, KernelMode::Fast)[0]), (std::vector<double>{1, 4, 9, 16}));
  EXPECT_EQ(values_of(run_node("ReduceL1", 18, {x, i64({})}, set, 1, KernelMode::Reference)[0]), (std::vector<double>{1, 2, 3, 4}));
}

TEST(Reduce, ZeroSizeAxes) {
  Tensor x(DType::Float32, {2, 0, 3});
  const std::vector<std::pair<std::string, double>> expected = {
      {"ReduceSum", 0}, {"ReduceProd", 1}, {"ReduceMax", -INFINITY}, {"ReduceMin", INFINITY}, {"ReduceL2", 0},
      {"ReduceLogSum", -INFINITY}, {"ReduceLogSumExp", -INFINITY}, {"ReduceSumSquare", 0}, {"ReduceMean", 0}};
  for (const auto& [op, value] : expected)
    for (KernelMode mode : {KernelMode::Fast, KernelMode::Reference}) {
      auto y = run_reduce(op, x, {1}, 0, mode);
      EXPECT_EQ(y.shape(), (Shape{2, 3})) << op;
      EXPECT_EQ(values_of(y), std::vector<double>(6, value)) << op;
    }
}

// Integer inputs whose log is -inf (a zero sum) or NaN (a negative sum): the output saturates to
// the type's lowest value, NaN becomes 0 (reduce_ops::to_output); converting either as is was
// undefined behaviour (fuzz_model under UBSan, fuzz/regressions/model/reduce-log-sum-int32-inf).
TEST(Reduce, IntegerLogOfZeroOrNegativeSaturates) {
  auto x = Tensor::from_vector<int32_t>({3, 2}, {0, 0, -3, 1, 2, 5});
  for (KernelMode mode : {KernelMode::Fast, KernelMode::Reference}) {
    auto y = run_reduce("ReduceLogSum", x, {1}, 0, mode);
    ASSERT_EQ(y.dtype(), DType::Int32);
    EXPECT_EQ(y.data<int32_t>()[0], std::numeric_limits<int32_t>::lowest());
    EXPECT_EQ(y.data<int32_t>()[1], 0);  // log(-2) is NaN
    EXPECT_EQ(y.data<int32_t>()[2], static_cast<int32_t>(std::log(7.0)));
  }
}

TEST(Reduce, FastMatchesReferenceAllOpsAndLayouts) {
  // Axis patterns: one block at the end (inner 1), in the middle (inner > 1), at the front,
  // all, and split blocks that need the transpose.
  const std::vector<std::vector<int64_t>> patterns = {{3}, {1}, {0}, {}, {1, 2}, {0, 2}, {-1, 1}, {0, 3}};
  for (const auto& op : kReduceOps)
    for (const auto& axes : patterns)
      for (int64_t keep : {0, 1}) {
        const double lo = op == "ReduceLogSum" ? 0.1 : -1.0;  // log needs a positive sum
        Tensor x = random_tensor(DType::Float32, {5, 17, 9, 31}, 21, lo, 1.0);
        auto set = [&](NodeBuilder& n) { n.attr("keepdims", keep); };
        EXPECT_TRUE(fast_matches_reference(op, 18, {x, i64(axes)}, set, 1, 1e-5, op == "ReduceProd" ? 1e-3 : 1e-4))
            << op << " axes " << axes.size() << " keep " << keep;
      }
}

TEST(Reduce, IntegerAndDoubleTypes) {
  for (const auto& op : {"ReduceSum", "ReduceMax", "ReduceMin", "ReduceMean", "ReduceSumSquare", "ReduceL1"})
    for (DType dt : {DType::Int32, DType::Int64, DType::Float64})
      EXPECT_TRUE(fast_matches_reference(op, 18, {random_tensor(dt, {13, 50, 7}, 4, -100, 100), i64({1})}, nullptr, 1, 1e-12, 1e-12))
          << op << " " << dtype_name(dt);
  // bool / uint8 max and min
  Tensor b = Tensor::from_vector<bool>({2, 3}, {false, true, false, false, false, false});
  auto y = run_node("ReduceMax", 20, {b, i64({1})}, [](NodeBuilder& n) { n.attr("keepdims", int64_t{0}); }, 1, KernelMode::Fast)[0];
  EXPECT_EQ(y.dtype(), DType::Bool);
  EXPECT_EQ(values_of(y), (std::vector<double>{1, 0}));
}

TEST(Reduce, LargeFloatSumIsAccurate) {
  // 2^22 values in [0, 1): a naive float32 loop loses ~1e-4 relative; pairwise stays near 1e-6.
  Tensor x = random_tensor(DType::Float32, {1 << 22}, 8, 0.0, 1.0);
  double exact = 0;
  for (int64_t i = 0; i < x.numel(); ++i) exact += x.data<float>()[i];
  for (int threads : {1, 4}) {
    const double got = run_reduce("ReduceSum", x, {0}, 0, KernelMode::Fast, threads).get_as_double(0);
    EXPECT_NEAR(got, exact, exact * 2e-6) << threads << " threads";
  }
  // Column sums (inner > 1) over many rows.
  Tensor c = random_tensor(DType::Float32, {1 << 16, 48}, 9, 0.0, 1.0);
  EXPECT_TRUE(fast_matches_reference("ReduceSum", 18, {c, i64({0})}, nullptr, 1, 0, 2e-6));
  EXPECT_TRUE(fast_matches_reference("ReduceMean", 18, {random_tensor(DType::Float32, {3, 100000, 3}, 10), i64({1})}, nullptr, 1, 1e-6, 1e-4));
}

TEST(Reduce, MaxPropagatesNaN) {
  auto x = Tensor::from_vector<float>({2, 3}, {1, NAN, 3, 4, 5, 6});
  for (KernelMode mode : {KernelMode::Fast, KernelMode::Reference}) {
    auto y = run_reduce("ReduceMax", x, {1}, 0, mode);
    EXPECT_TRUE(std::isnan(y.get_as_double(0)));
    EXPECT_EQ(y.get_as_double(1), 6);
  }
}

TEST(Reduce, AxisOutOfRange) {
  auto msg = node_error("ReduceSum", 13, {iota_tensor(DType::Float32, {2, 3}), i64({2})}, nullptr);
  EXPECT_NE(msg.find("ReduceSum 'n1': axis 2 is out of range [-2, 2)"), std::string::npos) << msg;
  msg = node_error("ReduceMean", 11, {iota_tensor(DType::Float32, {2, 3})},
                   [](NodeBuilder& n) { n.attr("axes", std::vector<int64_t>{-3}); });
  EXPECT_NE(msg.find("ReduceMean 'n1': axis -3 is out of range [-2, 2)"), std::string::npos) << msg;
}

// ---- ArgMax / ArgMin ----

TEST(ArgMinMax, HandComputedTiesAndNaN) {
  auto x = Tensor::from_vector<float>({2, 4}, {1, 3, 3, 0, NAN, 2, 5, 5});
  auto run = [&](const std::string& op, int64_t last) {
    return values_of(run_node(op, 13, {x}, [&](NodeBuilder& n) {
                       n.attr("axis", int64_t{-1}).attr("keepdims", int64_t{0}).attr("select_last_index", last);
                     }, 1, KernelMode::Fast)[0]);
  };
  EXPECT_EQ(run("ArgMax", 0), (std::vector<double>{1, 0}));  // a leading NaN stays (onnxruntime)
  EXPECT_EQ(run("ArgMax", 1), (std::vector<double>{2, 0}));
  EXPECT_EQ(run("ArgMin", 0), (std::vector<double>{3, 0}));
  auto y = Tensor::from_vector<int64_t>({2, 2}, {4, 1, 4, 7});
  auto a = run_node("ArgMax", 11, {y}, nullptr, 1, KernelMode::Fast)[0];
  EXPECT_EQ(a.shape(), (Shape{1, 2}));
  EXPECT_EQ(values_of(a), (std::vector<double>{0, 1}));
}

TEST(ArgMinMax, FastMatchesReference) {
  Tensor x(DType::Int32, {30, 200, 70});
  std::mt19937 rng(13);
  for (int64_t i = 0; i < x.numel(); ++i) x.mutable_data<int32_t>()[i] = std::uniform_int_distribution<int32_t>(0, 20)(rng);
  for (const char* op : {"ArgMax", "ArgMin"})
    for (int64_t axis : {0, 1, 2})
      for (int64_t last : {0, 1}) {
        EXPECT_TRUE(fast_matches_reference(op, 13, {x}, [&](NodeBuilder& n) { n.attr("axis", axis).attr("select_last_index", last); }));
        EXPECT_TRUE(fast_matches_reference(op, 13, {random_tensor(DType::Float32, {30, 200, 70}, 14)},
                                           [&](NodeBuilder& n) { n.attr("axis", axis).attr("select_last_index", last); }));
      }
}

TEST(ArgMinMax, Errors) {
  auto msg = node_error("ArgMax", 13, {iota_tensor(DType::Float32, {2, 3})}, [](NodeBuilder& n) { n.attr("axis", int64_t{2}); });
  EXPECT_NE(msg.find("ArgMax 'n1': axis 2 is out of range [-2, 2)"), std::string::npos) << msg;
  msg = node_error("ArgMin", 13, {Tensor(DType::Float32, {2, 0})}, [](NodeBuilder& n) { n.attr("axis", int64_t{1}); });
  EXPECT_NE(msg.find("ArgMin 'n1': cannot take the arg of an empty axis 1"), std::string::npos) << msg;
}

// ---- short float32 rows (kernels/simd) ----

// [rows, n] with values in [lo, hi); with `specials`, about one element in six is
// NaN, +inf or -inf (some rows start with one, some have several).
Tensor short_rows(int64_t rows, int64_t n, uint32_t seed, double lo, double hi, bool specials) {
  Tensor x = random_tensor(DType::Float32, {rows, n}, seed, lo, hi);
  if (!specials) return x;
  std::mt19937 rng(seed);
  const float v[] = {NAN, INFINITY, -INFINITY};
  for (int64_t i = 0; i < x.numel(); ++i)
    if (rng() % 6 == 0) x.mutable_data<float>()[i] = v[rng() % 3];
  return x;
}

const int64_t kShortRowCounts[] = {1, 3, 16, 17, 40, 100};

TEST(Reduce, ShortRowsFastMatchesReference) {
  // Rows of 1..65 floats over the last axis (64 is the SIMD path's limit, 65 the
  // pairwise engine), every tail of the 8 / 16 lanes.
  for (const char* op : {"ReduceSum", "ReduceSumSquare", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceL1",
                         "ReduceL2", "ReduceLogSum"})
    for (int64_t n = 1; n <= 65; ++n) {
      const bool log = std::string(op) == "ReduceLogSum";
      Tensor x = short_rows(kShortRowCounts[n % 6], n, static_cast<uint32_t>(n), log ? 0.1 : -1.0, 1.0, false);
      const int64_t keep = n % 2;
      EXPECT_TRUE(fast_matches_reference(op, 18, {x, i64({-1})}, [&](NodeBuilder& b) { b.attr("keepdims", keep); }, 1,
                                         1e-5, 1e-4))
          << op << " n " << n;
    }
}

TEST(Reduce, ShortRowsNaNAndInf) {
  // Max / Min propagate NaN and keep infinities; sums turn them into NaN / inf.
  for (const char* op : {"ReduceMax", "ReduceMin", "ReduceSum", "ReduceSumSquare", "ReduceL1"})
    for (int64_t n : {1, 5, 8, 16, 20, 33, 64}) {
      Tensor x = short_rows(50, n, static_cast<uint32_t>(n + 7), -1.0, 1.0, true);
      EXPECT_TRUE(fast_matches_reference(op, 18, {x, i64({1})}, nullptr, 1, 1e-5, 1e-4)) << op << " n " << n;
    }
}

TEST(Reduce, ShortRowsSameBitsForAnyThreadCount) {
  Tensor x = short_rows(5003, 20, 11, -1.0, 1.0, false);
  for (const char* op : {"ReduceSum", "ReduceMax", "ReduceL2"}) {
    const Tensor one = run_reduce(op, x, {1}, 0, KernelMode::Fast, 1);
    for (int threads : {2, 3, 4}) EXPECT_TRUE(tensors_near(run_reduce(op, x, {1}, 0, KernelMode::Fast, threads), one, 0, 0)) << op;
  }
}

// Each ISA's row reductions against a double-precision loop (sums) or the
// engine's NaN-propagating max / min.
TEST(Reduce, SimdRowsEveryIsa) {
  for (const simd::F32Kernels* k : simd_tables())
    for (int64_t n = 1; n <= 64; ++n) {
      Tensor x = short_rows(6, n, static_cast<uint32_t>(n), -2.0, 2.0, n % 3 == 0);
      const float* px = x.data<float>();
      for (int kind = 0; kind < simd::kNumRowKinds; ++kind) {
        std::vector<float> out(6);
        k->reduce_rows[kind](px, 6, n, out.data());
        for (int64_t r = 0; r < 6; ++r) {
          double want = kind == simd::kRowMax ? -INFINITY : kind == simd::kRowMin ? INFINITY : 0.0, mag = 0;
          for (int64_t j = 0; j < n; ++j) {
            const double v = px[r * n + j];
            if (kind == simd::kRowMax) want = (want > v || want != want) ? want : v;
            else if (kind == simd::kRowMin) want = (want < v || want != want) ? want : v;
            else want += kind == simd::kRowSum ? v : kind == simd::kRowSumSquare ? v * v : std::fabs(v);
            mag += kind == simd::kRowSumSquare ? v * v : std::fabs(v);
          }
          const double got = out[r];
          if (std::isnan(want) || std::isinf(want)) {
            EXPECT_TRUE(got == want || (std::isnan(got) && std::isnan(want))) << isa_of(*k) << " kind " << kind << " n " << n;
          } else {
            EXPECT_NEAR(got, want, 1e-5 + 1e-6 * mag) << isa_of(*k) << " kind " << kind << " n " << n << " row " << r;
          }
        }
      }
    }
}

TEST(ArgMinMax, ShortRowsTiesNaNInfFastMatchesReference) {
  // Rows of 1..65 (64 is the SIMD limit), row counts around the 8 / 16 rows of a
  // group; values from a small set so ties are common; NaN / inf anywhere,
  // leading NaN included.
  for (int64_t n = 1; n <= 65; ++n)
    for (bool specials : {false, true}) {
      const int64_t rows = kShortRowCounts[n % 6] + (specials ? 1 : 0);
      Tensor x = short_rows(rows, n, static_cast<uint32_t>(3 * n + specials), 0.0, 4.0, specials);
      for (int64_t i = 0; i < x.numel(); ++i) {
        float& v = x.mutable_data<float>()[i];
        if (std::isfinite(v)) v = std::floor(v);
      }
      for (const char* op : {"ArgMax", "ArgMin"})
        for (int64_t last : {0, 1})
          EXPECT_TRUE(fast_matches_reference(op, 13, {x}, [&](NodeBuilder& b) {
            b.attr("axis", int64_t{-1}).attr("keepdims", int64_t{0}).attr("select_last_index", last);
          })) << op << " n " << n << " last " << last << " specials " << specials;
    }
}

// Each ISA's ArgMin/ArgMax rows against the scalar scan: whole groups only (the
// return value), nothing written past them.
TEST(ArgMinMax, SimdRowsEveryIsa) {
  for (const simd::F32Kernels* k : simd_tables())
    for (int64_t n = 1; n <= k->arg_max_len; ++n) {
      const int64_t rows = 37;
      Tensor x = short_rows(rows, n, static_cast<uint32_t>(n), 0.0, 3.0, n % 2 == 0);
      const float* px = x.data<float>();
      for (int is_max = 0; is_max < 2; ++is_max)
        for (bool last : {false, true}) {
          std::vector<int64_t> out(rows, -1);
          const int64_t done = k->arg_rows[is_max](px, rows, n, last, out.data());
          const int64_t width = k->isa == cpu::Isa::Avx512 ? 16 : 8;
          ASSERT_EQ(done, rows / width * width) << isa_of(*k);
          for (int64_t r = 0; r < rows; ++r) {
            int64_t want = -1;
            if (r < done) {
              float best = px[r * n];
              want = 0;
              for (int64_t j = 1; j < n; ++j) {
                const float v = px[r * n + j];
                const bool take = is_max ? (last ? v >= best : v > best) : (last ? v <= best : v < best);
                if (take) best = v, want = j;
              }
            }
            ASSERT_EQ(out[r], want) << isa_of(*k) << " n " << n << " row " << r << " max " << is_max << " last " << last;
          }
        }
    }
}

}  // namespace
}  // namespace test
}  // namespace onnxmini
