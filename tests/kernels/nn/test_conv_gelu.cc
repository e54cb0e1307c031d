// Gelu (approximate "none" and "tanh") fused into a Conv by the conv_gelu rule, on every
// Conv path (forced through ONNXMINI_CONV_VARIANT's override), conv2d_lanes on AVX2 and
// AVX-512 (nn::set_lanes_isa), the depthwise plane and block kernels on every ISA level
// (their post-pass), with and without a fused residual Z (conv_add first: Gelu(conv + B + Z)).
// The GEMM paths and the post-passes run on the process's ISA; CTest runs the suite again
// with ONNXMINI_ISA=avx2 and =portable (tests/CMakeLists.txt, simd_paths_*), and the GEMM
// tile epilogue itself is checked per ISA in test_epilogue_gelu.cc.
//
// Reference: the unfused graph's pre-activation s (the reference Conv [+ Z], float32)
// and Gelu(s) evaluated in float64. Tolerance per element, from the two error sources:
//   the Conv sum: reduction_atol over the taps (+ Z's add), times Gelu's largest slope
//     (1.13 for both forms, at s ~ 2.1; 1.2 used), and
//   the activation's own relative error, the erf kernel's documented bound
//     (4 a^2 + 24) u |ref|, a = |s| / sqrt 2 (tanh form: (4 w + 24) u |ref|, w = 2 sqrt(2/pi)
//     |s + 0.044715 s^3|; tests/kernels/simd/test_erf.cc), plus 1e-33 where the far
//     negative tails are flushed to 0.
#include <gtest/gtest.h>

#include <cmath>
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

constexpr double kU = 5.9604644775390625e-8;  // 2^-24

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

struct GeluCase {
  const char* name;
  Shape x, w;
  int64_t group;
  std::vector<int64_t> pads, strides;
  bool bias;
};

Shape output_shape(const GeluCase& c) {
  Shape y{c.x[0], c.w[0]};
  const size_t r = c.x.size() - 2;
  for (size_t d = 0; d < r; ++d) y.push_back((c.x[d + 2] + c.pads[d] + c.pads[d + r] - c.w[d + 2]) / c.strides[d] + 1);
  return y;
}

int64_t taps(const GeluCase& c) {
  int64_t k = c.w[1];
  for (size_t d = 2; d < c.w.size(); ++d) k *= c.w[d];
  return k;
}

// Conv [-> Add(Z)] -> Gelu(approx), opset 20. expose_s: the pre-activation "S" is a graph
// output too (the reference run reads it; a second reader also keeps the rule off).
ModelBuilder conv_gelu_model(const GeluCase& c, const std::string& approx, bool residual, bool expose_s) {
  ModelBuilder mb(20);
  mb.input("X", DType::Float32, c.x);
  if (residual) mb.input("Z", DType::Float32, output_shape(c));
  // Filter and bias in [-1, 1]: s spreads over about +-4, both erf branches and the tails.
  mb.initializer("W", random_tensor(DType::Float32, c.w, 3));
  std::vector<std::string> in{"X", "W"};
  if (c.bias) {
    mb.initializer("B", random_tensor(DType::Float32, {c.w[0]}, 4));
    in.push_back("B");
  }
  mb.node("Conv", in, {residual ? "C" : "S"}).name("conv").attr("group", c.group).attr("pads", c.pads).attr("strides", c.strides);
  if (residual) {
    mb.node("Add", {"C", "Z"}, {"S"}).name("add_z");
    // C's declared shape lets conv_add prove Z has it (strided Convs have no shape class).
    onnx::ValueInfoProto* vi = mb.proto().mutable_graph()->add_value_info();
    vi->set_name("C");
    onnx::TypeProto_Tensor* tt = vi->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(onnx::TensorProto::FLOAT);
    for (int64_t d : output_shape(c)) tt->mutable_shape()->add_dim()->set_dim_value(d);
  }
  mb.node("Gelu", {"S"}, {"Y"}).name("gelu").attr("approximate", approx);
  mb.output("Y");
  if (expose_s) mb.output("S");
  return mb;
}

// Runs `mb` (fast kernels, 2 threads, every rule) and returns its output, the Conv's
// kernel_variant from the profile and the node count.
struct Profiled {
  Tensor y;
  std::string variant;
  size_t nodes;
};
Profiled run_profiled(const ModelBuilder& mb, const std::vector<std::pair<std::string, Tensor>>& feeds) {
  SessionOptions o = opts(ORT_ENABLE_ALL, KernelMode::Fast, 2);
  o.enable_profiling = true;
  o.profile_file_prefix = ::testing::TempDir() + "conv_gelu_profile_";
  auto s = mb.session(o);
  Tensor y = run_all(*s, feeds).at(0);
  const std::string file = s->end_profiling();
  std::ifstream f(file);
  std::stringstream ss;
  ss << f.rdbuf();
  std::remove(file.c_str());
  const std::string trace = ss.str(), key = "\"kernel_variant\" : \"";
  const size_t at = trace.find(key);
  std::string variant;
  if (at != std::string::npos) {
    const size_t b = at + key.size();
    variant = trace.substr(b, trace.find('"', b) - b);
  }
  return {y, variant, s->describe().nodes.size()};
}

