// The nchwc_layout rule (runtime/graph_layout_nchwc.h): which nodes go into the blocked
// layout (regions of at least two Convs or one heavy dense Conv, with their elementwise ops, per-channel constants,
// Concat / Split on channels), where the reorders go (entries, values read outside, graph
// outputs), the near-misses that stay in NCHW, level 2 and ONNXMINI_NCHWC=0 leaving the graph
// alone, and the saved model staying plain ONNX; every model's outputs against the reference
// kernels at level 0.
#include <gtest/gtest.h>

#include <filesystem>
#include <functional>
#include <string>
#include <unistd.h>

#include "core/cpu_features.h"
#include "kernels/nn/nchwc_conv.h"
#include "runtime/graph_layout_nchwc.h"
#include "tests/common/fusion_test_util.h"
#include "tests/common/simd_isas.h"

namespace onnxmini {
namespace test {
namespace {

// The structural tests look at regions without the cost rule (which wants several Convs and
// few reorders per Conv); the CostRule tests check it.
class NoCostRule {
 public:
  NoCostRule() { set_nchwc_cost_rule_for_tests(false); }
  ~NoCostRule() { set_nchwc_cost_rule_for_tests(true); }
};

size_t count(Session& s, const std::string& op) {
  size_t n = 0;
  for (const NodeDescription& node : s.describe().nodes) n += node.op_type == op;
  return n;
}

// Conv of `in` (C channels) to M channels, k x k, padding k / 2, stride s, weights seeded.
void conv(ModelBuilder& mb, const std::string& in, const std::string& out, int64_t C, int64_t M, int64_t k,
          uint32_t seed, int64_t group = 1, int64_t s = 1) {
  const std::string w = out + "_W", b = out + "_B";
  mb.initializer(w, random_tensor(DType::Float32, {M, C / group, k, k}, seed, -0.3, 0.3));
  mb.initializer(b, random_tensor(DType::Float32, {M}, seed + 1));
  mb.node("Conv", {in, w, b}, {out})
      .name(out)
      .attr("pads", std::vector<int64_t>{k / 2, k / 2, k / 2, k / 2})
      .attr("strides", std::vector<int64_t>{s, s})
      .attr("group", group);
}

// Level 99 (fast, 1 and 2 threads) against level 0 with the reference kernels.
void expect_same_outputs(const ModelBuilder& mb, const Shape& x_shape, int64_t k) {
  const std::vector<std::pair<std::string, Tensor>> feeds{{"X", random_tensor(DType::Float32, x_shape, 9)}};
  auto ref = mb.session(opts(0, KernelMode::Reference));
  const auto want = run_all(*ref, feeds);
  for (int threads : {1, 2}) {
    auto s = mb.session(opts(ORT_ENABLE_ALL, KernelMode::Fast, threads));
    const auto got = run_all(*s, feeds);
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i) {
      ASSERT_EQ(got[i].shape(), want[i].shape()) << "output " << i;
      EXPECT_TRUE(tensors_near(got[i], want[i], reduction_atol(DType::Float32, k), 1e-4)) << "output " << i;
    }
  }
}

// X [1, 16, 12, 12] -> Conv 3x3 -> Relu -> Conv 3x3 -> Relu -> Mul([1, 32, 1, 1] const) -> Sigmoid
// -> Y. (The Relu keeps the Mul out of the Conv: conv_scale_shift would fold it into W.)
ModelBuilder chain_model() {
  ModelBuilder mb(17);
  mb.input("X", DType::Float32, {1, 16, 12, 12});
  conv(mb, "X", "c1", 16, 32, 3, 1);
  mb.node("Relu", {"c1"}, {"r1"});
  conv(mb, "r1", "c2", 32, 32, 3, 3);
  mb.node("Relu", {"c2"}, {"r2"});
  mb.initializer("scale", random_tensor(DType::Float32, {1, 32, 1, 1}, 5));
  mb.node("Mul", {"r2", "scale"}, {"m"});
  mb.node("Sigmoid", {"m"}, {"Y"});
  mb.output("Y");
  return mb;
}

TEST(NchwcLayout, ConvChainRunsBlockedWithOneReorderEachEnd) {
  NoCostRule no_rule;
  const ModelBuilder mb = chain_model();
  auto s = mb.session(opts(ORT_ENABLE_ALL));
  EXPECT_EQ(count(*s, "NchwcConv"), 2u);
  EXPECT_EQ(count(*s, "Conv"), 0u);
  EXPECT_EQ(count(*s, "ReorderToBlocked"), 1u);
  EXPECT_EQ(count(*s, "ReorderFromBlocked"), 1u);
  EXPECT_EQ(count(*s, "Mul"), 1u);  // on blocked data, its constant rewritten to [1, 2, 1, 1, 16]
  auto layout = mb.session(opts(ORT_ENABLE_LAYOUT));
  EXPECT_EQ(count(*layout, "NchwcConv"), 2u) << "level 3 applies the rule too";
  expect_same_outputs(mb, {1, 16, 12, 12}, 32 * 9 + 2);
}

TEST(NchwcLayout, Level2AndTheSwitchLeaveTheGraphAlone) {
  NoCostRule no_rule;
  const ModelBuilder mb = chain_model();
  auto extended = mb.session(opts(ORT_ENABLE_EXTENDED));
  EXPECT_EQ(count(*extended, "NchwcConv"), 0u);
  EXPECT_EQ(count(*extended, "Conv"), 2u);
  set_nchwc_layout_enabled_for_tests(false);
  auto off = mb.session(opts(ORT_ENABLE_ALL));
  reset_nchwc_layout_override();
  EXPECT_EQ(count(*off, "NchwcConv"), 0u);
  EXPECT_EQ(count(*off, "ReorderToBlocked"), 0u);
}

TEST(NchwcLayout, LoneConvStaysNchw) {  // the cost rule: 2 Convs, or one heavy one (16 -> 32 3x3: intensity 192)
  ModelBuilder mb(17);
  mb.input("X", DType::Float32, {1, 16, 10, 10});
  conv(mb, "X", "c1", 16, 32, 3, 1);
  mb.node("Relu", {"c1"}, {"Y"});
  mb.output("Y");
  auto s = mb.session(opts(ORT_ENABLE_ALL));
  EXPECT_EQ(count(*s, "NchwcConv"), 0u);
  EXPECT_EQ(count(*s, "ReorderToBlocked"), 0u);
}

TEST(NchwcLayout, NearMissesStayNchw) {
  NoCostRule no_rule;
  // 3 input channels (16 padded: 5.3x the work), a grouped Conv (group 2, not depthwise),
  // a Conv with a filter that is a graph input: none of them is blocked.
  ModelBuilder mb(17);
  mb.input("X", DType::Float32, {1, 3, 10, 10});
  mb.input("Wdyn", DType::Float32, {32, 32, 3, 3});
  conv(mb, "X", "c1", 3, 32, 3, 1);
  conv(mb, "c1", "c2", 32, 32, 3, 3, /*group=*/2);
  mb.node("Conv", {"c2", "Wdyn"}, {"Y"}).attr("pads", std::vector<int64_t>{1, 1, 1, 1});
  mb.output("Y");
  auto s = mb.session(opts(ORT_ENABLE_ALL));
  EXPECT_EQ(count(*s, "NchwcConv"), 0u);
  EXPECT_EQ(count(*s, "Conv"), 3u);
}

TEST(NchwcLayout, ValuesReadOutsideGetAReorderAndKeepTheirNames) {
  NoCostRule no_rule;
  // c1 -> c2 -> c3 in one region; r1 is also a graph output and feeds an LpPool (no blocked
  // kernel), whose result re-enters the region through c4 and a Sub with c3.
  ModelBuilder mb(17);
  mb.input("X", DType::Float32, {1, 16, 8, 8});
  conv(mb, "X", "c1", 16, 16, 3, 1);
  mb.node("Relu", {"c1"}, {"r1"});
  conv(mb, "r1", "c2", 16, 16, 3, 3);
  conv(mb, "c2", "c3", 16, 16, 1, 5);
  mb.node("LpPool", {"r1"}, {"p"})
      .attr("kernel_shape", std::vector<int64_t>{3, 3})
      .attr("pads", std::vector<int64_t>{1, 1, 1, 1});
  conv(mb, "p", "c4", 16, 16, 1, 7);
  mb.node("Sub", {"c3", "c4"}, {"d"});  // both blocked: one region through the Sub
  conv(mb, "d", "Y", 16, 16, 3, 9);
  mb.output("r1");
  mb.output("Y");
  auto s = mb.session(opts(ORT_ENABLE_ALL));
  EXPECT_EQ(count(*s, "NchwcConv"), 5u);
  EXPECT_EQ(count(*s, "ReorderToBlocked"), 2u);    // X, and the LpPool's output
  EXPECT_EQ(count(*s, "ReorderFromBlocked"), 2u);  // r1 (graph output and LpPool input), Y
  const auto outs = s->describe().outputs;
  ASSERT_EQ(outs.size(), 2u);
  EXPECT_EQ(outs[0].name, "r1");
  expect_same_outputs(mb, {1, 16, 8, 8}, 16 * 9 * 4);
}

TEST(NchwcLayout, ConcatSplitAndResidualInsideTheRegion) {
  NoCostRule no_rule;
  // c1 (32) -> Split [16, 16] -> c2(a), c3(b) -> Concat -> c4 (+ residual Z = c1: conv_add)
  ModelBuilder mb(13);
  mb.input("X", DType::Float32, {1, 32, 9, 11});
  conv(mb, "X", "c1", 32, 32, 3, 1);
  mb.initializer("sizes", Tensor::from_vector<int64_t>({2}, {16, 16}));
  mb.node("Split", {"c1", "sizes"}, {"a", "b"}).attr("axis", int64_t{1});
  conv(mb, "a", "c2", 16, 16, 3, 3);
  conv(mb, "b", "c3", 16, 16, 3, 5, /*group=*/16);  // depthwise
  mb.node("Concat", {"c2", "c3"}, {"cat"}).attr("axis", int64_t{-3});
  conv(mb, "cat", "c4", 32, 32, 1, 7);
  mb.node("Add", {"c4", "c1"}, {"Y"});
  mb.output("Y");
  auto s = mb.session(opts(ORT_ENABLE_ALL));
  EXPECT_EQ(count(*s, "NchwcConv"), 4u);
  EXPECT_EQ(count(*s, "ReorderToBlocked"), 1u);
  EXPECT_EQ(count(*s, "ReorderFromBlocked"), 1u);
  EXPECT_EQ(count(*s, "Split"), 1u);
  EXPECT_EQ(count(*s, "Concat"), 1u);
  EXPECT_EQ(count(*s, "Add"), 1u);  // kept blocked: in NCHW it would need two reorders, not one
  expect_same_outputs(mb, {1, 32, 9, 11}, 32 * 9 * 3);
}

TEST(NchwcLayout, ChannelsNotMultipleOf16EndTheRegionAtConcat) {
  NoCostRule no_rule;
  // Concat of two 24-channel values cannot stay blocked (the padding would sit mid-tensor).
  ModelBuilder mb(13);
  mb.input("X", DType::Float32, {1, 24, 6, 6});
  conv(mb, "X", "c1", 24, 24, 3, 1);
  conv(mb, "c1", "c2", 24, 24, 3, 3);
  mb.node("Concat", {"c1", "c2"}, {"cat"}).attr("axis", int64_t{1});
  conv(mb, "cat", "c3", 48, 48, 1, 5);
  conv(mb, "c3", "Y", 48, 48, 1, 7);
  mb.output("Y");
  auto s = mb.session(opts(ORT_ENABLE_ALL));
  EXPECT_EQ(count(*s, "NchwcConv"), 4u);  // two regions of two Convs each
  EXPECT_EQ(count(*s, "ReorderToBlocked"), 2u);
  EXPECT_EQ(count(*s, "ReorderFromBlocked"), 3u);  // c1 and c2 for the Concat, Y
  expect_same_outputs(mb, {1, 24, 6, 6}, 48 * 9);
}

// A chain of `convs` Convs of 32 channels; every second one depthwise when `depthwise`.
ModelBuilder conv_chain(int convs, bool depthwise) {
  ModelBuilder mb(17);
  mb.input("X", DType::Float32, {1, 32, 10, 10});
  std::string in = "X";
  for (int i = 0; i < convs; ++i) {
    const std::string out = i + 1 == convs ? "Y" : "c" + std::to_string(i);
    conv(mb, in, out, 32, 32, 3, 10 + 2 * i, depthwise && i % 2 == 1 ? 32 : 1);
    in = out;
  }
  mb.output("Y");
  return mb;
}

TEST(NchwcLayout, CostRuleWantsFewReorders) {
  // Dense / pointwise only: blocked on every ISA (at parity or faster than NCHW on AVX-512,
  // faster on AVX2: docs/performance.md "Blocked layout (NCHW16c)").
  for (cpu::Isa isa : {cpu::Isa::Avx512, cpu::Isa::Avx2, cpu::Isa::Portable}) {
    const bool supported = isa == cpu::Isa::Avx512 ? cpu::hw_has_avx512()
                           : isa == cpu::Isa::Avx2 ? cpu::hw_has_avx2_fma()
                                                   : true;
    if (!supported) continue;
    nn::set_nchwc_isa_for_tests(isa);
    auto dense = conv_chain(4, false).session(opts(ORT_ENABLE_ALL));
    EXPECT_EQ(count(*dense, "NchwcConv"), 4u) << cpu::isa_name(isa);
    auto short_dense = conv_chain(3, false).session(opts(ORT_ENABLE_ALL));
    EXPECT_EQ(count(*short_dense, "NchwcConv"), 0u) << cpu::isa_name(isa);
  }
  nn::set_nchwc_isa_for_tests(cpu::active_isa());
  // With depthwise layers and 2 reorders for 4 Convs: blocked.
  const ModelBuilder mixed = conv_chain(4, true);
  auto s = mixed.session(opts(ORT_ENABLE_ALL));
  EXPECT_EQ(count(*s, "NchwcConv"), 4u);
  EXPECT_EQ(count(*s, "ReorderToBlocked") + count(*s, "ReorderFromBlocked"), 2u);
  expect_same_outputs(mixed, {1, 32, 10, 10}, 32 * 9 * 2);
  // 2 reorders for 3 Convs: more than 0.5 per Conv, stays NCHW.
  auto short_chain = conv_chain(3, true).session(opts(ORT_ENABLE_ALL));
  EXPECT_EQ(count(*short_chain, "NchwcConv"), 0u);
}

// A lone dense Conv with enough flops per element its two reorders move (2 K^2 Cin Cout /
// (Cin s^2 + Cout) >= 500) is blocked; a light one, a depthwise one and a wide 1x1 stay NCHW.
// A lone 3x3 stride-1 Conv that runs as Winograd pays from intensity 250: on AVX-512 with more
// than 16 input channels, on AVX2 and portable with at least 32 input and 32 output channels.
TEST(NchwcLayout, LoneHeavyConvIsBlocked) {
  struct Case {
    int64_t C, M, k, group, s;
    bool blocked_avx512, blocked_avx2;
  } cases[] = {
      {96, 96, 3, 1, 1, true, true},        // intensity 864
      {64, 64, 3, 1, 1, true, true},        // 576
      {192, 384, 3, 1, 2, true, true},      // 1152
      {16, 32, 3, 1, 2, false, false},      // 96
      {128, 128, 5, 128, 1, false, false},  // depthwise
      {768, 384, 1, 1, 1, false, false},    // 1x1 (512, but 1x1 stays out of the rule)
      // Winograd-able: 3x3, stride 1.
      {96, 24, 3, 1, 1, true, false},   // 345; 24 outputs: AVX2 lost
      {32, 32, 3, 1, 1, true, true},    // 288
      {24, 48, 3, 1, 1, true, false},   // 288; 24 inputs: no Winograd on AVX2
      {48, 24, 3, 1, 1, true, false},   // 288; 24 outputs
      {24, 24, 3, 1, 1, false, false},  // 216, below 250
      {16, 32, 3, 1, 1, false, false},  // 192; one input block: never Winograd
      {32, 16, 3, 1, 1, false, false},  // 192
  };
  // A 1-D kernel (5x1, intensity 1707) on a one-pixel-wide image stays NCHW too.
  {
    ModelBuilder mb(17);
    mb.input("X", DType::Float32, {1, 256, 64, 1});
    mb.initializer("W", random_tensor(DType::Float32, {512, 256, 5, 1}, 77, -0.1, 0.1));
    mb.node("Conv", {"X", "W"}, {"Y"}).name("c").attr("pads", std::vector<int64_t>{2, 0, 2, 0});
    mb.output("Y");
    auto s = mb.session(opts(ORT_ENABLE_ALL));
    EXPECT_EQ(count(*s, "NchwcConv"), 0u);
  }
  for (cpu::Isa isa : isa_levels()) {
    nn::set_nchwc_isa_for_tests(isa);
    uint32_t seed = 40;
    for (const Case& c : cases) {
      SCOPED_TRACE(std::to_string(c.C) + " -> " + std::to_string(c.M) + " k" + std::to_string(c.k) + " g" +
                   std::to_string(c.group) + " s" + std::to_string(c.s) + " " + cpu::isa_name(isa));
      const bool blocked = isa == cpu::Isa::Avx512 ? c.blocked_avx512 : c.blocked_avx2;
      ModelBuilder mb(17);
      mb.input("X", DType::Float32, {1, c.C, 12, 10});
      conv(mb, "X", "Y", c.C, c.M, c.k, seed += 3, c.group, c.s);
      mb.output("Y");
      auto s = mb.session(opts(ORT_ENABLE_ALL));
      EXPECT_EQ(count(*s, "NchwcConv"), blocked ? 1u : 0u);
      EXPECT_EQ(count(*s, "ReorderToBlocked") + count(*s, "ReorderFromBlocked"), blocked ? 2u : 0u);
      if (blocked) expect_same_outputs(mb, {1, c.C, 12, 10}, c.C * c.k * c.k + 1);
    }
  }
  nn::set_nchwc_isa_for_tests(cpu::active_isa());
}

// PP-LCNetV3's block after the folds of level 2: Conv 1x1 -> `act` -> Mul(scalar) -> Add(per-channel
// [1, 32, 1, 1]) -> a padded depthwise 3x3 Conv (no weight fold can take the affine) -> Relu ->
// Sub(scalar) -> a padded 3x3 Conv. nchwc_output_affine moves each affine into the NchwcConv
// before it, after its activation (in registers, or after the row for Sigmoid); every ISA, 1
// and 2 threads.
ModelBuilder output_affine_model(const std::string& act) {
  ModelBuilder mb(17);
  mb.input("X", DType::Float32, {1, 32, 9, 14});
  conv(mb, "X", "c1", 32, 32, 1, 1);
  mb.node(act, {"c1"}, {"a1"});
  mb.initializer("s", Tensor::from_vector<float>({1}, {0.37f}));
  mb.initializer("d", random_tensor(DType::Float32, {1, 32, 1, 1}, 3));
  mb.node("Mul", {"s", "a1"}, {"m1"});
  mb.node("Add", {"m1", "d"}, {"x1"});
  conv(mb, "x1", "c2", 32, 32, 3, 5, /*group=*/32);
  mb.node("Relu", {"c2"}, {"r2"});
  mb.initializer("e", Tensor::from_vector<float>({1}, {0.25f}));
  mb.node("Sub", {"r2", "e"}, {"x2"});
  conv(mb, "x2", "Y", 32, 32, 3, 7);
  mb.output("Y");
  return mb;
}

TEST(NchwcLayout, OutputAffineMovesIntoTheConvBefore) {
  NoCostRule no_rule;
  for (const char* act : {"HardSwish", "Relu", "Sigmoid"})
    for (cpu::Isa isa : isa_levels()) {
      nn::set_nchwc_isa_for_tests(isa);
      SCOPED_TRACE(std::string(act) + " " + cpu::isa_name(isa));
      const ModelBuilder mb = output_affine_model(act);
      auto s = mb.session(opts(ORT_ENABLE_ALL));
      EXPECT_EQ(count(*s, "NchwcConv"), 3u);
      EXPECT_EQ(count(*s, "Mul") + count(*s, "Add") + count(*s, "Sub"), 0u);
      auto level2 = mb.session(opts(ORT_ENABLE_EXTENDED));  // the affine ops before the rule
      EXPECT_EQ(count(*level2, "Mul") + count(*level2, "Add") + count(*level2, "Sub"), 3u);
      expect_same_outputs(mb, {1, 32, 9, 14}, 32 * 9 + 2);
    }
  nn::set_nchwc_isa_for_tests(cpu::active_isa());
}

TEST(NchwcLayout, SavedModelHasNoLayoutOps) {
  NoCostRule no_rule;
  const ModelBuilder mb = chain_model();
  SessionOptions o = opts(ORT_ENABLE_ALL);
  o.optimized_model_filepath =
      (std::filesystem::temp_directory_path() / ("onnxmini_nchwc_" + std::to_string(::getpid()) + ".onnx")).string();
  auto s = mb.session(o);
  EXPECT_EQ(count(*s, "NchwcConv"), 2u);
  auto saved = Session::load(o.optimized_model_filepath, opts(ORT_DISABLE_ALL));
  std::remove(o.optimized_model_filepath.c_str());
  for (const NodeDescription& n : saved->describe().nodes) EXPECT_NE(n.domain, "ai.onnxmini") << n.op_type;
  EXPECT_EQ(count(*saved, "Conv"), 2u);
}

// YOLO's SPPF: Conv -> MaxPool 5x5 s1 (three times) -> Concat of the four -> Conv. The pools
// run blocked, so the region is one piece with one reorder each end.
TEST(NchwcLayout, SppfMaxPoolsStayInTheRegion) {
  NoCostRule no_rule;
  ModelBuilder mb(17);
  mb.input("X", DType::Float32, {1, 16, 10, 10});
  conv(mb, "X", "c1", 16, 32, 1, 1);
  std::string prev = "c1";
  for (const char* m : {"m1", "m2", "m3"}) {
    mb.node("MaxPool", {prev}, {m})
        .attr("kernel_shape", std::vector<int64_t>{5, 5})
        .attr("pads", std::vector<int64_t>{2, 2, 2, 2})
        .attr("strides", std::vector<int64_t>{1, 1});
    prev = m;
  }
  mb.node("Concat", {"c1", "m1", "m2", "m3"}, {"cat"}).attr("axis", int64_t{1});
  conv(mb, "cat", "Y", 128, 32, 1, 3);
  mb.output("Y");
  auto s = mb.session(opts(ORT_ENABLE_ALL));
  EXPECT_EQ(count(*s, "NchwcMaxPool"), 3u);
  EXPECT_EQ(count(*s, "MaxPool"), 0u);
  EXPECT_EQ(count(*s, "ReorderToBlocked"), 1u);
  EXPECT_EQ(count(*s, "ReorderFromBlocked"), 1u);
  expect_same_outputs(mb, {1, 16, 10, 10}, 128 + 2);
}

// The scales of a Resize as a [4] constant.
void resize_scales(ModelBuilder& mb, const std::string& name, std::vector<float> v) {
  Tensor t(DType::Float32, {4});
  std::copy(v.begin(), v.end(), t.mutable_data<float>());
  mb.initializer(name, std::move(t));
}

// A YOLO neck: Conv -> nearest Resize x2 -> Concat with a Conv at that size -> Conv, and an
// AveragePool on the way.
TEST(NchwcLayout, NearestResizeAndAveragePoolStayInTheRegion) {
  NoCostRule no_rule;
  ModelBuilder mb(13);
  mb.input("X", DType::Float32, {1, 16, 12, 12});
  conv(mb, "X", "big", 16, 16, 3, 1);
  conv(mb, "big", "small", 16, 32, 3, 3, 1, 2);
  resize_scales(mb, "sc", {1, 1, 2, 2});
  mb.initializer("roi", Tensor(DType::Float32, {0}));
  mb.node("Resize", {"small", "roi", "sc"}, {"up"})
      .attr("mode", std::string("nearest"))
      .attr("coordinate_transformation_mode", std::string("asymmetric"))
      .attr("nearest_mode", std::string("floor"));
  mb.node("Concat", {"big", "up"}, {"cat"}).attr("axis", int64_t{1});
  mb.node("AveragePool", {"cat"}, {"avg"})
      .attr("kernel_shape", std::vector<int64_t>{3, 3})
      .attr("pads", std::vector<int64_t>{1, 1, 1, 1})
      .attr("strides", std::vector<int64_t>{2, 2});
  conv(mb, "avg", "Y", 48, 16, 1, 5);
  mb.output("Y");
  auto s = mb.session(opts(ORT_ENABLE_ALL));
  EXPECT_EQ(count(*s, "NchwcResize"), 1u);
  EXPECT_EQ(count(*s, "NchwcAveragePool"), 1u);
  EXPECT_EQ(count(*s, "Resize"), 0u);
  EXPECT_EQ(count(*s, "ReorderToBlocked"), 1u);
  EXPECT_EQ(count(*s, "ReorderFromBlocked"), 1u);
  expect_same_outputs(mb, {1, 16, 12, 12}, 32 * 9 + 48 + 2);
}

// A squeeze-and-excite-like block: depthwise Conv -> Global{Average,Max}Pool -> 1x1 Conv ->
// Relu -> 1x1 Conv -> HardSigmoid -> Mul with the depthwise output -> 1x1 Conv. With the
// average it is a MobileNetV3 SE block, fused into SqueezeExcite at level 2 and run as
// NchwcSqueezeExcite; with the max nothing fuses: the pooled value stays blocked
// ([1, Cb, 1, 1, 16]), the 1x1 Convs run on it and the Mul broadcasts it inside the region.
ModelBuilder se_model(const char* pool) {
  ModelBuilder mb(17);
  mb.input("X", DType::Float32, {1, 64, 9, 9});
  conv(mb, "X", "dw", 64, 64, 3, 1, 64);
  mb.node(pool, {"dw"}, {"gap"});
  conv(mb, "gap", "sq", 64, 16, 1, 3);
  mb.node("Relu", {"sq"}, {"sqr"});
  conv(mb, "sqr", "ex", 16, 64, 1, 5);
  mb.node("HardSigmoid", {"ex"}, {"gate"}).attr("alpha", 1.0f / 6).attr("beta", 0.5f);
  mb.node("Mul", {"dw", "gate"}, {"se"});
  conv(mb, "se", "Y", 64, 32, 1, 7);
  mb.output("Y");
  return mb;
}

TEST(NchwcLayout, FusedSqueezeExciteStaysInTheRegion) {
  NoCostRule no_rule;
  const ModelBuilder mb = se_model("GlobalAveragePool");
  auto s = mb.session(opts(ORT_ENABLE_ALL));
  EXPECT_EQ(count(*s, "NchwcSqueezeExcite"), 1u);
  EXPECT_EQ(count(*s, "SqueezeExcite"), 0u);
  EXPECT_EQ(count(*s, "NchwcConv"), 2u);
  EXPECT_EQ(count(*s, "ReorderToBlocked"), 1u);
  EXPECT_EQ(count(*s, "ReorderFromBlocked"), 1u);
  expect_same_outputs(mb, {1, 64, 9, 9}, 81 + 64 * 9 + 2);
}

TEST(NchwcLayout, GlobalPoolAndItsBroadcastMulStayInTheRegion) {
  NoCostRule no_rule;
  const ModelBuilder mb = se_model("GlobalMaxPool");
  auto s = mb.session(opts(ORT_ENABLE_ALL));
  EXPECT_EQ(count(*s, "NchwcGlobalMaxPool"), 1u);
  EXPECT_EQ(count(*s, "NchwcConv"), 4u);
  EXPECT_EQ(count(*s, "ReorderToBlocked"), 1u);
  EXPECT_EQ(count(*s, "ReorderFromBlocked"), 1u);
  expect_same_outputs(mb, {1, 64, 9, 9}, 81 + 64 * 9 + 2);
}

// Pools and Resizes the blocked kernels do not compute exactly stay in NCHW (the region ends
// before them): MaxPool with its Indices output or storage_order 1, linear Resize, a Resize
// whose scales are a graph input or change the channel count, a Resize given sizes.
TEST(NchwcLayout, PoolAndResizeNearMissesStayNchw) {
  NoCostRule no_rule;
  struct Miss {
    const char* what;
    std::function<void(ModelBuilder&)> add;  // reads "c2", writes "Y"
    Shape y;
  };
  auto nearest = [](NodeBuilder nb) { nb.attr("mode", std::string("nearest")); };
  const std::vector<Miss> misses{
      {"MaxPool with Indices",
       [](ModelBuilder& mb) {
         mb.node("MaxPool", {"c2"}, {"Y", "idx"}).attr("kernel_shape", std::vector<int64_t>{2, 2});
         mb.output("idx");
       },
       {}},
      {"MaxPool storage_order 1",
       [](ModelBuilder& mb) {
         mb.node("MaxPool", {"c2"}, {"Y"})
             .attr("kernel_shape", std::vector<int64_t>{2, 2})
             .attr("storage_order", int64_t{1});
       },
       {}},
      {"linear Resize",
       [](ModelBuilder& mb) {
         resize_scales(mb, "sc", {1, 1, 2, 2});
         mb.node("Resize", {"c2", "", "sc"}, {"Y"}).attr("mode", std::string("linear"));
       },
       {}},
      {"Resize scaling channels",
       [&](ModelBuilder& mb) {
         resize_scales(mb, "sc", {1, 2, 2, 2});
         nearest(mb.node("Resize", {"c2", "", "sc"}, {"Y"}));
       },
       {}},
      {"Resize with scales from a graph input",
       [&](ModelBuilder& mb) {
         mb.input("sc", DType::Float32, {4});
         nearest(mb.node("Resize", {"c2", "", "sc"}, {"Y"}));
       },
       {}},
      {"Resize with sizes",
       [&](ModelBuilder& mb) {
         Tensor sz(DType::Int64, {4});
         const int64_t v[4] = {1, 32, 16, 16};
         std::copy(v, v + 4, sz.mutable_data<int64_t>());
         mb.initializer("sz", std::move(sz));
         nearest(mb.node("Resize", {"c2", "", "", "sz"}, {"Y"}));
       },
       {}},
  };
  for (const Miss& m : misses) {
    SCOPED_TRACE(m.what);
    ModelBuilder mb(13);
    mb.input("X", DType::Float32, {1, 16, 8, 8});
    conv(mb, "X", "c1", 16, 32, 3, 1);
    conv(mb, "c1", "c2", 32, 32, 3, 3);
    m.add(mb);
    mb.output("Y");
    auto s = mb.session(opts(ORT_ENABLE_ALL));
    EXPECT_EQ(count(*s, "NchwcConv"), 2u);
    EXPECT_EQ(count(*s, "ReorderFromBlocked"), 1u) << "the region ends at c2";
    EXPECT_EQ(count(*s, "NchwcMaxPool") + count(*s, "NchwcResize"), 0u);
    if (std::string(m.what).find("graph input") == std::string::npos) expect_same_outputs(mb, {1, 16, 8, 8}, 32 * 9 + 2);
  }
}

}  // namespace
}  // namespace test
}  // namespace onnxmini
