// Resize / Upsample: hand-computed values (bilinear half_pixel, nearest
// Upsample, antialiased linear downscaling, keep_aspect_ratio_policy shapes) and
// the error messages; 4 threads against 1. The float32 fast paths against the
// general one: test_resize_fast.cc. The ONNX node tests (tests/conformance)
// cover the modes.
#include <gtest/gtest.h>

#include "core/float16.h"
#include "tests/common/node_runner.h"

namespace onnxmini {
namespace test {
namespace {

Tensor f32(const Shape& shape, const std::vector<float>& v) { return Tensor::from_vector<float>(shape, v); }

AttrSetter attrs(std::vector<std::pair<std::string, std::string>> s, std::vector<std::pair<std::string, int64_t>> i = {},
                 std::vector<int64_t> axes = {}) {
  return [=](NodeBuilder& n) {
    for (const auto& kv : s) n.attr(kv.first, kv.second);
    for (const auto& kv : i) n.attr(kv.first, kv.second);
    if (!axes.empty()) n.attr("axes", axes);
  };
}

void expect_values(const Tensor& t, const Shape& shape, const std::vector<double>& want) {
  ASSERT_EQ(shape_to_string(t.shape()), shape_to_string(shape));
  const std::vector<double> got = values_of(t);
  ASSERT_EQ(got.size(), want.size());
  for (size_t k = 0; k < want.size(); ++k) EXPECT_NEAR(got[k], want[k], 1e-6) << "element " << k;
}

TEST(Resize, BilinearHalfPixelUpsample) {
  // 2x2 -> 4x4: half_pixel maps output o to (o + 0.5) / 2 - 0.5 = -0.25, 0.25, 0.75, 1.25 (clamped at the edges).
  for (KernelMode m : {KernelMode::Fast, KernelMode::Reference}) {
    auto y = run_node("Resize", 13, {f32({1, 1, 2, 2}, {1, 2, 3, 4}), Tensor(), f32({4}, {1, 1, 2, 2})},
                      attrs({{"mode", "linear"}}), 1, m);
    expect_values(y[0], {1, 1, 4, 4},
                  {1, 1.25, 1.75, 2, 1.5, 1.75, 2.25, 2.5, 2.5, 2.75, 3.25, 3.5, 3, 3.25, 3.75, 4});
  }
}

TEST(Resize, UpsampleNearestRepeats) {
  auto y = run_node("Upsample", 9, {f32({1, 1, 1, 2}, {1, 2}), f32({4}, {1, 1, 2, 3})}, attrs({{"mode", "nearest"}}), 1,
                    KernelMode::Fast);
  expect_values(y[0], {1, 1, 2, 6}, {1, 1, 1, 2, 2, 2, 1, 1, 1, 2, 2, 2});
}

TEST(Resize, NearestInt8AndUInt8) {
  // round_prefer_ceil with asymmetric coordinates: o / 1.5 = 0, 0.67, 1.33, 2, 2.67 (then clamped to 2).
  for (DType t : {DType::UInt8, DType::Int8}) {
    Tensor x(t, {1, 3});
    for (int k = 0; k < 3; ++k) {
      if (t == DType::UInt8) x.mutable_data<uint8_t>()[k] = static_cast<uint8_t>(10 * (k + 1));
      else x.mutable_data<int8_t>()[k] = static_cast<int8_t>(-10 * (k + 1));
    }
    auto y = run_node("Resize", 13, {x, Tensor(), Tensor(), i64({1, 5})},
                      attrs({{"coordinate_transformation_mode", "asymmetric"}, {"nearest_mode", "round_prefer_ceil"}}),
                      1, KernelMode::Fast);
    const double s = t == DType::UInt8 ? 10 : -10;
    expect_values(y[0], {1, 5}, {s, 2 * s, 2 * s, 3 * s, 3 * s});
  }
}

TEST(Resize, AntialiasLinearDownscaleWidensTheFilter) {
  // Scale 1/2: the triangle filter spans 4 taps with weights 1/8, 3/8, 3/8, 1/8
  // around x = 0.5 and x = 2.5 (edge taps clamped to the border).
  auto y = run_node("Resize", 18, {f32({1, 4}, {0, 1, 2, 3}), Tensor(), f32({2}, {1, 0.5f})},
                    attrs({{"mode", "linear"}}, {{"antialias", 1}}), 1, KernelMode::Fast);
  expect_values(y[0], {1, 2}, {0.625, 2.375});
  // Without antialias: plain linear at 0.5 and 2.5.
  auto z = run_node("Resize", 18, {f32({1, 4}, {0, 1, 2, 3}), Tensor(), f32({2}, {1, 0.5f})},
                    attrs({{"mode", "linear"}}), 1, KernelMode::Fast);
  expect_values(z[0], {1, 2}, {0.5, 2.5});
}

TEST(Resize, KeepAspectRatioPolicyWithAxes) {
  Tensor x = iota_tensor(DType::Float32, {1, 1, 2, 4});
  auto small = run_node("Resize", 18, {x, Tensor(), Tensor(), i64({4, 4})},
                        attrs({{"keep_aspect_ratio_policy", "not_larger"}}, {}, {2, 3}), 1, KernelMode::Fast);
  EXPECT_EQ(shape_to_string(small[0].shape()), shape_to_string({1, 1, 2, 4}));  // scale min(2, 1) = 1
  EXPECT_EQ(values_of(small[0]), values_of(x));
  auto big = run_node("Resize", 18, {x, Tensor(), Tensor(), i64({4, 4})},
                      attrs({{"keep_aspect_ratio_policy", "not_smaller"}}, {}, {2, 3}), 1, KernelMode::Fast);
  EXPECT_EQ(shape_to_string(big[0].shape()), shape_to_string({1, 1, 4, 8}));  // scale max(2, 1) = 2
}

TEST(Resize, AntialiasCubicFourThreadsMatchOne) {
  Tensor x = random_tensor(DType::Float32, {2, 3, 5, 7}, 7);
  EXPECT_TRUE(fast_matches_reference("Resize", 19, {x, Tensor(), f32({4}, {1, 1, 1.7f, 0.6f})},
                                     attrs({{"mode", "cubic"}, {"coordinate_transformation_mode", "half_pixel_symmetric"}},
                                           {{"antialias", 1}, {"exclude_outside", 1}}),
                                     1, 1e-6, 1e-6));
}

TEST(Resize, OldOpsetsUseAsymmetricCoordinates) {
  // Resize-10 rounds (prefer floor): width 4 at scale 0.6 -> 2 outputs at x = 0 and 1.67 -> columns 0 and 2.
  auto y = run_node("Resize", 10, {f32({1, 1, 2, 4}, {1, 2, 3, 4, 5, 6, 7, 8}), f32({4}, {1, 1, 0.6f, 0.6f})}, nullptr, 1,
                    KernelMode::Fast);
  expect_values(y[0], {1, 1, 1, 2}, {1, 3});
  // Upsample-7 takes scales from its attribute and floors: each pixel becomes a 2x2 block.
  auto u = run_node("Upsample", 7, {f32({1, 1, 2, 2}, {1, 2, 3, 4})},
                    [](NodeBuilder& n) { n.attr("scales", std::vector<float>{1, 1, 2, 2}); }, 1, KernelMode::Fast);
  expect_values(u[0], {1, 1, 4, 4}, {1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4});
}

TEST(Resize, Float16RoiMatchesFloat32Roi) {
  // roi values exact in float16 (0.25, 0.75): the same crop either way.
  Tensor roi16(DType::Float16, {8});
  const std::vector<float> roi = {0, 0, 0.25f, 0.25f, 1, 1, 0.75f, 0.75f};
  for (int k = 0; k < 8; ++k) static_cast<uint16_t*>(roi16.raw_mut())[k] = float_to_half(roi[k]);
  const Tensor x = random_tensor(DType::Float32, {1, 2, 6, 7}, 3);
  const AttrSetter a = attrs({{"mode", "linear"}, {"coordinate_transformation_mode", "tf_crop_and_resize"}});
  auto half = run_node("Resize", 13, {x, roi16, Tensor(), i64({1, 2, 5, 5})}, a, 1, KernelMode::Fast);
  auto full = run_node("Resize", 13, {x, f32({8}, roi), Tensor(), i64({1, 2, 5, 5})}, a, 1, KernelMode::Fast);
  EXPECT_TRUE(tensors_near(half[0], full[0], 0, 0));
}

TEST(Resize, Errors) {
  Tensor x = iota_tensor(DType::Float32, {1, 1, 2, 2});
  const Tensor scales = f32({4}, {1, 1, 2, 2});
  auto msg = node_error("Resize", 13, {x, Tensor(), scales, i64({1, 1, 4, 4})}, nullptr);
  EXPECT_NE(msg.find("Resize 'n1'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("both scales [1,1,2,2] and sizes [1,1,4,4]"), std::string::npos) << msg;

  msg = node_error("Resize", 13, {x, Tensor(), Tensor(), Tensor()}, nullptr);
  EXPECT_NE(msg.find("neither scales nor sizes"), std::string::npos) << msg;

  msg = node_error("Resize", 13, {x, f32({3}, {0, 0, 1}), Tensor(), i64({1, 1, 3, 3})},
                   attrs({{"coordinate_transformation_mode", "tf_crop_and_resize"}}));
  EXPECT_NE(msg.find("roi has 3 entries, expected 8"), std::string::npos) << msg;

  msg = node_error("Resize", 13, {x, Tensor(), f32({3}, {1, 2, 2})}, nullptr);
  EXPECT_NE(msg.find("scales has 3 entries, expected 4"), std::string::npos) << msg;

  msg = node_error("Resize", 18, {x, Tensor(), Tensor(), i64({4, 4, 4})}, attrs({}, {}, {2, 3}));
  EXPECT_NE(msg.find("sizes has 3 entries, expected 2 (the number of axes)"), std::string::npos) << msg;

  msg = node_error("Resize", 13, {x, Tensor(), scales}, attrs({{"mode", "bicubic"}}));
  EXPECT_NE(msg.find("mode 'bicubic' is not one of nearest, linear, cubic"), std::string::npos) << msg;

  msg = node_error("Resize", 13, {x, Tensor(), scales}, attrs({{"coordinate_transformation_mode", "centre"}}));
  EXPECT_NE(msg.find("coordinate_transformation_mode 'centre'"), std::string::npos) << msg;

  msg = node_error("Resize", 13, {x, Tensor(), scales}, attrs({{"nearest_mode", "round"}}));
  EXPECT_NE(msg.find("nearest_mode 'round'"), std::string::npos) << msg;

  msg = node_error("Resize", 18, {x, Tensor(), scales}, attrs({{"keep_aspect_ratio_policy", "fit"}}));
  EXPECT_NE(msg.find("keep_aspect_ratio_policy 'fit'"), std::string::npos) << msg;

  msg = node_error("Upsample", 9, {x, f32({4}, {1, 1, 2, 2})}, attrs({{"mode", "cubic"}}));
  EXPECT_NE(msg.find("mode 'cubic' is not one of nearest, linear"), std::string::npos) << msg;
}

}  // namespace
}  // namespace test
}  // namespace onnxmini
