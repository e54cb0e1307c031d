// ONNXMINI_CONV_VARIANT (kernels/nn/conv_variant.h): each forced Conv path gives the
// reference result and is the path the profile names; a path that cannot run a layer
// (a 1-D layer forced to `direct`, no AVX-512 for `lanes`) leaves it on the rule.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <sstream>

#include "kernels/nn/conv_lanes.h"
#include "kernels/nn/conv_variant.h"
#include "tests/common/fusion_test_util.h"

namespace onnxmini {
namespace test {
namespace {

struct VariantScope {  // restores the rule when a test ends
  explicit VariantScope(nn::ConvVariant v) { nn::set_conv_variant_override(v); }
  ~VariantScope() { nn::set_conv_variant_override(nn::ConvVariant::Rule); }
};

ModelBuilder conv_model(const Shape& x, const Shape& w, int64_t group, std::vector<int64_t> pads) {
  ModelBuilder mb(13);
  mb.input("X", DType::Float32, x);
  mb.initializer("W", random_tensor(DType::Float32, w, 7));
  mb.initializer("B", random_tensor(DType::Float32, {w[0]}, 8));
  mb.node("Conv", {"X", "W", "B"}, {"Y"}).name("c").attr("group", group).attr("pads", pads);
  mb.output("Y");
  return mb;
}

// The kernel_variant of the Conv in a profiled fast run, checking the output against
// the reference kernels on the way.
std::string run_and_check(const ModelBuilder& mb, const Tensor& x, int64_t k) {
  const Tensor ref = run_all(*mb.session(options_for(KernelMode::Reference)), {{"X", x}}).at(0);
  SessionOptions o = options_for(KernelMode::Fast);
  o.enable_profiling = true;
  o.profile_file_prefix = ::testing::TempDir() + "conv_variant_profile_";
  auto s = mb.session(o);
  const Tensor y = run_all(*s, {{"X", x}}).at(0);
  EXPECT_TRUE(tensors_near(y, ref, reduction_atol(DType::Float32, k), 1e-4));
  const std::string file = s->end_profiling();
  std::ifstream f(file);
  std::stringstream ss;
  ss << f.rdbuf();
  std::remove(file.c_str());
  const std::string trace = ss.str(), key = "\"kernel_variant\" : \"";
  const size_t at = trace.find(key);
  if (at == std::string::npos) return "";
  const size_t b = at + key.size();
  return trace.substr(b, trace.find('"', b) - b);
}

TEST(ConvVariant, EachForcedPathMatchesTheReference) {
  const Shape xs{1, 8, 10, 10}, ws{16, 8, 3, 3};
  const ModelBuilder mb = conv_model(xs, ws, 1, {1, 1, 1, 1});
  const Tensor x = random_tensor(DType::Float32, xs, 9);
  const int64_t k = 8 * 9;
  const struct {
    nn::ConvVariant v;
    const char* expected;
  } cases[] = {{nn::ConvVariant::Im2col, "conv2d_im2col"},
               {nn::ConvVariant::Implicit, "conv2d_implicit_gemm"},
               {nn::ConvVariant::Direct, "conv2d_direct"},
               {nn::ConvVariant::Lanes, nn::lanes_isa() ? "conv2d_lanes" : "conv2d_implicit_gemm"}};
  for (const auto& c : cases) {
    VariantScope force(c.v);
    EXPECT_EQ(run_and_check(mb, x, k), c.expected) << "forced " << static_cast<int>(c.v);
  }
}

TEST(ConvVariant, GroupedLayerTakesEveryForcedPath) {
  const Shape xs{1, 4, 9, 9}, ws{4, 1, 3, 3};  // depthwise: the rule takes conv_depthwise_simd
  const ModelBuilder mb = conv_model(xs, ws, 4, {1, 1, 1, 1});
  const Tensor x = random_tensor(DType::Float32, xs, 10);
  {
    VariantScope force(nn::ConvVariant::Im2col);
    EXPECT_EQ(run_and_check(mb, x, 9), "conv2d_im2col");
  }
  {
    VariantScope force(nn::ConvVariant::Implicit);
    EXPECT_EQ(run_and_check(mb, x, 9), "conv2d_implicit_gemm");
  }
  VariantScope rule(nn::ConvVariant::Rule);
  EXPECT_EQ(run_and_check(mb, x, 9), "conv_depthwise_simd");
}

// The rule's choice for fewer than 4 output channels: a plain 1x1 over >= 32 input
// channels (YOLOX's objectness head, 96 -> 1) takes the GEMM on X; a 1x1 over a few
// channels, a padded 1x1 and a 7x7 2 -> 1 spatial conv keep the direct loops, each
// checked against the reference. The rule does not depend on the ISA (CTest re-runs
// this under ONNXMINI_ISA=portable).
TEST(ConvVariant, FewOutputChannelsRule) {
  const struct {
    Shape x, w;
    std::vector<int64_t> pads;
    const char* want;
  } cases[] = {
      {{1, 96, 13, 13}, {1, 96, 1, 1}, {0, 0, 0, 0}, "conv1x1_gemm"},
      {{1, 256, 6, 7}, {3, 256, 1, 1}, {0, 0, 0, 0}, "conv1x1_gemm"},
      {{1, 8, 9, 9}, {3, 8, 1, 1}, {0, 0, 0, 0}, "conv2d_direct"},
      {{1, 96, 5, 5}, {1, 96, 1, 1}, {1, 1, 1, 1}, "conv2d_direct"},
      {{1, 2, 12, 12}, {1, 2, 7, 7}, {3, 3, 3, 3}, "conv2d_direct"},
  };
  uint32_t seed = 50;
  for (const auto& c : cases) {
    const ModelBuilder mb = conv_model(c.x, c.w, 1, c.pads);
    const Tensor x = random_tensor(DType::Float32, c.x, seed++);
    EXPECT_EQ(run_and_check(mb, x, c.w[1] * c.w[2] * c.w[3]), c.want)
        << shape_to_string(c.x) << " * " << shape_to_string(c.w);
  }
}

TEST(ConvVariant, PathsThatCannotRunFallBackToTheRule) {
  const Shape xs{1, 4, 5, 6, 7}, ws{8, 4, 3, 3, 3};  // 3-D: only im2col can run it
  const ModelBuilder mb = conv_model(xs, ws, 1, {1, 1, 1, 1, 1, 1});
  const Tensor x = random_tensor(DType::Float32, xs, 11);
  for (auto v : {nn::ConvVariant::Direct, nn::ConvVariant::Implicit, nn::ConvVariant::Lanes,
                 nn::ConvVariant::Transposed, nn::ConvVariant::Row, nn::ConvVariant::Im2row}) {
    VariantScope force(v);
    EXPECT_EQ(run_and_check(mb, x, 4 * 27), "conv3d_im2col") << "forced " << static_cast<int>(v);
  }
}

}  // namespace
}  // namespace test
}  // namespace onnxmini
