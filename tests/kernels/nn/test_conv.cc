// Conv and ConvTranspose: hand-computed cases, fast vs reference on random
// shapes (odd sizes, groups, depthwise, 1x1, strides, dilations, pads,
// auto_pad; float32 and float64), and every error message.
#include <gtest/gtest.h>

#include "tests/common/nn_test_util.h"

namespace onnxmini {
namespace test {
namespace {

struct ConvCase {
  Shape x, w;
  int64_t group = 1;
  std::vector<int64_t> strides, dilations, pads;
  std::string auto_pad = "NOTSET";
  bool bias = true;
  bool weight_initializer = false;
};

ModelBuilder conv_model(const std::string& op, const ConvCase& c, DType t, int64_t bias_len) {
  ModelBuilder mb(17);
  mb.input("X", t, c.x);
  std::vector<std::string> in{"X", "W"};
  if (c.weight_initializer) mb.initializer("W", random_tensor(t, c.w, 7));
  else mb.input("W", t, c.w);
  if (c.bias) {
    mb.input("B", t, {bias_len});
    in.push_back("B");
  }
  auto n = mb.node(op, in, {"Y"}).name("n9");
  n.attr("group", c.group).attr("auto_pad", c.auto_pad);
  if (!c.strides.empty()) n.attr("strides", c.strides);
  if (!c.dilations.empty()) n.attr("dilations", c.dilations);
  if (!c.pads.empty()) n.attr("pads", c.pads);
  mb.output("Y");
  return mb;
}

void check_conv(const std::string& op, const ConvCase& c, DType t, uint32_t seed) {
  const int64_t out_ch = op == "Conv" ? c.w[0] : c.w[1] * c.group;
  int64_t k = op == "Conv" ? c.w[1] : c.w[1];
  for (size_t i = 2; i < c.w.size(); ++i) k *= c.w[i];
  ModelBuilder mb = conv_model(op, c, t, out_ch);
  std::vector<std::pair<std::string, Tensor>> feeds{{"X", random_tensor(t, c.x, seed)}};
  if (!c.weight_initializer) feeds.push_back({"W", random_tensor(t, c.w, seed + 1)});
  if (c.bias) feeds.push_back({"B", random_tensor(t, {out_ch}, seed + 2)});
  auto r = run_fast_and_reference(mb, feeds);
  EXPECT_TRUE(tensors_near(r.first.at(0), r.second.at(0), reduction_atol(t, k), 1e-4))
      << op << " x=" << shape_to_string(c.x) << " w=" << shape_to_string(c.w) << " group=" << c.group
      << " auto_pad=" << c.auto_pad;
}

std::vector<ConvCase> conv_cases() {
  std::vector<ConvCase> v;
  v.push_back({{1, 3, 7, 9}, {4, 3, 3, 3}, 1, {}, {}, {1, 1, 1, 1}});                  // 3x3 pad 1
  v.push_back({{2, 5, 11, 6}, {6, 5, 3, 2}, 1, {2, 1}, {1, 2}, {0, 1, 2, 0}});         // strides, dilations, asymmetric pads
  v.push_back({{1, 4, 9, 9}, {6, 2, 3, 3}, 2, {2, 2}, {}, {1, 1, 1, 1}});              // groups
  v.push_back({{2, 6, 10, 7}, {6, 1, 3, 3}, 6, {1, 1}, {}, {1, 1, 1, 1}});             // depthwise
  v.push_back({{1, 5, 13, 11}, {5, 1, 5, 5}, 5, {2, 3}, {2, 1}, {2, 2, 1, 0}});        // depthwise strided dilated
  v.push_back({{1, 4, 9, 9}, {8, 1, 3, 3}, 4, {}, {}, {}});                            // channel multiplier 2 (direct)
  v.push_back({{1, 4, 9, 9}, {8, 2, 3, 3}, 2, {1, 2}, {2, 1}, {1, 1, 0, 2}});          // groups, 4 outputs each (im2col)
  v.push_back({{2, 2, 12, 11}, {1, 2, 7, 7}, 1, {}, {}, {3, 3, 3, 3}});                // one output channel (direct)
  v.push_back({{2, 7, 5, 6}, {9, 7, 1, 1}, 1, {}, {}, {}});                            // 1x1
  v.push_back({{1, 6, 9, 7}, {4, 3, 1, 1}, 2, {2, 3}, {}, {}});                        // 1x1 strided, grouped
  v.push_back({{1, 3, 10, 8}, {5, 3, 3, 3}, 1, {2, 2}, {}, {}, "SAME_UPPER"});
  v.push_back({{1, 3, 9, 8}, {5, 3, 4, 3}, 1, {2, 1}, {}, {}, "SAME_LOWER"});
  v.push_back({{1, 3, 9, 8}, {5, 3, 4, 3}, 1, {2, 2}, {}, {}, "VALID"});
  v.push_back({{3, 4, 17}, {6, 2, 4}, 2, {3}, {2}, {1, 2}});                           // 1-D
  v.push_back({{1, 2, 5, 6, 7}, {3, 2, 3, 2, 3}, 1, {1, 2, 1}, {}, {1, 0, 1, 1, 1, 0}}); // 3-D
  v.push_back({{1, 3, 7, 9}, {4, 3, 7, 7}, 1, {}, {}, {3, 3, 3, 3}, "NOTSET", false}); // 7x7, no bias
  ConvCase init{{1, 3, 8, 8}, {4, 3, 3, 3}, 1, {}, {}, {1, 1, 1, 1}};
  init.weight_initializer = true;
  v.push_back(init);
  // Unit spatial axes (size 1, one tap, no padding) are dropped by the fast path:
  ConvCase tall{{1, 32, 40, 1}, {32, 32, 5, 1}, 1, {}, {}, {}};                     // 1-D written as 2-D (jax2tf)
  tall.weight_initializer = true;                                                  // the packed filters too
  v.push_back(tall);
  v.push_back({{2, 16, 1, 30}, {24, 16, 1, 3}, 1, {1, 2}, {}, {0, 1, 0, 1}});        // unit H, strided padded W
  v.push_back({{1, 4, 1, 9}, {5, 4, 1, 3}, 1, {}, {}, {1, 0, 1, 0}});                // padded unit H: kept
  v.push_back({{1, 3, 1, 8, 1}, {4, 3, 1, 3, 1}, 1, {}, {2, 1, 1}, {}});              // 3-D with two unit axes
  v.push_back({{2, 6, 1, 1}, {5, 6, 1, 1}, 1, {}, {}, {}});                           // all unit: one axis stays
  // Pads far beyond the input, legal with dilations of 10^9 (each output reads its centre
  // tap): the paths that copy a padded plane (depthwise, lanes, smallk, implicit GEMM) would
  // need exabytes and failed (std::bad_alloc, an overflowed scratch size); im2col and the
  // direct loops skip padding taps (spatial.h padded_input_near).
  const int64_t B = 1000000000;
  v.push_back({{1, 16, 5, 5}, {16, 16, 3, 3}, 1, {}, {B, B}, {B, B, B, B}});
  v.push_back({{1, 3, 5, 5}, {8, 3, 3, 3}, 1, {}, {B, B}, {B, B, B, B}});
  v.push_back({{1, 16, 9, 9}, {32, 16, 3, 3}, 1, {2, 2}, {B, 1}, {B, 1, B, 1}});
  v.push_back({{1, 16, 5, 5}, {16, 1, 3, 3}, 16, {}, {B, B}, {B, B, B, B}});
  v.push_back({{1, 4, 7}, {8, 4, 5}, 1, {}, {B}, {2 * B, 2 * B}});
  return v;
}

TEST(Conv, HandComputed) {
  // 3x3 input 1..9, 2x2 kernel of ones, no padding: sums of 2x2 blocks; bias 0.5.
  ModelBuilder mb(11);
  mb.input("X", DType::Float32, {1, 1, 3, 3});
  mb.initializer("W", Tensor::from_vector<float>({1, 1, 2, 2}, {1, 1, 1, 1}));
  mb.initializer("B", Tensor::from_vector<float>({1}, {0.5f}));
  mb.node("Conv", {"X", "W", "B"}, {"Y"});
  mb.output("Y");
  Tensor x = Tensor::from_vector<float>({1, 1, 3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9});
  Tensor expected = Tensor::from_vector<float>({1, 1, 2, 2}, {12.5f, 16.5f, 24.5f, 28.5f});
  for (KernelMode m : {KernelMode::Fast, KernelMode::Reference}) {
    auto s = mb.session(options_for(m));
    EXPECT_TRUE(tensors_near(run_single(*s, {{"X", x}}), expected));
  }
}

TEST(Conv, FastMatchesReferenceFloat32) {
  uint32_t seed = 100;
  for (const auto& c : conv_cases()) check_conv("Conv", c, DType::Float32, seed += 10);
}

TEST(Conv, FastMatchesReferenceFloat64) {
  uint32_t seed = 200;
  for (const auto& c : conv_cases()) check_conv("Conv", c, DType::Float64, seed += 10);
}

TEST(ConvTranspose, HandComputed) {
  // 1x1x2x2 input, 2x2 kernel of ones, stride 1: each input pixel spreads over a 2x2 block.
  ModelBuilder mb(11);
  mb.input("X", DType::Float32, {1, 1, 2, 2});
  mb.initializer("W", Tensor::from_vector<float>({1, 1, 2, 2}, {1, 1, 1, 1}));
  mb.node("ConvTranspose", {"X", "W"}, {"Y"});
  mb.output("Y");
  Tensor x = Tensor::from_vector<float>({1, 1, 2, 2}, {1, 2, 3, 4});
  Tensor expected = Tensor::from_vector<float>({1, 1, 3, 3}, {1, 3, 2, 4, 10, 6, 3, 7, 4});
  for (KernelMode m : {KernelMode::Fast, KernelMode::Reference}) {
    auto s = mb.session(options_for(m));
    EXPECT_TRUE(tensors_near(run_single(*s, {{"X", x}}), expected));
  }
}

TEST(ConvTranspose, FastMatchesReference) {
  std::vector<ConvCase> v;
  v.push_back({{1, 3, 5, 4}, {3, 2, 3, 3}, 1, {2, 2}, {}, {1, 1, 1, 1}});
  v.push_back({{2, 4, 3, 5}, {4, 3, 2, 3}, 2, {2, 1}, {2, 1}, {0, 1, 1, 0}});
  v.push_back({{1, 2, 7}, {2, 3, 4}, 1, {3}, {}, {}});
  v.push_back({{1, 2, 3, 4, 2}, {2, 2, 2, 3, 2}, 1, {1, 2, 2}, {}, {}});
  v.push_back({{1, 3, 4, 4}, {3, 2, 3, 3}, 1, {2, 2}, {}, {}, "SAME_UPPER"});
  uint32_t seed = 300;
  for (const auto& c : v)
    for (DType t : {DType::Float32, DType::Float64}) check_conv("ConvTranspose", c, t, seed += 10);
}

// ---- errors ----

std::string conv_error(const Shape& x, const Shape& w, int64_t group, const std::vector<int64_t>& pads = {},
                       const Shape& bias = {}) {
  ModelBuilder mb(13);
  mb.input("X", DType::Float32, x);
  mb.initializer("W", random_tensor(DType::Float32, w, 1));
  std::vector<std::string> in{"X", "W"};
  if (!bias.empty()) {
    mb.initializer("B", random_tensor(DType::Float32, bias, 2));
    in.push_back("B");
  }
  auto n = mb.node("Conv", in, {"Y"}).name("n9").attr("group", group);
  if (!pads.empty()) n.attr("pads", pads);
  mb.output("Y");
  return error_message([&] {
    auto s = mb.session();
    run_single(*s, {{"X", random_tensor(DType::Float32, x, 3)}});
  });
}

TEST(Conv, ErrorChannelMismatch) {
  EXPECT_EQ(conv_error({1, 32, 5, 5}, {8, 64, 3, 3}, 1), "Conv 'n9': input has 32 channels, weight expects 64 (group 1)");
  EXPECT_NE(conv_error({1, 6, 5, 5}, {8, 4, 3, 3}, 2).find("input has 6 channels, weight expects 8 (group 2)"), std::string::npos);
}

TEST(Conv, ErrorKernelLargerThanPaddedInput) {
  const std::string e = conv_error({1, 1, 4, 4}, {1, 1, 7, 7}, 1, {1, 1, 1, 1});
  EXPECT_NE(e.find("Conv 'n9'"), std::string::npos) << e;
  EXPECT_NE(e.find("larger than the padded input 6"), std::string::npos) << e;
}

TEST(Conv, ErrorGroupAndBiasAndRank) {
  EXPECT_NE(conv_error({1, 6, 5, 5}, {5, 2, 3, 3}, 3).find("not divisible by group 3"), std::string::npos);
  EXPECT_NE(conv_error({1, 3, 5, 5}, {4, 3, 3, 3}, 1, {}, {5}).find("bias has shape 5, expected [4]"), std::string::npos);
  EXPECT_NE(conv_error({1, 3, 5, 5}, {4, 3, 3}, 1).find("weight has rank 3"), std::string::npos);
  EXPECT_NE(conv_error({1, 3, 5, 5}, {4, 3, 3, 3}, 1, {1, 1}).find("pads has 2 values, expected 4"), std::string::npos);
}

TEST(ConvTranspose, ErrorChannelMismatch) {
  ModelBuilder mb(13);
  mb.input("X", DType::Float32, {1, 3, 4, 4});
  mb.initializer("W", random_tensor(DType::Float32, {5, 2, 3, 3}, 1));
  mb.node("ConvTranspose", {"X", "W"}, {"Y"}).name("t1");
  mb.output("Y");
  const std::string e = error_message([&] {
    auto s = mb.session();
    run_single(*s, {{"X", random_tensor(DType::Float32, {1, 3, 4, 4}, 3)}});
  });
  EXPECT_EQ(e, "ConvTranspose 't1': input has 3 channels, weight expects 5 (group 1)");
}

}  // namespace
}  // namespace test
}  // namespace onnxmini
