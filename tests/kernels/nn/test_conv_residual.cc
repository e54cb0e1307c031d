// The fused residual Z of a Conv (com.microsoft FusedConv's 4th input, or the conv_add
// rule): Y = act(conv(X, W) + B + Z) on every Conv path, forced through
// ONNXMINI_CONV_VARIANT's override, conv2d_lanes on AVX2 and AVX-512
// (nn::set_lanes_isa) and conv_depthwise_simd on every ISA level; the GEMM paths run on
// the process's ISA (CTest runs the suite again with ONNXMINI_ISA=portable; the GEMM
// tile epilogue itself is checked per ISA in test_epilogue_residual.cc). The reference
// is the unfused graph Conv -> Add -> activation on the reference kernels, so nothing of
// the Z code is on the reference side. Tolerance: reduction_atol over the taps + Z's add.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <sstream>

#include "kernels/nn/conv_depthwise.h"
#include "kernels/nn/conv_lanes.h"
#include "kernels/nn/conv_variant.h"
#include "kernels/simd/f32_kernels.h"
#include "tests/common/fusion_test_util.h"
#include "tests/common/simd_isas.h"

namespace onnxmini {
namespace test {
namespace {

struct VariantScope {
  explicit VariantScope(nn::ConvVariant v) { nn::set_conv_variant_override(v); }
  ~VariantScope() { nn::set_conv_variant_override(nn::ConvVariant::Rule); }
};
struct LanesIsaScope {
  explicit LanesIsaScope(cpu::Isa isa) { nn::set_lanes_isa(isa); }
  ~LanesIsaScope() { nn::reset_lanes_isa(); }
};
struct BlocksScope {
  explicit BlocksScope(nn::DepthwiseBlocks b) { nn::set_depthwise_blocks(b); }
  ~BlocksScope() { nn::set_depthwise_blocks(nn::DepthwiseBlocks::Rule); }
};

struct DepthwiseIsaScope {
  explicit DepthwiseIsaScope(cpu::Isa isa) { nn::set_depthwise_isa_for_tests(isa); }
  ~DepthwiseIsaScope() { nn::set_depthwise_isa_for_tests(cpu::active_isa()); }
};

struct ResidualCase {
  const char* name;
  Shape x, w;
  int64_t group;
  std::vector<int64_t> pads, strides;
  bool bias;
};

Shape output_shape(const ResidualCase& c) {
  Shape y{c.x[0], c.w[0]};
  const size_t r = c.x.size() - 2;
  for (size_t d = 0; d < r; ++d) y.push_back((c.x[d + 2] + c.pads[d] + c.pads[d + r] - c.w[d + 2]) / c.strides[d] + 1);
  return y;
}

// z_declared = false: Z's shape is not declared (so the kernel's own check is reached).
void add_weights(ModelBuilder& mb, const ResidualCase& c, bool z_declared = true) {
  mb.input("X", DType::Float32, c.x);
  mb.input("Z", DType::Float32, z_declared ? output_shape(c) : Shape{}, z_declared);
  mb.initializer("W", random_tensor(DType::Float32, c.w, 3));
  if (c.bias) mb.initializer("B", random_tensor(DType::Float32, {c.w[0]}, 4));
}

// FusedConv(X, W, [B], Z, activation) as onnxruntime writes it.
ModelBuilder fused_model(const ResidualCase& c, const std::string& act, bool z_declared = true) {
  ModelBuilder mb(13);
  mb.import_domain("com.microsoft", 1);
  add_weights(mb, c, z_declared);
  auto n = mb.node("FusedConv", {"X", "W", c.bias ? "B" : "", "Z"}, {"Y"}).name("fc").domain("com.microsoft");
  n.attr("group", c.group).attr("pads", c.pads).attr("strides", c.strides);
  if (!act.empty()) n.attr("activation", act);
  if (act == "Clip") n.attr("activation_params", std::vector<float>{-0.5f, 0.75f});
  mb.output("Y");
  return mb;
}

// The same as plain ONNX nodes: Conv -> Add(Z) -> activation.
ModelBuilder unfused_model(const ResidualCase& c, const std::string& act) {
  ModelBuilder mb(13);
  add_weights(mb, c);
  std::vector<std::string> in{"X", "W"};
  if (c.bias) in.push_back("B");
  mb.node("Conv", in, {"C"}).name("c").attr("group", c.group).attr("pads", c.pads).attr("strides", c.strides);
  mb.node("Add", {"C", "Z"}, {act.empty() ? "Y" : "S"}).name("add");
  if (act == "Clip") {
    mb.initializer("lo", Tensor::from_vector<float>({}, {-0.5f}));
    mb.initializer("hi", Tensor::from_vector<float>({}, {0.75f}));
    mb.node("Clip", {"S", "lo", "hi"}, {"Y"}).name("act");
  } else if (!act.empty()) {
    mb.node(act, {"S"}, {"Y"}).name("act");
  }
  mb.output("Y");
  return mb;
}

// Runs `mb` (fast kernels, 2 threads, optimizer off: the FusedConv node as loaded) and
// returns its output and the Conv's kernel_variant from the profile.
std::pair<Tensor, std::string> run_profiled(const ModelBuilder& mb, const std::vector<std::pair<std::string, Tensor>>& feeds) {
  SessionOptions o = opts(ORT_DISABLE_ALL, KernelMode::Fast, 2);
  o.enable_profiling = true;
  o.profile_file_prefix = ::testing::TempDir() + "conv_residual_profile_";
  auto s = mb.session(o);
  Tensor y = run_all(*s, feeds).at(0);
  const std::string file = s->end_profiling();
  std::ifstream f(file);
  std::stringstream ss;
  ss << f.rdbuf();
  std::remove(file.c_str());
  const std::string trace = ss.str(), key = "\"kernel_variant\" : \"";
  const size_t at = trace.find(key);
  if (at == std::string::npos) return {y, ""};
  const size_t b = at + key.size();
  return {y, trace.substr(b, trace.find('"', b) - b)};
}

// Every activation FusedConv saves (and none), fused vs unfused; `expected`: the variant.
void check_case(const ResidualCase& c, const std::string& expected, const std::string& where) {
  const Tensor x = random_tensor(DType::Float32, c.x, 5), z = random_tensor(DType::Float32, output_shape(c), 6, -2, 2);
  int64_t k = c.w[1];
  for (size_t d = 2; d < c.w.size(); ++d) k *= c.w[d];
  for (const std::string act : {"", "Relu", "Clip", "Sigmoid"}) {
    auto ref_session = unfused_model(c, act).session(opts(ORT_DISABLE_ALL, KernelMode::Reference));
    const Tensor want = run_all(*ref_session, {{"X", x}, {"Z", z}}).at(0);
    const auto [got, variant] = run_profiled(fused_model(c, act), {{"X", x}, {"Z", z}});
    EXPECT_EQ(variant, expected) << c.name << " " << where << " act '" << act << "'";
    EXPECT_TRUE(tensors_near(got, want, reduction_atol(DType::Float32, k + 1), 1e-4))
        << c.name << " " << where << " act '" << act << "'";
    // The reference kernels read Z too.
    auto fused_ref = fused_model(c, act).session(opts(ORT_DISABLE_ALL, KernelMode::Reference));
    EXPECT_TRUE(tensors_near(run_all(*fused_ref, {{"X", x}, {"Z", z}}).at(0), want, reduction_atol(DType::Float32, k + 1), 1e-4))
        << c.name << " reference kernels, act '" << act << "'";
  }
}

const ResidualCase kDense{"dense 3x3", {2, 8, 10, 12}, {16, 8, 3, 3}, 1, {1, 1, 1, 1}, {1, 1}, true};
const ResidualCase kStrided{"3x3 stride 2", {1, 8, 13, 12}, {20, 8, 3, 3}, 1, {1, 1, 1, 1}, {2, 2}, false};

TEST(ConvResidual, GemmPathsAddZ) {
  {
    VariantScope force(nn::ConvVariant::Im2col);
    check_case(kDense, "conv2d_im2col", "im2col");
    check_case(kStrided, "conv2d_im2col", "im2col");
  }
  VariantScope force(nn::ConvVariant::Implicit);
  check_case(kDense, "conv2d_implicit_gemm", "implicit");
  check_case(kStrided, "conv2d_implicit_gemm", "implicit");
  const ResidualCase grouped{"grouped", {2, 8, 7, 9}, {16, 4, 3, 3}, 2, {1, 0, 1, 2}, {1, 1}, true};
  check_case(grouped, "conv2d_implicit_gemm", "implicit");
}

TEST(ConvResidual, OneByOneAndOneDimensionalAddZ) {
  VariantScope force(nn::ConvVariant::Im2col);
  check_case({"1x1", {2, 8, 9, 9}, {20, 8, 1, 1}, 1, {0, 0, 0, 0}, {1, 1}, true}, "conv1x1_gemm", "1x1");
  check_case({"1x1 stride 2", {1, 8, 9, 9}, {12, 8, 1, 1}, 1, {0, 0, 0, 0}, {2, 2}, true}, "conv1x1_strided_gemm",
             "1x1 strided");
  check_case({"1-D", {2, 4, 20}, {8, 4, 3}, 1, {1, 1}, {1}, true}, "conv1d_im2col", "1-D");
  // A 1x1 image (squeeze-and-excitation layers, heads): simd dot_rows where the active
  // table has it, else the 1x1 GEMM; two groups so Z's offset per group is exercised.
  const bool gemv = simd::f32_kernels().dot_rows != nullptr;
  check_case({"1x1 image", {2, 64, 1, 1}, {40, 32, 1, 1}, 2, {0, 0, 0, 0}, {1, 1}, true},
             gemv ? "conv1x1_gemv" : "conv1x1_gemm", "1x1 image");
}

TEST(ConvResidual, DirectLoopsStartFromZ) {
  VariantScope force(nn::ConvVariant::Direct);
  check_case(kDense, "conv2d_direct", "direct");
  check_case({"depthwise", {2, 8, 11, 13}, {8, 1, 3, 3}, 8, {1, 1, 1, 1}, {1, 1}, true}, "conv_depthwise",
             "direct depthwise");
}

TEST(ConvResidual, LanesOnEveryIsaAddZ) {
  VariantScope force(nn::ConvVariant::Lanes);
  for (cpu::Isa isa : isa_levels()) {
    if (isa == cpu::Isa::Portable) continue;  // no lanes kernel
    LanesIsaScope scope(isa);
    check_case(kDense, "conv2d_lanes", cpu::isa_name(isa));
    check_case(kStrided, "conv2d_lanes", cpu::isa_name(isa));
    // 70 channels: a 64-lane group and a partial one (the per-row post-pass over both).
    check_case({"70 channels", {1, 5, 6, 17}, {70, 5, 3, 3}, 1, {1, 1, 1, 1}, {1, 1}, true}, "conv2d_lanes",
               cpu::isa_name(isa));
  }
}

TEST(ConvResidual, DepthwiseSimdOnEveryIsaAddsZ) {
  const ResidualCase dw{"depthwise", {2, 8, 11, 13}, {8, 1, 3, 3}, 8, {1, 1, 1, 1}, {1, 1}, true};
  const ResidualCase dw_s2{"depthwise stride 2", {1, 6, 12, 19}, {6, 1, 5, 5}, 6, {2, 2, 2, 2}, {2, 2}, false};
  for (cpu::Isa isa : isa_levels()) {
    DepthwiseIsaScope scope(isa);
    BlocksScope planes(nn::DepthwiseBlocks::Never);  // the plane kernel (small planes take blocks by rule)
    check_case(dw, "conv_depthwise_simd", cpu::isa_name(isa));
    check_case(dw_s2, "conv_depthwise_simd", cpu::isa_name(isa));
  }
}

// conv_depthwise_blocks (channels in the lanes; the plane kernel takes the channels past
// the last full block: 36 = 2 x 16 + 4 on AVX-512): Z and the activation in its per-plane pass.
TEST(ConvResidual, DepthwiseBlocksOnEveryIsaAddZ) {
  const ResidualCase small{"depthwise blocks 7x7", {1, 36, 7, 7}, {36, 1, 3, 3}, 36, {1, 1, 1, 1}, {1, 1}, true};
  const ResidualCase s2{"depthwise blocks 5x5 stride 2", {2, 32, 9, 9}, {32, 1, 5, 5}, 32, {2, 2, 2, 2}, {2, 2}, false};
  for (cpu::Isa isa : isa_levels()) {
    DepthwiseIsaScope scope(isa);
    BlocksScope blocks(nn::DepthwiseBlocks::Always);
    check_case(small, "conv_depthwise_blocks", cpu::isa_name(isa));
    check_case(s2, "conv_depthwise_blocks", cpu::isa_name(isa));
  }
}

TEST(ConvResidual, ZOfAnotherShapeIsRejectedNamingIt) {
  const ResidualCase c = kDense;
  ModelBuilder mb = fused_model(c, "Relu", false);
  auto s = mb.session(opts(ORT_DISABLE_ALL));
  const Tensor x = random_tensor(DType::Float32, c.x, 5);
  const Tensor z = random_tensor(DType::Float32, {2, 16, 1, 1}, 6);  // broadcastable, but not Y's shape
  const std::string err = error_message([&] { run_all(*s, {{"X", x}, {"Z", z}}); });
  EXPECT_NE(err.find("residual Z has shape 2x16x1x1"), std::string::npos) << err;
  EXPECT_NE(err.find("fc"), std::string::npos) << err;
}

TEST(ConvResidual, PlainConvWithFourInputsIsRejected) {
  ModelBuilder mb(13);
  add_weights(mb, kDense);
  mb.node("Conv", {"X", "W", "B", "Z"}, {"Y"}).name("c4").attr("pads", kDense.pads);
  mb.output("Y");
  const std::string err = error_message([&] { mb.session(opts(ORT_DISABLE_ALL)); });
  EXPECT_NE(err.find("has 4 inputs"), std::string::npos) << err;
  EXPECT_NE(err.find("c4"), std::string::npos) << err;
}

}  // namespace
}  // namespace test
}  // namespace onnxmini
