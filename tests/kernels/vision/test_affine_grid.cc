// AffineGrid (kernels/vision/affine_grid.cc): the identity theta gives the
// normalised pixel centres (both align_corners modes, 2-D and 3-D), a general
// theta gives theta @ (x, y[, z], 1) computed here, the one-pixel axis, the
// float types, and the errors. tests/python/test_detection_vs_ort.py compares
// random thetas with onnxruntime.
#include "tests/kernels/vision/sampling_test_util.h"

namespace onnxmini {
namespace test {
namespace {

AttrSetter align_corners(int64_t a) {
  return [a](NodeBuilder& n) { n.attr("align_corners", a); };
}

Tensor affine_grid(const Tensor& theta, const std::vector<int64_t>& size, int64_t align, int threads = 1) {
  return run_node("AffineGrid", 20, {theta, i64(size)}, align_corners(align), 1, KernelMode::Fast, threads)[0];
}

// grid[n, (d,) h, w, :] = theta[n] @ (x_w, y_h, (z_d,) 1), from the definition.
Tensor expected_grid(DType dtype, const std::vector<double>& theta, const std::vector<int64_t>& size, bool align) {
  const size_t spatial = size.size() - 2;
  const int64_t depth = spatial == 3 ? size[2] : 1, height = size[size.size() - 2], width = size.back();
  std::vector<double> v;
  for (int64_t n = 0; n < size[0]; ++n)
    for (int64_t d = 0; d < depth; ++d)
      for (int64_t h = 0; h < height; ++h)
        for (int64_t w = 0; w < width; ++w) {
          std::vector<double> point = {pixel_coordinate(w, width, align), pixel_coordinate(h, height, align)};
          if (spatial == 3) point.push_back(pixel_coordinate(d, depth, align));
          point.push_back(1);
          for (size_t o = 0; o < spatial; ++o) {
            double acc = 0;
            for (size_t k = 0; k <= spatial; ++k) acc += theta[(n * spatial + o) * (spatial + 1) + k] * point[k];
            v.push_back(acc);
          }
        }
  Shape shape = {size[0]};
  shape.insert(shape.end(), size.begin() + 2, size.end());
  shape.push_back(static_cast<int64_t>(spatial));
  return float_tensor(dtype, shape, v);
}

TEST(AffineGrid, IdentityGivesPixelCentres) {
  // 2-D: x of pixel w of 4 is -1 + (2w + 1) / 4 = -0.75, -0.25, 0.25, 0.75; with align_corners -1, -1/3, 1/3, 1.
  const Tensor id2 = f32({1, 2, 3}, {1, 0, 0, 0, 1, 0});
  EXPECT_EQ(values_of(affine_grid(id2, {1, 1, 1, 4}, 0)), (std::vector<double>{-0.75, 0, -0.25, 0, 0.25, 0, 0.75, 0}));
  EXPECT_TRUE(tensors_near(affine_grid(id2, {1, 1, 1, 4}, 1), f32({1, 1, 4, 2}, {-1, 0, -1.0 / 3, 0, 1.0 / 3, 0, 1, 0}),
                           1e-7, 0));
  // 3-D identity: (x, y, z) of every voxel.
  const Tensor id3 = f32({1, 3, 4}, {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0});
  for (int64_t align : {0, 1})
    EXPECT_TRUE(tensors_near(
        affine_grid(id3, {1, 2, 2, 3, 4}, align),
        expected_grid(DType::Float32, {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0}, {1, 2, 2, 3, 4}, align != 0), 1e-6, 0));
}

TEST(AffineGrid, GeneralThetaFromTheDefinition) {
  for (int64_t align : {0, 1}) {
    const Tensor t2 = random_tensor(DType::Float32, {3, 2, 3}, 1, -2, 2);
    EXPECT_TRUE(tensors_near(affine_grid(t2, {3, 5, 4, 6}, align),
                             expected_grid(DType::Float32, values_of(t2), {3, 5, 4, 6}, align != 0), 1e-5, 1e-5))
        << "2-D align " << align;
    const Tensor t3 = random_tensor(DType::Float32, {2, 3, 4}, 2, -2, 2);
    EXPECT_TRUE(tensors_near(affine_grid(t3, {2, 1, 3, 4, 5}, align),
                             expected_grid(DType::Float32, values_of(t3), {2, 1, 3, 4, 5}, align != 0), 1e-5, 1e-5))
        << "3-D align " << align;
    EXPECT_TRUE(
        tensors_near(affine_grid(t3, {2, 1, 7, 9, 5}, align, 4), affine_grid(t3, {2, 1, 7, 9, 5}, align, 1), 0, 0))
        << "threads, align " << align;
  }
}

TEST(AffineGrid, OnePixelAxisWithAlignCorners) {
  // -1 + 2 i / (L - 1) is undefined for L = 1: the one pixel sits at 0 (PyTorch's choice).
  const Tensor id2 = f32({1, 2, 3}, {1, 0, 0, 0, 1, 0});
  EXPECT_EQ(values_of(affine_grid(id2, {1, 1, 1, 2}, 1)), (std::vector<double>{-1, 0, 1, 0}));
  EXPECT_EQ(values_of(affine_grid(id2, {1, 1, 1, 1}, 0)), (std::vector<double>{0, 0}));
}

TEST(AffineGrid, FloatTypes) {
  const std::vector<double> theta = {0.5, -0.25, 0.125, 2, 1, -0.5};
  for (DType dt : {DType::Float64, DType::Float16, DType::BFloat16}) {
    const Tensor y = affine_grid(float_tensor(dt, {1, 2, 3}, theta), {1, 1, 2, 4}, 0);
    // Base coordinates k/4 and dyadic theta: every product and sum is exact in float; the store rounds.
    EXPECT_TRUE(tensors_near(y, expected_grid(dt, theta, {1, 1, 2, 4}, false), 0, 0)) << dtype_name(dt);
  }
}

TEST(AffineGrid, Errors) {
  const Tensor id2 = f32({1, 2, 3}, {1, 0, 0, 0, 1, 0});
  auto msg = node_error("AffineGrid", 20, {id2, i64({1, 1, 4})}, {});
  EXPECT_TRUE(contains(msg,
                       "AffineGrid 'n1': size must be 1-D int64 (N, C, H, W) or (N, C, D, H, W), got int64 of "
                       "shape 3"))
      << msg;
  msg = node_error("AffineGrid", 20, {id2, i64({1, 1, 2, 3, 4})}, {});
  EXPECT_TRUE(contains(msg, "AffineGrid 'n1': theta shape 1x2x3 does not fit size [1,1,2,3,4] (want [1, 3, 4])"))
      << msg;
  msg = node_error("AffineGrid", 20, {id2, i64({2, 1, 2, 3})}, {});
  EXPECT_TRUE(contains(msg, "theta shape 1x2x3 does not fit size [2,1,2,3] (want [2, 2, 3])")) << msg;
  msg = node_error("AffineGrid", 20, {id2, i64({1, 1, -2, 3})}, {});
  EXPECT_TRUE(contains(msg, "size [1,1,-2,3] has a negative entry")) << msg;
}

}  // namespace
}  // namespace test
}  // namespace onnxmini
