// The optimizer's QDQ rule (runtime/graph_fusion_qdq.h): DequantizeLinear -> Conv / MatMul ->
// QuantizeLinear units become QLinearConv / QLinearMatMul, checked on the rewrite report and
// node count, and numerically against the float computation the unit describes (dequantize,
// float conv / matmul in double, quantize with round half to even): an element may differ by
// 1 where the float32 result sits within rounding of a .5 boundary. Near-misses (a weight
// that is not constant, a per-channel scale on the wrong axis, a bias whose scale is not
// x_scale * w_scale, an output with a second reader) stay unfused; those need the
// DequantizeLinear / QuantizeLinear kernels to run and skip without them.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "kernels/registry.h"
#include "tests/common/fusion_test_util.h"

namespace onnxmini {
namespace test {
namespace {

Tensor bytes(DType t, const Shape& s, std::mt19937& rng) {
  Tensor x(t, s);
  for (int64_t i = 0; i < x.numel(); ++i) static_cast<uint8_t*>(x.raw_mut())[i] = static_cast<uint8_t>(rng());
  return x;
}

double val(const Tensor& t, int64_t i) { return t.get_as_double(i); }

struct Unit {
  bool conv = true;
  bool gemm = false;  // with conv = false: Gemm(transB = 1, bias) instead of MatMul
  bool per_channel = true;
  bool bias = true;
  bool bias_scale_off = false;
  bool w_scale_axis_wrong = false;
  bool second_reader = false;
};

// x [1, 3, 6, 5] (uint8) -> DQ -> Conv(W [4, 3, 3, 3] int8, pads 1) -> Q (uint8), or
// a [5, 12] -> DQ -> MatMul(B [12, 7] int8) -> Q.
ModelBuilder unit_model(const Unit& u, std::mt19937& rng, Tensor& x, Tensor& w, Tensor& ws, Tensor& b) {
  ModelBuilder mb(13);
  x = bytes(DType::UInt8, u.conv ? Shape{1, 3, 6, 5} : Shape{5, 12}, rng);
  w = bytes(DType::Int8, u.conv ? Shape{4, 3, 3, 3} : u.gemm ? Shape{7, 12} : Shape{12, 7}, rng);
  const int64_t M = u.conv ? 4 : 7;
  const float xs = 0.02f;
  ws = Tensor(DType::Float32, u.per_channel ? Shape{M} : Shape{});
  for (int64_t m = 0; m < ws.numel(); ++m) ws.mutable_data<float>()[m] = 0.004f + 0.001f * m;
  mb.input("x", DType::UInt8, x.shape());
  mb.initializer("xs", Tensor::scalar<float>(xs)).initializer("xz", Tensor::scalar<uint8_t>(120));
  mb.initializer("w", w).initializer("ws", ws);
  mb.initializer("ys", Tensor::scalar<float>(0.3f)).initializer("yz", Tensor::scalar<uint8_t>(100));
  mb.node("DequantizeLinear", {"x", "xs", "xz"}, {"xf"}).name("dq_x");
  auto dqw = mb.node("DequantizeLinear", {"w", "ws"}, {"wf"});
  dqw.name("dq_w");
  if (u.per_channel) dqw.attr("axis", static_cast<int64_t>(u.conv ? (u.w_scale_axis_wrong ? 1 : 0) : u.gemm ? 0 : 1));
  std::vector<std::string> ins = {"xf", "wf"};
  if ((u.conv || u.gemm) && u.bias) {
    b = Tensor(DType::Int32, {M});
    Tensor bs(DType::Float32, {M});
    for (int64_t m = 0; m < M; ++m) {
      b.mutable_data<int32_t>()[m] = static_cast<int32_t>(m * 997 % 2000) - 1000;
      bs.mutable_data<float>()[m] = xs * ws.data<float>()[u.per_channel ? m : 0] * (u.bias_scale_off ? 1.01f : 1.0f);
    }
    mb.initializer("b", b).initializer("bs", bs);
    mb.node("DequantizeLinear", {"b", "bs"}, {"bf"}).name("dq_b").attr("axis", static_cast<int64_t>(0));
    ins.push_back("bf");
  }
  auto op = mb.node(u.conv ? "Conv" : u.gemm ? "Gemm" : "MatMul", ins, {"yf"});
  op.name("op");
  if (u.gemm) op.attr("transB", static_cast<int64_t>(1));
  if (u.conv) op.attr("pads", std::vector<int64_t>{1, 1, 1, 1});
  mb.node("QuantizeLinear", {"yf", "ys", "yz"}, {"y"}).name("q_y");
  mb.output("y");
  if (u.second_reader) {
    mb.node("Relu", {"yf"}, {"r"}).name("relu");
    mb.output("r");
  }
  return mb;
}

// The unit's float semantics in double, quantized with round half to even.
std::vector<int> expected(const Unit& u, const Tensor& x, const Tensor& w, const Tensor& ws, const Tensor& b) {
  std::vector<int> out;
  auto wscale = [&](int64_t m) { return double(ws.data<float>()[u.per_channel ? m : 0]); };
  auto q = [](double v) { return static_cast<int>(std::min(255.0, std::max(0.0, std::nearbyint(v / 0.3f) + 100))); };
  const double xs = 0.02f;
  if (!u.conv) {
    for (int64_t m = 0; m < 5; ++m)
      for (int64_t n = 0; n < 7; ++n) {
        double acc = u.gemm && u.bias ? val(b, n) * xs * wscale(n) : 0;
        for (int64_t k = 0; k < 12; ++k)
          acc += (val(x, m * 12 + k) - 120) * xs * val(w, u.gemm ? n * 12 + k : k * 7 + n) * wscale(n);
        out.push_back(q(acc));
      }
    return out;
  }
  for (int64_t m = 0; m < 4; ++m)
    for (int64_t oh = 0; oh < 6; ++oh)
      for (int64_t ow = 0; ow < 5; ++ow) {
        double acc = u.bias ? val(b, m) * xs * wscale(m) : 0;
        for (int64_t c = 0; c < 3; ++c)
          for (int64_t kh = 0; kh < 3; ++kh)
            for (int64_t kw = 0; kw < 3; ++kw) {
              const int64_t ih = oh - 1 + kh, iw = ow - 1 + kw;
              if (ih < 0 || ih >= 6 || iw < 0 || iw >= 5) continue;
              acc += (val(x, (c * 6 + ih) * 5 + iw) - 120) * xs * val(w, ((m * 3 + c) * 3 + kh) * 3 + kw) * wscale(m);
            }
        out.push_back(q(acc));
      }
  return out;
}

bool rewritten(const Session& s) {
  for (const GraphRewrite& r : s.graph_rewrites())
    if (r.rule == "qdq_to_qlinear") return true;
  return false;
}

void expect_fused_and_close(const Unit& u) {
  std::mt19937 rng(u.conv * 2 + u.per_channel);
  Tensor x, w, ws, b;
  ModelBuilder mb = unit_model(u, rng, x, w, ws, b);
  for (KernelMode mode : {KernelMode::Fast, KernelMode::Reference}) {
    auto s = mb.session(opts(ORT_ENABLE_EXTENDED, mode));
    EXPECT_TRUE(rewritten(*s));
    EXPECT_EQ(s->describe().nodes.size(), 1u);
    const Tensor y = run_all(*s, {{"x", x}}).at(0);
    const std::vector<int> want = expected(u, x, w, ws, b);
    ASSERT_EQ(y.numel(), static_cast<int64_t>(want.size()));
    int off_by_one = 0;
    for (int64_t i = 0; i < y.numel(); ++i) {
      const int d = std::abs(static_cast<int>(y.data<uint8_t>()[i]) - want[i]);
      ASSERT_LE(d, 1) << "element " << i;
      off_by_one += d;
    }
    EXPECT_LE(off_by_one, 2);
  }
}

TEST(QdqFusion, ConvPerChannelWithBias) { expect_fused_and_close({true, false, true, true}); }
TEST(QdqFusion, ConvPerTensorNoBias) { expect_fused_and_close({true, false, false, false}); }
TEST(QdqFusion, MatMulPerColumn) { expect_fused_and_close({false, false, true, false}); }
TEST(QdqFusion, MatMulPerTensor) { expect_fused_and_close({false, false, false, false}); }
TEST(QdqFusion, GemmTransposedPerChannelWithBias) { expect_fused_and_close({false, true, true, true}); }

TEST(QdqFusion, NearMissesStayUnfused) {
  if (!KernelRegistry::instance().knows("", "DequantizeLinear") || !KernelRegistry::instance().knows("", "QuantizeLinear"))
    GTEST_SKIP() << "needs the DequantizeLinear / QuantizeLinear kernels (quantization branch)";
  std::mt19937 rng(9);
  for (Unit u : {Unit{true, false, true, true, true}, Unit{true, false, true, true, false, true},
                 Unit{true, false, true, true, false, false, true}}) {
    Tensor x, w, ws, b;
    ModelBuilder mb = unit_model(u, rng, x, w, ws, b);
    auto s = mb.session(opts(ORT_ENABLE_EXTENDED));
    EXPECT_FALSE(rewritten(*s)) << u.bias_scale_off << u.w_scale_axis_wrong << u.second_reader;
  }
}

}  // namespace
}  // namespace test
}  // namespace onnxmini
