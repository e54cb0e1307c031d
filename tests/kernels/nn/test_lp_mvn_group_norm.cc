// LpNormalization, LpPool / GlobalLpPool, MeanVarianceNormalization and
// GroupNormalization against brute-force double-precision references written
// here from the ONNX definitions, fast vs reference kernels, half types, and
// error messages.
#include <gtest/gtest.h>

#include <cmath>
#include <map>

#include "core/shape_util.h"
#include "tests/common/op_test_util.h"

namespace onnxmini {
namespace test {
namespace {

Tensor doubles_like(DType t, const Shape& s, const std::vector<double>& v) {
  Tensor out(t, s);
  for (int64_t i = 0; i < out.numel(); ++i) {
    if (t == DType::Float64) out.mutable_data<double>()[i] = v[i];
    else out.mutable_data<float>()[i] = static_cast<float>(v[i]);
  }
  return out;
}

// ---- LpNormalization: x / ||x||_p along axis
Tensor lp_norm_ref(const Tensor& x, int64_t axis, int p) {
  const Shape& s = x.shape();
  axis = *normalize_axis(axis, static_cast<int64_t>(s.size()));
  const int64_t outer = shape_product(s, 0, axis), n = s[axis], inner = shape_product(s, axis + 1, s.size());
  std::vector<double> y(x.numel());
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      double norm = 0;
      for (int64_t k = 0; k < n; ++k) {
        const double v = x.get_as_double((o * n + k) * inner + i);
        norm += p == 1 ? std::fabs(v) : v * v;
      }
      if (p == 2) norm = std::sqrt(norm);
      for (int64_t k = 0; k < n; ++k) {
        const int64_t at = (o * n + k) * inner + i;
        y[at] = norm == 0 ? 0 : x.get_as_double(at) / norm;
      }
    }
  return doubles_like(x.dtype(), s, y);
}

TEST(LpNormalization, MatchesDefinition) {
  for (DType t : {DType::Float32, DType::Float64})
    for (int p : {1, 2})
      for (int64_t axis : {-1, 0, 1, 2}) {
        const Tensor x = random_values(t, {3, 4, 5}, 7 + p);
        const Tensor y = run_op(22, "LpNormalization", {x}, [&](NodeBuilder& n) { n.attr("p", int64_t{p}).attr("axis", axis); });
        EXPECT_TRUE(tensors_near(y, lp_norm_ref(x, axis, p), 1e-6, 1e-6)) << "p " << p << " axis " << axis;
        EXPECT_TRUE(fast_matches_reference(1, "LpNormalization", {x}, [&](NodeBuilder& n) { n.attr("p", int64_t{p}).attr("axis", axis); }));
      }
}

TEST(LpNormalization, ZeroVectorGivesZeroAndHalfTypes) {
  Tensor x = Tensor::from_vector<float>({2, 3}, {0, 0, 0, 3, 0, 4});
  const Tensor y = run_op(22, "LpNormalization", {x});
  EXPECT_TRUE(tensors_near(y, Tensor::from_vector<float>({2, 3}, {0, 0, 0, 0.6f, 0, 0.8f}), 1e-7, 0));
  Tensor h(DType::Float16, {2, 3});
  for (int64_t i = 0; i < 6; ++i) static_cast<uint16_t*>(h.raw_mut())[i] = float_to_half(x.data<float>()[i]);
  const Tensor yh = run_op(22, "LpNormalization", {h});
  EXPECT_EQ(yh.dtype(), DType::Float16);
  EXPECT_NEAR(yh.get_as_double(3), 0.6, 1e-3);  // float16: 11-bit significand
  EXPECT_NE(op_error(22, "LpNormalization", {x}, [](NodeBuilder& n) { n.attr("p", int64_t{3}); }).find("p must be 1 or 2, got 3"),
            std::string::npos);
  EXPECT_NE(op_error(22, "LpNormalization", {x}, [](NodeBuilder& n) { n.attr("axis", int64_t{2}); }).find("axis 2 is out of range"),
            std::string::npos);
}

// ---- LpPool: (sum |x|^p)^(1/p) per window, padding contributes 0 (2-D, brute force)
Tensor lp_pool_ref(const Tensor& x, std::vector<int64_t> k, std::vector<int64_t> s, std::vector<int64_t> pads, double p,
                   std::vector<int64_t> d = {1, 1}) {
  const int64_t N = x.dim(0), C = x.dim(1), H = x.dim(2), W = x.dim(3);
  const int64_t OH = (H + pads[0] + pads[2] - ((k[0] - 1) * d[0] + 1)) / s[0] + 1;
  const int64_t OW = (W + pads[1] + pads[3] - ((k[1] - 1) * d[1] + 1)) / s[1] + 1;
  std::vector<double> y;
  for (int64_t nc = 0; nc < N * C; ++nc)
    for (int64_t oh = 0; oh < OH; ++oh)
      for (int64_t ow = 0; ow < OW; ++ow) {
        double sum = 0;
        for (int64_t a = 0; a < k[0]; ++a)
          for (int64_t b = 0; b < k[1]; ++b) {
            const int64_t h = oh * s[0] - pads[0] + a * d[0], w = ow * s[1] - pads[1] + b * d[1];
            if (h >= 0 && h < H && w >= 0 && w < W) sum += std::pow(std::fabs(x.get_as_double((nc * H + h) * W + w)), p);
          }
        y.push_back(std::pow(sum, 1.0 / p));
      }
  return doubles_like(x.dtype(), {N, C, OH, OW}, y);
}

TEST(LpPool, MatchesDefinition) {
  const Tensor x = random_values(DType::Float32, {2, 3, 7, 6}, 3);
  for (int64_t p : {1, 2, 3}) {
    auto setup = [&](NodeBuilder& n) {
      n.attr("kernel_shape", std::vector<int64_t>{3, 2}).attr("strides", std::vector<int64_t>{2, 1})
          .attr("pads", std::vector<int64_t>{1, 0, 1, 1}).attr("p", p);
    };
    EXPECT_TRUE(tensors_near(run_op(11, "LpPool", {x}, setup), lp_pool_ref(x, {3, 2}, {2, 1}, {1, 0, 1, 1}, p), 1e-5, 1e-5))
        << "p " << p;
    EXPECT_TRUE(fast_matches_reference(11, "LpPool", {x}, setup));
  }
  auto dilated = [](NodeBuilder& n) {
    n.attr("kernel_shape", std::vector<int64_t>{2, 2}).attr("dilations", std::vector<int64_t>{2, 3}).attr("p", int64_t{2});
  };
  EXPECT_TRUE(tensors_near(run_op(18, "LpPool", {x}, dilated), lp_pool_ref(x, {2, 2}, {1, 1}, {0, 0, 0, 0}, 2, {2, 3}), 1e-5, 1e-5));
  // Opset 1: p is a float attribute.
  auto v1 = [](NodeBuilder& n) { n.attr("kernel_shape", std::vector<int64_t>{2, 2}).attr("p", 3.0f); };
  EXPECT_TRUE(tensors_near(run_op(1, "LpPool", {x}, v1), lp_pool_ref(x, {2, 2}, {1, 1}, {0, 0, 0, 0}, 3), 1e-5, 1e-5));
}

TEST(GlobalLpPool, MatchesDefinition) {
  const Tensor x = random_values(DType::Float64, {2, 3, 4, 5}, 9);
  const Tensor y = run_op(2, "GlobalLpPool", {x}, [](NodeBuilder& n) { n.attr("p", int64_t{3}); });
  ASSERT_EQ(y.shape(), (Shape{2, 3, 1, 1}));
  EXPECT_TRUE(tensors_near(y, lp_pool_ref(x, {4, 5}, {1, 1}, {0, 0, 0, 0}, 3).view({2, 3, 1, 1}), 1e-12, 1e-12));
}

TEST(LpPool, Errors) {
  const Tensor x = random_values(DType::Float32, {1, 1, 3, 3}, 1);
  EXPECT_NE(op_error(11, "LpPool", {x}, [](NodeBuilder& n) { n.attr("kernel_shape", std::vector<int64_t>{2}); })
                .find("expected N x C and 1 spatial axes"),
            std::string::npos);
  EXPECT_NE(op_error(11, "LpPool", {x}, [](NodeBuilder& n) { n.attr("kernel_shape", std::vector<int64_t>{5, 5}); })
                .find("larger than the padded input"),
            std::string::npos);
  EXPECT_NE(op_error(11, "LpPool", {random_values(DType::Int32, {1, 1, 3, 3}, 1)},
                     [](NodeBuilder& n) { n.attr("kernel_shape", std::vector<int64_t>{2, 2}); })
                .find("int32"),
            std::string::npos);
}

// ---- MeanVarianceNormalization: (x - mean) / (sqrt(var) + 1e-9) over axes
Tensor mvn_ref(const Tensor& x, const std::vector<int64_t>& axes) {
  const Shape& s = x.shape();
  std::vector<bool> red(s.size(), false);
  for (int64_t a : axes) red[*normalize_axis(a, static_cast<int64_t>(s.size()))] = true;
  std::vector<int64_t> coord(s.size());
  auto key = [&](int64_t i) {  // flat index over the kept axes
    unravel_index(i, s, coord.data());
    int64_t k = 0;
    for (size_t d = 0; d < s.size(); ++d)
      if (!red[d]) k = k * s[d] + coord[d];
    return k;
  };
  std::map<int64_t, std::vector<int64_t>> groups;
  for (int64_t i = 0; i < x.numel(); ++i) groups[key(i)].push_back(i);
  std::vector<double> y(x.numel());
  for (const auto& [k, members] : groups) {
    double mean = 0, var = 0;
    for (int64_t i : members) mean += x.get_as_double(i);
    mean /= members.size();
    for (int64_t i : members) var += std::pow(x.get_as_double(i) - mean, 2);
    var /= members.size();
    for (int64_t i : members) y[i] = (x.get_as_double(i) - mean) / (std::sqrt(var) + 1e-9);
  }
  return doubles_like(x.dtype(), s, y);
}

TEST(MeanVarianceNormalization, MatchesDefinition) {
  const Tensor x = random_values(DType::Float32, {2, 3, 4, 5}, 5);
  EXPECT_TRUE(tensors_near(run_op(13, "MeanVarianceNormalization", {x}), mvn_ref(x, {0, 2, 3}), 1e-5, 1e-5));
  for (const std::vector<int64_t>& axes : std::vector<std::vector<int64_t>>{{1}, {-1, 1}, {0, 1, 2, 3}, {2}}) {
    const Tensor y = run_op(13, "MeanVarianceNormalization", {x}, [&](NodeBuilder& n) { n.attr("axes", axes); });
    EXPECT_TRUE(tensors_near(y, mvn_ref(x, axes), 1e-5, 1e-5)) << axes.size();
  }
  EXPECT_NE(op_error(13, "MeanVarianceNormalization", {x}, [](NodeBuilder& n) { n.attr("axes", std::vector<int64_t>{1, -3}); })
                .find("axes lists axis -3 twice"),
            std::string::npos);
  EXPECT_NE(op_error(13, "MeanVarianceNormalization", {x}, [](NodeBuilder& n) { n.attr("axes", std::vector<int64_t>{4}); })
                .find("axes entry 4 is out of range"),
            std::string::npos);
}

// ---- GroupNormalization
Tensor group_norm_ref(const Tensor& x, const Tensor& scale, const Tensor& bias, int64_t G, bool per_channel, double eps) {
  const int64_t N = x.dim(0), C = x.dim(1), S = x.numel() / (N * C), cpg = C / G;
  std::vector<double> y(x.numel());
  for (int64_t n = 0; n < N; ++n)
    for (int64_t g = 0; g < G; ++g) {
      const int64_t base = (n * C + g * cpg) * S, len = cpg * S;
      double mean = 0, var = 0;
      for (int64_t i = 0; i < len; ++i) mean += x.get_as_double(base + i);
      mean /= len;
      for (int64_t i = 0; i < len; ++i) var += std::pow(x.get_as_double(base + i) - mean, 2);
      var /= len;
      for (int64_t i = 0; i < len; ++i) {
        const int64_t c = g * cpg + i / S, p = per_channel ? c : g;
        y[base + i] = (x.get_as_double(base + i) - mean) / std::sqrt(var + eps) * scale.get_as_double(p) + bias.get_as_double(p);
      }
    }
  return doubles_like(x.dtype(), x.shape(), y);
}

TEST(GroupNormalization, Opset18And21) {
  const Tensor x = random_values(DType::Float32, {2, 6, 3, 4}, 11);
  auto attrs = [](NodeBuilder& n) { n.attr("num_groups", int64_t{3}).attr("epsilon", 1e-3f); };
  const Tensor sg = random_values(DType::Float32, {3}, 1), bg = random_values(DType::Float32, {3}, 2);
  EXPECT_TRUE(tensors_near(run_op(18, "GroupNormalization", {x, sg, bg}, attrs), group_norm_ref(x, sg, bg, 3, false, 1e-3f), 1e-5, 1e-5));
  const Tensor sc = random_values(DType::Float32, {6}, 3), bc = random_values(DType::Float32, {6}, 4);
  EXPECT_TRUE(tensors_near(run_op(21, "GroupNormalization", {x, sc, bc}, attrs), group_norm_ref(x, sc, bc, 3, true, 1e-3f), 1e-5, 1e-5));
  EXPECT_TRUE(fast_matches_reference(21, "GroupNormalization", {x, sc, bc}, attrs));
  const Tensor xd = random_values(DType::Float64, {1, 4, 5}, 12), sd = random_values(DType::Float64, {4}, 5),
               bd = random_values(DType::Float64, {4}, 6);
  auto two = [](NodeBuilder& n) { n.attr("num_groups", int64_t{2}); };
  EXPECT_TRUE(tensors_near(run_op(21, "GroupNormalization", {xd, sd, bd}, two), group_norm_ref(xd, sd, bd, 2, true, 1e-5f), 1e-12, 1e-12));
}

TEST(GroupNormalization, Errors) {
  const Tensor x = random_values(DType::Float32, {1, 6, 2}, 1);
  auto four = [](NodeBuilder& n) { n.attr("num_groups", int64_t{4}); };
  EXPECT_NE(op_error(21, "GroupNormalization", {x, random_values(DType::Float32, {6}, 1), random_values(DType::Float32, {6}, 1)}, four)
                .find("do not split into num_groups = 4"),
            std::string::npos);
  auto three = [](NodeBuilder& n) { n.attr("num_groups", int64_t{3}); };
  EXPECT_NE(op_error(21, "GroupNormalization", {x, random_values(DType::Float32, {3}, 1), random_values(DType::Float32, {6}, 1)}, three)
                .find("scale has shape 3, expected [6] (one per channel at opset 21)"),
            std::string::npos);
}

}  // namespace
}  // namespace test
}  // namespace onnxmini
