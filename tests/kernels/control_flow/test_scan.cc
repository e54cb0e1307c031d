// Scan: opset 9+ axes and directions (negative axes, slices along an inner axis,
// outputs filled from the end), zero-length sequences, opset 8 with a batch axis
// and sequence_lens (zeroed tails), and the errors (each naming the node).
// Expected values come from plain loops over the same inputs.
#include <gtest/gtest.h>

#include "tests/common/model_builder.h"

using namespace onnxmini;
using namespace onnxmini::test;

namespace {

void expect_error(const std::function<void()>& f, std::initializer_list<const char*> parts) {
  try {
    f();
    FAIL() << "expected an error";
  } catch (const Error& e) {
    for (const char* p : parts) EXPECT_NE(std::string(e.what()).find(p), std::string::npos) << e.what();
  }
}

// Body: s_out = s + x; y = s_out (x and s of shape `shape`).
ModelBuilder running_sum_body(int64_t opset, const Shape& shape) {
  ModelBuilder b(opset);
  b.input("s", DType::Float32, shape);
  b.input("x", DType::Float32, shape);
  b.node("Add", {"s", "x"}, {"s_out"}).name("body_add");
  b.node("Identity", {"s_out"}, {"y"});
  b.output("s_out", DType::Float32, shape, true);
  b.output("y", DType::Float32, shape, true);
  return b;
}

std::unique_ptr<Session> running_sum9(int64_t opset = 11) {
  ModelBuilder mb(opset);
  mb.input("S0", DType::Float32, {2});
  mb.input("X", DType::Float32, {-1, 2});
  mb.node("Scan", {"S0", "X"}, {"S", "Y"})
      .name("sum_scan")
      .attr("num_scan_inputs", static_cast<int64_t>(1))
      .attr("body", running_sum_body(opset, {2}).graph());
  mb.output("S");
  mb.output("Y");
  return mb.session();
}

}  // namespace

TEST(Scan, RunningSumAlongAxis0) {
  for (int64_t opset : {9, 11, 16, 19, 21}) {
    SCOPED_TRACE(opset);
    auto s = running_sum9(opset);
    Tensor x = random_tensor(DType::Float32, {5, 2}, 3);
    const auto out = run_all(*s, {{"S0", Tensor::from_vector<float>({2}, {1, -1})}, {"X", x}});
    std::vector<float> acc{1, -1}, stacked;
    for (int t = 0; t < 5; ++t)
      for (int c = 0; c < 2; ++c) stacked.push_back(acc[c] += x.data<float>()[t * 2 + c]);
    EXPECT_TRUE(tensors_near(out[0], Tensor::from_vector<float>({2}, acc), 1e-6, 1e-6));
    EXPECT_TRUE(tensors_near(out[1], Tensor::from_vector<float>({5, 2}, stacked), 1e-6, 1e-6));
  }
}

TEST(Scan, ZeroLengthKeepsStatesAndSizesOutputsFromTheBody) {
  auto s = running_sum9();
  Tensor s0 = Tensor::from_vector<float>({2}, {1, -1});
  const auto out = run_all(*s, {{"S0", s0}, {"X", Tensor(DType::Float32, {0, 2})}});
  EXPECT_TRUE(tensors_near(out[0], s0, 0, 0));
  EXPECT_EQ(out[1].shape(), (Shape{0, 2}));
}