double gelu64(bool tanh_form, double z) {
  if (!tanh_form) return 0.5 * z * std::erfc(-z / std::sqrt(2.0));
  const double w = 2.0 * std::sqrt(2.0 / M_PI) * (z + 0.044715 * z * z * z);
  return w >= 0 ? z / (1.0 + std::exp(-w)) : z * std::exp(w) / (1.0 + std::exp(w));
}

double own_tol(bool tanh_form, double z, double ref) {
  const double a = std::fabs(z) / std::sqrt(2.0);
  const double w = 2.0 * std::sqrt(2.0 / M_PI) * std::fabs(z + 0.044715 * z * z * z);
  return (tanh_form ? 4 * w + 24 : 4 * a * a + 24) * kU * std::fabs(ref) + 1e-33;
}

// Counts the elements of `got` outside the bound around Gelu64(s); reports the first few.
int64_t mismatches(const Tensor& got, const Tensor& s, bool tanh_form, int64_t k, const std::string& what) {
  EXPECT_EQ(got.shape(), s.shape()) << what;
  if (got.shape() != s.shape()) return 1;
  const double conv_tol = 1.2 * reduction_atol(DType::Float32, k);
  int64_t bad = 0;
  for (int64_t i = 0; i < got.numel(); ++i) {
    const double z = s.data<float>()[i], ref = gelu64(tanh_form, z), g = got.data<float>()[i];
    const double tol = conv_tol + own_tol(tanh_form, z, ref);
    if (!(std::fabs(g - ref) <= tol) && ++bad <= 3)
      ADD_FAILURE() << what << " element " << i << ": s " << z << " got " << g << " want " << ref << " tol " << tol;
  }
  return bad;
}

// Both Gelu forms, without and with a residual Z: fused into one node on the `expected` path.
void check_case(const GeluCase& c, const std::string& expected, const std::string& where) {
  const Tensor x = random_tensor(DType::Float32, c.x, 5), z = random_tensor(DType::Float32, output_shape(c), 6);
  for (bool residual : {false, true})
    for (const char* approx : {"none", "tanh"}) {
      const bool tanh_form = std::string(approx) == "tanh";
      std::vector<std::pair<std::string, Tensor>> feeds{{"X", x}};
      if (residual) feeds.push_back({"Z", z});
      const std::string what = std::string(c.name) + " " + where + " approximate " + approx + (residual ? " + Z" : "");
      const int64_t k = taps(c) + (residual ? 1 : 0);
      auto ref = conv_gelu_model(c, approx, residual, true).session(opts(ORT_DISABLE_ALL, KernelMode::Reference));
      const Tensor s = run_all(*ref, feeds).at(1);
      const Profiled fused = run_profiled(conv_gelu_model(c, approx, residual, false), feeds);
      EXPECT_EQ(fused.variant, expected) << what;
      EXPECT_EQ(fused.nodes, 1u) << what << ": Conv [+ Add] + Gelu not fused into one node";
      EXPECT_EQ(mismatches(fused.y, s, tanh_form, k, what), 0) << what;
      // The reference Conv kernel applies the fused Gelu too.
      auto fused_ref = conv_gelu_model(c, approx, residual, false).session(opts(ORT_ENABLE_ALL, KernelMode::Reference));
      EXPECT_EQ(mismatches(run_all(*fused_ref, feeds).at(0), s, tanh_form, k, what + " (reference kernels)"), 0) << what;
    }
}

const GeluCase kDense{"dense 3x3", {2, 8, 10, 12}, {16, 8, 3, 3}, 1, {1, 1, 1, 1}, {1, 1}, true};
const GeluCase kStrided{"3x3 stride 2", {1, 8, 13, 12}, {20, 8, 3, 3}, 1, {1, 1, 1, 1}, {2, 2}, false};

TEST(ConvGelu, GemmPathsApplyGelu) {
  {
    VariantScope force(nn::ConvVariant::Im2col);
    check_case(kDense, "conv2d_im2col", "im2col");
    check_case(kStrided, "conv2d_im2col", "im2col");
  }
  VariantScope force(nn::ConvVariant::Implicit);
  check_case(kDense, "conv2d_implicit_gemm", "implicit");
  check_case({"grouped", {2, 8, 7, 9}, {16, 4, 3, 3}, 2, {1, 0, 1, 2}, {1, 1}, true}, "conv2d_implicit_gemm",
             "implicit");
  check_case({"1-D", {1, 8, 29}, {12, 8, 3}, 1, {1, 1}, {1}, true}, "conv1d_implicit_gemm", "implicit");
}

