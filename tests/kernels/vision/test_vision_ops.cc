// DepthToSpace, SpaceToDepth, LRN, MaxUnpool, Col2Im, CenterCropPad (kernels/vision/): hand-computed
// values, fast vs reference, and the errors naming the node. The ONNX node
// tests (tests/conformance/manifest.txt) cover the remaining cases.
#include "tests/common/node_runner.h"

namespace onnxmini {
namespace test {
namespace {

AttrSetter blocksize(int64_t b, const std::string& mode = "") {
  return [b, mode](NodeBuilder& n) {
    n.attr("blocksize", b);
    if (!mode.empty()) n.attr("mode", mode);
  };
}

std::vector<double> run_values(const std::string& op, int opset, const std::vector<Tensor>& in, const AttrSetter& a,
                               Shape* shape = nullptr) {
  Tensor y = run_node(op, opset, in, a, 1, KernelMode::Fast)[0];
  if (shape) *shape = y.shape();
  return values_of(y);
}

TEST(DepthToSpace, DcrAndCrdHandComputed) {
  Shape s;
  // 8 channels of 1x1, blocksize 2 -> 2 channels of 2x2. DCR reads channel b1*4 + b2*2 + c,
  // CRD reads channel c*4 + b1*2 + b2 (so CRD is the identity order here).
  EXPECT_EQ(run_values("DepthToSpace", 13, {iota_tensor(DType::Float32, {1, 8, 1, 1})}, blocksize(2), &s),
            (std::vector<double>{0, 2, 4, 6, 1, 3, 5, 7}));
  EXPECT_EQ(s, (Shape{1, 2, 2, 2}));
  EXPECT_EQ(run_values("DepthToSpace", 11, {iota_tensor(DType::Int32, {1, 8, 1, 1})}, blocksize(2, "CRD")),
            (std::vector<double>{0, 1, 2, 3, 4, 5, 6, 7}));
  // Opset 1 has no mode attribute: DCR. 4 channels of 1x2 -> one 2x4 image.
  EXPECT_EQ(run_values("DepthToSpace", 1, {iota_tensor(DType::Float32, {1, 4, 1, 2})}, blocksize(2), &s),
            (std::vector<double>{0, 2, 1, 3, 4, 6, 5, 7}));
  EXPECT_EQ(s, (Shape{1, 1, 2, 4}));
}

TEST(DepthToSpace, FastMatchesReferenceAnyWidth) {
  for (DType dt : {DType::Float32, DType::Int64, DType::UInt8, DType::String})
    for (const char* mode : {"DCR", "CRD"})
      EXPECT_TRUE(fast_matches_reference("DepthToSpace", 13, {iota_tensor(dt, {2, 36, 5, 7})}, blocksize(3, mode)))
          << dtype_name(dt) << " " << mode;
}

TEST(DepthToSpace, Errors) {
  auto msg = node_error("DepthToSpace", 13, {iota_tensor(DType::Float32, {1, 6, 2, 2})}, blocksize(2));
  EXPECT_NE(msg.find("DepthToSpace 'n1': channel count 6 is not divisible by blocksize² = 4"), std::string::npos)
      << msg;
  msg = node_error("DepthToSpace", 13, {iota_tensor(DType::Float32, {4, 2, 2})}, blocksize(2));
  EXPECT_NE(msg.find("DepthToSpace 'n1': input must be 4-D [N, C, H, W], got shape 4x2x2"), std::string::npos) << msg;
  msg = node_error("DepthToSpace", 13, {iota_tensor(DType::Float32, {1, 4, 2, 2})}, blocksize(0));
  EXPECT_NE(msg.find("DepthToSpace 'n1': blocksize must be a positive integer, got 0"), std::string::npos) << msg;
  msg = node_error("DepthToSpace", 13, {iota_tensor(DType::Float32, {1, 4, 2, 2})}, blocksize(2, "XYZ"));
  EXPECT_NE(msg.find("mode must be DCR or CRD, got 'XYZ'"), std::string::npos) << msg;
}

TEST(SpaceToDepth, HandComputedAndInverse) {
  Shape s;
  // One 2x4 image, blocksize 2: channel b1*2 + b2 holds x[h*2 + b1, w*2 + b2].
  EXPECT_EQ(run_values("SpaceToDepth", 13, {iota_tensor(DType::Float32, {1, 1, 2, 4})}, blocksize(2), &s),
            (std::vector<double>{0, 2, 1, 3, 4, 6, 5, 7}));
  EXPECT_EQ(s, (Shape{1, 4, 1, 2}));
  // SpaceToDepth undoes DepthToSpace (DCR).
  Tensor x = random_tensor(DType::Float32, {2, 18, 4, 5}, 7);
  Tensor d = run_node("DepthToSpace", 13, {x}, blocksize(3), 1, KernelMode::Fast)[0];
  EXPECT_EQ(run_values("SpaceToDepth", 1, {d}, blocksize(3)), values_of(x));
  EXPECT_TRUE(fast_matches_reference("SpaceToDepth", 13, {iota_tensor(DType::Int32, {3, 5, 12, 8})}, blocksize(4)));
}

TEST(SpaceToDepth, CrdModeOfOpset28) {
  Shape s;
  // Two 2x2 channels, blocksize 2: CRD puts channel c's block (b1, b2) at c*4 + b1*2 + b2
  // (DCR at (b1*2 + b2)*2 + c).
  EXPECT_EQ(run_values("SpaceToDepth", 28, {iota_tensor(DType::Float32, {1, 2, 2, 2})}, blocksize(2, "CRD"), &s),
            (std::vector<double>{0, 1, 2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(s, (Shape{1, 8, 1, 1}));
  EXPECT_EQ(run_values("SpaceToDepth", 28, {iota_tensor(DType::Float32, {1, 2, 2, 2})}, blocksize(2, "DCR")),
            (std::vector<double>{0, 4, 1, 5, 2, 6, 3, 7}));
  // CRD SpaceToDepth undoes CRD DepthToSpace.
  Tensor x = random_tensor(DType::Float32, {2, 18, 4, 5}, 11);
  Tensor d = run_node("DepthToSpace", 13, {x}, blocksize(3, "CRD"), 1, KernelMode::Fast)[0];
  EXPECT_EQ(run_values("SpaceToDepth", 28, {d}, blocksize(3, "CRD")), values_of(x));
  for (DType dt : {DType::UInt8, DType::Int64, DType::String})
    EXPECT_TRUE(fast_matches_reference("SpaceToDepth", 28, {iota_tensor(dt, {3, 5, 12, 8})}, blocksize(4, "CRD")))
        << dtype_name(dt);
}

TEST(SpaceToDepth, Errors) {
  auto msg = node_error("SpaceToDepth", 13, {iota_tensor(DType::Float32, {1, 1, 4, 3})}, blocksize(2));
  EXPECT_NE(msg.find("SpaceToDepth 'n1': spatial dims 4x3 are not divisible by blocksize 2"), std::string::npos) << msg;
  msg = node_error("SpaceToDepth", 13, {iota_tensor(DType::Float32, {1, 1, 4, 4, 4})}, blocksize(2));
  EXPECT_NE(msg.find("input must be 4-D"), std::string::npos) << msg;
  msg = node_error("SpaceToDepth", 28, {iota_tensor(DType::Float32, {1, 1, 4, 4})}, blocksize(2, "CDR"));
  EXPECT_NE(msg.find("SpaceToDepth 'n1': mode must be DCR or CRD, got 'CDR'"), std::string::npos) << msg;
}

AttrSetter lrn(int64_t size, float alpha, float beta, float bias) {
  return [=](NodeBuilder& n) { n.attr("size", size).attr("alpha", alpha).attr("beta", beta).attr("bias", bias); };
}

TEST(LRN, HandComputedWindows) {
  auto x = Tensor::from_vector<float>({1, 3, 1, 1}, {1, 2, 3});
  // size 3 (window c-1..c+1), alpha/size = 1, beta 1, bias 1: y = x / (1 + sum x²).
  auto y = run_values("LRN", 13, {x}, lrn(3, 3.f, 1.f, 1.f));
  EXPECT_NEAR(y[0], 1.0 / 6, 1e-6);
  EXPECT_NEAR(y[1], 2.0 / 15, 1e-6);
  EXPECT_NEAR(y[2], 3.0 / 14, 1e-6);
  // size 2: the window is c..c+1 (floor((size-1)/2) = 0 below, ceil = 1 above).
  y = run_values("LRN", 1, {x}, lrn(2, 2.f, 1.f, 1.f));
  EXPECT_NEAR(y[0], 1.0 / 6, 1e-6);
  EXPECT_NEAR(y[1], 2.0 / 14, 1e-6);
  EXPECT_NEAR(y[2], 3.0 / 10, 1e-6);
  // beta 0.5, bias 2 on a 1-channel input: y = x / sqrt(2 + alpha * x²).
  y = run_values("LRN", 13, {Tensor::from_vector<float>({1, 1, 2}, {2, -1})}, lrn(1, 0.5f, 0.5f, 2.f));
  EXPECT_NEAR(y[0], 2 / std::sqrt(4.0), 1e-6);
  EXPECT_NEAR(y[1], -1 / std::sqrt(2.5), 1e-6);
}

TEST(LRN, ThreadsMatchOneThread) {
  Tensor x = random_tensor(DType::Float32, {3, 17, 9, 11}, 3);
  EXPECT_TRUE(fast_matches_reference("LRN", 13, {x}, lrn(5, 1e-3f, 0.75f, 1.f), 1, 0, 1e-6));
}

TEST(LRN, Errors) {
  auto msg = node_error("LRN", 13, {iota_tensor(DType::Float32, {1, 3, 2})}, lrn(0, 1e-4f, 0.75f, 1.f));
  EXPECT_NE(msg.find("LRN 'n1': size must be a positive integer, got 0"), std::string::npos) << msg;
  msg = node_error("LRN", 13, {iota_tensor(DType::Float32, {3})}, lrn(3, 1e-4f, 0.75f, 1.f));
  EXPECT_NE(msg.find("LRN 'n1': input must have rank >= 2 [N, C, ...], got shape 3"), std::string::npos) << msg;
  msg = node_error("LRN", 13, {iota_tensor(DType::Int32, {1, 3, 2})}, lrn(3, 1e-4f, 0.75f, 1.f));
  EXPECT_NE(msg.find("LRN 'n1'"), std::string::npos) << msg;
}

AttrSetter unpool(std::vector<int64_t> kernel, std::vector<int64_t> strides) {
  return [=](NodeBuilder& n) { n.attr("kernel_shape", kernel).attr("strides", strides); };
}

TEST(MaxUnpool, ScattersAtIndices) {
  auto x = Tensor::from_vector<float>({1, 1, 2, 2}, {5, 6, 7, 8});
  Shape s;
  auto y = run_values("MaxUnpool", 11, {x, Tensor::from_vector<int64_t>({1, 1, 2, 2}, {0, 3, 8, 15})},
                      unpool({2, 2}, {2, 2}), &s);
  EXPECT_EQ(s, (Shape{1, 1, 4, 4}));  // (2 - 1) * 2 + 2
  std::vector<double> want(16, 0);
  want[0] = 5, want[3] = 6, want[8] = 7, want[15] = 8;
  EXPECT_EQ(y, want);
  // output_shape enlarges the canvas; elements keep their 4x4 coordinates:
  // index 7 = (1, 3) lands at 1 * 5 + 3 = 8, index 15 = (3, 3) at 18.
  y = run_values("MaxUnpool", 11, {x, Tensor::from_vector<int64_t>({1, 1, 2, 2}, {0, 7, 12, 15}), i64({1, 1, 5, 5})},
                 unpool({2, 2}, {2, 2}), &s);
  EXPECT_EQ(s, (Shape{1, 1, 5, 5}));
  want.assign(25, 0);
  want[0] = 5, want[8] = 6, want[15] = 7, want[18] = 8;
  EXPECT_EQ(y, want);
}

TEST(MaxUnpool, Errors) {
  auto x = Tensor::from_vector<float>({1, 1, 2, 2}, {5, 6, 7, 8});
  auto msg = node_error("MaxUnpool", 11, {x, Tensor::from_vector<int64_t>({1, 1, 2, 2}, {0, 3, 8, 16})},
                        unpool({2, 2}, {2, 2}));
  EXPECT_NE(msg.find("MaxUnpool 'n1': index 16 at position 3 is outside the unpooled shape 1x1x4x4"),
            std::string::npos)
      << msg;
  msg = node_error("MaxUnpool", 11, {x, Tensor::from_vector<int64_t>({1, 1, 2, 2}, {0, 3, 8, 15}), i64({1, 1, 3, 4})},
                   unpool({2, 2}, {2, 2}));
  EXPECT_NE(msg.find("index 15 at position 3 lies outside output_shape 1x1x3x4"), std::string::npos) << msg;
  msg = node_error("MaxUnpool", 11, {x, i64({0, 1, 2, 3})}, unpool({2, 2}, {2, 2}));
  EXPECT_NE(msg.find("indices I have shape 4, X has shape 1x1x2x2"), std::string::npos) << msg;
  msg = node_error("MaxUnpool", 11, {x, x}, unpool({2}, {2}));
  EXPECT_NE(msg.find("want rank 3"), std::string::npos) << msg;
  msg = node_error("MaxUnpool", 11, {x, Tensor::from_vector<int64_t>({1, 1, 2, 2}, {0, 1, 2, 3}), i64({1, 4, 4})},
                   unpool({2, 2}, {2, 2}));
  EXPECT_NE(msg.find("output_shape has 3 entries, X has rank 4"), std::string::npos) << msg;
  msg = node_error("MaxUnpool", 11, {x, Tensor::from_vector<int64_t>({1, 1, 2, 2}, {0, 1, 2, 3})}, [](NodeBuilder& n) {
    n.attr("kernel_shape", std::vector<int64_t>{1, 1}).attr("pads", std::vector<int64_t>{2, 0, 1, 0});
  });
  EXPECT_NE(msg.find("MaxUnpool 'n1': the unpooled shape 1x1x-1x2 has a negative dimension"), std::string::npos)
      << msg;
}

TEST(Col2Im, SumsOverlappingColumns) {
  // Image 1x3, block 1x2: 2 blocks; kernel offset 0 writes positions 0, 1 and offset 1 positions 1, 2.
  Shape s;
  auto y = run_values("Col2Im", 18, {Tensor::from_vector<float>({1, 2, 2}, {1, 2, 3, 4}), i64({1, 3}), i64({1, 2})},
                      nullptr, &s);
  EXPECT_EQ(s, (Shape{1, 1, 1, 3}));
  EXPECT_EQ(y, (std::vector<double>{1, 2 + 3, 4}));
  // Stride 2 with pad 1 at the start: blocks at -1 and 1; the column at -1 falls in the padding.
  y = run_values("Col2Im", 18, {Tensor::from_vector<float>({1, 2, 2}, {1, 2, 3, 4}), i64({1, 3}), i64({1, 2})},
                 [](NodeBuilder& n) { n.attr("strides", std::vector<int64_t>{1, 2}).attr("pads", std::vector<int64_t>{0, 1, 0, 0}); });
  EXPECT_EQ(y, (std::vector<double>{3, 2, 4}));
}

TEST(Col2Im, ThreadsMatchOneThread) {
  EXPECT_TRUE(fast_matches_reference("Col2Im", 18, {random_tensor(DType::Float32, {3, 5 * 9, 36}, 5), i64({8, 8}), i64({3, 3})},
                                     nullptr));
}

TEST(Col2Im, Errors) {
  auto x = random_tensor(DType::Float32, {1, 4, 5}, 1);
  auto msg = node_error("Col2Im", 18, {x, i64({6, 6}), i64({2, 2})}, nullptr);
  EXPECT_NE(msg.find("Col2Im 'n1': input dim 2 is 5 but image_shape [6,6] with block_shape [2,2] gives 25 blocks"),
            std::string::npos)
      << msg;
  msg = node_error("Col2Im", 18, {x, i64({6, 6}), i64({3, 3})}, nullptr);
  EXPECT_NE(msg.find("input dim 1 (4) is not divisible by prod(block_shape) = 9"), std::string::npos) << msg;
  msg = node_error("Col2Im", 18, {x, i64({6, 6}), i64({2})}, nullptr);
  EXPECT_NE(msg.find("image_shape [6,6] and block_shape [2] have different lengths"), std::string::npos) << msg;
  msg = node_error("Col2Im", 18, {x, i64({1, 1}), i64({2, 2})}, nullptr);
  EXPECT_NE(msg.find("axis 0: the block spans 2 but the padded image is only 1"), std::string::npos) << msg;
}

TEST(CenterCropPad, CropAndPadCentred) {
  auto x = Tensor::from_vector<float>({5}, {1, 2, 3, 4, 5});
  EXPECT_EQ(run_values("CenterCropPad", 18, {x, i64({3})}, nullptr), (std::vector<double>{2, 3, 4}));
  // Odd excess: the extra element goes at the end (crop and pad alike).
  EXPECT_EQ(run_values("CenterCropPad", 18, {x, i64({2})}, nullptr), (std::vector<double>{2, 3}));
  EXPECT_EQ(run_values("CenterCropPad", 18, {x, i64({8})}, nullptr), (std::vector<double>{0, 1, 2, 3, 4, 5, 0, 0}));
  Shape s;
  auto y = run_values("CenterCropPad", 18, {iota_tensor(DType::Int64, {2, 3, 4}), i64({1, 2})},
                      [](NodeBuilder& n) { n.attr("axes", std::vector<int64_t>{-1, 0}); }, &s);
  EXPECT_EQ(s, (Shape{2, 3, 1}));  // axis -1 -> 1 (keeps index 1), axis 0 -> 2 (unchanged)
  EXPECT_EQ(y, (std::vector<double>{1, 5, 9, 13, 17, 21}));
  EXPECT_TRUE(fast_matches_reference("CenterCropPad", 18, {iota_tensor(DType::String, {7, 9}), i64({12, 4})}, nullptr));
}

TEST(CenterCropPad, Errors) {
  auto x = iota_tensor(DType::Float32, {4, 4});
  auto msg = node_error("CenterCropPad", 18, {x, i64({2})}, nullptr);
  EXPECT_NE(msg.find("CenterCropPad 'n1': shape [2] has 1 entries for 2 axes"), std::string::npos) << msg;
  msg = node_error("CenterCropPad", 18, {x, i64({2, 2})}, [](NodeBuilder& n) { n.attr("axes", std::vector<int64_t>{1, -1}); });
  EXPECT_NE(msg.find("axes [1,-1] name axis 1 twice"), std::string::npos) << msg;
  msg = node_error("CenterCropPad", 18, {x, i64({2})}, [](NodeBuilder& n) { n.attr("axes", std::vector<int64_t>{2}); });
  EXPECT_NE(msg.find("axes entry 2 is out of range [-2, 2)"), std::string::npos) << msg;
  msg = node_error("CenterCropPad", 18, {x, i64({2, -1})}, nullptr);
  EXPECT_NE(msg.find("shape [2,-1] has a negative entry -1"), std::string::npos) << msg;
}

}  // namespace
}  // namespace test
}  // namespace onnxmini