TEST(Scan, InnerAxesReverseDirectionsAndNegativeAxes) {
  // A [2, L, 3] scanned along axis -2 in reverse; B [L] along axis 0 forward.
  // s_out = s + a * b; out0 = s_out stacked along axis -1 from the end; out1 = a along axis 0.
  const int64_t L = 4;
  ModelBuilder body(11);
  body.input("s", DType::Float32, {2, 3});
  body.input("a", DType::Float32, {2, 3});
  body.input("b", DType::Float32, {});
  body.node("Mul", {"a", "b"}, {"ab"});
  body.node("Add", {"s", "ab"}, {"s_out"});
  body.node("Identity", {"s_out"}, {"o0"});
  body.node("Identity", {"a"}, {"o1"});
  body.output("s_out", DType::Float32, {2, 3}, true);
  body.output("o0", DType::Float32, {2, 3}, true);
  body.output("o1", DType::Float32, {2, 3}, true);
  ModelBuilder mb(11);
  mb.input("S0", DType::Float32, {2, 3});
  mb.input("A", DType::Float32, {2, L, 3});
  mb.input("B", DType::Float32, {L});
  mb.node("Scan", {"S0", "A", "B"}, {"S", "O0", "O1"})
      .attr("num_scan_inputs", static_cast<int64_t>(2))
      .attr("scan_input_axes", std::vector<int64_t>{-2, 0})
      .attr("scan_input_directions", std::vector<int64_t>{1, 0})
      .attr("scan_output_axes", std::vector<int64_t>{-1, 0})
      .attr("scan_output_directions", std::vector<int64_t>{1, 0})
      .attr("body", body.graph());
  mb.output("S");
  mb.output("O0");
  mb.output("O1");
  auto s = mb.session();
  Tensor s0 = random_tensor(DType::Float32, {2, 3}, 1), a = random_tensor(DType::Float32, {2, L, 3}, 2),
         b = random_tensor(DType::Float32, {L}, 3);
  const auto out = run_all(*s, {{"S0", s0}, {"A", a}, {"B", b}});

  std::vector<float> st(s0.data<float>(), s0.data<float>() + 6);
  std::vector<float> o0(2 * 3 * L), o1(L * 2 * 3);
  for (int64_t it = 0; it < L; ++it) {
    const int64_t t = L - 1 - it;  // reverse input
    for (int64_t i = 0; i < 2; ++i)
      for (int64_t j = 0; j < 3; ++j) {
        const float av = a.data<float>()[(i * L + t) * 3 + j];
        float& v = st[i * 3 + j];
        v += av * b.data<float>()[it];
        o0[(i * 3 + j) * L + (L - 1 - it)] = v;  // axis 2, filled from the end
        o1[(it * 2 + i) * 3 + j] = av;
      }
  }
  EXPECT_TRUE(tensors_near(out[0], Tensor::from_vector<float>({2, 3}, st), 1e-5, 1e-5));
  EXPECT_TRUE(tensors_near(out[1], Tensor::from_vector<float>({2, 3, L}, o0), 1e-5, 1e-5));
  EXPECT_TRUE(tensors_near(out[2], Tensor::from_vector<float>({L, 2, 3}, o1), 0, 0));
}

TEST(Scan, Opset8BatchSequenceLensAndReverse) {
  // S0 [B, 2], X [B, L, 2] scanned in reverse; sequence_lens {3, 1, 0}.
  const int64_t B = 3, L = 3;
  for (bool with_lens : {true, false}) {
    SCOPED_TRACE(with_lens);
    ModelBuilder mb(8);
    if (with_lens) mb.input("lens", DType::Int64, {B});
    mb.input("S0", DType::Float32, {B, 2});
    mb.input("X", DType::Float32, {B, L, 2});
    mb.node("Scan", {with_lens ? "lens" : "", "S0", "X"}, {"S", "Y"})
        .attr("num_scan_inputs", static_cast<int64_t>(1))
        .attr("directions", std::vector<int64_t>{1})
        .attr("body", running_sum_body(8, {2}).graph());
    mb.output("S");
    mb.output("Y");
    auto s = mb.session();
    Tensor s0 = random_tensor(DType::Float32, {B, 2}, 4), x = random_tensor(DType::Float32, {B, L, 2}, 5);
    const std::vector<int64_t> lens = with_lens ? std::vector<int64_t>{3, 1, 0} : std::vector<int64_t>{L, L, L};
    std::vector<std::pair<std::string, Tensor>> feeds{{"S0", s0}, {"X", x}};
    if (with_lens) feeds.emplace_back("lens", Tensor::from_vector<int64_t>({B}, lens));
    const auto out = run_all(*s, feeds);

    std::vector<float> st(s0.data<float>(), s0.data<float>() + B * 2), y(B * L * 2, 0.0f);
    for (int64_t b = 0; b < B; ++b)
      for (int64_t it = 0; it < lens[b]; ++it)
        for (int64_t c = 0; c < 2; ++c)
          y[(b * L + it) * 2 + c] = st[b * 2 + c] += x.data<float>()[(b * L + (lens[b] - 1 - it)) * 2 + c];
    EXPECT_TRUE(tensors_near(out[0], Tensor::from_vector<float>({B, 2}, st), 1e-6, 1e-6));
    EXPECT_TRUE(tensors_near(out[1], Tensor::from_vector<float>({B, L, 2}, y), 1e-6, 1e-6));
  }
}

