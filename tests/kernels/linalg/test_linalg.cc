// Gemm and MatMul: hand-computed values, fast vs reference on random shapes
// (every C broadcast form, transposes, batched and broadcast MatMul, 1-D
// operands, constant B that gets prepacked; float32, float64, int32, int64), the GEMM
// route attention-shaped batches take (profile variant),
// and the shape-mismatch errors.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "tests/common/nn_test_util.h"
#include "tests/common/profile_test_util.h"

namespace onnxmini {
namespace test {
namespace {

TEST(Gemm, HandComputed) {
  // [1 2; 3 4] * [5 6; 7 8] = [19 22; 43 50]; alpha 2, beta 0.5, C row {2, 4}.
  for (KernelMode m : {KernelMode::Fast, KernelMode::Reference}) {
    ModelBuilder mb(13);
    mb.input("A", DType::Float32, {2, 2});
    mb.initializer("B", Tensor::from_vector<float>({2, 2}, {5, 6, 7, 8}));
    mb.initializer("C", Tensor::from_vector<float>({2}, {2, 4}));
    mb.node("Gemm", {"A", "B", "C"}, {"Y"}).attr("alpha", 2.0f).attr("beta", 0.5f);
    mb.output("Y");
    auto s = mb.session(options_for(m));
    Tensor y = run_single(*s, {{"A", Tensor::from_vector<float>({2, 2}, {1, 2, 3, 4})}});
    EXPECT_TRUE(tensors_near(y, Tensor::from_vector<float>({2, 2}, {39, 46, 87, 102})));
  }
}

TEST(Gemm, FastMatchesReference) {
  const int64_t M = 7, N = 13, K = 19;
  const std::vector<Shape> c_shapes{{}, {1}, {N}, {1, N}, {M, 1}, {M, N}};
  uint32_t seed = 1;
  for (DType t : {DType::Float32, DType::Float64})
    for (int ta = 0; ta < 2; ++ta)
      for (int tb = 0; tb < 2; ++tb)
        for (size_t ci = 0; ci <= c_shapes.size(); ++ci)
          for (float beta : {1.0f, 0.0f, -1.5f})
            for (bool const_b : {false, true}) {
              ModelBuilder mb(13);
              Shape as = ta ? Shape{K, M} : Shape{M, K}, bs = tb ? Shape{N, K} : Shape{K, N};
              mb.input("A", t, as);
              std::vector<std::string> in{"A", "B"};
              std::vector<std::pair<std::string, Tensor>> feeds{{"A", random_tensor(t, as, seed++)}};
              if (const_b) mb.initializer("B", random_tensor(t, bs, seed++));
              else mb.input("B", t, bs), feeds.push_back({"B", random_tensor(t, bs, seed++)});
              if (ci < c_shapes.size()) {
                mb.input("C", t, c_shapes[ci]);
                in.push_back("C");
                feeds.push_back({"C", random_tensor(t, c_shapes[ci], seed++)});
              }
              mb.node("Gemm", in, {"Y"}).attr("transA", int64_t{ta}).attr("transB", int64_t{tb}).attr("alpha", 0.75f).attr("beta", beta);
              mb.output("Y");
              auto r = run_fast_and_reference(mb, feeds);
              EXPECT_TRUE(tensors_near(r.first[0], r.second[0], reduction_atol(t, K), 1e-5))
                  << "ta=" << ta << " tb=" << tb << " C#" << ci << " beta=" << beta << " const_b=" << const_b;
            }
}

TEST(Gemm, ErrorShapeMismatch) {
  ModelBuilder mb(13);
  mb.input("A", DType::Float32, {3, 4});
  mb.input("B", DType::Float32, {5, 6});
  mb.node("Gemm", {"A", "B"}, {"Y"}).name("g1");
  mb.output("Y");
  std::string e = error_message([&] {
    auto s = mb.session();
    run_single(*s, {{"A", random_tensor(DType::Float32, {3, 4}, 1)}, {"B", random_tensor(DType::Float32, {5, 6}, 2)}});
  });
  EXPECT_EQ(e, "Gemm 'g1': shape mismatch: op(A) is 3x4 (transA=0), op(B) is 5x6 (transB=0); inner dimensions 4 and 5 differ");
  ModelBuilder mb2(13);
  mb2.input("A", DType::Float32, {3, 4});
  mb2.initializer("B", random_tensor(DType::Float32, {4, 6}, 2));
  mb2.initializer("C", random_tensor(DType::Float32, {2, 6}, 3));
  mb2.node("Gemm", {"A", "B", "C"}, {"Y"}).name("g2");
  mb2.output("Y");
  e = error_message([&] { auto s = mb2.session(); run_single(*s, {{"A", random_tensor(DType::Float32, {3, 4}, 1)}}); });
  EXPECT_EQ(e, "Gemm 'g2': C has shape 2x6, which does not broadcast to the output 3x6");
}

TEST(MatMul, HandComputed1D) {
  // 1-D x 2-D: [1 2] * [1 2 3; 4 5 6] = [9 12 15] (shape [3]); 2-D x 1-D: [[1 2 3],[4 5 6]] * [1 1 1] = [6 15].
  for (KernelMode m : {KernelMode::Fast, KernelMode::Reference}) {
    ModelBuilder mb(13);
    mb.input("v", DType::Float32, {2}).input("M", DType::Float32, {2, 3}).input("u", DType::Float32, {3});
    mb.node("MatMul", {"v", "M"}, {"Y"});
    mb.node("MatMul", {"M", "u"}, {"Z"});
    mb.output("Y").output("Z");
    auto s = mb.session(options_for(m));
    auto out = run_all(*s, {{"v", Tensor::from_vector<float>({2}, {1, 2})},
                            {"M", Tensor::from_vector<float>({2, 3}, {1, 2, 3, 4, 5, 6})},
                            {"u", Tensor::from_vector<float>({3}, {1, 1, 1})}});
    EXPECT_TRUE(tensors_near(out[0], Tensor::from_vector<float>({3}, {9, 12, 15})));
    EXPECT_TRUE(tensors_near(out[1], Tensor::from_vector<float>({2}, {6, 15})));
  }
}

TEST(MatMul, FastMatchesReference) {
  struct Case { Shape a, b; bool const_b; };
  const std::vector<Case> cases{
      {{5, 7}, {7, 3}, false},           {{5, 7}, {7, 3}, true},              // 2-D, prepacked
      {{2, 3, 5, 7}, {7, 4}, true},      {{2, 3, 5, 7}, {7, 4}, false},       // folded batch
      {{4, 5, 7}, {4, 7, 6}, false},     {{5, 7}, {3, 7, 6}, false},          // batched, A broadcast
      {{2, 1, 5, 7}, {1, 3, 7, 6}, false}, {{3, 1, 5, 7}, {1, 3, 7, 6}, false},  // general broadcast
      {{7}, {2, 7, 3}, false},           {{2, 3, 5, 7}, {7}, false},          // 1-D operands
      {{1, 4, 5, 7}, {4, 7, 2}, false},  {{3, 0, 7}, {7, 2}, false},          // leading 1, empty
  };
  uint32_t seed = 50;
  for (DType t : {DType::Float32, DType::Float64, DType::Int32, DType::Int64})
    for (const auto& c : cases) {
      ModelBuilder mb(13);
      mb.input("A", t, c.a);
      std::vector<std::pair<std::string, Tensor>> feeds{{"A", random_tensor(t, c.a, seed++, -5, 5)}};
      if (c.const_b) mb.initializer("B", random_tensor(t, c.b, seed++, -5, 5));
      else mb.input("B", t, c.b), feeds.push_back({"B", random_tensor(t, c.b, seed++, -5, 5)});
      mb.node("MatMul", {"A", "B"}, {"Y"});
      mb.output("Y");
      auto r = run_fast_and_reference(mb, feeds);
      EXPECT_TRUE(tensors_near(r.first[0], r.second[0], 25 * reduction_atol(t, 7), 1e-5))
          << dtype_name(t) << " " << shape_to_string(c.a) << " x " << shape_to_string(c.b);
    }
}

// Attention-shaped batches ([B, H, S, S] x [B, H, S, D]) take the GEMM engine's small
// route up to S = 64 (kernels/gemm_engine/small_gemm.h) and the packed one beyond; the
// profile names the route, and both match the reference kernels.
TEST(MatMul, AttentionBatchesNameTheirGemmRoute) {
  struct Case { Shape a, b; const char* variant; };
  const std::vector<Case> cases{
      {{2, 12, 8, 8}, {2, 12, 8, 64}, "matmul_batched+gemm_small/builtin"},
      {{2, 3, 64, 64}, {2, 3, 64, 64}, "matmul_batched+gemm_small/builtin"},
      {{2, 3, 80, 80}, {2, 3, 80, 64}, "matmul_batched+gemm_packed/builtin"},
  };
  uint32_t seed = 90;
  for (const auto& c : cases) {
    ModelBuilder mb(13);
    mb.input("A", DType::Float32, c.a).input("B", DType::Float32, c.b);
    mb.node("MatMul", {"A", "B"}, {"Y"}).name("mm");
    mb.output("Y");
    const std::vector<std::pair<std::string, Tensor>> feeds{{"A", random_tensor(DType::Float32, c.a, seed++, -5, 5)},
                                                             {"B", random_tensor(DType::Float32, c.b, seed++, -5, 5)}};
    auto r = run_fast_and_reference(mb, feeds);
    EXPECT_TRUE(tensors_near(r.first[0], r.second[0], 25 * reduction_atol(DType::Float32, c.a.back()), 1e-5))
        << shape_to_string(c.a) << " x " << shape_to_string(c.b);
    const nlohmann::json events = nlohmann::json::parse(profiled_trace(mb, SessionOptions{}, feeds));
    std::string variant;
    for (const auto& e : events)
      if (e["name"] == "mm_kernel_time") variant = e["args"]["kernel_variant"];
    EXPECT_EQ(variant, c.variant) << shape_to_string(c.a) << " x " << shape_to_string(c.b);
  }
}

TEST(MatMul, BroadcastShapeAndValues) {
  // [2,1,2,2] x [1,3,2,2] -> [2,3,2,2]; check one block by hand: A[1,0] * B[0,2].
  Tensor a(DType::Float32, {2, 1, 2, 2}), b(DType::Float32, {1, 3, 2, 2});
  for (int i = 0; i < 8; ++i) a.mutable_data<float>()[i] = static_cast<float>(i);
  for (int i = 0; i < 12; ++i) b.mutable_data<float>()[i] = static_cast<float>(i % 5);
  ModelBuilder mb(13);
  mb.input("A", DType::Float32, a.shape()).input("B", DType::Float32, b.shape());
  mb.node("MatMul", {"A", "B"}, {"Y"});
  mb.output("Y");
  auto s = mb.session();
  Tensor y = run_single(*s, {{"A", a}, {"B", b}});
  ASSERT_EQ(y.shape(), (Shape{2, 3, 2, 2}));
  // A[1,0] = [4 5; 6 7]; B[0,2] = elements 8..11 % 5 = [3 4; 0 1]; product = [12 21; 18 31].
  const float* blk = y.data<float>() + (1 * 3 + 2) * 4;
  EXPECT_EQ(std::vector<float>(blk, blk + 4), (std::vector<float>{12, 21, 18, 31}));
}

TEST(MatMul, Errors) {
  auto err = [](const Shape& a, const Shape& b) {
    ModelBuilder mb(13);
    mb.input("A", DType::Float32, a).input("B", DType::Float32, b);
    mb.node("MatMul", {"A", "B"}, {"Y"}).name("mm");
    mb.output("Y");
    return error_message([&] {
      auto s = mb.session();
      run_single(*s, {{"A", random_tensor(DType::Float32, a, 1)}, {"B", random_tensor(DType::Float32, b, 2)}});
    });
  };
  EXPECT_EQ(err({2, 3}, {4, 5}), "MatMul 'mm': inner dimensions differ: A 2x3 has K = 3, B 4x5 has K = 4");
  EXPECT_EQ(err({2, 2, 3}, {3, 3, 4}), "MatMul 'mm': batch dimensions do not broadcast: A 2x2x3 and B 3x3x4 (axis 0: 2 vs 3)");
}

}  // namespace
}  // namespace test
}  // namespace onnxmini
