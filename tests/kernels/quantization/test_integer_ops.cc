// MatMulInteger, QLinearMatMul, MatMulIntegerToFloat, DynamicQuantizeMatMul, ConvInteger and
// QLinearConv: the fast kernels (int8 GEMM engine, 2 threads, weights constant or fed) against
// the reference kernels (int64 loops straight from the definition, 1 thread). Outputs must be
// identical: both produce the same int32 sums and pass them through the same output stage,
// so any difference, even in a float output, is a wrong sum or a wrong index.
// The engine's ISA paths are covered in tests/kernels/gemm_engine/test_qgemm.cc; here the
// active one runs (CTest runs this file again with ONNXMINI_ISA=portable / avx2).
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "tests/common/node_runner.h"

namespace onnxmini {
namespace test {
namespace {

Tensor random_int8(DType t, const Shape& shape, std::mt19937& rng) {
  Tensor x(t, shape);
  uint8_t* p = static_cast<uint8_t*>(x.raw_mut());
  for (int64_t i = 0; i < x.numel(); ++i) p[i] = static_cast<uint8_t>(rng());
  return x;
}

Tensor scalar_zero(DType t, std::mt19937& rng) { return random_int8(t, {}, rng); }

Tensor floats(const Shape& shape, std::mt19937& rng, float lo, float hi) {
  Tensor x(DType::Float32, shape);
  for (int64_t i = 0; i < x.numel(); ++i) x.mutable_data<float>()[i] = std::uniform_real_distribution<float>(lo, hi)(rng);
  return x;
}

// Runs op (inputs in `constant` become initializers) in fast and reference mode; exact match.
::testing::AssertionResult fast_equals_reference(const std::string& op, const std::string& domain,
                                                 const std::vector<Tensor>& inputs, const std::vector<bool>& constant,
                                                 const AttrSetter& attrs = nullptr) {
  std::vector<Tensor> results[2];
  for (int r = 0; r < 2; ++r) {
    const KernelMode mode = r == 0 ? KernelMode::Fast : KernelMode::Reference;
    ModelBuilder mb(21);
    if (!domain.empty()) mb.import_domain(domain, 1);
    std::vector<std::string> names;
    std::vector<std::pair<std::string, Tensor>> feeds;
    for (size_t i = 0; i < inputs.size(); ++i) {
      if (!inputs[i].defined()) {
        names.push_back("");
        continue;
      }
      const std::string name = "in" + std::to_string(i);
      if (i < constant.size() && constant[i]) {
        mb.initializer(name, inputs[i]);
      } else {
        mb.input(name, inputs[i].dtype(), {}, false);
        feeds.emplace_back(name, inputs[i]);
      }
      names.push_back(name);
    }
    NodeBuilder nb = mb.node(op, names, {"y"});
    nb.name("n1");
    if (!domain.empty()) nb.domain(domain);
    if (attrs) attrs(nb);
    mb.output("y");
    auto session = mb.session(options_for(mode, r == 0 ? 2 : 1));
    results[r] = run_all(*session, feeds);
  }
  return tensors_near(results[0][0], results[1][0], 0, 0);
}

// DynamicQuantizeMatMul's output in fast mode.
Tensor run_node_output(const Tensor& a, const Tensor& b, const Tensor& bs, const Tensor& bz, const Tensor& bias) {
  ModelBuilder mb(21);
  mb.import_domain("com.microsoft", 1);
  mb.input("a", DType::Float32, {}, false);
  mb.initializer("b", b).initializer("bs", bs).initializer("bz", bz).initializer("bias", bias);
  mb.node("DynamicQuantizeMatMul", {"a", "b", "bs", "bz", "bias"}, {"y"}).domain("com.microsoft");
  mb.output("y");
  auto session = mb.session(options_for(KernelMode::Fast, 1));
  return run_all(*session, {{"a", a}}).at(0);
}

const DType kTypes[] = {DType::UInt8, DType::Int8};

TEST(MatMulInteger, MatchesReferenceAllTypesShapesZeroPoints) {
  std::mt19937 rng(1);
  const std::vector<std::pair<Shape, Shape>> shapes = {
      {{1, 1}, {1, 1}}, {{3, 17}, {17, 65}}, {{65, 257}, {257, 3}}, {{2, 5, 33}, {33, 20}},
      {{2, 1, 4, 9}, {3, 9, 7}}, {{9}, {9, 4}}, {{4, 9}, {9}}, {{0, 5}, {5, 3}}};
  for (DType ta : kTypes)
    for (DType tb : kTypes)
      for (const auto& [sa, sb] : shapes)
        for (bool per_column : {false, true})
          for (bool b_const : {false, true}) {
            const int64_t N = sb.size() == 1 ? 1 : sb.back();
            Tensor bz = per_column && sb.size() > 1 ? random_int8(tb, {N}, rng) : scalar_zero(tb, rng);
            EXPECT_TRUE(fast_equals_reference("MatMulInteger", "",
                                              {random_int8(ta, sa, rng), random_int8(tb, sb, rng), scalar_zero(ta, rng), bz},
                                              {false, b_const, false, b_const}))
                << shape_to_string(sa) << " x " << shape_to_string(sb) << " " << dtype_name(ta) << dtype_name(tb);
          }
}

TEST(MatMulInteger, AbsentZeroPointsAndBadInputsNameTheNode) {
  std::mt19937 rng(2);
  EXPECT_TRUE(fast_equals_reference("MatMulInteger", "", {random_int8(DType::UInt8, {5, 7}, rng), random_int8(DType::Int8, {7, 6}, rng)}, {}));
  const std::string e = node_error("MatMulInteger", 10,
                                   {random_int8(DType::UInt8, {5, 7}, rng), random_int8(DType::Int8, {6, 6}, rng)}, nullptr);
  EXPECT_NE(e.find("n1"), std::string::npos) << e;
  EXPECT_NE(e.find("K = 7"), std::string::npos) << e;
  const std::string z = node_error("MatMulInteger", 10,
                                   {random_int8(DType::UInt8, {5, 7}, rng), random_int8(DType::Int8, {7, 6}, rng),
                                    random_int8(DType::Int8, {}, rng)}, nullptr);
  EXPECT_NE(z.find("a_zero_point has dtype int8"), std::string::npos) << z;
}

TEST(QLinearMatMul, MatchesReferencePerTensorAndPerColumn) {
  std::mt19937 rng(3);
  for (DType ta : kTypes)
    for (DType tb : kTypes)
      for (DType ty : kTypes)
        for (bool per_column : {false, true})
          for (bool b_const : {false, true}) {
            const int64_t M = 19, K = 70, N = 37;
            Tensor bs = per_column ? floats({N}, rng, 0.001f, 0.01f) : floats({}, rng, 0.001f, 0.01f);
            Tensor bz = per_column ? random_int8(tb, {N}, rng) : scalar_zero(tb, rng);
            EXPECT_TRUE(fast_equals_reference(
                "QLinearMatMul", "",
                {random_int8(ta, {2, M, K}, rng), floats({}, rng, 0.01f, 0.05f), scalar_zero(ta, rng),
                 random_int8(tb, {K, N}, rng), bs, bz, floats({}, rng, 0.05f, 0.5f), scalar_zero(ty, rng)},
                {false, false, false, b_const, b_const, b_const}))
                << dtype_name(ta) << dtype_name(tb) << dtype_name(ty) << per_column;
          }
}

TEST(MatMulIntegerToFloat, MatchesReference) {
  std::mt19937 rng(4);
  for (DType ta : kTypes)
    for (DType tb : kTypes)
      for (bool per_column : {false, true})
        for (bool bias : {false, true}) {
          const int64_t N = 24;
          EXPECT_TRUE(fast_equals_reference(
              "MatMulIntegerToFloat", "com.microsoft",
              {random_int8(ta, {3, 11, 40}, rng), random_int8(tb, {40, N}, rng), floats({}, rng, 0.01f, 0.1f),
               per_column ? floats({N}, rng, 0.01f, 0.1f) : floats({}, rng, 0.01f, 0.1f), scalar_zero(ta, rng),
               per_column ? random_int8(tb, {N}, rng) : scalar_zero(tb, rng), bias ? floats({N}, rng, -1, 1) : Tensor()},
              {false, true, false, true, false, true, true}));
        }
}

TEST(DynamicQuantizeMatMul, MatchesReferenceAndApproximatesFloatMatMul) {
  std::mt19937 rng(5);
  for (DType tb : kTypes) {
    const int64_t M = 13, K = 64, N = 29;
    Tensor a = floats({M, K}, rng, -2, 3), b = random_int8(tb, {K, N}, rng), bs = floats({N}, rng, 0.01f, 0.02f);
    Tensor bz = random_int8(tb, {N}, rng), bias = floats({N}, rng, -1, 1);
    EXPECT_TRUE(fast_equals_reference("DynamicQuantizeMatMul", "com.microsoft", {a, b, bs, bz, bias}, {false, true, true, true}));
    // Against float math on dequantized B: A's quantization step is 5 / 255, so each product
    // errs by at most step / 2 * |b|; summed over K.
    auto y = run_node_output(a, b, bs, bz, bias);
    for (int64_t m = 0; m < M; ++m)
      for (int64_t n = 0; n < N; ++n) {
        double ref = bias.data<float>()[n], bound = 1e-3;
        for (int64_t k = 0; k < K; ++k) {
          const double bv = (tb == DType::Int8 ? double(b.data<int8_t>()[k * N + n]) : double(b.data<uint8_t>()[k * N + n])) -
                            (tb == DType::Int8 ? double(bz.data<int8_t>()[n]) : double(bz.data<uint8_t>()[n]));
          const double w = bv * bs.data<float>()[n];
          ref += a.data<float>()[m * K + k] * w;
          bound += 0.5 * 5.0 / 255.0 * std::fabs(w);
        }
        ASSERT_NEAR(y.data<float>()[m * N + n], ref, bound) << m << "," << n;
      }
  }
}

TEST(ConvInteger, MatchesReferenceGroupsPadsStridesDilations) {
  std::mt19937 rng(6);
  struct C { Shape x, w; int64_t group; std::vector<int64_t> pads, strides, dil; };
  const std::vector<C> cases = {
      {{1, 3, 7, 7}, {4, 3, 3, 3}, 1, {1, 1, 1, 1}, {1, 1}, {1, 1}},
      {{2, 4, 9, 8}, {6, 2, 3, 2}, 2, {0, 1, 2, 0}, {2, 1}, {1, 2}},
      {{1, 5, 6, 6}, {5, 1, 3, 3}, 5, {1, 1, 1, 1}, {1, 1}, {1, 1}},
      {{1, 8, 5, 5}, {3, 8, 1, 1}, 1, {0, 0, 0, 0}, {1, 1}, {1, 1}},
      {{1, 3, 11}, {2, 3, 4}, 1, {2, 1}, {3}, {1}},
      {{1, 2, 4, 5, 4}, {3, 2, 2, 3, 2}, 1, {1, 0, 1, 0, 1, 1}, {1, 2, 1}, {1, 1, 2}}};
  for (DType tx : kTypes)
    for (DType tw : kTypes)
      for (const C& c : cases)
        for (bool w_const : {false, true}) {
          auto attrs = [&](NodeBuilder& nb) {
            nb.attr("group", c.group).attr("pads", c.pads).attr("strides", c.strides).attr("dilations", c.dil);
          };
          EXPECT_TRUE(fast_equals_reference("ConvInteger", "",
                                            {random_int8(tx, c.x, rng), random_int8(tw, c.w, rng), scalar_zero(tx, rng),
                                             random_int8(tw, {c.w[0]}, rng)},
                                            {false, w_const, false, w_const}, attrs))
              << shape_to_string(c.x) << " " << shape_to_string(c.w);
        }
}

TEST(QLinearConv, MatchesReferencePerChannelBiasAutoPad) {
  std::mt19937 rng(7);
  struct C { Shape x, w; int64_t group; const char* auto_pad; std::vector<int64_t> strides; };
  const std::vector<C> cases = {{{1, 3, 10, 9}, {8, 3, 3, 3}, 1, "SAME_UPPER", {1, 1}},
                                {{2, 6, 8, 8}, {6, 1, 3, 3}, 6, "SAME_LOWER", {2, 2}},
                                {{1, 16, 6, 6}, {32, 8, 1, 1}, 2, "VALID", {1, 1}},
                                {{1, 4, 12, 12}, {65, 4, 5, 5}, 1, "NOTSET", {3, 2}}};
  for (DType tx : kTypes)
    for (DType tw : kTypes)
      for (const C& c : cases)
        for (bool per_channel : {false, true}) {
          const int64_t M = c.w[0];
          auto attrs = [&](NodeBuilder& nb) { nb.attr("group", c.group).attr("auto_pad", c.auto_pad).attr("strides", c.strides); };
          Tensor bias(DType::Int32, {M});
          for (int64_t m = 0; m < M; ++m) bias.mutable_data<int32_t>()[m] = std::uniform_int_distribution<int32_t>(-3000, 3000)(rng);
          EXPECT_TRUE(fast_equals_reference(
              "QLinearConv", "",
              {random_int8(tx, c.x, rng), floats({}, rng, 0.01f, 0.05f), scalar_zero(tx, rng), random_int8(tw, c.w, rng),
               per_channel ? floats({M}, rng, 0.001f, 0.01f) : floats({}, rng, 0.001f, 0.01f),
               per_channel ? random_int8(tw, {M}, rng) : scalar_zero(tw, rng), floats({}, rng, 0.05f, 0.3f),
               scalar_zero(tx, rng), bias},
              {false, false, false, true, true, true, false, false, true}, attrs))
              << shape_to_string(c.x) << " " << shape_to_string(c.w) << " " << dtype_name(tx) << dtype_name(tw);
        }
}

TEST(QGemm, MatchesReferenceTransposesBiasShapesOutputs) {
  std::mt19937 rng(8);
  const int64_t M = 21, K = 70, N = 33;
  for (int64_t ta : {0, 1})
    for (int64_t tb : {0, 1})
      for (bool quantized : {false, true})
        for (const Shape& cs : {Shape{}, Shape{N}, Shape{M, 1}, Shape{M, N}}) {
          Tensor c(DType::Int32, cs);
          for (int64_t i = 0; i < c.numel(); ++i) c.mutable_data<int32_t>()[i] = std::uniform_int_distribution<int32_t>(-4000, 4000)(rng);
          auto attrs = [&](NodeBuilder& nb) { nb.attr("transA", ta).attr("transB", tb).attr("alpha", 0.5f); };
          EXPECT_TRUE(fast_equals_reference(
              "QGemm", "com.microsoft",
              {random_int8(DType::UInt8, ta ? Shape{K, M} : Shape{M, K}, rng), floats({}, rng, 0.01f, 0.05f),
               scalar_zero(DType::UInt8, rng), random_int8(DType::Int8, tb ? Shape{N, K} : Shape{K, N}, rng),
               floats({N}, rng, 0.005f, 0.02f), random_int8(DType::Int8, {N}, rng), c,
               quantized ? floats({}, rng, 0.2f, 0.5f) : Tensor(), quantized ? scalar_zero(DType::Int8, rng) : Tensor()},
              {false, false, false, true, true, true, true}, attrs))
              << ta << tb << quantized << shape_to_string(cs);
        }
}

}  // namespace
}  // namespace test
}  // namespace onnxmini