TEST(ConvGelu, OneByOneAndOneDimensionalApplyGelu) {
  {
    VariantScope force(nn::ConvVariant::Im2col);
    check_case({"1x1", {2, 8, 9, 9}, {20, 8, 1, 1}, 1, {0, 0, 0, 0}, {1, 1}, true}, "conv1x1_gemm", "1x1");
    check_case({"1x1 stride 2", {1, 8, 9, 9}, {12, 8, 1, 1}, 1, {0, 0, 0, 0}, {2, 2}, true}, "conv1x1_strided_gemm",
               "1x1 strided");
    check_case({"1-D", {2, 4, 20}, {8, 4, 3}, 1, {1, 1}, {1}, true}, "conv1d_im2col", "1-D");
    // A 1x1 image: simd dot_rows where the active table has it, else the 1x1 GEMM.
    const bool gemv = simd::f32_kernels().dot_rows != nullptr;
    check_case({"1x1 image", {2, 64, 1, 1}, {40, 32, 1, 1}, 2, {0, 0, 0, 0}, {1, 1}, true},
               gemv ? "conv1x1_gemv" : "conv1x1_gemm", "1x1 image");
  }
  {
    VariantScope force(nn::ConvVariant::Transposed);
    check_case({"1x1 small image", {1, 64, 7, 7}, {70, 64, 1, 1}, 1, {0, 0, 0, 0}, {1, 1}, true},
               "conv1x1_transposed", "transposed");
    check_case({"1x1 two groups", {1, 48, 10, 10}, {40, 24, 1, 1}, 2, {0, 0, 0, 0}, {1, 1}, false},
               "conv1x1_transposed", "transposed");
  }
  VariantScope force(nn::ConvVariant::Row);
  check_case({"1x5 rows", {2, 7, 1, 23}, {13, 7, 1, 5}, 1, {0, 2, 0, 1}, {1, 1}, true}, "conv1d_shifted_gemm", "row");
  check_case({"1-D 40 channels", {1, 6, 30}, {40, 6, 3}, 1, {0, 0}, {1}, false}, "conv1d_shifted_gemm", "row");
}

TEST(ConvGelu, DirectLoopsApplyGelu) {
  VariantScope force(nn::ConvVariant::Direct);
  check_case(kDense, "conv2d_direct", "direct");
  check_case({"depthwise", {2, 8, 11, 13}, {8, 1, 3, 3}, 8, {1, 1, 1, 1}, {1, 1}, true}, "conv_depthwise",
             "direct depthwise");
}

TEST(ConvGelu, LanesOnEveryIsaApplyGelu) {
  VariantScope force(nn::ConvVariant::Lanes);
  for (cpu::Isa isa : isa_levels()) {
    if (isa == cpu::Isa::Portable) continue;  // no lanes kernel
    LanesIsaScope scope(isa);
    check_case(kDense, "conv2d_lanes", cpu::isa_name(isa));
    check_case(kStrided, "conv2d_lanes", cpu::isa_name(isa));
    // 70 channels: a 64-lane group and a partial one (masked epilogue lanes).
    check_case({"70 channels", {1, 5, 6, 17}, {70, 5, 3, 3}, 1, {1, 1, 1, 1}, {1, 1}, true}, "conv2d_lanes",
               cpu::isa_name(isa));
  }
}

TEST(ConvGelu, DepthwiseSimdOnEveryIsaAppliesGelu) {
  const GeluCase dw{"depthwise", {2, 8, 11, 13}, {8, 1, 3, 3}, 8, {1, 1, 1, 1}, {1, 1}, true};
  const GeluCase dw_s2{"depthwise stride 2", {1, 6, 12, 19}, {6, 1, 5, 5}, 6, {2, 2, 2, 2}, {2, 2}, false};
  for (cpu::Isa isa : isa_levels()) {
    DepthwiseIsaScope scope(isa);
    BlocksScope planes(nn::DepthwiseBlocks::Never);  // the plane kernel (small planes take blocks by rule)
    check_case(dw, "conv_depthwise_simd", cpu::isa_name(isa));
    check_case(dw_s2, "conv_depthwise_simd", cpu::isa_name(isa));
  }
}

// conv_depthwise_blocks (channels in the lanes; 36 = 2 x 16 + 4 on AVX-512: the plane
// kernel takes the channels past the last full block): Gelu in the per-plane pass.
TEST(ConvGelu, DepthwiseBlocksOnEveryIsaApplyGelu) {
  const GeluCase small{"depthwise blocks 7x7", {1, 36, 7, 7}, {36, 1, 3, 3}, 36, {1, 1, 1, 1}, {1, 1}, true};
  const GeluCase s2{"depthwise blocks 5x5 stride 2", {2, 32, 9, 9}, {32, 1, 5, 5}, 32, {2, 2, 2, 2}, {2, 2}, false};
  for (cpu::Isa isa : isa_levels()) {
    DepthwiseIsaScope scope(isa);
    BlocksScope blocks(nn::DepthwiseBlocks::Always);
    check_case(small, "conv_depthwise_blocks", cpu::isa_name(isa));
    check_case(s2, "conv_depthwise_blocks", cpu::isa_name(isa));
  }
}

}  // namespace
}  // namespace test
}  // namespace onnxmini
