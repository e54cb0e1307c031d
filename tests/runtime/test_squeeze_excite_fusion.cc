// The squeeze_excite rule (runtime/graph_fusion_se.h): GlobalAveragePool -> 1x1 Conv [act]
// -> 1x1 Conv act -> Mul(X, gate) [-> Add(X, product)] becomes one SqueezeExcite node, with
// the activations that the conv activation rules put into the Convs, either operand order,
// with and without biases; the fused graph equals the unfused one (fast and reference
// kernels, 1 and 2 threads). Near-misses stay unfused: a 3x3 filter, a group, a stride, a
// padding, a Mul by another tensor, a gate or squeezed value with a second reader, the Add
// of another tensor (the Mul is still fused). A model saved after the rule keeps the
// original nodes and loads back to the same outputs.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>

#include <unistd.h>

#include "tests/common/fusion_test_util.h"

namespace onnxmini {
namespace test {
namespace {

struct SeSpec {
  std::string act1 = "Relu", act2 = "HardSigmoid";
  bool gate_first = false;   // Mul(gate, X) instead of Mul(X, gate)
  bool residual = false;     // Add(X, Mul(..)) after the Mul
  bool biases = true;
  // Near-misses.
  int64_t k1 = 1, group1 = 1, stride2 = 1, pad2 = 0;
  bool mul_other = false;    // Mul(X2, gate)
  bool gate_output = false;  // the gate is a graph output too
  bool hidden_output = false;
  bool add_other = false;    // Add(X2, product)
};

constexpr int64_t kN = 2, kC = 12, kCm = 4, kH = 6, kW = 5;

void add_act(ModelBuilder& mb, const std::string& act, const std::string& in, const std::string& out,
             const std::string& name) {
  if (act == "HardSigmoid") mb.node(act, {in}, {out}).name(name).attr("alpha", 0.1666667f).attr("beta", 0.5f);
  else if (act == "Clip") mb.node(act, {in, "lo", "hi"}, {out}).name(name);
  else mb.node(act, {in}, {out}).name(name);
}

ModelBuilder se_model(const SeSpec& s) {
  ModelBuilder mb(14);
  // pad2 = 1 turns the 1x1 gate into 3x3: X is 3x3 then, so the Mul still broadcasts.
  const int64_t H = s.pad2 ? 3 : kH, W = s.pad2 ? 3 : kW;
  mb.input("X", DType::Float32, {kN, kC, H, W});
  if (s.mul_other || s.add_other) mb.input("X2", DType::Float32, {kN, kC, H, W});
  mb.initializer("W1", random_tensor(DType::Float32, {kCm, kC / s.group1, s.k1, s.k1}, 1));
  mb.initializer("B1", random_tensor(DType::Float32, {kCm}, 2));
  mb.initializer("W2", random_tensor(DType::Float32, {kC, kCm, 1, 1}, 3));
  mb.initializer("B2", random_tensor(DType::Float32, {kC}, 4));
  mb.initializer("lo", Tensor::from_vector<float>({}, {0.0f}));
  mb.initializer("hi", Tensor::from_vector<float>({}, {0.8f}));
  mb.node("GlobalAveragePool", {"X"}, {"P"}).name("gap");
  auto conv1 = mb.node("Conv", s.biases ? std::vector<std::string>{"P", "W1", "B1"} : std::vector<std::string>{"P", "W1"},
                       {s.act1.empty() ? "H" : "T1"})
                   .name("squeeze");
  if (s.k1 > 1) conv1.attr("pads", std::vector<int64_t>{s.k1 / 2, s.k1 / 2, s.k1 / 2, s.k1 / 2});
  if (s.group1 > 1) conv1.attr("group", s.group1);
  if (!s.act1.empty()) add_act(mb, s.act1, "T1", "H", "act1");
  auto conv2 = mb.node("Conv", s.biases ? std::vector<std::string>{"H", "W2", "B2"} : std::vector<std::string>{"H", "W2"},
                       {"T2"})
                   .name("excite");
  if (s.stride2 > 1) conv2.attr("strides", std::vector<int64_t>{s.stride2, s.stride2});
  if (s.pad2) conv2.attr("pads", std::vector<int64_t>{s.pad2, s.pad2, s.pad2, s.pad2});
  add_act(mb, s.act2, "T2", "G", "act2");
  const std::string x = s.mul_other ? "X2" : "X";
  mb.node("Mul", s.gate_first ? std::vector<std::string>{"G", x} : std::vector<std::string>{x, "G"},
          {s.residual || s.add_other ? "M" : "Y"})
      .name("scale");
  if (s.residual || s.add_other) mb.node("Add", {"M", s.add_other ? "X2" : "X"}, {"Y"}).name("res");
  mb.output("Y");
  if (s.gate_output) mb.output("G");
  if (s.hidden_output) mb.output("H");
  return mb;
}

std::vector<std::pair<std::string, Tensor>> feeds(const SeSpec& s) {
  const int64_t H = s.pad2 ? 3 : kH, W = s.pad2 ? 3 : kW;
  std::vector<std::pair<std::string, Tensor>> f{{"X", random_tensor(DType::Float32, {kN, kC, H, W}, 7)}};
  if (s.mul_other || s.add_other) f.push_back({"X2", random_tensor(DType::Float32, {kN, kC, H, W}, 8)});
  return f;
}

size_t se_nodes(const ModelBuilder& mb) {
  auto s = mb.session(opts(ORT_ENABLE_ALL));
  const auto nodes = s->describe().nodes;
  return std::count_if(nodes.begin(), nodes.end(), [](const auto& n) { return n.op_type == "SqueezeExcite"; });
}

// Products of C (Cm) terms: the dot products' length bounds the float32 error.
constexpr int64_t kTerms = kC * kCm + kC;

TEST(SqueezeExciteFusion, BlockIsOneNode) {
  std::vector<SeSpec> specs;
  for (const char* a2 : {"HardSigmoid", "Sigmoid", "HardSwish", "Clip"})
    for (const char* a1 : {"Relu", ""}) {
      SeSpec s;
      s.act1 = a1, s.act2 = a2;
      specs.push_back(s);
    }
  SeSpec swapped;
  swapped.gate_first = true;
  SeSpec residual;
  residual.residual = true;
  SeSpec residual_swapped = residual;
  residual_swapped.gate_first = true;
  SeSpec no_bias;
  no_bias.biases = false;
  for (const SeSpec& s : {swapped, residual, residual_swapped, no_bias}) specs.push_back(s);
  for (const SeSpec& s : specs) {
    const std::string what = s.act1 + " / " + s.act2 + (s.gate_first ? " gate first" : "") +
                             (s.residual ? " residual" : "") + (s.biases ? "" : " no biases");
    EXPECT_EQ(check_fusion(se_model(s), feeds(s), kTerms), 1u) << what;
    EXPECT_EQ(check_fusion(se_model(s), feeds(s), kTerms, 2), 1u) << what << ", 2 threads";
    EXPECT_EQ(se_nodes(se_model(s)), 1u) << what;
  }
}

TEST(SqueezeExciteFusion, NearMissesStayUnfused) {
  std::vector<std::pair<std::string, SeSpec>> misses;
  SeSpec s;
  s.k1 = 3;
  misses.push_back({"3x3 squeeze filter", s});
  s = {};
  s.group1 = 2;
  misses.push_back({"grouped squeeze", s});
  s = {};
  s.stride2 = 2;
  misses.push_back({"strided excite", s});
  s = {};
  s.pad2 = 1;
  misses.push_back({"padded excite", s});
  s = {};
  s.mul_other = true;
  misses.push_back({"Mul by another tensor", s});
  s = {};
  s.gate_output = true;
  misses.push_back({"gate read twice", s});
  s = {};
  s.hidden_output = true;
  misses.push_back({"squeezed value read twice", s});
  for (const auto& [what, spec] : misses) {
    check_fusion(se_model(spec), feeds(spec), kTerms * 9);
    EXPECT_EQ(se_nodes(se_model(spec)), 0u) << what;
  }
  // Add of another tensor: the SE up to the Mul is fused, the Add stays.
  s = {};
  s.add_other = true;
  EXPECT_EQ(check_fusion(se_model(s), feeds(s), kTerms), 2u);
  EXPECT_EQ(se_nodes(se_model(s)), 1u);
}

TEST(SqueezeExciteFusion, SavedModelKeepsOriginalNodes) {
  SeSpec s;
  s.residual = true;
  SessionOptions o = opts(ORT_ENABLE_ALL);
  o.optimized_model_filepath =
      (std::filesystem::temp_directory_path() / ("onnxmini_se_" + std::to_string(::getpid()) + ".onnx")).string();
  auto fused = se_model(s).session(o);
  auto reloaded = Session::load(o.optimized_model_filepath, opts(ORT_DISABLE_ALL));
  std::filesystem::remove(o.optimized_model_filepath);
  std::vector<std::string> ops;
  for (const auto& n : reloaded->describe().nodes) ops.push_back(n.op_type);
  EXPECT_NE(std::find(ops.begin(), ops.end(), "GlobalAveragePool"), ops.end());
  EXPECT_EQ(std::find(ops.begin(), ops.end(), "SqueezeExcite"), ops.end());
  const auto a = run_all(*fused, feeds(s)), b = run_all(*reloaded, feeds(s));
  EXPECT_TRUE(tensors_near(a.at(0), b.at(0), reduction_atol(DType::Float32, kTerms), 1e-4));
}

}  // namespace
}  // namespace test
}  // namespace onnxmini
