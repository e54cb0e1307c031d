// DeformConv: with zero offsets and no mask it is an ordinary convolution (checked
// against Conv with the same attributes); with random offsets (many samples outside
// the image) and a mask, the fast path (columns + GEMM, 4 threads) matches the
// reference path (sums in double); and its errors.
//
// Tolerance (float): each output sums K = C/group * kH * kW products of values <= 4 in
// magnitude, each sample a 4-term bilinear sum: atol = rtol = 4 * (K + 4) * eps32 * 16.
#include <cmath>

#include "tests/common/node_runner.h"
#include "tests/common/op_test_util.h"

namespace onnxmini {
namespace test {
namespace {

const double kEps32 = std::ldexp(1.0, -23);

struct Case {
  int64_t N, C, H, W, M, kh, kw, group, offset_group;
  std::vector<int64_t> strides, dilations, pads;
};

int64_t out_dim(int64_t in, int64_t k, int64_t s, int64_t d, int64_t p) { return (in + p - ((k - 1) * d + 1)) / s + 1; }

AttrSetter attrs_of(const Case& c) {
  return [c](NodeBuilder& n) {
    n.attr("strides", c.strides).attr("dilations", c.dilations).attr("pads", c.pads).attr("group", c.group);
  };
}

const std::vector<Case> kCases = {{1, 2, 5, 6, 3, 3, 3, 1, 1, {1, 1}, {1, 1}, {0, 0, 0, 0}},
                                  {2, 4, 7, 7, 6, 3, 2, 2, 2, {2, 1}, {1, 2}, {1, 0, 2, 1}},
                                  {1, 6, 9, 8, 4, 2, 3, 2, 3, {1, 2}, {2, 1}, {2, 1, 1, 2}}};

TEST(DeformConv, ZeroOffsetsAreAConvolution) {
  for (const Case& c : kCases) {
    const int64_t oh = out_dim(c.H, c.kh, c.strides[0], c.dilations[0], c.pads[0] + c.pads[2]);
    const int64_t ow = out_dim(c.W, c.kw, c.strides[1], c.dilations[1], c.pads[1] + c.pads[3]);
    const Tensor x = random_values(DType::Float32, {c.N, c.C, c.H, c.W}, 1, -2, 2);
    const Tensor w = random_values(DType::Float32, {c.M, c.C / c.group, c.kh, c.kw}, 2, -1, 1);
    const Tensor b = random_values(DType::Float32, {c.M}, 3, -1, 1);
    Tensor off(DType::Float32, {c.N, c.offset_group * c.kh * c.kw * 2, oh, ow});
    std::fill(off.mutable_data<float>(), off.mutable_data<float>() + off.numel(), 0.f);
    const auto deform = run_node("DeformConv", 22, {x, w, off, b}, [&](NodeBuilder& n) {
      attrs_of(c)(n);
      n.attr("offset_group", c.offset_group);
    }, 1, KernelMode::Fast, 4);
    const auto conv = run_node("Conv", 22, {x, w, b}, attrs_of(c), 1, KernelMode::Reference);
    const double tol = 4 * (c.C / c.group * c.kh * c.kw + 4) * kEps32 * 16;
    EXPECT_TRUE(tensors_near(deform[0], conv[0], tol, tol)) << "M=" << c.M;
  }
}

TEST(DeformConv, FastMatchesReferenceWithOffsetsAndMask) {
  for (DType t : {DType::Float32, DType::Float64})
    for (const Case& c : kCases) {
      const int64_t oh = out_dim(c.H, c.kh, c.strides[0], c.dilations[0], c.pads[0] + c.pads[2]);
      const int64_t ow = out_dim(c.W, c.kw, c.strides[1], c.dilations[1], c.pads[1] + c.pads[3]);
      const std::vector<Tensor> in{random_values(t, {c.N, c.C, c.H, c.W}, 4, -2, 2),
                                   random_values(t, {c.M, c.C / c.group, c.kh, c.kw}, 5, -1, 1),
                                   random_values(t, {c.N, c.offset_group * c.kh * c.kw * 2, oh, ow}, 6, -3, 3),
                                   random_values(t, {c.M}, 7, -1, 1),
                                   random_values(t, {c.N, c.offset_group * c.kh * c.kw, oh, ow}, 8, 0, 1)};
      auto attrs = [&](NodeBuilder& n) {
        attrs_of(c)(n);
        n.attr("offset_group", c.offset_group);
      };
      const auto ref = run_node("DeformConv", 22, in, attrs, 1, KernelMode::Reference);
      const auto fast = run_node("DeformConv", 22, in, attrs, 1, KernelMode::Fast, 4);
      const double tol = t == DType::Float64 ? 1e-12 : 4 * (c.C / c.group * c.kh * c.kw + 4) * kEps32 * 16;
      EXPECT_TRUE(tensors_near(fast[0], ref[0], tol, tol)) << dtype_name(t) << " M=" << c.M;
    }
}

TEST(DeformConv, Errors) {
  const Tensor x = random_values(DType::Float32, {1, 4, 5, 5}, 1);
  const Tensor w = random_values(DType::Float32, {2, 4, 3, 3}, 2);
  EXPECT_NE(node_error("DeformConv", 22, {x, w, Tensor(DType::Float32, {1, 18, 2, 3})}, nullptr)
                .find("DeformConv 'n1': offset has shape 1x18x2x3, expected 1x18x3x3"),
            std::string::npos);
  EXPECT_NE(node_error("DeformConv", 22, {x, w, Tensor(DType::Float32, {1, 18, 3, 3})},
                       [](NodeBuilder& n) { n.attr("offset_group", int64_t{3}); })
                .find("4 input channels are not a multiple of offset_group 3"),
            std::string::npos);
  EXPECT_NE(node_error("DeformConv", 22, {x, w, Tensor(DType::Float32, {1, 18, 3, 3})},
                       [](NodeBuilder& n) { n.attr("dilations", std::vector<int64_t>{INT64_MAX, 1}); })
                .find("overflows int64"),
            std::string::npos);
  EXPECT_NE(node_error("DeformConv", 22, {random_values(DType::Float32, {1, 4, 5}, 3), w, Tensor(DType::Float32, {1, 6, 3})},
                       nullptr)
                .find("only 2-D deformable convolution"),
            std::string::npos);
}

}  // namespace
}  // namespace test
}  // namespace onnxmini
