// float16 / bfloat16 through the float32 kernels (kernels/half/half_adapter.h)
// and the half blocks of the element-wise loops. The oracle: the same node run
// on float32 tensors holding the same (half-representable) values, its result
// rounded once to the half type. The half run widens exactly and rounds once,
// so the two must agree bit for bit, constants (prepacked weights) included.
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "core/float16.h"
#include "kernels/half/half_adapter.h"
#include "tests/common/model_builder.h"

namespace onnxmini {
namespace test {
namespace {

using Attrs = std::function<void(NodeBuilder&)>;

Tensor to_half(const Tensor& f, DType t) {
  Tensor h(t, f.shape());
  auto* d = static_cast<uint16_t*>(h.raw_mut());
  const float* s = f.data<float>();
  for (int64_t i = 0; i < f.numel(); ++i) d[i] = t == DType::Float16 ? float_to_half(s[i]) : float_to_bfloat16(s[i]);
  return h;
}

Tensor to_float(const Tensor& h) {
  Tensor f(DType::Float32, h.shape());
  const auto* s = static_cast<const uint16_t*>(h.raw());
  for (int64_t i = 0; i < h.numel(); ++i)
    f.mutable_data<float>()[i] = h.dtype() == DType::Float16 ? half_to_float(s[i]) : bfloat16_to_float(s[i]);
  return f;
}

// One operand: a float32 tensor (made half for the half run), an integer tensor
// passed as is, or absent; `constant` makes it an initializer.
struct Operand {
  Tensor value;
  bool constant = false;
  bool is_float() const { return value.defined() && value.dtype() == DType::Float32; }
};

Operand var(Tensor t) { return {std::move(t), false}; }
Operand cst(Tensor t) { return {std::move(t), true}; }

std::vector<Tensor> run(const std::string& op, int opset, const std::vector<Operand>& ops, const Attrs& attrs,
                        size_t n_out, DType float_type, int threads) {
  ModelBuilder mb(opset);
  std::vector<std::string> names;
  std::vector<std::pair<std::string, Tensor>> feeds;
  for (size_t i = 0; i < ops.size(); ++i) {
    if (!ops[i].value.defined()) {
      names.push_back("");
      continue;
    }
    const std::string name = "in" + std::to_string(i);
    const Tensor v = ops[i].is_float() && float_type != DType::Float32 ? to_half(ops[i].value, float_type) : ops[i].value;
    if (ops[i].constant) mb.initializer(name, v);
    else {
      mb.input(name, v.dtype(), v.shape());
      feeds.emplace_back(name, v);
    }
    names.push_back(name);
  }
  std::vector<std::string> outs;
  for (size_t i = 0; i < n_out; ++i) outs.push_back("out" + std::to_string(i));
  NodeBuilder nb = mb.node(op, names, outs);
  nb.name("n1");
  if (attrs) attrs(nb);
  for (const auto& o : outs) mb.output(o);
  SessionOptions so;
  so.intra_op_num_threads = threads;
  so.graph_optimization_level = 0;
  return run_all(*mb.session(so), feeds);
}

// The half run of `op` equals the float32 run on the same values, rounded once.
void expect_half_matches_rounded_float32(const std::string& op, int opset, std::vector<Operand> ops,
                                         const Attrs& attrs = nullptr, size_t n_out = 1, int threads = 1) {
  for (DType t : {DType::Float16, DType::BFloat16}) {
    std::vector<Operand> exact = ops;  // the float32 operands made half-representable
    for (Operand& o : exact)
      if (o.is_float()) o.value = to_float(to_half(o.value, t));
    const auto want = run(op, opset, exact, attrs, n_out, DType::Float32, threads);
    const auto got = run(op, opset, exact, attrs, n_out, t, threads);
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i) {
      const std::string where = op + " " + dtype_name(t) + " output " + std::to_string(i);
      if (want[i].dtype() != DType::Float32) {  // indices: identical
        EXPECT_TRUE(tensors_near(got[i], want[i], 0, 0)) << where;
        continue;
      }
      ASSERT_EQ(got[i].dtype(), t) << where;
      EXPECT_TRUE(tensors_near(got[i], to_half(want[i], t), 0, 0)) << where;
    }
  }
}

Tensor rnd(const Shape& s, uint32_t seed, double lo = -1, double hi = 1) { return random_tensor(DType::Float32, s, seed, lo, hi); }
Tensor ints(const Shape& s, std::vector<int64_t> v) { return Tensor::from_vector<int64_t>(s, v); }

TEST(HalfAdapter, ConvWithConstantAndFedWeights) {
  const Attrs pads = [](NodeBuilder& n) { n.attr("pads", std::vector<int64_t>{1, 1, 1, 1}); };
  expect_half_matches_rounded_float32("Conv", 17, {var(rnd({1, 8, 13, 11}, 1)), cst(rnd({16, 8, 3, 3}, 2)), cst(rnd({16}, 3))}, pads);
  expect_half_matches_rounded_float32("Conv", 17, {var(rnd({2, 4, 9, 9}, 4)), var(rnd({6, 4, 3, 3}, 5))}, nullptr, 1, 2);
  const Attrs groups = [](NodeBuilder& n) { n.attr("group", 4); };
  expect_half_matches_rounded_float32("Conv", 17, {var(rnd({1, 4, 7, 7}, 6)), cst(rnd({4, 1, 3, 3}, 7))}, groups);
}

TEST(HalfAdapter, ConvTranspose) {
  expect_half_matches_rounded_float32("ConvTranspose", 17, {var(rnd({1, 3, 5, 5}, 8)), cst(rnd({3, 2, 3, 3}, 9))});
}

TEST(HalfAdapter, MatMulAndGemm) {
  expect_half_matches_rounded_float32("MatMul", 13, {var(rnd({2, 5, 37}, 10)), cst(rnd({37, 19}, 11))});
  expect_half_matches_rounded_float32("MatMul", 13, {var(rnd({3, 64}, 12)), var(rnd({64, 40}, 13))}, nullptr, 1, 2);
  const Attrs tb = [](NodeBuilder& n) { n.attr("transB", 1).attr("alpha", 0.5f); };
  expect_half_matches_rounded_float32("Gemm", 13, {var(rnd({4, 33}, 14)), cst(rnd({9, 33}, 15)), cst(rnd({9}, 16))}, tb);
}

TEST(HalfAdapter, PoolsWithIndices) {
  const Attrs k3 = [](NodeBuilder& n) { n.attr("kernel_shape", std::vector<int64_t>{3, 3}); };
  expect_half_matches_rounded_float32("MaxPool", 12, {var(rnd({1, 3, 8, 8}, 17))}, k3, 2);
  expect_half_matches_rounded_float32("AveragePool", 19, {var(rnd({1, 3, 8, 8}, 18))}, k3);
  expect_half_matches_rounded_float32("GlobalAveragePool", 1, {var(rnd({2, 5, 6, 6}, 19))});
}

TEST(HalfAdapter, SoftmaxReductionsAndIndices) {
  expect_half_matches_rounded_float32("Softmax", 13, {var(rnd({3, 50}, 20, -4, 4))});
  expect_half_matches_rounded_float32("LogSoftmax", 13, {var(rnd({3, 50}, 21, -4, 4))});
  expect_half_matches_rounded_float32("ReduceMean", 18, {var(rnd({4, 6, 5}, 22)), cst(ints({1}, {1}))});
  expect_half_matches_rounded_float32("ReduceSum", 13, {var(rnd({4, 6, 5}, 23)), cst(ints({2}, {0, 2}))});
  expect_half_matches_rounded_float32("ReduceMax", 18, {var(rnd({4, 6, 5}, 24)), cst(ints({1}, {2}))});
  const Attrs axis1 = [](NodeBuilder& n) { n.attr("axis", 1); };
  expect_half_matches_rounded_float32("ArgMax", 13, {var(rnd({4, 9}, 25))}, axis1);
  expect_half_matches_rounded_float32("TopK", 11, {var(rnd({4, 9}, 26)), cst(ints({1}, {3}))}, nullptr, 2);
}

TEST(HalfAdapter, Normalizations) {
  expect_half_matches_rounded_float32(
      "BatchNormalization", 15,
      {var(rnd({2, 3, 4, 4}, 27)), cst(rnd({3}, 28)), cst(rnd({3}, 29)), cst(rnd({3}, 30)), cst(rnd({3}, 31, 0.5, 2))});
  expect_half_matches_rounded_float32("InstanceNormalization", 6, {var(rnd({2, 3, 10}, 32)), cst(rnd({3}, 33)), cst(rnd({3}, 34))});
}

TEST(HalfAdapter, Lstm) {
  const Attrs hidden = [](NodeBuilder& n) { n.attr("hidden_size", 5); };
  expect_half_matches_rounded_float32("LSTM", 14, {var(rnd({4, 2, 3}, 35)), cst(rnd({1, 20, 3}, 36)), cst(rnd({1, 20, 5}, 37))},
                                      hidden, 3);
}

// onnxruntime's fused SkipLayerNormalization keeps mean / inv_std_var float32 (type U) for half
// inputs; output and input_skip_bias_sum take the half type.
TEST(HalfAdapter, StatisticsOutputsStayFloat32) {
  ModelBuilder mb(17);
  mb.import_domain("com.microsoft", 1);
  const Tensor x = to_half(rnd({2, 3, 8}, 53), DType::Float16), skip = to_half(rnd({2, 3, 8}, 54), DType::Float16);
  mb.input("x", DType::Float16, x.shape()).input("skip", DType::Float16, skip.shape());
  mb.initializer("gamma", to_half(rnd({8}, 55), DType::Float16));
  mb.node("SkipLayerNormalization", {"x", "skip", "gamma"}, {"y", "mean", "inv_std", "sum"}).domain("com.microsoft").name("n1");
  for (const char* o : {"y", "mean", "inv_std", "sum"}) mb.output(o);
  const auto out = run_all(*mb.session(SessionOptions{}), {{"x", x}, {"skip", skip}});
  ASSERT_EQ(out.size(), 4u);
  EXPECT_EQ(out[0].dtype(), DType::Float16);
  EXPECT_EQ(out[1].dtype(), DType::Float32);
  EXPECT_EQ(out[2].dtype(), DType::Float32);
  EXPECT_EQ(out[3].dtype(), DType::Float16);
  EXPECT_EQ(out[1].shape(), (Shape{2, 3, 1}));
}

// A float32 run through an adapted op is the float32 kernel itself (no widening).
TEST(HalfAdapter, Float32RunsAreUntouched) {
  EXPECT_TRUE(half::computed_in_float32("", "Conv"));
  EXPECT_FALSE(half::computed_in_float32("", "Add"));  // element-wise: native half blocks
  const std::vector<Operand> ops = {var(rnd({2, 7}, 38)), cst(rnd({7, 3}, 39))};
  const auto a = run("MatMul", 13, ops, nullptr, 1, DType::Float32, 1);
  ASSERT_EQ(a[0].dtype(), DType::Float32);
}

// Element-wise ops compute half in float32 blocks (elementwise.h): rounded once, like the adapter.
TEST(HalfElementwise, BinaryBroadcastsAndUnaryFastPaths) {
  // sizes beyond one block (512) and not a multiple of it, vector-vector and vector-scalar runs
  expect_half_matches_rounded_float32("Add", 14, {var(rnd({3, 1100}, 40)), var(rnd({1100}, 41))});
  expect_half_matches_rounded_float32("Mul", 14, {var(rnd({1300, 3}, 42)), var(rnd({1300, 1}, 43))});
  expect_half_matches_rounded_float32("Div", 14, {var(rnd({1}, 44)), var(rnd({2, 777}, 45, 0.5, 2))});
  expect_half_matches_rounded_float32("Sub", 14, {var(rnd({1}, 46)), var(rnd({1}, 47))});
  expect_half_matches_rounded_float32("Exp", 13, {var(rnd({2, 1029}, 48, -5, 5))}, nullptr, 1, 2);
  expect_half_matches_rounded_float32("Sigmoid", 13, {var(rnd({1031}, 49, -8, 8))});
  expect_half_matches_rounded_float32("Relu", 14, {var(rnd({5, 333}, 50))});
  expect_half_matches_rounded_float32("Erf", 13, {var(rnd({700}, 51, -3, 3))});
}

// Cast float32 <-> float16 / bfloat16 (the SIMD rows) gives the scalar conversions' bits,
// in fast (4 threads) and reference mode, beyond one thread chunk.
TEST(HalfElementwise, CastFloat32ToAndFromHalf) {
  Tensor x = rnd({70001}, 52, -70000, 70000);
  x.mutable_data<float>()[3] = 65520.f;  // the float16 overflow tie: rounds to inf
  x.mutable_data<float>()[4] = 1e-6f;    // a float16 subnormal
  for (DType t : {DType::Float16, DType::BFloat16}) {
    for (int threads : {1, 4}) {
      const Attrs to = [t](NodeBuilder& n) { n.attr("to", static_cast<int64_t>(t)); };
      const auto half = run("Cast", 19, {var(x)}, to, 1, DType::Float32, threads);
      EXPECT_TRUE(tensors_near(half[0], to_half(x, t), 0, 0)) << dtype_name(t);
      const Attrs to_f32 = [](NodeBuilder& n) { n.attr("to", static_cast<int64_t>(DType::Float32)); };
      const auto back = run("Cast", 19, {var(to_float(half[0]))}, to_f32, 1, t, threads);
      EXPECT_TRUE(tensors_near(back[0], to_float(half[0]), 0, 0)) << dtype_name(t);
    }
  }
}

}  // namespace
}  // namespace test
}  // namespace onnxmini
