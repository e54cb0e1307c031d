// Attention fusion (runtime/graph_fusion_attention.cc): MatMul -> scale -> mask -> Softmax
// -> MatMul becomes one Attention node in each exporter's form (scale on the scores, on Q,
// split over Q and K; mask either side of the Add, fixed or symbolic key length), with the
// outputs of the unfused graph; every near-miss stays unfused.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>

#include <unistd.h>

#include "tests/common/fusion_test_util.h"

namespace onnxmini {
namespace test {
namespace {

constexpr int64_t kB = 2, kH = 3, kSq = 5, kSk = 7, kD = 8, kDv = 6;

enum class Scale { None, DivScores, MulScores, MulQ, SplitQK, MulKBeforeTranspose };
enum class Mask { None, Input, SymbolicInput, ConstantRows, KeyBroadcast, Rank5 };

struct AttnVariant {
  int64_t opset = 23;
  Scale scale = Scale::DivScores;
  Mask mask = Mask::Input;
  bool mask_first = false;            // Add(mask, scores)
  int64_t softmax_axis = 99;          // 99: the attribute left out
  std::vector<int64_t> k_perm = {0, 1, 3, 2};  // Kt = Transpose(K, k_perm) = [B, H, D, Sk]
  bool k_pretransposed = false;       // K fed as [B, H, D, Sk], no Transpose
  bool scores_is_output = false;      // the scores are also a graph output
  bool per_key_scale = false;         // Mul by a [Sk] constant instead of a scalar
  bool mask_after_scale = true;       // false: (scores + mask) * c, the mask scaled too
  bool declared_keys = false;         // K and V declare the key length (7) instead of a symbolic dim
};

const float kScale = 1.0f / std::sqrt(static_cast<float>(kD));

// K's shape such that Transpose(K, k_perm) is [B, H, D, Sk].
Shape k_shape(const AttnVariant& v) {
  const Shape kt = {kB, kH, kD, kSk};
  if (v.k_pretransposed) return kt;
  Shape k(4);
  for (size_t i = 0; i < 4; ++i) k[v.k_perm[i]] = kt[i];
  return k;
}

// The declared form of a shape from k_shape: the key axis symbolic unless declared_keys.
Shape declared_k_shape(const AttnVariant& v) {
  Shape k = k_shape(v);
  if (v.declared_keys) return k;
  for (int64_t& d : k)
    if (d == kSk) d = -1;
  return k;
}

ModelBuilder attention_model(const AttnVariant& v) {
  ModelBuilder mb(v.opset);
  mb.input("Q", DType::Float32, {kB, kH, kSq, kD});
  mb.input("K", DType::Float32, declared_k_shape(v));
  mb.input("V", DType::Float32, {kB, kH, v.declared_keys ? kSk : -1, kDv});
  mb.initializer("c", Tensor::from_vector<float>({}, {v.scale == Scale::DivScores ? std::sqrt(float(kD)) : kScale}));
  mb.initializer("root_c", Tensor::from_vector<float>({1}, {std::sqrt(kScale)}));
  std::string q = "Q", k = "K";
  if (v.scale == Scale::MulQ || v.scale == Scale::SplitQK) {
    mb.node("Mul", {"Q", v.scale == Scale::MulQ ? "c" : "root_c"}, {"q_scaled"}).name("scale_q");
    q = "q_scaled";
  }
  if (v.scale == Scale::MulKBeforeTranspose) {
    mb.node("Mul", {"c", "K"}, {"k_scaled"}).name("scale_k");
    k = "k_scaled";
  }
  std::string kt = k;
  if (!v.k_pretransposed) {
    mb.node("Transpose", {k}, {"kt"}).name("transpose_k").attr("perm", v.k_perm);
    kt = "kt";
  }
  if (v.scale == Scale::SplitQK) {
    mb.node("Mul", {"kt", "root_c"}, {"kt_scaled"}).name("scale_kt");
    kt = "kt_scaled";
  }
  mb.node("MatMul", {q, kt}, {"qk"}).name("qk");
  std::string scores = "qk";
  auto scale_scores = [&] {
    if (v.per_key_scale) {
      mb.initializer("key_scale", random_tensor(DType::Float32, {kSk}, 5, 0.1, 0.3));
      mb.node("Mul", {scores, "key_scale"}, {"scaled"}).name("scale_scores");
    } else if (v.scale == Scale::DivScores) {
      mb.node("Div", {scores, "c"}, {"scaled"}).name("scale_scores");
    } else if (v.scale == Scale::MulScores) {
      mb.node("Mul", {"c", scores}, {"scaled"}).name("scale_scores");
    } else {
      return;
    }
    scores = "scaled";
  };
  if (v.mask_after_scale) scale_scores();
  if (v.mask != Mask::None) {
    std::string mask = "mask";
    if (v.mask == Mask::Input) mb.input("mask", DType::Float32, {kB, 1, 1, kSk});
    if (v.mask == Mask::SymbolicInput) mb.input("mask", DType::Float32, {kB, 1, 1, -1});
    if (v.mask == Mask::KeyBroadcast) mb.input("mask", DType::Float32, {kB, 1, kSq, 1});
    if (v.mask == Mask::Rank5) mb.input("mask", DType::Float32, {2, 1, 1, 1, kSk});
    if (v.mask == Mask::ConstantRows) {
      // A causal-style constant (large finite negatives above the diagonal), broadcast over B, H.
      Tensor c(DType::Float32, {kSq, kSk});
      for (int64_t i = 0; i < kSq; ++i)
        for (int64_t j = 0; j < kSk; ++j) c.mutable_data<float>()[i * kSk + j] = j > i + 2 ? -1e4f : 0.f;
      mb.initializer("mask", c);
    }
    mb.node("Add", v.mask_first ? std::vector<std::string>{mask, scores} : std::vector<std::string>{scores, mask},
            {"masked"}).name("add_mask");
    scores = "masked";
  }
  if (!v.mask_after_scale) scale_scores();
  auto sm = mb.node("Softmax", {scores}, {"p"});
  sm.name("softmax");
  if (v.softmax_axis != 99) sm.attr("axis", v.softmax_axis);
  mb.node("MatMul", {"p", "V"}, {"Y"}).name("pv");
  mb.output("Y");
  if (v.scores_is_output) mb.output(scores);
  return mb;
}

std::vector<std::pair<std::string, Tensor>> feeds(const AttnVariant& v) {
  std::vector<std::pair<std::string, Tensor>> f = {
      {"Q", random_tensor(DType::Float32, {kB, kH, kSq, kD}, 1, -2.0, 2.0)},
      {"K", random_tensor(DType::Float32, k_shape(v), 2, -2.0, 2.0)},
      {"V", random_tensor(DType::Float32, {kB, kH, kSk, kDv}, 3)}};
  if (v.mask == Mask::Input || v.mask == Mask::SymbolicInput)
    f.emplace_back("mask", random_tensor(DType::Float32, {kB, 1, 1, kSk}, 4, -3.0, 0.0));
  if (v.mask == Mask::KeyBroadcast) f.emplace_back("mask", random_tensor(DType::Float32, {kB, 1, kSq, 1}, 4, -3.0, 0.0));
  if (v.mask == Mask::Rank5) f.emplace_back("mask", random_tensor(DType::Float32, {2, 1, 1, 1, kSk}, 4, -3.0, 0.0));
  return f;
}

// The scores are dot products of length D; softmax sums Sk exponentials; Y sums Sk products:
// the fused kernel orders each of these reductions differently (k = D + 2 Sk).
size_t fused_nodes(const AttnVariant& v) { return check_fusion(attention_model(v), feeds(v), kD + 2 * kSk); }

size_t model_nodes(const AttnVariant& v) {
  return static_cast<size_t>(attention_model(v).proto().graph().node_size());
}

std::vector<std::string> rules_applied(const AttnVariant& v) {
  std::vector<std::string> out;
  auto session = attention_model(v).session(opts(ORT_ENABLE_ALL));
  for (const GraphRewrite& r : session->graph_rewrites()) out.push_back(r.rule);
  return out;
}

TEST(AttentionFusion, EveryScaleFormFuses) {
  for (Scale s : {Scale::None, Scale::DivScores, Scale::MulScores, Scale::MulQ, Scale::SplitQK,
                  Scale::MulKBeforeTranspose}) {
    AttnVariant v;
    v.scale = s;
    EXPECT_EQ(fused_nodes(v), 1u) << "scale form " << static_cast<int>(s);
  }
}

// K's Transpose with another perm than [0, 1, 3, 2]: K is Transpose(K0, perm with its last two
// entries swapped), a node the rule adds in place of the matched Transpose.
TEST(AttentionFusion, OtherKTransposesBecomeTheKTranspose) {
  AttnVariant v;
  v.k_perm = {0, 2, 3, 1};  // HF BERT's two Transposes composed by cancel_transposes
  EXPECT_EQ(fused_nodes(v), 2u) << "perm 0,2,3,1";
  v.k_perm = {1, 0, 3, 2};
  EXPECT_EQ(fused_nodes(v), 2u) << "perm 1,0,3,2";
  v.mask = Mask::SymbolicInput;
  EXPECT_EQ(fused_nodes(v), 5u) << "perm 1,0,3,2 with the mask's Expand reading the new K";
}

TEST(AttentionFusion, MaskForms) {
  AttnVariant v;
  v.mask = Mask::None;
  EXPECT_EQ(fused_nodes(v), 1u) << "no mask";
  v.mask = Mask::Input;
  v.mask_first = true;
  EXPECT_EQ(fused_nodes(v), 1u) << "Add(mask, scores)";
  v.mask = Mask::ConstantRows;
  EXPECT_EQ(fused_nodes(v), 1u) << "constant [Sq, Sk] mask";
  // The key length is not provable: Shape, Gather and Expand broadcast the mask to it.
  v.mask = Mask::SymbolicInput;
  EXPECT_EQ(fused_nodes(v), 4u) << "symbolic key length";
  v.mask = Mask::KeyBroadcast;
  EXPECT_EQ(fused_nodes(v), 4u) << "mask [B, 1, Sq, 1] broadcast along the keys";
}

TEST(AttentionFusion, SoftmaxAxisInEachOpset) {
  AttnVariant v;
  v.softmax_axis = 3;
  EXPECT_EQ(fused_nodes(v), 1u) << "axis 3 = last";
  v.opset = 12;  // as ppocr_v4_rec: flattening from axis 3 of a 4-D input is the last axis alone
  EXPECT_EQ(fused_nodes(v), 1u) << "opset 12, axis 3";
  v.softmax_axis = -1;
  EXPECT_EQ(fused_nodes(v), 1u) << "opset 12, axis -1";
  v.softmax_axis = 99;  // opset < 13 default axis 1: the rows are [H, Sq, Sk] flattened
  EXPECT_EQ(fused_nodes(v), model_nodes(v)) << "opset 12, default axis 1";
  v.opset = 14;
  EXPECT_EQ(fused_nodes(v), 1u) << "opset 14, default axis -1";
}

TEST(AttentionFusion, BeforeOpset23UsesTheOpset23Kernel) {
  AttnVariant v;
  v.opset = 14;
  EXPECT_EQ(rules_applied(v), std::vector<std::string>{"attention_before_opset23"});
  v.opset = 23;
  EXPECT_EQ(rules_applied(v), std::vector<std::string>{"attention"});
}

// A declared short key length fuses too (the kernel's short-sequence path; a threshold of
// 256 declared keys kept such blocks unfused before it).
TEST(AttentionFusion, DeclaredShortKeyLengthFuses) {
  AttnVariant v;
  v.declared_keys = true;
  EXPECT_EQ(fused_nodes(v), 1u);
  EXPECT_FALSE(rules_applied(v).empty());
}

TEST(AttentionFusion, NearMissesStayUnfused) {
  auto expect_unfused = [](AttnVariant v, const char* what) {
    EXPECT_EQ(fused_nodes(v), model_nodes(v)) << what;
    EXPECT_TRUE(rules_applied(v).empty()) << what;
  };
  AttnVariant v;
  v.softmax_axis = 2;
  expect_unfused(v, "Softmax over the query axis");
  v = {};
  v.scores_is_output = true;
  expect_unfused(v, "scores read by a second reader (a graph output)");
  v = {};
  v.mask = Mask::Rank5;
  expect_unfused(v, "mask of rank 5: the Add makes the scores 5-D");
  v = {};
  v.k_pretransposed = true;
  expect_unfused(v, "K side not a Transpose (K fed already transposed)");
  v = {};
  v.per_key_scale = true;
  expect_unfused(v, "Mul by a [Sk] constant");
  v = {};
  v.mask_after_scale = false;
  expect_unfused(v, "(scores + mask) * c scales the mask");
}

TEST(AttentionFusion, SavedModelKeepsOriginalNodesBeforeOpset23) {
  for (int64_t opset : {int64_t{14}, int64_t{23}}) {
    AttnVariant v;
    v.opset = opset;
    v.mask = Mask::SymbolicInput;
    const ModelBuilder mb = attention_model(v);
    SessionOptions o = opts(ORT_ENABLE_ALL);
    o.optimized_model_filepath = (std::filesystem::temp_directory_path() /
                                  ("onnxmini_attention_" + std::to_string(::getpid()) + "_" + std::to_string(opset)))
                                     .string();
    auto fused = mb.session(o);
    auto saved = Session::load(o.optimized_model_filepath, opts(ORT_DISABLE_ALL));
    std::remove(o.optimized_model_filepath.c_str());
    auto count = [](Session& s, const char* op) {
      size_t n = 0;
      for (const NodeDescription& node : s.describe().nodes) n += node.op_type == op;
      return n;
    };
    EXPECT_EQ(count(*fused, "Attention"), 1u) << "opset " << opset;
    // opset 23: saved as the Attention node (with the mask's Expand); before: the original nodes.
    EXPECT_EQ(count(*saved, "Attention"), opset >= 23 ? 1u : 0u) << "opset " << opset;
    EXPECT_EQ(count(*saved, "Softmax"), opset >= 23 ? 0u : 1u) << "opset " << opset;
    const auto a = run_all(*fused, feeds(v)), b = run_all(*saved, feeds(v));
    EXPECT_TRUE(tensors_near(b[0], a[0], reduction_atol(DType::Float32, kD + 2 * kSk), 1e-4)) << "opset " << opset;
  }
}

}  // namespace
}  // namespace test
}  // namespace onnxmini
