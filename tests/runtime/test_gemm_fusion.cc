// Gemm graph optimizations (runtime/graph_fusion.cc, kernels/linalg/gemm.cc):
// Gemm -> Add chains moved into the GEMM epilogue (KMeans' distance expression),
// with the general broadcasting fallback, and Concat of Gemms sharing an input
// turned into one GEMM. Each case: same outputs as the unfused graph, fast and
// reference kernels, and the expected node count after fusion.
#include "tests/common/fusion_test_util.h"

namespace onnxmini {
namespace test {
namespace {

// skl2onnx's KMeans: |x|^2 - 2 x.c + |c|^2 with the centers' norms as a row.
ModelBuilder kmeans_like(int64_t N, int64_t K) {
  ModelBuilder mb(13);
  mb.input("X", DType::Float32, {-1, K});
  mb.initializer("W", random_tensor(DType::Float32, {N, K}, 1));
  mb.initializer("zero", Tensor::from_vector<float>({1}, {0.0f}));
  mb.initializer("cn", random_tensor(DType::Float32, {N}, 2, 0.0, 4.0));
  mb.node("ReduceSumSquare", {"X"}, {"R"}).name("rss").attr("axes", std::vector<int64_t>{1}).attr("keepdims", 1);
  mb.node("Mul", {"R", "zero"}, {"Z"}).name("mul");
  mb.node("Gemm", {"X", "W", "Z"}, {"G"}).name("gemm").attr("alpha", -2.0f).attr("transB", 1);
  mb.node("Add", {"R", "G"}, {"S"}).name("add_rows");
  mb.node("Add", {"cn", "S"}, {"D"}).name("add_cols");
  mb.node("ArgMin", {"D"}, {"label"}).name("argmin").attr("axis", 1).attr("keepdims", 0);
  mb.node("Sqrt", {"D"}, {"Y"}).name("sqrt");
  mb.output("label").output("Y");
  return mb;
}

TEST(GemmFusion, KMeansDistanceAddsMoveIntoTheEpilogue) {
  for (int64_t M : {1, 13, 37}) {
    const auto x = random_tensor(DType::Float32, {M, 20}, 3);
    EXPECT_EQ(check_fusion(kmeans_like(8, 20), {{"X", x}}, 20), 5u) << "M " << M;
    EXPECT_EQ(check_fusion(kmeans_like(33, 20), {{"X", x}}, 20, 2), 5u) << "M " << M << ", 2 threads";
  }
}

// Gemm(X, W, C) -> Add(V1) -> Add(V2) [-> Relu] for addends of many shapes.
ModelBuilder gemm_adds(const Shape& c, const std::vector<Shape>& addends, bool relu = false, float beta = 1.0f) {
  ModelBuilder mb(13);
  mb.input("X", DType::Float32, {6, 9});
  mb.initializer("W", random_tensor(DType::Float32, {9, 5}, 4));
  std::vector<std::string> gin{"X", "W"};
  if (!c.empty()) {
    mb.initializer("C", random_tensor(DType::Float32, c, 5));
    gin.push_back("C");
  }
  mb.node("Gemm", gin, {"G0"}).name("gemm").attr("beta", beta);
  for (size_t i = 0; i < addends.size(); ++i) {
    const std::string v = "V" + std::to_string(i);
    mb.input(v, DType::Float32, addends[i]);
    // Alternate the side the Gemm output is on.
    const std::string in = "G" + std::to_string(i), out = "G" + std::to_string(i + 1);
    if (i % 2) mb.node("Add", {v, in}, {out}).name("add" + std::to_string(i));
    else mb.node("Add", {in, v}, {out}).name("add" + std::to_string(i));
  }
  const std::string last = "G" + std::to_string(addends.size());
  if (relu) mb.node("Relu", {last}, {"Y"}).name("relu");
  mb.output(relu ? "Y" : last);
  return mb;
}

std::vector<std::pair<std::string, Tensor>> addend_feeds(const std::vector<Shape>& shapes) {
  std::vector<std::pair<std::string, Tensor>> f{{"X", random_tensor(DType::Float32, {6, 9}, 6)}};
  for (size_t i = 0; i < shapes.size(); ++i)
    f.emplace_back("V" + std::to_string(i), random_tensor(DType::Float32, shapes[i], 7 + static_cast<int>(i)));
  return f;
}

TEST(GemmFusion, VectorAddendsWithEveryKindOfC) {
  const std::vector<std::vector<Shape>> cases = {
      {{6, 1}, {5}}, {{5}, {6, 1}}, {{1, 5}}, {{1}}, {{}}, {{6, 1}, {6, 1}, {1, 5}, {1, 1}}};
  for (const Shape& c : std::vector<Shape>{{}, {5}, {6, 1}, {1}, {6, 5}})
    for (const auto& adds : cases) {
      const size_t n = check_fusion(gemm_adds(c, adds), addend_feeds(adds), 9);
      EXPECT_EQ(n, 1u) << "C rank " << c.size() << ", " << adds.size() << " addends";
    }
  const std::vector<Shape> adds{{6, 1}, {5}};
  EXPECT_EQ(check_fusion(gemm_adds({6, 1}, adds, false, 0.5f), addend_feeds(adds), 9), 1u) << "beta 0.5";
  EXPECT_EQ(check_fusion(gemm_adds({5}, adds, true), addend_feeds(adds), 9), 1u) << "then Relu";
}

TEST(GemmFusion, OtherAddendShapesFallBackToBroadcastAdds) {
  // A full M x N addend, and one that grows the result to 3 x 6 x 5.
  for (const auto& adds : std::vector<std::vector<Shape>>{{{6, 5}}, {{5}, {3, 6, 5}}, {{3, 1, 1}, {6, 1}}}) {
    EXPECT_EQ(check_fusion(gemm_adds({5}, adds), addend_feeds(adds), 9), 1u);
    EXPECT_EQ(check_fusion(gemm_adds({5}, adds, true), addend_feeds(adds), 9), 1u) << "then Relu";
  }
}

TEST(GemmFusion, AddendsThatCannotFuse) {
  // Add(G, G) reads the Gemm output twice; a Gemm output with a second reader stays.
  ModelBuilder twice(13);
  twice.input("X", DType::Float32, {4, 3});
  twice.initializer("W", random_tensor(DType::Float32, {3, 2}, 1));
  twice.node("Gemm", {"X", "W"}, {"G"}).name("g");
  twice.node("Add", {"G", "G"}, {"Y"}).name("a");
  twice.output("Y");
  EXPECT_EQ(check_fusion(twice, {{"X", random_tensor(DType::Float32, {4, 3}, 2)}}, 3), 2u);
  ModelBuilder shared(13);
  shared.input("X", DType::Float32, {4, 3});
  shared.input("V", DType::Float32, {2});
  shared.initializer("W", random_tensor(DType::Float32, {3, 2}, 1));
  shared.node("Gemm", {"X", "W"}, {"G"}).name("g");
  shared.node("Add", {"G", "V"}, {"Y"}).name("a");
  shared.node("Neg", {"G"}, {"Z"}).name("n");
  shared.output("Y").output("Z");
  EXPECT_EQ(check_fusion(shared, {{"X", random_tensor(DType::Float32, {4, 3}, 2)},
                                  {"V", random_tensor(DType::Float32, {2}, 3)}}, 3), 3u);
}

TEST(GemmFusion, AddendProducedAfterTheGemm) {
  // The addend's producer runs after the Gemm: the fused node takes the Add's place.
  ModelBuilder mb(13);
  mb.input("X", DType::Float32, {7, 4});
  mb.input("U", DType::Float32, {7, 1});
  mb.initializer("W", random_tensor(DType::Float32, {4, 3}, 1));
  mb.node("Gemm", {"X", "W"}, {"G"}).name("g");
  mb.node("Exp", {"U"}, {"E"}).name("e");
  mb.node("Add", {"E", "G"}, {"Y"}).name("a");
  mb.output("Y");
  EXPECT_EQ(check_fusion(mb, {{"X", random_tensor(DType::Float32, {7, 4}, 2)},
                              {"U", random_tensor(DType::Float32, {7, 1}, 3)}}, 4), 2u);
}

// The seed benchmark's pair: Concat(Gemm(X, W1, B1), Gemm(X, W2, B2), axis 1).
ModelBuilder gemm_concat(bool trans_b, bool second_bias, int64_t axis, bool same_x = true) {
  ModelBuilder mb(13);
  mb.input("X", DType::Float32, {10, 6});
  mb.input("X2", DType::Float32, {10, 6});
  mb.initializer("W1", random_tensor(DType::Float32, trans_b ? Shape{7, 6} : Shape{6, 7}, 1));
  const int64_t n2 = axis == 0 ? 7 : 3;  // Concat along rows needs equal widths
  mb.initializer("W2", random_tensor(DType::Float32, trans_b ? Shape{n2, 6} : Shape{6, n2}, 2));
  mb.initializer("B1", random_tensor(DType::Float32, {7}, 3));
  mb.initializer("B2", random_tensor(DType::Float32, {1, n2}, 4));
  mb.node("Gemm", {"X", "W1", "B1"}, {"G1"}).name("g1").attr("transB", int64_t(trans_b)).attr("alpha", 0.5f);
  std::vector<std::string> in2{same_x ? "X" : "X2", "W2"};
  if (second_bias) in2.push_back("B2");
  mb.node("Gemm", in2, {"G2"}).name("g2").attr("transB", int64_t(trans_b)).attr("alpha", 0.5f);
  mb.node("Concat", {"G1", "G2"}, {"Y"}).name("cat").attr("axis", axis);
  mb.output("Y");
  return mb;
}

TEST(GemmFusion, ConcatOfGemmsBecomesOneGemm) {
  const std::vector<std::pair<std::string, Tensor>> f{{"X", random_tensor(DType::Float32, {10, 6}, 5)},
                                                      {"X2", random_tensor(DType::Float32, {10, 6}, 6)}};
  for (bool tb : {false, true})
    for (bool bias : {false, true}) {
      EXPECT_EQ(check_fusion(gemm_concat(tb, bias, 1), f, 6), 1u) << "transB " << tb << " bias " << bias;
      EXPECT_EQ(check_fusion(gemm_concat(tb, bias, -1), f, 6, 2), 1u) << "axis -1";
    }
  EXPECT_EQ(check_fusion(gemm_concat(false, true, 0), f, 6), 3u) << "axis 0 stacks rows: left alone";
  EXPECT_EQ(check_fusion(gemm_concat(false, true, 1, false), f, 6), 3u) << "different inputs: left alone";
}

}  // namespace
}  // namespace test
}  // namespace onnxmini
