// NonMaxSuppression (kernels/vision/non_max_suppression.cc): hand-derived
// selections (IoU computed by hand in the comments), the box formats, the
// strict thresholds, the (batch, class) output order, threads, and the errors
// naming the node and the shapes. tests/python/test_detection_vs_ort.py
// compares random cases with onnxruntime.
#include "tests/kernels/vision/sampling_test_util.h"

namespace onnxmini {
namespace test {
namespace {

AttrSetter center_point(int64_t c) {
  return [c](NodeBuilder& n) { n.attr("center_point_box", c); };
}

Tensor max_out(int64_t v) { return Tensor::from_vector<int64_t>({1}, {v}); }
Tensor scalar_f(float v) { return Tensor::from_vector<float>({1}, {v}); }

// The selected (batch, class, box) rows.
std::vector<std::vector<int64_t>> nms(const std::vector<Tensor>& in, int64_t center = 0, int opset = 11,
                                      int threads = 1) {
  Tensor y = run_node("NonMaxSuppression", opset, in, center_point(center), 1, KernelMode::Fast, threads)[0];
  EXPECT_EQ(y.dtype(), DType::Int64);
  EXPECT_EQ(y.rank(), 2u);
  EXPECT_EQ(y.dim(1), 3);
  std::vector<std::vector<int64_t>> rows;
  for (int64_t r = 0; r < y.dim(0); ++r)
    rows.push_back({y.data<int64_t>()[3 * r], y.data<int64_t>()[3 * r + 1], y.data<int64_t>()[3 * r + 2]});
  return rows;
}

using Rows = std::vector<std::vector<int64_t>>;

// Six unit boxes [y1, x1, y2, x2]: 0-2 around x = 0 (0 and 1 overlap by 0.9 of a unit, IoU 0.9 / 1.1 = 0.82;
// 0 and 2 likewise), 3-4 around x = 10 (IoU 0.82), 5 alone at x = 100.
const std::vector<double> kCorners = {0, 0,  1, 1,  0, 0.1,  1, 1.1,  0, -0.1, 1, 0.9,
                                      0, 10, 1, 11, 0, 10.1, 1, 11.1, 0, 100,  1, 101};
const std::vector<double> kScores = {0.9, 0.75, 0.6, 0.95, 0.5, 0.3};

TEST(NonMaxSuppression, GreedySelectionByDescendingScore) {
  const Tensor boxes = f32({1, 6, 4}, kCorners), scores = f32({1, 1, 6}, kScores);
  // Visit order 3 (0.95), 0, 1, 2, 4, 5: 1 and 2 fall to 0 (IoU 0.82 > 0.5), 4 to 3; 5 survives.
  EXPECT_EQ(nms({boxes, scores, max_out(3), scalar_f(0.5f), scalar_f(0.0f)}), (Rows{{0, 0, 3}, {0, 0, 0}, {0, 0, 5}}));
  // At most 2 per class: the two best survivors.
  EXPECT_EQ(nms({boxes, scores, max_out(2), scalar_f(0.5f), scalar_f(0.0f)}), (Rows{{0, 0, 3}, {0, 0, 0}}));
  // IoU threshold 0.9: 0.82 does not suppress, all six in score order.
  EXPECT_EQ(nms({boxes, scores, max_out(10), scalar_f(0.9f), Tensor()}),
            (Rows{{0, 0, 3}, {0, 0, 0}, {0, 0, 1}, {0, 0, 2}, {0, 0, 4}, {0, 0, 5}}));
  // Score threshold 0.55 (strict): 4 (0.5) and 5 (0.3) are never candidates.
  EXPECT_EQ(nms({boxes, scores, max_out(10), scalar_f(0.5f), scalar_f(0.55f)}), (Rows{{0, 0, 3}, {0, 0, 0}}));
  // The same boxes from the other diagonal ([y2, x2, y1, x1]) select the same.
  std::vector<double> flipped = kCorners;
  for (size_t b = 0; b < 6; ++b) {
    std::swap(flipped[4 * b], flipped[4 * b + 2]);
    std::swap(flipped[4 * b + 1], flipped[4 * b + 3]);
  }
  EXPECT_EQ(nms({f32({1, 6, 4}, flipped), scores, max_out(3), scalar_f(0.5f), scalar_f(0.0f)}, 0, 10),
            (Rows{{0, 0, 3}, {0, 0, 0}, {0, 0, 5}}));
}

TEST(NonMaxSuppression, CenterPointBoxFormat) {
  // The six boxes as [x_center, y_center, width, height].
  std::vector<double> centers;
  for (size_t b = 0; b < 6; ++b) {
    const double y1 = kCorners[4 * b], x1 = kCorners[4 * b + 1], y2 = kCorners[4 * b + 2], x2 = kCorners[4 * b + 3];
    centers.insert(centers.end(), {(x1 + x2) / 2, (y1 + y2) / 2, x2 - x1, y2 - y1});
  }
  EXPECT_EQ(nms({f32({1, 6, 4}, centers), f32({1, 1, 6}, kScores), max_out(3), scalar_f(0.5f), scalar_f(0.0f)}, 1),
            (Rows{{0, 0, 3}, {0, 0, 0}, {0, 0, 5}}));
}

TEST(NonMaxSuppression, ThresholdsAreStrict) {
  // [0,0,1,1] and [0,0,1,0.5]: intersection 0.5, union 1 -> IoU exactly 0.5, which does not exceed 0.5.
  const Tensor boxes = f32({1, 2, 4}, {0, 0, 1, 1, 0, 0, 1, 0.5});
  const Tensor scores = f32({1, 1, 2}, {0.8, 0.4});
  EXPECT_EQ(nms({boxes, scores, max_out(5), scalar_f(0.5f)}), (Rows{{0, 0, 0}, {0, 0, 1}}));
  EXPECT_EQ(nms({boxes, scores, max_out(5), scalar_f(0.49f)}), (Rows{{0, 0, 0}}));
  // A score equal to score_threshold is not above it.
  EXPECT_EQ(nms({boxes, scores, max_out(5), scalar_f(0.5f), scalar_f(0.4f)}), (Rows{{0, 0, 0}}));
  // Degenerate (zero-area) boxes neither suppress nor get suppressed, even at IoU threshold 0.
  const Tensor flat = f32({1, 2, 4}, {0, 0, 0, 1, 0, 0, 0, 1});
  EXPECT_EQ(nms({flat, scores, max_out(5), scalar_f(0.0f)}), (Rows{{0, 0, 0}, {0, 0, 1}}));
}

TEST(NonMaxSuppression, EqualScoresInBoxOrder) {
  // Three identical boxes with one score: the lowest index is kept (onnxruntime's order).
  const Tensor boxes = f32({1, 3, 4}, {0, 0, 1, 1, 0, 0, 1, 1, 0, 0, 1, 1});
  EXPECT_EQ(nms({boxes, f32({1, 1, 3}, {0.7, 0.7, 0.7}), max_out(3), scalar_f(0.5f)}), (Rows{{0, 0, 0}}));
  // Disjoint boxes with equal scores come out in index order.
  const Tensor apart = f32({1, 3, 4}, {0, 0, 1, 1, 0, 5, 1, 6, 0, 9, 1, 10});
  EXPECT_EQ(nms({apart, f32({1, 1, 3}, {0.7, 0.9, 0.7}), max_out(3), scalar_f(0.5f)}),
            (Rows{{0, 0, 1}, {0, 0, 0}, {0, 0, 2}}));
}

TEST(NonMaxSuppression, BatchesAndClassesInOrder) {
  // Batch 0: the six boxes; batch 1: the same boxes shifted, scores per class reversed.
  std::vector<double> boxes = kCorners;
  for (size_t i = 0; i < kCorners.size(); ++i) boxes.push_back(kCorners[i] + 1000);
  std::vector<double> scores;
  for (int b = 0; b < 2; ++b)
    for (int c = 0; c < 2; ++c)
      for (size_t i = 0; i < 6; ++i) scores.push_back(c == 0 ? kScores[i] : kScores[5 - i]);
  // Class 1 scores (0.3, 0.5, 0.95, 0.6, 0.75, 0.9): visit 2, 5, 4, ... -> 2, 5 and 4 overlap
  // no kept box, and the third pick ends the class.
  const Rows want = {{0, 0, 3}, {0, 0, 0}, {0, 0, 5}, {0, 1, 2}, {0, 1, 5}, {0, 1, 4},
                     {1, 0, 3}, {1, 0, 0}, {1, 0, 5}, {1, 1, 2}, {1, 1, 5}, {1, 1, 4}};
  const std::vector<Tensor> in = {f32({2, 6, 4}, boxes), f32({2, 2, 6}, scores), max_out(3), scalar_f(0.5f)};
  EXPECT_EQ(nms(in), want);
  EXPECT_EQ(nms(in, 0, 11, 4), want);  // four threads: the same rows in the same order
}

TEST(NonMaxSuppression, NothingSelected) {
  const Tensor boxes = f32({1, 6, 4}, kCorners), scores = f32({1, 1, 6}, kScores);
  EXPECT_TRUE(nms({boxes, scores}).empty());  // max_output_boxes_per_class absent: 0
  EXPECT_TRUE(nms({boxes, scores, max_out(0), scalar_f(0.5f)}).empty());
  EXPECT_TRUE(nms({boxes, scores, max_out(-3)}).empty());
  EXPECT_TRUE(nms({f32({2, 0, 4}, {}), f32({2, 3, 0}, {}), max_out(4)}).empty());
  // Empty optional inputs read as absent: iou_threshold 0 and no score threshold.
  EXPECT_EQ(nms({boxes, scores, max_out(10), f32({0}, {}), f32({0}, {})}), (Rows{{0, 0, 3}, {0, 0, 0}, {0, 0, 5}}));
}

TEST(NonMaxSuppression, ThreadsMatchOneThread) {
  const Tensor boxes = random_tensor(DType::Float32, {3, 200, 4}, 11, 0, 20);
  const Tensor scores = random_tensor(DType::Float32, {3, 5, 200}, 12, 0, 1);
  const std::vector<Tensor> in = {boxes, scores, max_out(50), scalar_f(0.3f), scalar_f(0.1f)};
  const Rows one = nms(in, 0, 11, 1);
  EXPECT_GT(one.size(), 15u);  // every (batch, class) keeps something
  EXPECT_EQ(nms(in, 0, 11, 4), one);
}

TEST(NonMaxSuppression, ErrorsNameNodeAndShapes) {
  const Tensor scores = f32({1, 1, 6}, kScores);
  auto msg = node_error("NonMaxSuppression", 11, {f32({6, 4}, kCorners), scores, max_out(3)}, {});
  EXPECT_TRUE(contains(msg, "NonMaxSuppression 'n1': boxes must be 3-D [num_batches, num_boxes, 4], got shape 6x4"))
      << msg;
  msg = node_error("NonMaxSuppression", 11, {f32({1, 4, 6}, kCorners), scores, max_out(3)}, {});
  EXPECT_TRUE(contains(msg, "NonMaxSuppression 'n1': boxes must be 3-D [num_batches, num_boxes, 4], got shape 1x4x6"))
      << msg;
  msg = node_error("NonMaxSuppression", 11, {f32({1, 6, 4}, kCorners), f32({1, 6}, kScores), max_out(3)}, {});
  EXPECT_TRUE(contains(msg,
                       "NonMaxSuppression 'n1': scores must be 3-D [num_batches, num_classes, num_boxes], "
                       "got shape 1x6"))
      << msg;
  msg = node_error("NonMaxSuppression", 11, {f32({1, 6, 4}, kCorners), f32({2, 1, 3}, kScores), max_out(3)}, {});
  EXPECT_TRUE(contains(msg,
                       "NonMaxSuppression 'n1': scores shape 2x1x3 does not match boxes shape 1x6x4 "
                       "(want [1, num_classes, 6])"))
      << msg;
  msg = node_error("NonMaxSuppression", 11, {f32({1, 6, 4}, kCorners), f32({1, 2, 3}, kScores), max_out(3)}, {});
  EXPECT_TRUE(contains(msg, "scores shape 1x2x3 does not match boxes shape 1x6x4")) << msg;
  msg = node_error("NonMaxSuppression", 11, {f32({1, 6, 4}, kCorners), scores, max_out(3), scalar_f(1.5f)}, {});
  EXPECT_TRUE(contains(msg, "NonMaxSuppression 'n1': iou_threshold must be in [0, 1], got 1.5")) << msg;
  msg = node_error("NonMaxSuppression", 11, {f32({1, 6, 4}, kCorners), scores, f32({1}, {3})}, {});
  EXPECT_TRUE(contains(msg, "max_output_boxes_per_class must be a single int64 value, got float of shape 1")) << msg;
  msg = node_error("NonMaxSuppression", 11, {f32({1, 6, 4}, kCorners), scores}, center_point(2));
  EXPECT_TRUE(contains(msg, "NonMaxSuppression 'n1': center_point_box must be 0 or 1, got 2")) << msg;
}

}  // namespace
}  // namespace test
}  // namespace onnxmini
