// NchwcConv + ReorderToBlocked / ReorderFromBlocked (kernels/nn/nchwc_*.cc): the chain
// ReorderToBlocked -> NchwcConv -> ReorderFromBlocked against the plain Conv (reference
// kernels, followed by the plain Add / activation ops), on every ISA level the machine
// has (portable, AVX2, AVX-512 through set_nchwc_isa_for_tests): odd channel counts
// (padding channels), strides 1/2, pads (symmetric, asymmetric, auto_pad), dilations,
// 1x1 / 3x3 / 5x5 / 7x7, depthwise, every fused activation, the residual Z, N > 1, tiny
// planes, 1 and 2 threads; the reorders round-trip exactly; errors name the node.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <sstream>

#include "core/cpu_features.h"
#include "kernels/nn/nchwc_conv.h"
#include "tests/common/fusion_test_util.h"
#include "tests/common/simd_isas.h"

namespace onnxmini {
namespace test {
namespace {

struct NcCase {
  Shape x;  // N x C x H x W
  int64_t M = 16, kh = 3, kw = 3;
  std::vector<int64_t> strides{1, 1}, dilations{1, 1}, pads{1, 1, 1, 1};
  std::string auto_pad;  // "" : explicit pads
  bool depthwise = false, bias = true, residual = false;
  std::string act;  // "", Relu, Clip, HardSigmoid, HardSwish, Sigmoid, PRelu, Gelu, GeluTanh, Swish, QuickGelu
};

std::string describe(const NcCase& c) {
  std::ostringstream s;
  s << "x=" << shape_to_string(c.x) << " M=" << c.M << " k=" << c.kh << "x" << c.kw << " s=" << c.strides[0] << ","
    << c.strides[1] << " d=" << c.dilations[0] << "," << c.dilations[1] << " pads=" << c.pads[0] << "," << c.pads[1]
    << "," << c.pads[2] << "," << c.pads[3] << " auto_pad=" << c.auto_pad << " dw=" << c.depthwise
    << " bias=" << c.bias << " z=" << c.residual << " act=" << c.act;
  return s.str();
}

int64_t out_dim(int64_t in, int64_t k, int64_t s, int64_t d, int64_t pb, int64_t pe, const std::string& auto_pad) {
  if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") return (in + s - 1) / s;
  if (auto_pad == "VALID") pb = pe = 0;
  return (in + pb + pe - (k - 1) * d - 1) / s + 1;
}

Shape y_shape(const NcCase& c) {
  return {c.x[0], c.M, out_dim(c.x[2], c.kh, c.strides[0], c.dilations[0], c.pads[0], c.pads[2], c.auto_pad),
          out_dim(c.x[3], c.kw, c.strides[1], c.dilations[1], c.pads[1], c.pads[3], c.auto_pad)};
}

void conv_attrs(NodeBuilder& nb, const NcCase& c) {
  nb.attr("strides", c.strides).attr("dilations", c.dilations).attr("group", c.depthwise ? c.x[1] : int64_t{1});
  if (c.auto_pad.empty()) nb.attr("pads", c.pads);
  else nb.attr("auto_pad", c.auto_pad);
}

void add_weights(ModelBuilder& mb, const NcCase& c, uint32_t seed) {
  const int64_t cg = c.depthwise ? 1 : c.x[1];
  mb.initializer("W", random_tensor(DType::Float32, {c.M, cg, c.kh, c.kw}, seed));
  if (c.bias) mb.initializer("B", random_tensor(DType::Float32, {c.M}, seed + 1));
  if (c.act == "PRelu") mb.initializer("slope", random_tensor(DType::Float32, {c.M, 1, 1}, seed + 2, 0.0, 0.5));
}

std::vector<float> slopes_of(const NcCase& c, uint32_t seed) {
  const Tensor s = random_tensor(DType::Float32, {c.M, 1, 1}, seed + 2, 0.0, 0.5);
  return std::vector<float>(s.data<float>(), s.data<float>() + c.M);
}

// The plain model: Conv [-> Add(Z)] [-> activation op(s)].
ModelBuilder plain_model(const NcCase& c, uint32_t seed) {
  ModelBuilder mb(20);
  mb.input("X", DType::Float32, c.x);
  if (c.residual) mb.input("Z", DType::Float32, y_shape(c));
  add_weights(mb, c, seed);
  std::vector<std::string> in{"X", "W"};
  if (c.bias) in.push_back("B");
  conv_attrs(mb.node("Conv", in, {"conv"}).name("conv"), c);
  std::string y = "conv";
  if (c.residual) mb.node("Add", {y, "Z"}, {"sum"}), y = "sum";
  if (c.act == "Clip") {
    mb.initializer("lo", Tensor::scalar(-0.25f)).initializer("hi", Tensor::scalar(0.5f));
    mb.node("Clip", {y, "lo", "hi"}, {"Y"});
  } else if (c.act == "HardSigmoid") {
    mb.node("HardSigmoid", {y}, {"Y"}).attr("alpha", 0.3f).attr("beta", 0.4f);
  } else if (c.act == "PRelu") {
    mb.node("PRelu", {y, "slope"}, {"Y"});
  } else if (c.act == "Swish") {
    mb.node("Sigmoid", {y}, {"sig"});
    mb.node("Mul", {y, "sig"}, {"Y"});
  } else if (c.act == "QuickGelu") {  // x * sigmoid(1.702 x): Swish with alpha 1.702
    mb.initializer("qa", Tensor::scalar(1.702f));
    mb.node("Mul", {y, "qa"}, {"ax"});
    mb.node("Sigmoid", {"ax"}, {"sig"});
    mb.node("Mul", {y, "sig"}, {"Y"});
  } else if (c.act == "GeluTanh") {
    mb.node("Gelu", {y}, {"Y"}).attr("approximate", std::string("tanh"));
  } else if (!c.act.empty()) {
    mb.node(c.act, {y}, {"Y"});
  } else {
    mb.node("Identity", {y}, {"Y"});
  }
  mb.output("Y");
  return mb;
}

// The blocked model: ReorderToBlocked -> NchwcConv (fused epilogue) -> ReorderFromBlocked.
ModelBuilder blocked_model(const NcCase& c, uint32_t seed) {
  ModelBuilder mb(20);
  mb.import_domain("ai.onnxmini", 1);
  mb.input("X", DType::Float32, c.x);
  if (c.residual) mb.input("Z", DType::Float32, y_shape(c));
  add_weights(mb, c, seed);
  mb.node("ReorderToBlocked", {"X"}, {"xb"}).domain("ai.onnxmini");
  std::vector<std::string> in{"xb", "W", c.bias ? "B" : ""};
  if (c.residual) {
    mb.node("ReorderToBlocked", {"Z"}, {"zb"}).domain("ai.onnxmini");
    in.push_back("zb");
  }
  NodeBuilder nb = mb.node("NchwcConv", in, {"yb"}).domain("ai.onnxmini").name("nc");
  conv_attrs(nb, c);
  nb.attr("channels", c.M);
  if (c.residual) nb.attr("_fused_residual", int64_t{1});
  if (c.act == "QuickGelu") nb.attr("_fused_activation", std::string("Swish")).attr("_fused_activation_params", std::vector<float>{1.702f});
  else if (!c.act.empty()) nb.attr("_fused_activation", c.act);
  if (c.act == "Clip") nb.attr("_fused_activation_params", std::vector<float>{-0.25f, 0.5f});
  if (c.act == "HardSigmoid") nb.attr("_fused_activation_params", std::vector<float>{0.3f, 0.4f});
  if (c.act == "PRelu") nb.attr("_fused_activation_params", slopes_of(c, seed));
  mb.node("ReorderFromBlocked", {"yb"}, {"Y"}).domain("ai.onnxmini").attr("channels", c.M);
  mb.output("Y");
  return mb;
}

// What Session::explain (Kernel::describe) says NchwcConv "nc" will run, for a model whose input
// is X already blocked (so that explain knows its shape), and for one that blocks X itself
// (ReorderToBlocked's output shape is known only at run time).
std::pair<std::string, std::string> explained_variant(const NcCase& c, uint32_t seed) {
  ModelBuilder direct(20);
  direct.import_domain("ai.onnxmini", 1);
  direct.input("X", DType::Float32, {c.x[0], nn::nchwc_blocks(c.x[1]), c.x[2], c.x[3], 16});
  add_weights(direct, c, seed);
  NodeBuilder nb = direct.node("NchwcConv", {"X", "W", "B"}, {"Y"}).domain("ai.onnxmini").name("nc");
  conv_attrs(nb, c);
  nb.attr("channels", c.M);
  direct.output("Y");
  auto variant_of = [](const ModelBuilder& mb) {
    for (const auto& e : mb.session(opts(0))->explain())
      if (e.node == "nc") return e.variant;
    return std::string();
  };
  return {variant_of(direct), variant_of(blocked_model(c, seed))};
}

// The trace's kernel_variant and isa of node `node`.
std::pair<std::string, std::string> trace_variant(const ModelBuilder& mb,
                                                  const std::vector<std::pair<std::string, Tensor>>& feeds,
                                                  const std::string& node) {
  const std::string trace = profiled_trace(mb, opts(0), feeds);
  const size_t at = trace.find("\"" + node + "_kernel_time\"");
  return {trace_value(trace, "kernel_variant", at), trace_value(trace, "isa", at)};
}

class NchwcIsaGuard {
 public:
  ~NchwcIsaGuard() {
    nn::set_nchwc_isa_for_tests(cpu::active_isa());
    nn::set_nchwc_winograd_for_tests(-1);
  }
};

void check_case(const NcCase& c, uint32_t seed) {
  SCOPED_TRACE(describe(c));
  std::vector<std::pair<std::string, Tensor>> feeds{{"X", random_tensor(DType::Float32, c.x, seed + 10)}};
  if (c.residual) feeds.emplace_back("Z", random_tensor(DType::Float32, y_shape(c), seed + 11));
  auto ref = plain_model(c, seed).session(opts(0, KernelMode::Reference));
  const Tensor want = run_single(*ref, feeds);
  // Each output is a sum of k products of values in [-1, 1] (plus bias and Z).
  const int64_t k = (c.depthwise ? 1 : c.x[1]) * c.kh * c.kw + 2;
  const ModelBuilder blocked = blocked_model(c, seed);
  NchwcIsaGuard guard;
  // Winograd F(2x2, 3x3) (where the layer is 3x3, stride 1, dilation 1, dense) and the direct
  // kernel, each forced: its transforms add a few roundings per output (coefficients 0, +-1,
  // .5 over 4 x 4 values), well inside the tolerance of a k-term reduction.
  const bool winograd_able = !c.depthwise && c.kh == 3 && c.kw == 3 && c.strides == std::vector<int64_t>{1, 1} &&
                             c.dilations == std::vector<int64_t>{1, 1};
  for (cpu::Isa isa : isa_levels())
    for (int winograd : {0, 1}) {
      if (winograd == 1 && !winograd_able) continue;
      nn::set_nchwc_isa_for_tests(isa);
      nn::set_nchwc_winograd_for_tests(winograd);
      for (int threads : {1, 2}) {
        SCOPED_TRACE(std::string(cpu::isa_name(isa)) + " threads=" + std::to_string(threads) +
                     " winograd=" + std::to_string(winograd));
        auto s = blocked.session(opts(0, KernelMode::Fast, threads));
        const Tensor got = run_single(*s, feeds);
        ASSERT_EQ(got.shape(), want.shape());
        EXPECT_TRUE(tensors_near(got, want, reduction_atol(DType::Float32, k), 1e-4));
      }
    }
  nn::set_nchwc_winograd_for_tests(-1);
  auto reference_mode = blocked.session(opts(0, KernelMode::Reference));
  EXPECT_TRUE(tensors_near(run_single(*reference_mode, feeds), want, reduction_atol(DType::Float32, k), 1e-4))
      << "reference mode";
}

TEST(NchwcConv, DenseShapesMatchConv) {
  uint32_t seed = 100;
  for (int64_t C : {3, 16, 20, 35})
    for (int64_t M : {8, 16, 32, 40, 80}) {  // 40 and 80: 3 and 5 blocks (AVX-512's 3-block strips)
      NcCase c;
      c.x = {1, C, 9, 13};
      c.M = M;
      check_case(c, seed++);
    }
}

TEST(NchwcConv, KernelSizesStridesPadsDilations) {
  uint32_t seed = 200;
  struct G {
    int64_t k, s, d;
    std::vector<int64_t> pads;
  };
  for (const G& g : {G{1, 1, 1, {0, 0, 0, 0}}, G{1, 2, 1, {0, 0, 0, 0}}, G{1, 1, 1, {1, 0, 0, 1}},
                     G{3, 1, 1, {1, 1, 1, 1}}, G{3, 2, 1, {1, 1, 1, 1}}, G{3, 1, 2, {2, 2, 2, 2}},
                     G{3, 2, 1, {0, 1, 1, 0}}, G{5, 1, 1, {2, 2, 2, 2}}, G{5, 2, 1, {2, 2, 2, 2}},
                     G{7, 2, 1, {3, 3, 3, 3}}, G{3, 1, 1, {0, 0, 0, 0}}}) {
    NcCase c;
    c.x = {1, 24, 17, 30};
    c.M = 48;
    c.kh = c.kw = g.k;
    c.strides = {g.s, g.s};
    c.dilations = {g.d, g.d};
    c.pads = g.pads;
    check_case(c, seed++);
  }
  NcCase rect;  // non-square kernel, different strides per axis
  rect.x = {1, 16, 11, 29};
  rect.kh = 1, rect.kw = 5, rect.strides = {2, 1}, rect.pads = {0, 2, 0, 2};
  check_case(rect, seed++);
  for (const char* ap : {"SAME_UPPER", "SAME_LOWER", "VALID"}) {
    NcCase c;
    c.x = {1, 16, 10, 15};
    c.strides = {2, 2};
    c.auto_pad = ap;
    check_case(c, seed++);
  }
}

TEST(NchwcConv, WideRowsBatchesAndTinyPlanes) {
  uint32_t seed = 300;
  for (const Shape& x : {Shape{2, 16, 5, 200}, Shape{3, 19, 1, 1}, Shape{1, 32, 2, 3}, Shape{1, 16, 1, 40},
                         Shape{2, 5, 4, 4}}) {
    NcCase c;
    c.x = x;
    c.M = 24;
    check_case(c, seed++);
    c.kh = c.kw = 1, c.pads = {0, 0, 0, 0};
    check_case(c, seed++);
  }
}

// The interior of a row splits into equal strips of at most the widest (AVX-512: 13 pixels):
// every interior width from 1 to 30 (one strip, two, three), rows split into two or three
// equal task chunks (97-193 pixels), strides 1, 2 (their own compile-time instantiations) and
// 3, with 2 and 4 output blocks (the 2-block strips) and 3 (the 3-block strips).
TEST(NchwcConv, RowsSplitIntoEqualStrips) {
  uint32_t seed = 370;
  for (int64_t s : {1, 2, 3})
    for (int64_t w : {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25,
                      26, 27, 28, 29, 30, 31, 32, 41, 54, 60})
      for (int64_t M : {32, 48, 64}) {
        if (M != 32 && w % 3 != 0) continue;
        NcCase c;
        c.x = {1, 20, 3, s * (w - 1) + 1};  // w output pixels with pads of 1: w - 2 interior ones at stride 1
        c.M = M;
        c.strides = {1, s};
        c.residual = w % 2 == 0;
        c.act = w % 3 == 0 ? "Relu" : "";
        check_case(c, seed++);
      }
  for (int64_t w : {97, 150, 193}) {
    NcCase c;
    c.x = {1, 16, 2, w};
    c.M = 32;
    check_case(c, seed++);
  }
}

// Inputs of 1 MB and more per image take the strips that prefetch their next strip's pixels
// (NchwcConvArgs::prefetch_x; the prefetches run past the row's and the buffer's end, which
// must not change a result): a 1x1 layer, a 3x3 one with a partial last input block and
// padding, and a 2-image batch just over the size.
TEST(NchwcConv, LargeInputsPrefetchTheNextStrip) {
  uint32_t seed = 390;
  NcCase pointwise;
  pointwise.x = {1, 64, 64, 64};  // 64 x 64 x 64 floats: 1 MB
  pointwise.M = 32;
  pointwise.kh = pointwise.kw = 1, pointwise.pads = {0, 0, 0, 0};
  check_case(pointwise, seed++);
  NcCase dense;
  dense.x = {1, 20, 64, 130};  // 2 blocks x 64 x 130 pixels x 64 B: 1.02 MB
  dense.M = 24;
  dense.act = "Relu";
  check_case(dense, seed++);
  NcCase batch = pointwise;
  batch.x = {2, 48, 75, 75};  // 3 blocks x 5625 pixels x 64 B per image: 1.03 MB
  batch.M = 40;
  check_case(batch, seed++);
}

// A filter above 1 MB that is larger than one image's input runs the output rows fastest
// (each block group's filter stays in L2): batches, an odd block count (the last group holds
// one block), rows of more than one pixel chunk, and both thread counts split the groups.
TEST(NchwcConv, LargeFilterRunsRowsFastest) {
  uint32_t seed = 350;
  for (const Shape& x : {Shape{2, 128, 5, 7}, Shape{1, 128, 2, 100}}) {
    NcCase c;
    c.x = x;
    c.M = 272;  // 272 x 128 x 3 x 3 floats: 1.25 MB
    check_case(c, seed++);
  }
  NcCase pointwise;  // 1x1: 1296 x 256 floats: 1.3 MB, more than the 13 x 13 input
  pointwise.x = {1, 256, 13, 13};
  pointwise.M = 1296;
  pointwise.kh = pointwise.kw = 1, pointwise.pads = {0, 0, 0, 0};
  check_case(pointwise, seed++);
}

TEST(NchwcConv, DepthwiseMatchesConv) {
  uint32_t seed = 400;
  for (int64_t C : {16, 24, 37})
    for (int64_t k : {3, 5})
      for (int64_t s : {1, 2}) {
        NcCase c;
        c.x = {2, C, 13, 27};
        c.M = C;
        c.depthwise = true;
        c.kh = c.kw = k;
        c.strides = {s, s};
        c.pads = {k / 2, k / 2, k / 2, k / 2};
        c.act = "Relu";
        check_case(c, seed++);
      }
  NcCase dil;
  dil.x = {1, 32, 9, 9};
  dil.M = 32, dil.depthwise = true, dil.dilations = {2, 2}, dil.pads = {2, 2, 2, 2}, dil.residual = true;
  check_case(dil, seed++);
}

// Depthwise rows wide enough for the AVX-512 input-reuse strips (12 interior pixels and more):
// 3x3 and 5x5 at stride 1, with and without pads, a dilation along H only (the strips need
// unit dilation along W), row remainders of 1..11 pixels after the strips, an epilogue and Z.
TEST(NchwcConv, DepthwiseWideRowsReuseInputs) {
  uint32_t seed = 900;
  for (int64_t k : {3, 5})
    for (int64_t w : {16, 29, 40})
      for (int variant = 0; variant < 3; ++variant) {
        NcCase c;
        c.x = {1, 20, 7, w};
        c.M = 20, c.depthwise = true, c.kh = c.kw = k;
        const int64_t p = k / 2;
        c.pads = variant == 1 ? std::vector<int64_t>{0, 0, 0, 0} : std::vector<int64_t>{p, p, p, p};
        if (variant == 2) c.dilations = {2, 1}, c.pads = {2 * p, p, 2 * p, p}, c.act = "Swish", c.residual = true;
        check_case(c, seed++);
      }
}

TEST(NchwcConv, EpiloguesAndResidual) {
  uint32_t seed = 500;
  for (const char* act : {"", "Relu", "Clip", "HardSigmoid", "HardSwish", "Sigmoid", "PRelu", "Gelu", "GeluTanh",
                          "Swish", "QuickGelu"})
    for (bool z : {false, true})
      for (bool dw : {false, true}) {
        NcCase c;
        c.x = {1, 20, 8, 14};
        c.M = dw ? 20 : 40;
        c.depthwise = dw;
        c.act = act;
        c.residual = z;
        c.bias = !z;  // both with and without a bias
        check_case(c, seed++);
      }
}

TEST(NchwcConv, ProfileNamesVariantAndIsa) {
  NchwcIsaGuard guard;
  for (cpu::Isa isa : isa_levels()) {
    nn::set_nchwc_isa_for_tests(isa);
    NcCase dense;
    dense.x = {1, 32, 8, 8};
    dense.M = 32;
    NcCase pointwise = dense;
    pointwise.kh = pointwise.kw = 1, pointwise.pads = {0, 0, 0, 0};
    NcCase dw = dense;
    dw.depthwise = true;
    NcCase strided = dense;
    strided.strides = {2, 2};
    NcCase few_channels = dense;  // one input block: the Winograd rule wants more than 16 channels
    few_channels.x = {1, 16, 8, 8};
    NcCase small_plane = dense;  // 7x7 = 49 outputs: the rule wants 64
    small_plane.x = {1, 32, 7, 7};
    NcCase valid = dense;  // unpadded: 6x6 = 36 outputs, below the rule's 64
    valid.pads = {0, 0, 0, 0};
    NcCase same = small_plane;  // 7x7 with SAME padding: 49 outputs
    same.auto_pad = "SAME_UPPER";
    NcCase wide_pads = small_plane;  // 7x7 padded by 1, 2, 2, 1: 10x10 = 100 outputs
    wide_pads.pads = {1, 2, 2, 1};
    const Tensor x = random_tensor(DType::Float32, dense.x, 1);
    const Tensor x16 = random_tensor(DType::Float32, few_channels.x, 1);
    const Tensor x7 = random_tensor(DType::Float32, small_plane.x, 1);
    // Each also checks that explain (describe's copy of the rule, with the output size it
    // resolves from the shapes) names the variant that ran.
    for (const auto& [c, variant] : {std::pair<NcCase, const char*>{dense, "nchwc_winograd"},
                                     {strided, "nchwc_conv_direct"}, {few_channels, "nchwc_conv_direct"},
                                     {small_plane, "nchwc_conv_direct"}, {valid, "nchwc_conv_direct"},
                                     {same, "nchwc_conv_direct"}, {wide_pads, "nchwc_winograd"},
                                     {pointwise, "nchwc_pointwise"}, {dw, "nchwc_depthwise"}}) {
      const Tensor& xc = c.x[1] == 16 ? x16 : c.x[2] == 7 ? x7 : x;
      const ModelBuilder mb = blocked_model(c, 7);
      const auto [v, i] = trace_variant(mb, {{"X", xc}}, "nc");
      EXPECT_EQ(v, variant) << describe(c);
      EXPECT_EQ(i, cpu::isa_name(isa));
      const auto [known, unknown] = explained_variant(c, 7);
      EXPECT_EQ(known, variant) << describe(c);
      // Without X's shape: the rule's output size is not known (the other variants are, and so
      // is a layer whose channels the rule never takes: it packs no Winograd filter).
      EXPECT_EQ(unknown, c.kh == 3 && !c.depthwise && c.strides[0] == 1 && c.x[1] > 16 ? "chosen at run time" : variant)
          << describe(c);
    }
    // 24 input channels: Winograd on AVX-512 only (two 16-channel blocks, the second half empty).
    NcCase c24 = dense;
    c24.x = {1, 24, 8, 8};
    EXPECT_EQ(trace_variant(blocked_model(c24, 7), {{"X", random_tensor(DType::Float32, c24.x, 1)}}, "nc").first,
              isa == cpu::Isa::Avx512 ? "nchwc_winograd" : "nchwc_conv_direct");
    nn::set_nchwc_winograd_for_tests(0);
    EXPECT_EQ(trace_variant(blocked_model(dense, 7), {{"X", x}}, "nc").first, "nchwc_conv_direct");
    nn::set_nchwc_winograd_for_tests(-1);
  }
}

TEST(NchwcReorder, RoundTripIsExactAndPadsWithZero) {
  NchwcIsaGuard guard;
  for (cpu::Isa isa : isa_levels()) {
    for (const Shape& s : {Shape{2, 5, 3, 7}, Shape{1, 16, 4, 4}, Shape{1, 33, 65, 3}, Shape{1, 0, 2, 2},
                           Shape{1, 9, 4, 8}, Shape{1, 20, 1, 3}, Shape{2, 31, 16, 17},
                           Shape{1, 3, 400, 410}}) {  // the last: a 10.5 MB block (streaming stores)
      nn::set_nchwc_isa_for_tests(isa);
      SCOPED_TRACE(shape_to_string(s) + " " + cpu::isa_name(isa));
      ModelBuilder mb(17);
      mb.import_domain("ai.onnxmini", 1);
      mb.input("X", DType::Float32, s);
      mb.node("ReorderToBlocked", {"X"}, {"B"}).domain("ai.onnxmini");
      mb.node("ReorderFromBlocked", {"B"}, {"Y"}).domain("ai.onnxmini").attr("channels", s[1]);
      mb.output("B");
      mb.output("Y");
      const Tensor x = random_tensor(DType::Float32, s, 3);
      auto sess = mb.session(opts(0, KernelMode::Fast, 2));
      const auto out = run_all(*sess, {{"X", x}});
      const int64_t cb = nn::nchwc_blocks(s[1]), hw = s[2] * s[3];
      ASSERT_EQ(out[0].shape(), (Shape{s[0], cb, s[2], s[3], 16}));
      EXPECT_TRUE(tensors_near(out[1], x, 0, 0));
      const float* b = out[0].data<float>();
      const float* xd = x.data<float>();
      for (int64_t n = 0; n < s[0]; ++n)
        for (int64_t c = 0; c < cb * 16; ++c)
          for (int64_t p = 0; p < hw; ++p) {
            const float got = b[((n * cb + c / 16) * hw + p) * 16 + c % 16];
            const float want = c < s[1] ? xd[(n * s[1] + c) * hw + p] : 0.0f;
            ASSERT_EQ(got, want) << "n=" << n << " c=" << c << " p=" << p;
          }
    }
  }
}

// explain names the routines the reorders run: the ISA's table, the portable loops in
// reference mode (it used to say reorder_to_blocked / portable on every ISA).
TEST(NchwcReorder, ExplainAgreesWithTheTrace) {
  NchwcIsaGuard guard;
  ModelBuilder mb(17);
  mb.import_domain("ai.onnxmini", 1);
  mb.input("X", DType::Float32, {1, 20, 4, 4});
  mb.node("ReorderToBlocked", {"X"}, {"B"}).domain("ai.onnxmini").name("to");
  mb.node("ReorderFromBlocked", {"B"}, {"Y"}).domain("ai.onnxmini").name("from").attr("channels", int64_t{20});
  mb.output("Y");
  const Tensor x = random_tensor(DType::Float32, {1, 20, 4, 4}, 3);
  for (cpu::Isa isa : isa_levels())
    for (KernelMode mode : {KernelMode::Fast, KernelMode::Reference}) {
      nn::set_nchwc_isa_for_tests(isa);
      SCOPED_TRACE(std::string(cpu::isa_name(isa)) + (mode == KernelMode::Reference ? " reference" : " fast"));
      const std::string trace = profiled_trace(mb, opts(0, mode), {{"X", x}});
      for (const KernelExplanation& e : mb.session(opts(0, mode))->explain()) {
        const size_t at = trace.find("\"" + e.node + "_kernel_time\"");
        ASSERT_NE(at, std::string::npos) << e.node;
        EXPECT_EQ(e.variant, trace_value(trace, "kernel_variant", at)) << e.node;
        EXPECT_EQ(e.isa, trace_value(trace, "isa", at)) << e.node;
        EXPECT_EQ(e.isa, mode == KernelMode::Reference ? "portable" : cpu::isa_name(isa)) << e.node;
      }
    }
}

TEST(NchwcConv, ErrorsNameTheNode) {
  NcCase c;
  c.x = {1, 16, 6, 6};
  ModelBuilder mb = blocked_model(c, 1);
  // X with the wrong number of channel blocks for W.
  ModelBuilder bad(20);
  bad.import_domain("ai.onnxmini", 1);
  bad.input("X", DType::Float32, {1, 2, 6, 6, 16});
  bad.initializer("W", random_tensor(DType::Float32, {16, 16, 3, 3}, 1));
  bad.node("NchwcConv", {"X", "W"}, {"Y"}).domain("ai.onnxmini").name("nc_bad").attr("channels", int64_t{16});
  bad.output("Y");
  auto s = bad.session(opts(0));
  const std::string e = error_message([&] { run_all(*s, {{"X", random_tensor(DType::Float32, {1, 2, 6, 6, 16}, 2)}}); });
  EXPECT_NE(e.find("nc_bad"), std::string::npos) << e;
  EXPECT_NE(e.find("2 channel blocks"), std::string::npos) << e;
  // A grouped (not depthwise) filter is refused at session creation, naming the node.
  ModelBuilder grouped(20);
  grouped.import_domain("ai.onnxmini", 1);
  grouped.input("X", DType::Float32, {1, 2, 6, 6, 16});
  grouped.initializer("W", random_tensor(DType::Float32, {32, 16, 3, 3}, 1));
  grouped.node("NchwcConv", {"X", "W"}, {"Y"}).domain("ai.onnxmini").name("nc_grouped").attr("group", int64_t{2});
  grouped.output("Y");
  const std::string g = error_message([&] { grouped.session(opts(0)); });
  EXPECT_NE(g.find("nc_grouped"), std::string::npos) << g;
  EXPECT_NE(g.find("group 2"), std::string::npos) << g;
  // An output affine of 3 values for 16 output channels (one, 16 or the padded count are valid).
  ModelBuilder affine(20);
  affine.import_domain("ai.onnxmini", 1);
  affine.input("X", DType::Float32, {1, 1, 6, 6, 16});
  affine.initializer("W", random_tensor(DType::Float32, {16, 16, 3, 3}, 1));
  affine.node("NchwcConv", {"X", "W"}, {"Y"})
      .domain("ai.onnxmini")
      .name("nc_affine")
      .attr("_fused_output_scale", std::vector<float>{1.0f, 2.0f, 3.0f});
  affine.output("Y");
  const std::string a = error_message([&] { affine.session(opts(0)); });
  EXPECT_NE(a.find("nc_affine"), std::string::npos) << a;
  EXPECT_NE(a.find("_fused_output_scale has 3 values for 16 output channels"), std::string::npos) << a;
  // ReorderFromBlocked whose channels do not fit the blocks.
  ModelBuilder from(20);
  from.import_domain("ai.onnxmini", 1);
  from.input("X", DType::Float32, {1, 2, 3, 3, 16});
  from.node("ReorderFromBlocked", {"X"}, {"Y"}).domain("ai.onnxmini").name("rf").attr("channels", int64_t{40});
  from.output("Y");
  auto fs = from.session(opts(0));
  const std::string f = error_message([&] { run_all(*fs, {{"X", random_tensor(DType::Float32, {1, 2, 3, 3, 16}, 2)}}); });
  EXPECT_NE(f.find("rf"), std::string::npos) << f;
  EXPECT_NE(f.find("channels 40"), std::string::npos) << f;
}

}  // namespace
}  // namespace test
}  // namespace onnxmini
