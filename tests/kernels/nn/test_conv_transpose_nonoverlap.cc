// conv_transpose_nonoverlap (kernels/nn/conv_transpose_nonoverlap.cc): ConvTranspose
// with kernel == stride, dilation 1, 1-D / 2-D, float32, against the reference
// scatter loop: 2x2 stride 2 (interleaved rows), 1x1, 3x3 / 4x4 / 3x2 kernels,
// groups and depthwise, batch 2, 1 and 2 threads, bias or none, row blocks that do
// not divide the input rows; pads that crop, output_padding and output_shape that
// leave bias-only outputs, auto_pad. Near misses (overlapping taps, dilation,
// 3-D, float64) must stay on convtranspose_gemm_col2im. The variant is read from
// both explain() and the profile of a run.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "tests/common/nn_test_util.h"
#include "tests/common/profile_test_util.h"

namespace onnxmini {
namespace test {
namespace {

struct TCase {
  Shape x, w;  // w: C x M/group x kernel...
  int64_t group = 1;
  std::vector<int64_t> strides, pads, output_padding, output_shape, dilations;
  std::string auto_pad = "NOTSET";
  bool bias = true;
  DType dtype = DType::Float32;
};

ModelBuilder model(const TCase& c, uint32_t seed) {
  ModelBuilder mb(17);
  mb.input("X", c.dtype, c.x);
  mb.initializer("W", random_tensor(c.dtype, c.w, seed));
  std::vector<std::string> in{"X", "W"};
  if (c.bias) {
    mb.initializer("B", random_tensor(c.dtype, {c.w[1] * c.group}, seed + 1));
    in.push_back("B");
  }
  auto n = mb.node("ConvTranspose", in, {"Y"}).name("up");
  n.attr("group", c.group).attr("auto_pad", c.auto_pad);
  if (!c.strides.empty()) n.attr("strides", c.strides);
  if (!c.pads.empty()) n.attr("pads", c.pads);
  if (!c.output_padding.empty()) n.attr("output_padding", c.output_padding);
  if (!c.output_shape.empty()) n.attr("output_shape", c.output_shape);
  if (!c.dilations.empty()) n.attr("dilations", c.dilations);
  mb.output("Y");
  return mb;
}

std::string describe(const TCase& c) {
  std::string s = "x " + shape_to_string(c.x) + " w " + shape_to_string(c.w) + " group " + std::to_string(c.group);
  auto list = [](const std::vector<int64_t>& v) {
    std::string r = "[";
    for (int64_t e : v) r += std::to_string(e) + ",";
    return r + "]";
  };
  return s + " strides " + list(c.strides) + " pads " + list(c.pads) + " output_padding " + list(c.output_padding) +
         " output_shape " + list(c.output_shape) + " auto_pad " + c.auto_pad;
}

// The kernel_variant of the node in a profiled fast run.
std::string run_variant(const ModelBuilder& mb, const std::vector<std::pair<std::string, Tensor>>& feeds) {
  return profiled_variant(mb, options_for(KernelMode::Fast, 1), feeds);
}

// Fast (1 or 2 threads) vs reference, and the variant both explain() and the run name.
void check(const TCase& c, uint32_t seed, int threads, const std::string& want_variant) {
  const ModelBuilder mb = model(c, seed);
  const std::vector<std::pair<std::string, Tensor>> feeds{{"X", random_tensor(c.dtype, c.x, seed + 7)}};
  auto r = run_fast_and_reference(mb, feeds, threads);
  // Each output is the bias plus at most C/group products (|x|, |w| <= 1): one
  // reduction of C/group + 1 terms, summed in a different order by the GEMM.
  const int64_t terms = c.x[1] / c.group + 1;
  EXPECT_TRUE(tensors_near(r.first.at(0), r.second.at(0), reduction_atol(c.dtype, terms), 1e-5))
      << describe(c) << " threads " << threads;
  auto s = mb.session(options_for(KernelMode::Fast, 1));
  const auto plan = s->explain();
  ASSERT_FALSE(plan.empty());
  EXPECT_EQ(plan[0].variant, want_variant) << describe(c);
  EXPECT_EQ(run_variant(mb, feeds), want_variant) << describe(c);
}

const char* kNonoverlap = "conv_transpose_nonoverlap";
const char* kCol2im = "convtranspose_gemm_col2im";

TEST(ConvTransposeNonoverlap, KernelEqualsStrideMatchesReference) {
  std::vector<TCase> v;
  v.push_back({{1, 24, 10, 9}, {24, 6, 2, 2}, 1, {2, 2}});                        // the upsampling head, small
  v.push_back({{2, 5, 7, 3}, {5, 3, 2, 2}, 1, {2, 2}, {}, {}, {}, {}, "NOTSET", false});  // batch 2, no bias
  v.push_back({{1, 8, 5, 6}, {8, 3, 2, 2}, 2, {2, 2}});                          // groups
  v.push_back({{2, 6, 4, 5}, {6, 1, 2, 2}, 6, {2, 2}});                          // depthwise
  v.push_back({{1, 7, 6, 5}, {7, 4, 1, 1}, 1, {}});                              // 1x1 stride 1
  v.push_back({{1, 4, 5, 4}, {4, 3, 3, 3}, 1, {3, 3}});                          // 3x3 stride 3
  v.push_back({{1, 3, 3, 5}, {3, 2, 4, 4}, 1, {4, 4}});                          // 4x4 stride 4
  v.push_back({{1, 4, 4, 7}, {4, 5, 3, 2}, 1, {3, 2}});                          // 3x2 stride 3x2
  v.push_back({{2, 4, 9}, {4, 3, 2}, 1, {2}});                                   // 1-D
  v.push_back({{1, 16, 37, 41}, {16, 40, 2, 2}, 1, {2, 2}});                     // several row blocks, last partial
  v.push_back({{1, 24, 80, 80}, {24, 24, 2, 2}, 1, {2, 2}});                     // ppocr_v4_det's shape
  v.push_back({{1, 24, 40, 40}, {24, 1, 2, 2}, 1, {2, 2}});                      // one output channel
  uint32_t seed = 100;
  int i = 0;
  for (const auto& c : v) check(c, seed += 10, 1 + i++ % 2, kNonoverlap);
}

TEST(ConvTransposeNonoverlap, CropPaddingAndOutputShape) {
  std::vector<TCase> v;
  v.push_back({{1, 3, 5, 6}, {3, 2, 2, 2}, 1, {2, 2}, {1, 0, 0, 1}});                // pads crop
  v.push_back({{1, 3, 5, 6}, {3, 2, 2, 2}, 1, {2, 2}, {3, 1, 2, 3}});                // pads beyond one tap
  v.push_back({{2, 4, 4, 5}, {4, 2, 2, 2}, 1, {2, 2}, {}, {1, 1}});                  // output_padding: bias rows
  v.push_back({{1, 2, 3, 4}, {2, 3, 3, 3}, 1, {3, 3}, {}, {2, 1}});                  // output_padding, 3x3
  v.push_back({{1, 3, 4, 4}, {3, 2, 2, 2}, 1, {2, 2}, {}, {}, {9, 10}});             // output_shape larger
  v.push_back({{1, 3, 4, 5}, {3, 2, 2, 2}, 1, {2, 2}, {}, {}, {7, 9}, {}, "SAME_UPPER"});  // negative total pad
  v.push_back({{1, 3, 4, 5}, {3, 2, 2, 2}, 1, {2, 2}, {}, {}, {7, 9}, {}, "SAME_LOWER"});
  v.push_back({{1, 3, 4, 5}, {3, 2, 2, 2}, 1, {2, 2}, {}, {}, {}, {}, "SAME_UPPER"});
  v.push_back({{1, 3, 4, 5}, {3, 2, 2, 2}, 1, {2, 2}, {}, {}, {}, {}, "VALID"});
  v.push_back({{1, 2, 7}, {2, 3, 3}, 1, {3}, {1, 2}, {1}});                          // 1-D crop + output_padding
  v.push_back({{1, 3, 0, 4}, {3, 2, 2, 2}, 1, {2, 2}, {}, {}, {4, 8}});              // empty input: bias only
  uint32_t seed = 400;
  int i = 0;
  for (const auto& c : v) check(c, seed += 10, 1 + i++ % 2, kNonoverlap);
}

TEST(ConvTransposeNonoverlap, NearMissesStayOnCol2im) {
  std::vector<TCase> v;
  v.push_back({{1, 3, 5, 6}, {3, 2, 2, 2}, 1, {1, 1}});                              // stride 1 < kernel: overlap
  v.push_back({{1, 3, 5, 6}, {3, 2, 3, 3}, 1, {2, 2}});                              // 3x3 stride 2
  v.push_back({{1, 3, 5, 6}, {3, 2, 2, 2}, 1, {2, 1}});                              // one axis overlaps
  v.push_back({{1, 3, 5, 6}, {3, 2, 2, 2}, 1, {2, 2}, {}, {}, {}, {2, 2}});           // dilation 2
  v.push_back({{1, 2, 3, 4, 2}, {2, 2, 2, 2, 2}, 1, {2, 2, 2}});                     // 3-D
  TCase f64{{1, 3, 5, 6}, {3, 2, 2, 2}, 1, {2, 2}};
  f64.dtype = DType::Float64;                                                        // float64
  v.push_back(f64);
  uint32_t seed = 700;
  for (const auto& c : v) check(c, seed += 10, 2, kCol2im);
}

}  // namespace
}  // namespace test
}  // namespace onnxmini