TEST(Scan, ScanInputsOfDifferentLengthsAreAnError) {
  ModelBuilder body(11);
  body.input("a", DType::Float32, {});
  body.input("b", DType::Float32, {});
  body.node("Add", {"a", "b"}, {"y"});
  body.output("y", DType::Float32, {}, true);
  ModelBuilder mb(11);
  mb.input("A", DType::Float32, {-1});
  mb.input("B", DType::Float32, {-1});
  mb.node("Scan", {"A", "B"}, {"Y"}).name("pair").attr("num_scan_inputs", static_cast<int64_t>(2)).attr(
      "body", body.graph());
  mb.output("Y");
  auto s = mb.session();
  expect_error([&] { run_all(*s, {{"A", Tensor(DType::Float32, {3})}, {"B", Tensor(DType::Float32, {4})}}); },
               {"Scan 'pair'", "scan input 1 has 4 positions"});
}

TEST(Scan, ScanOutputWhoseShapeChangesIsAnError) {
  // The state doubles each iteration (allowed); the scan output is the state (not allowed).
  ModelBuilder body(11);
  body.input("s", DType::Float32, {-1});
  body.input("x", DType::Float32, {});
  body.node("Concat", {"s", "s"}, {"s_out"}).attr("axis", static_cast<int64_t>(0));
  body.node("Identity", {"s_out"}, {"y"});
  body.output("s_out", DType::Float32);
  body.output("y", DType::Float32);
  ModelBuilder mb(11);
  mb.input("S0", DType::Float32, {1});
  mb.input("X", DType::Float32, {3});
  mb.node("Scan", {"S0", "X"}, {"S", "Y"}).name("doubling").attr("num_scan_inputs", static_cast<int64_t>(1)).attr(
      "body", body.graph());
  mb.output("S");
  mb.output("Y");
  auto s = mb.session();
  expect_error([&] { run_all(*s, {{"S0", Tensor(DType::Float32, {1})}, {"X", Tensor(DType::Float32, {3})}}); },
               {"Scan 'doubling'", "scan output 'y' has shape 4"});
}

TEST(Scan, BadAttributesFail) {
  auto build = [](const std::string& attr, const std::vector<int64_t>& v, int64_t num_scan_inputs) {
    ModelBuilder mb(11);
    mb.input("S0", DType::Float32, {2});
    mb.input("X", DType::Float32, {3, 2});
    auto n = mb.node("Scan", {"S0", "X"}, {"S", "Y"}).name("bad_scan");
    n.attr("num_scan_inputs", num_scan_inputs).attr("body", running_sum_body(11, {2}).graph());
    if (!attr.empty()) n.attr(attr, v);
    mb.output("S");
    mb.output("Y");
    return mb;
  };
  expect_error([&] { build("", {}, 3).session(); }, {"Scan 'bad_scan'", "num_scan_inputs 3"});
  expect_error([&] { build("scan_input_directions", {2}, 1).session(); }, {"Scan 'bad_scan'", "got 2"});
  expect_error([&] { build("scan_output_axes", {0, 1}, 1).session(); }, {"Scan 'bad_scan'", "scan_output_axes has 2"});
  auto s = build("scan_input_axes", {2}, 1).session();
  expect_error([&] { run_all(*s, {{"S0", Tensor(DType::Float32, {2})}, {"X", Tensor(DType::Float32, {3, 2})}}); },
               {"Scan 'bad_scan'", "scan_input_axes[0] = 2"});
}

TEST(Scan, StringsAreSlicedAndStackedAsObjects) {
  // X [2, 3] strings scanned along axis 1; each slice [2] stacked along axis 0 from the end.
  ModelBuilder body(11);
  body.input("x", DType::String, {2});
  body.node("Identity", {"x"}, {"y"});
  body.output("y", DType::String, {2}, true);
  ModelBuilder mb(11);
  mb.input("X", DType::String, {2, 3});
  mb.node("Scan", {"X"}, {"Y"})
      .attr("num_scan_inputs", static_cast<int64_t>(1))
      .attr("scan_input_axes", std::vector<int64_t>{1})
      .attr("scan_output_directions", std::vector<int64_t>{1})
      .attr("body", body.graph());
  mb.output("Y");
  auto s = mb.session();
  const std::vector<std::string> x{"a0", "a1", "a2", "b0", "b1", "b2"};
  Tensor y = run_single(*s, {{"X", Tensor::from_vector<std::string>({2, 3}, x)}});
  ASSERT_EQ(y.shape(), (Shape{3, 2}));
  for (int64_t t = 0; t < 3; ++t)
    for (int64_t r = 0; r < 2; ++r) EXPECT_EQ(y.data<std::string>()[(2 - t) * 2 + r], x[r * 3 + t]);
}
