// RoiAlign (kernels/vision/roi_align.cc) from first principles: on a linear
// image f(y, x) = 10 y + x + 1 bilinear sampling is exact, so an avg bin
// equals f at the mean of its samples - the bin centre - for any sampling
// grid; the coordinate modes, spatial_scale, batch_indices and channels then
// have closed-form results. Max mode, clamping and out-of-image samples use
// hand-derived cases. tests/python/test_detection_vs_ort.py compares random
// cases (adaptive sampling, max mode) with onnxruntime.
#include "tests/kernels/vision/sampling_test_util.h"

namespace onnxmini {
namespace test {
namespace {

constexpr int64_t kN = 2, kC = 2, kH = 5, kW = 6;

// X[n, c, y, x] = (c + 1) * (10 y + x + 1) + 100 n.
double ramp(int64_t n, int64_t c, double y, double x) {
  return static_cast<double>(c + 1) * (10 * y + x + 1) + 100.0 * n;
}

Tensor ramp_image(DType dtype = DType::Float32) {
  std::vector<double> v;
  for (int64_t n = 0; n < kN; ++n)
    for (int64_t c = 0; c < kC; ++c)
      for (int64_t y = 0; y < kH; ++y)
        for (int64_t x = 0; x < kW; ++x) v.push_back(ramp(n, c, static_cast<double>(y), static_cast<double>(x)));
  return float_tensor(dtype, {kN, kC, kH, kW}, v);
}

struct RoiAttrs {
  std::string mode = "avg";
  int64_t out_h = 1, out_w = 1, sampling_ratio = 0;
  float spatial_scale = 1.0f;
  std::string ctm;  // empty: the opset's default
};

AttrSetter roi_attrs(const RoiAttrs& a) {
  return [a](NodeBuilder& n) {
    n.attr("mode", a.mode).attr("output_height", a.out_h).attr("output_width", a.out_w);
    n.attr("sampling_ratio", a.sampling_ratio).attr("spatial_scale", a.spatial_scale);
    if (!a.ctm.empty()) n.attr("coordinate_transformation_mode", a.ctm);
  };
}

Tensor roi_align(int opset, const Tensor& x, const Tensor& rois, const std::vector<int64_t>& batch, const RoiAttrs& a,
                 int threads = 1) {
  return run_node("RoiAlign", opset, {x, rois, i64(batch)}, roi_attrs(a), 1, KernelMode::Fast, threads)[0];
}

// The avg bins of a roi whose samples all lie inside the image: f at the bin centres.
// (x1, y1, x2, y2) are already scaled and shifted (the roi's extent in pixel coordinates).
std::vector<double> bin_centres(int64_t n, int64_t c, double x1, double y1, double x2, double y2, int64_t out_h,
                                int64_t out_w) {
  std::vector<double> v;
  for (int64_t ph = 0; ph < out_h; ++ph)
    for (int64_t pw = 0; pw < out_w; ++pw)
      v.push_back(ramp(n, c, y1 + (static_cast<double>(ph) + 0.5) * (y2 - y1) / static_cast<double>(out_h),
                       x1 + (static_cast<double>(pw) + 0.5) * (x2 - x1) / static_cast<double>(out_w)));
  return v;
}

// All (roi, channel) planes of the expected output for rois given in pixel coordinates.
Tensor expected_ramp(DType dtype, const std::vector<std::array<double, 4>>& pixel_rois,
                     const std::vector<int64_t>& batch, int64_t out_h, int64_t out_w) {
  std::vector<double> v;
  for (size_t r = 0; r < pixel_rois.size(); ++r)
    for (int64_t c = 0; c < kC; ++c) {
      const auto& p = pixel_rois[r];
      const std::vector<double> bins = bin_centres(batch[r], c, p[0], p[1], p[2], p[3], out_h, out_w);
      v.insert(v.end(), bins.begin(), bins.end());
    }
  return float_tensor(dtype, {static_cast<int64_t>(pixel_rois.size()), kC, out_h, out_w}, v);
}

TEST(RoiAlign, AvgIsTheBinCentreOfALinearImage) {
  // Pixel-space rois [1, 1, 4, 3] and [0.5, 0.25, 4.75, 3.5]: every sample inside [0, 5] x [0, 4].
  const std::vector<std::array<double, 4>> pixel = {{1, 1, 4, 3}, {0.5, 0.25, 4.75, 3.5}};
  const std::vector<int64_t> batch = {1, 0};
  for (int64_t ratio : {0, 1, 2, 3}) {
    RoiAttrs a;
    a.out_h = 2;
    a.out_w = 3;
    a.sampling_ratio = ratio;
    const Tensor want = expected_ramp(DType::Float32, pixel, batch, 2, 3);
    // Opset 10 (output_half_pixel: no shift) reads rois as the pixel extents.
    EXPECT_TRUE(tensors_near(roi_align(10, ramp_image(), f32({2, 4}, {1, 1, 4, 3, 0.5, 0.25, 4.75, 3.5}), batch, a),
                             want, 1e-4, 1e-6))
        << "opset 10, sampling_ratio " << ratio;
    // Opset 16 default half_pixel shifts by -0.5 pixel; with spatial_scale 0.5 the rois are given at double size.
    a.spatial_scale = 0.5f;
    EXPECT_TRUE(tensors_near(roi_align(16, ramp_image(), f32({2, 4}, {3, 3, 9, 7, 2, 1.5, 10.5, 8}), batch, a), want,
                             1e-4, 1e-6))
        << "opset 16, sampling_ratio " << ratio;
    a.spatial_scale = 1.0f;
    a.ctm = "output_half_pixel";
    EXPECT_TRUE(tensors_near(roi_align(16, ramp_image(), f32({2, 4}, {1, 1, 4, 3, 0.5, 0.25, 4.75, 3.5}), batch, a),
                             want, 1e-4, 1e-6))
        << "opset 16 output_half_pixel, sampling_ratio " << ratio;
  }
}

TEST(RoiAlign, OtherFloatTypes) {
  RoiAttrs a;
  a.out_h = 2;
  a.out_w = 2;
  a.sampling_ratio = 2;
  const std::vector<std::array<double, 4>> pixel = {{1, 1, 3, 3}};
  // Samples at 1.25 .. 2.75: products of dyadic weights and small integers, exact even in float16.
  for (DType dt : {DType::Float64, DType::Float16, DType::BFloat16}) {
    const Tensor y = roi_align(22, ramp_image(dt), float_tensor(dt, {1, 4}, {1.5, 1.5, 3.5, 3.5}), {1}, a);
    EXPECT_TRUE(tensors_near(y, expected_ramp(dt, pixel, {1}, 2, 2), dt == DType::BFloat16 ? 1.0 : 1e-9, 0))
        << dtype_name(dt);
  }
}

TEST(RoiAlign, SmallRoisClampedSamplesAndOutside) {
  RoiAttrs a;
  a.sampling_ratio = 1;
  // output_half_pixel widens an empty roi to one pixel: one sample at (2.5, 2.5) -> f = 28.5.
  EXPECT_EQ(values_of(roi_align(10, ramp_image(), f32({1, 4}, {2, 2, 2, 2}), {0}, a)), (std::vector<double>{28.5, 57}));
  // A sample at x = -0.25 (within a pixel of the image) is clamped to x = 0: f(2.5, 0) = 26.
  EXPECT_EQ(values_of(roi_align(10, ramp_image(), f32({1, 4}, {-0.75, 2, 0.25, 3}), {0}, a)),
            (std::vector<double>{26, 52}));
  // Past the last row (y = 4.5 <= H) the sample reads row 4: f(4, 1.5) = 42.5.
  EXPECT_EQ(values_of(roi_align(10, ramp_image(), f32({1, 4}, {1, 4, 2, 5}), {0}, a)), (std::vector<double>{42.5, 85}));
  // More than a pixel outside: the sample contributes 0, in both modes.
  EXPECT_EQ(values_of(roi_align(10, ramp_image(), f32({1, 4}, {-9, -9, -8, -8}), {0}, a)), (std::vector<double>{0, 0}));
  a.mode = "max";
  EXPECT_EQ(values_of(roi_align(10, ramp_image(), f32({1, 4}, {-9, -9, -8, -8}), {0}, a)), (std::vector<double>{0, 0}));
}

TEST(RoiAlign, MaxTakesTheLargestWeightedCorner) {
  // A constant image of 4. Max mode keeps, per sample, the largest w_i * x_i of its four corners:
  // a sample on a pixel centre has weights (1, 0, 0, 0) -> 4; a sample midway between four pixels
  // has weights 0.25 each -> 1 (the ONNX definition; avg still gives 4).
  const Tensor x = f32({1, 1, 4, 4}, std::vector<double>(16, 4.0));
  RoiAttrs a;
  a.mode = "max";
  a.sampling_ratio = 1;  // roi [1, 1, 3, 3]: one sample at (2, 2)
  EXPECT_EQ(values_of(roi_align(10, x, f32({1, 4}, {1, 1, 3, 3}), {0}, a)), (std::vector<double>{4}));
  a.sampling_ratio = 2;  // samples at 1.5 and 2.5 per axis
  EXPECT_EQ(values_of(roi_align(10, x, f32({1, 4}, {1, 1, 3, 3}), {0}, a)), (std::vector<double>{1}));
  a.mode = "avg";
  EXPECT_EQ(values_of(roi_align(10, x, f32({1, 4}, {1, 1, 3, 3}), {0}, a)), (std::vector<double>{4}));
  // On the ramp, max of a 1-sample bin on pixel (1, 2) is f itself: 10 * 1 + 2 + 1 = 13.
  a.mode = "max";
  a.sampling_ratio = 1;
  EXPECT_EQ(values_of(roi_align(16, ramp_image(), f32({1, 4}, {2, 1, 3, 2}), {0}, a)), (std::vector<double>{13, 26}));
}

TEST(RoiAlign, NanAndHugeRois) {
  // A NaN roi takes no samples with adaptive sampling and NaN samples with a fixed grid: 0 either way.
  RoiAttrs a;
  const double nan = std::nan("");
  for (int64_t ratio : {0, 2}) {
    a.sampling_ratio = ratio;
    EXPECT_EQ(values_of(roi_align(16, ramp_image(), f32({1, 4}, {nan, 1, 3, 3}), {0}, a)), (std::vector<double>{0, 0}))
        << "sampling_ratio " << ratio;
  }
  // A huge roi with a fixed grid is fine (samples fall outside: 0) ...
  a.sampling_ratio = 2;
  EXPECT_EQ(values_of(roi_align(16, ramp_image(), f32({1, 4}, {1e6, 1e6, 1e12, 1e12}), {0}, a)),
            (std::vector<double>{0, 0}));
  // ... adaptive sampling would take 1e12 x 1e12 samples: an error instead of hours of work.
  a.sampling_ratio = 0;
  const std::string msg =
      node_error("RoiAlign", 16, {ramp_image(), f32({1, 4}, {0, 0, 1e12, 1e12}), i64({0})}, roi_attrs(a));
  EXPECT_TRUE(contains(msg,
                       "RoiAlign 'n1': roi 0 (0, 0, 1000000000000, 1000000000000) needs 4194304 x 4194304 samples "
                       "per bin of a 1x1 output, over the limit of 4194304 samples per roi (set sampling_ratio)"))
      << msg;
}

TEST(RoiAlign, ThreadsMatchOneThread) {
  const Tensor x = random_tensor(DType::Float32, {3, 16, 20, 24}, 5, -3, 3);
  std::vector<double> r;
  std::vector<int64_t> batch;
  const Tensor corners = random_tensor(DType::Float32, {40, 4}, 6, -2, 22);
  for (int64_t i = 0; i < 40; ++i) {
    const double a = corners.data<float>()[4 * i], b = corners.data<float>()[4 * i + 1];
    const double c = corners.data<float>()[4 * i + 2], d = corners.data<float>()[4 * i + 3];
    r.insert(r.end(), {std::min(a, c), std::min(b, d), std::max(a, c), std::max(b, d)});
    batch.push_back(i % 3);
  }
  for (const char* mode : {"avg", "max"}) {
    RoiAttrs a;
    a.mode = mode;
    a.out_h = 3;
    a.out_w = 4;
    const Tensor one = roi_align(16, x, f32({40, 4}, r), batch, a, 1);
    EXPECT_TRUE(tensors_near(roi_align(16, x, f32({40, 4}, r), batch, a, 4), one, 0, 0)) << mode;
  }
}

TEST(RoiAlign, Errors) {
  const Tensor x = ramp_image(), rois = f32({1, 4}, {1, 1, 3, 3});
  const RoiAttrs a;
  auto err = [&](const Tensor& xx, const Tensor& rr, const Tensor& bb, const RoiAttrs& at = RoiAttrs()) {
    return node_error("RoiAlign", 16, {xx, rr, bb}, roi_attrs(at));
  };
  auto msg = err(f32({2, 5, 6}, std::vector<double>(60, 0)), rois, i64({0}));
  EXPECT_TRUE(contains(msg, "RoiAlign 'n1': X must be 4-D [N, C, H, W], got shape 2x5x6")) << msg;
  msg = err(x, f32({1, 5}, {1, 1, 3, 3, 0}), i64({0}));
  EXPECT_TRUE(contains(msg, "RoiAlign 'n1': rois must be 2-D [num_rois, 4], got shape 1x5")) << msg;
  msg = err(x, rois, i64({0, 1}));
  EXPECT_TRUE(contains(msg, "RoiAlign 'n1': batch_indices must be 1-D int64 [1] (one per roi), got int64 of shape 2"))
      << msg;
  msg = err(x, rois, i64({2}));
  EXPECT_TRUE(contains(msg, "RoiAlign 'n1': batch_indices[0] = 2 is outside [0, 2) (X has shape 2x2x5x6)")) << msg;
  msg = err(x, float_tensor(DType::Float64, {1, 4}, {1, 1, 3, 3}), i64({0}));
  EXPECT_TRUE(contains(msg, "rois dtype double differs from X dtype float")) << msg;
  RoiAttrs bad = a;
  bad.mode = "sum";
  msg = err(x, rois, i64({0}), bad);
  EXPECT_TRUE(contains(msg, "RoiAlign 'n1': mode must be avg or max, got 'sum'")) << msg;
  bad = a;
  bad.ctm = "align_corners";
  msg = err(x, rois, i64({0}), bad);
  EXPECT_TRUE(contains(msg,
                       "coordinate_transformation_mode must be half_pixel or output_half_pixel, got "
                       "'align_corners'"))
      << msg;
  bad = a;
  bad.out_h = 0;
  msg = err(x, rois, i64({0}), bad);
  EXPECT_TRUE(contains(msg, "output_height and output_width must be positive, got 0 and 1")) << msg;
}

}  // namespace
}  // namespace test
}  // namespace onnxmini
