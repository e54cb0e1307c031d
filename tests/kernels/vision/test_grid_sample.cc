// GridSample (kernels/vision/grid_sample.cc) from first principles: a grid
// of pixel centres returns the image in every mode (linear and cubic weights
// are (1, 0) and (0, 1, 0, 0) there), linear sampling of a linear image is
// exact at any point inside it, and hand-derived points outside the image
// check each padding mode. Volumetric grids (opset 20+), the float types,
// threads and the errors. tests/python/test_detection_vs_ort.py compares
// random cases with onnxruntime and the ONNX reference.
#include "tests/kernels/vision/sampling_test_util.h"

namespace onnxmini {
namespace test {
namespace {

AttrSetter gs_attrs(const std::string& mode, const std::string& pad, int64_t align) {
  return [=](NodeBuilder& n) { n.attr("mode", mode).attr("padding_mode", pad).attr("align_corners", align); };
}

Tensor grid_sample(int opset, const Tensor& x, const Tensor& grid, const std::string& mode, const std::string& pad,
                   int64_t align, int threads = 1) {
  return run_node("GridSample", opset, {x, grid}, gs_attrs(mode, pad, align), 1, KernelMode::Fast, threads)[0];
}

// The grid whose point (i, j[, k]) is the centre of pixel (i, j[, k]) of `spatial` (innermost coordinate first).
Tensor centre_grid(DType dtype, int64_t batch, const Shape& spatial, bool align) {
  std::vector<double> v;
  int64_t points = 1;
  for (int64_t s : spatial) points *= s;
  for (int64_t n = 0; n < batch; ++n)
    for (int64_t p = 0; p < points; ++p) {
      std::vector<double> coords(spatial.size());
      int64_t rem = p;
      for (size_t d = spatial.size(); d-- > 0;) {
        coords[d] = pixel_coordinate(rem % spatial[d], spatial[d], align);
        rem /= spatial[d];
      }
      v.insert(v.end(), coords.rbegin(), coords.rend());  // x (last axis) first
    }
  Shape shape = {batch};
  shape.insert(shape.end(), spatial.begin(), spatial.end());
  shape.push_back(static_cast<int64_t>(spatial.size()));
  return float_tensor(dtype, shape, v);
}

// The float32 grid rounds each centre by up to ~1e-7 relative, i.e. ~1e-6 pixel on these axes; times
// a slope of at most ~6 per pixel (values in [-3, 3], cubic overshoot included) -> a few 1e-6.
constexpr double kCentreTol = 1e-5;

TEST(GridSample, PixelCentresReturnTheImage) {
  const Tensor x = random_tensor(DType::Float32, {2, 3, 5, 7}, 1, -3, 3);
  for (int64_t align : {0, 1})
    for (const char* pad : {"zeros", "border", "reflection"}) {
      const Tensor grid = centre_grid(DType::Float32, 2, {5, 7}, align != 0);
      for (const char* mode : {"bilinear", "nearest", "bicubic"})
        EXPECT_TRUE(tensors_near(grid_sample(16, x, grid, mode, pad, align), x, kCentreTol, 0))
            << mode << " " << pad << " align " << align;
      for (const char* mode : {"linear", "nearest", "cubic"})
        EXPECT_TRUE(tensors_near(grid_sample(20, x, grid, mode, pad, align), x, kCentreTol, 0))
            << mode << " " << pad << " align " << align;
    }
}

TEST(GridSample, VolumetricPixelCentresReturnTheImage) {
  const Tensor x = random_tensor(DType::Float32, {2, 2, 3, 4, 5}, 2, -3, 3);
  for (int64_t align : {0, 1})
    for (const char* mode : {"linear", "nearest", "cubic"})
      for (const char* pad : {"zeros", "border", "reflection"})
        EXPECT_TRUE(
            tensors_near(grid_sample(22, x, centre_grid(DType::Float32, 2, {3, 4, 5}, align != 0), mode, pad, align), x,
                         kCentreTol, 0))
            << mode << " " << pad << " align " << align;
}

TEST(GridSample, LinearIsExactOnALinearImage) {
  // X[y, x] = 3 y - 2 x + 1 on 4 x 5 pixels; any point inside [0, 4] x [0, 3] in pixel units
  // interpolates to the same formula. Points given as pixel coordinates, normalised here.
  std::vector<double> img;
  for (int y = 0; y < 4; ++y)
    for (int x = 0; x < 5; ++x) img.push_back(3.0 * y - 2.0 * x + 1);
  const std::vector<std::pair<double, double>> pts = {{0.3, 2.7}, {1.5, 0.25}, {3.9, 2.99}, {0.0, 0.0}};
  for (int64_t align : {0, 1}) {
    std::vector<double> grid, want;
    for (auto [px, py] : pts) {
      grid.push_back(align ? px / 4 * 2 - 1 : (2 * px + 1) / 5 - 1);
      grid.push_back(align ? py / 3 * 2 - 1 : (2 * py + 1) / 4 - 1);
      want.push_back(3 * py - 2 * px + 1);
    }
    for (const char* pad : {"zeros", "border", "reflection"})
      EXPECT_TRUE(tensors_near(grid_sample(20, f32({1, 1, 4, 5}, img), f32({1, 1, 4, 2}, grid), "linear", pad, align),
                               f32({1, 1, 1, 4}, want), 1e-5, 1e-6))
          << pad << " align " << align;
  }
}

TEST(GridSample, PaddingModesOutsideTheImage) {
  // One row of 4 pixels: 10, 20, 30, 40. Points on the row's centre line (y normalised 0).
  const Tensor x = f32({1, 1, 1, 4}, {10, 20, 30, 40});
  auto at = [&](double gx, const char* mode, const char* pad, int64_t align) {
    return values_of(grid_sample(20, x, f32({1, 1, 1, 2}, {gx, 0}), mode, pad, align))[0];
  };
  // align_corners 1: pixel = (g + 1) / 2 * 3. g = 5/3 -> pixel 4, one past the last.
  EXPECT_EQ(at(5.0 / 3, "nearest", "zeros", 1), 0);
  EXPECT_EQ(at(5.0 / 3, "nearest", "border", 1), 40);      // clamped to pixel 3
  EXPECT_EQ(at(5.0 / 3, "nearest", "reflection", 1), 30);  // 4 reflects about 3 to 2
  // Linear at pixel 3.5: zeros mixes 40 and 0 -> 20; border clamps the point to 3 -> 40;
  // reflection folds it to 2.5 -> 35.
  EXPECT_NEAR(at(3.5 / 1.5 - 1, "linear", "zeros", 1), 20, 1e-5);
  EXPECT_NEAR(at(3.5 / 1.5 - 1, "linear", "border", 1), 40, 1e-5);
  EXPECT_NEAR(at(3.5 / 1.5 - 1, "linear", "reflection", 1), 35, 1e-5);
  // align_corners 0: pixel = ((g + 1) * 4 - 1) / 2; the reflection bounds are -0.5 and 3.5.
  // g = -1.5 -> pixel -1.5, reflected about -0.5 to 0.5 -> 15; border clamps to 0 -> 10.
  EXPECT_NEAR(at(-1.5, "linear", "reflection", 0), 15, 1e-5);
  EXPECT_NEAR(at(-1.5, "linear", "border", 0), 10, 1e-5);
  // Far past both ends: reflection folds back and forth (period 2 * 4 pixels): pixel -1.5 - 8 = -9.5 -> 15.
  EXPECT_NEAR(at(-1.5 - 4, "linear", "reflection", 0), 15, 1e-5);
  // Cubic at pixel 1.5 (g = 0, align_corners 0): Keys weights at t = 0.5 are -0.09375, 0.59375,
  // 0.59375, -0.09375 on pixels 0..3.
  EXPECT_NEAR(at(0.0, "cubic", "zeros", 0), -0.09375 * 10 + 0.59375 * 20 + 0.59375 * 30 - 0.09375 * 40, 1e-4);
  // NaN grid entries read zeros; infinite and huge ones are outside (zeros), clamped (border) or
  // folded somewhere into the image (reflection: where exactly is lost to float precision).
  EXPECT_EQ(at(std::nan(""), "linear", "border", 0), 0);
  EXPECT_EQ(at(1e30, "cubic", "zeros", 0), 0);
  EXPECT_EQ(at(-INFINITY, "nearest", "zeros", 1), 0);
  EXPECT_NEAR(at(-INFINITY, "linear", "border", 0), 10, 1e-5);
  EXPECT_NEAR(at(1e30, "cubic", "border", 1), 40, 1e-5);
  for (const char* mode : {"linear", "nearest", "cubic"}) {
    const double v = at(-3e29, mode, "reflection", 0);
    EXPECT_TRUE(v >= 10 - 3 && v <= 40 + 3) << mode << " " << v;  // cubic may overshoot a little
  }
}

TEST(GridSample, FloatTypesAndMixedGrid) {
  const Tensor x32 = random_tensor(DType::Float32, {1, 2, 4, 6}, 3, -3, 3);
  const Tensor g32 = random_tensor(DType::Float32, {1, 3, 5, 2}, 4, -1.2, 1.2);
  const Tensor want = grid_sample(20, x32, g32, "cubic", "reflection", 0);
  // double X and grid: the same points, computed in double.
  std::vector<double> xv = values_of(x32), gv = values_of(g32);
  const Tensor x64 = float_tensor(DType::Float64, x32.shape(), xv), g64 = float_tensor(DType::Float64, g32.shape(), gv);
  EXPECT_TRUE(tensors_near(grid_sample(20, x64, g64, "cubic", "reflection", 0),
                           float_tensor(DType::Float64, want.shape(), values_of(want)), 2e-5, 1e-5));
  // float32 X with a float64 grid holding the same values: the grid is read in float, same result.
  EXPECT_TRUE(tensors_near(grid_sample(20, x32, g64, "cubic", "reflection", 0), want, 0, 0));
  // float16 X: the result rounds to float16 (|y| <~ 4: half-ulp 2^-9).
  const Tensor x16 = float_tensor(DType::Float16, x32.shape(), xv);
  const Tensor y16 = grid_sample(16, x16, g32, "bicubic", "reflection", 0);
  EXPECT_EQ(y16.dtype(), DType::Float16);
  const Tensor want16 =
      grid_sample(16, float_tensor(DType::Float32, x32.shape(), values_of(x16)), g32, "bicubic", "reflection", 0);
  EXPECT_TRUE(tensors_near(float_tensor(DType::Float32, y16.shape(), values_of(y16)), want16, 4e-3, 0));
}

TEST(GridSample, ThreadsMatchOneThread) {
  const Tensor x = random_tensor(DType::Float32, {2, 8, 20, 30}, 7, -3, 3);
  const Tensor grid = random_tensor(DType::Float32, {2, 33, 17, 2}, 8, -1.5, 1.5);
  for (const char* mode : {"linear", "nearest", "cubic"})
    EXPECT_TRUE(tensors_near(grid_sample(20, x, grid, mode, "zeros", 0, 4),
                             grid_sample(20, x, grid, mode, "zeros", 0, 1), 0, 0))
        << mode;
}

TEST(GridSample, Errors) {
  const Tensor x = f32({1, 1, 2, 2}, {1, 2, 3, 4}), grid = f32({1, 1, 1, 2}, {0, 0});
  auto msg = node_error("GridSample", 16, {x, grid}, gs_attrs("linear", "zeros", 0));
  EXPECT_TRUE(contains(msg, "GridSample 'n1': mode must be bilinear, nearest or bicubic, got 'linear' (opset 16)"))
      << msg;
  msg = node_error("GridSample", 20, {x, grid}, gs_attrs("bicubic", "zeros", 0));
  EXPECT_TRUE(contains(msg, "mode must be linear, nearest or cubic, got 'bicubic' (opset 20)")) << msg;
  msg = node_error("GridSample", 20, {x, grid}, gs_attrs("linear", "wrap", 0));
  EXPECT_TRUE(contains(msg, "padding_mode must be zeros, border or reflection, got 'wrap'")) << msg;
  msg = node_error("GridSample", 16, {f32({1, 1, 1, 2, 2}, {1, 2, 3, 4}), f32({1, 1, 1, 1, 3}, {0, 0, 0})},
                   gs_attrs("bilinear", "zeros", 0));
  EXPECT_TRUE(contains(msg, "GridSample 'n1': X must be 4-D [N, C, H, W] (opset 16), got shape 1x1x1x2x2")) << msg;
  msg = node_error("GridSample", 20, {x, f32({1, 1, 1, 3}, {0, 0, 0})}, gs_attrs("linear", "zeros", 0));
  EXPECT_TRUE(contains(msg,
                       "GridSample 'n1': grid shape 1x1x1x3 does not fit X shape 1x1x2x2 "
                       "(want [1, <2 output dims>, 2])"))
      << msg;
  msg = node_error("GridSample", 20, {x, f32({2, 1, 1, 2}, {0, 0, 0, 0})}, gs_attrs("linear", "zeros", 0));
  EXPECT_TRUE(contains(msg, "grid shape 2x1x1x2 does not fit X shape 1x1x2x2")) << msg;
  msg = node_error("GridSample", 20, {f32({1, 1, 0, 2}, {}), grid}, gs_attrs("linear", "zeros", 0));
  EXPECT_TRUE(contains(msg, "X shape 1x1x0x2 has an empty spatial axis to sample from")) << msg;
}

}  // namespace
}  // namespace test
}  // namespace onnxmini
