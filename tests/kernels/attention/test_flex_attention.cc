// FlexAttention (ai.onnx.preview 1): without modifiers it is Attention (opset 23, 4-D,
// no mask), so the fused Attention kernel is the oracle; with a score_mod that adds a
// constant and a prob_mod that doubles, the result is the same (softmax ignores a
// shift) times two; GQA; and the errors.
//
// Tolerance: both compute in float32; the scores sum E products of values <= 1 and a
// softmax of S terms follows: atol = rtol = 8 * (E + S) * eps32.
#include <cmath>

#include "tests/common/node_runner.h"
#include "tests/common/op_test_util.h"

namespace onnxmini {
namespace test {
namespace {

const double kEps32 = std::ldexp(1.0, -23);

std::vector<Tensor> run_flex(const std::vector<Tensor>& qkv, const AttrSetter& attrs) {
  ModelBuilder mb(23);
  mb.import_domain("ai.onnx.preview", 1);
  const char* names[] = {"Q", "K", "V"};
  std::vector<std::pair<std::string, Tensor>> feeds;
  for (int i = 0; i < 3; ++i) {
    mb.input(names[i], qkv[i].dtype(), {}, false);
    feeds.emplace_back(names[i], qkv[i]);
  }
  NodeBuilder n = mb.node("FlexAttention", {"Q", "K", "V"}, {"Y"});
  n.name("flex").domain("ai.onnx.preview");
  if (attrs) attrs(n);
  mb.output("Y");
  return run_all(*mb.session(), feeds);
}

// A one-input one-output body: out = op(in, constant c) in float32.
onnx::GraphProto modifier(const char* op, float c) {
  ModelBuilder body(23);
  body.input("in", DType::Float32, {-1, -1, -1, -1});
  body.initializer("c", Tensor::from_vector<float>({}, {c}));
  body.node(op, {"in", "c"}, {"out"});
  body.output("out", DType::Float32);
  return body.graph();
}

TEST(FlexAttention, WithoutModifiersIsAttention) {
  for (const Shape& kv : {Shape{2, 4, 7, 8}, Shape{2, 2, 7, 8}}) {  // MHA and GQA (groups of 2)
    const std::vector<Tensor> in{random_values(DType::Float32, {2, 4, 5, 8}, 1, -1, 1), random_values(DType::Float32, kv, 2, -1, 1),
                                 random_values(DType::Float32, {kv[0], kv[1], kv[2], 6}, 3, -1, 1)};
    const auto flex = run_flex(in, nullptr);
    const auto attn = run_node("Attention", 23, in, nullptr, 1, KernelMode::Reference);
    const double tol = 8 * (8 + 7) * kEps32;
    EXPECT_TRUE(tensors_near(flex[0], attn[0], tol, tol)) << shape_to_string(kv);
  }
}

TEST(FlexAttention, ScoreModAndProbModRun) {
  const std::vector<Tensor> in{random_values(DType::Float32, {1, 2, 4, 8}, 4, -1, 1), random_values(DType::Float32, {1, 2, 6, 8}, 5, -1, 1),
                               random_values(DType::Float32, {1, 2, 6, 8}, 6, -1, 1)};
  const auto plain = run_flex(in, nullptr);
  const auto modded = run_flex(in, [](NodeBuilder& n) {
    n.attr("score_mod", modifier("Add", 3.f)).attr("prob_mod", modifier("Mul", 2.f));
  });
  Tensor twice = plain[0].clone();
  for (int64_t i = 0; i < twice.numel(); ++i) twice.mutable_data<float>()[i] *= 2;
  const double tol = 8 * (8 + 6) * kEps32 * 4;  // the shift of 3 costs a few more ulps in exp
  EXPECT_TRUE(tensors_near(modded[0], twice, tol, tol));
}

TEST(FlexAttention, Errors) {
  const Tensor q = random_values(DType::Float32, {1, 3, 4, 8}, 7), k = random_values(DType::Float32, {1, 2, 5, 8}, 8);
  EXPECT_NE(error_message([&] { run_flex({q, k, k}, nullptr); })
                .find("FlexAttention 'flex': shapes Q 1x3x4x8, K 1x2x5x8, V 1x2x5x8 do not fit"),
            std::string::npos);
  EXPECT_NE(error_message([&] {
              run_flex({q, q, q}, [](NodeBuilder& n) { n.attr("softmax_precision", int64_t{10}); });
            }).find("softmax_precision 10 is not supported"),
            std::string::npos);
}

}  // namespace
}  // namespace test
}  // namespace onnxmini
