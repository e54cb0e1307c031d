// NonMaxSuppression (opsets 10-23), float32 boxes and scores. For every
// (batch, class): the boxes whose score is above score_threshold (when given;
// NaN scores are skipped) are visited by descending score - equal scores by
// ascending box index, as onnxruntime and the ONNX reference order them - and
// a box is kept unless its IoU with an already kept box of the same class
// exceeds iou_threshold, until max_output_boxes_per_class are kept. Output
// [num_selected, 3] int64 rows (batch, class, box), by batch, then class,
// then selection order.
//
// Boxes are normalised once per batch to (y_min, x_min, y_max, x_max) with
// their area, so the IoU test is a handful of min/max. The candidates of a
// class form a heap (selection usually stops after a few of many boxes).
// (batch, class) pairs are independent and split across threads, each
// writing its picks to its own list; the lists are concatenated in (batch,
// class) order at the end. The output's row count is the result, so all of
// this runs in prepare.
#include <algorithm>
#include <array>
#include <utility>
#include <vector>

#include "core/thread_pool.h"
#include "kernels/registry.h"

namespace onnxmini {

namespace {

struct Corners {
  float y_min, x_min, y_max, x_max, area;
};

// center_point_box 0: [y1, x1, y2, x2], either diagonal; 1: [x_center, y_center, width, height].
Corners corners_of(const float* b, bool center_point) {
  Corners c{};
  if (center_point) {
    c.x_min = b[0] - b[2] / 2;
    c.x_max = b[0] + b[2] / 2;
    c.y_min = b[1] - b[3] / 2;
    c.y_max = b[1] + b[3] / 2;
  } else {
    c.y_min = std::min(b[0], b[2]);
    c.y_max = std::max(b[0], b[2]);
    c.x_min = std::min(b[1], b[3]);
    c.x_max = std::max(b[1], b[3]);
  }
  c.area = (c.x_max - c.x_min) * (c.y_max - c.y_min);
  return c;
}

// True when `a` suppresses `b`: they overlap with IoU > threshold. Empty or
// degenerate boxes (zero area) never suppress nor get suppressed.
bool suppresses(const Corners& a, const Corners& b, float iou_threshold) {
  const float ix_min = std::max(a.x_min, b.x_min), ix_max = std::min(a.x_max, b.x_max);
  if (ix_max <= ix_min) return false;
  const float iy_min = std::max(a.y_min, b.y_min), iy_max = std::min(a.y_max, b.y_max);
  if (iy_max <= iy_min) return false;
  const float inter = (ix_max - ix_min) * (iy_max - iy_min);
  const float uni = a.area + b.area - inter;
  if (inter <= 0 || a.area <= 0 || b.area <= 0 || uni <= 0) return false;
  return inter / uni > iou_threshold;
}

struct Params {
  int64_t max_per_class = 0;
  float iou_threshold = 0;
  bool has_score_threshold = false;
  float score_threshold = 0;
};

using Candidate = std::pair<float, int64_t>;  // (score, box)

// The boxes kept for one (batch, class), in selection order: scores s[num_boxes],
// boxes box[num_boxes]. `heap` and `kept` are the caller's buffers (reused).
void select_class(const float* s, const Corners* box, int64_t num_boxes, const Params& p, std::vector<Candidate>& heap,
                  std::vector<int64_t>& kept) {
  // Max-heap order: higher score first, the lower box index first among equal scores.
  const auto below = [](const Candidate& a, const Candidate& b) {
    return a.first < b.first || (a.first == b.first && a.second > b.second);
  };
  heap.clear();
  for (int64_t i = 0; i < num_boxes; ++i)
    if (s[i] == s[i] && (!p.has_score_threshold || s[i] > p.score_threshold)) heap.emplace_back(s[i], i);
  // A heap, not a sort: selection usually stops after a few of many candidates.
  std::make_heap(heap.begin(), heap.end(), below);
  kept.clear();
  while (!heap.empty() && static_cast<int64_t>(kept.size()) < p.max_per_class) {
    std::pop_heap(heap.begin(), heap.end(), below);
    const int64_t i = heap.back().second;
    heap.pop_back();
    bool keep = true;
    for (int64_t k : kept)
      if (suppresses(box[k], box[i], p.iou_threshold)) {
        keep = false;
        break;
      }
    if (keep) kept.push_back(i);
  }
}

class NonMaxSuppressionKernel : public Kernel {
 public:
  explicit NonMaxSuppressionKernel(const KernelInfo& info)
      : center_point_box_(info.attrs.get_int("center_point_box", 0)) {
    if (center_point_box_ != 0 && center_point_box_ != 1)
      info.fail("center_point_box must be 0 or 1, got {}", center_point_box_);
    info.require_dtype(0, {DType::Float32});
    info.require_dtype(1, {DType::Float32});
  }

  void prepare(KernelContext& ctx) override {
    const Tensor& boxes = ctx.input(0);
    const Tensor& scores = ctx.input(1);
    for (size_t i : {0, 1})
      if (ctx.input(i).dtype() != DType::Float32)
        ctx.unsupported("{} dtype {} is not supported (float32 only)", i == 0 ? "boxes" : "scores",
                        dtype_name(ctx.input(i).dtype()));
    if (boxes.rank() != 3 || boxes.dim(2) != 4)
      ctx.fail("boxes must be 3-D [num_batches, num_boxes, 4], got shape {}", shape_to_string(boxes.shape()));
    if (scores.rank() != 3)
      ctx.fail("scores must be 3-D [num_batches, num_classes, num_boxes], got shape {}",
               shape_to_string(scores.shape()));
    if (scores.dim(0) != boxes.dim(0) || scores.dim(2) != boxes.dim(1))
      ctx.fail("scores shape {} does not match boxes shape {} (want [{}, num_classes, {}])",
               shape_to_string(scores.shape()), shape_to_string(boxes.shape()), boxes.dim(0), boxes.dim(1));
    Params p = params(ctx);
    std::vector<std::vector<Pick>> picks = select(ctx, p);
    int64_t total = 0;
    for (const auto& v : picks) total += static_cast<int64_t>(v.size());
    Tensor& out = ctx.allocate_output(0, DType::Int64, {total, 3});
    int64_t* o = out.mutable_data<int64_t>();
    for (const auto& v : picks)
      for (const Pick& k : v) {
        *o++ = k[0];
        *o++ = k[1];
        *o++ = k[2];
      }
  }

  // The selection happens in prepare: the output's row count is its result.
  void compute(KernelContext&) override {}

 private:
  using Pick = std::array<int64_t, 3>;

  // A scalar (or 1-element) optional input, or nullptr when absent (or empty, as the reference reads it).
  static const Tensor* scalar_input(const KernelContext& ctx, size_t i, DType want, const char* what) {
    if (!ctx.has_input(i) || ctx.input(i).numel() == 0) return nullptr;
    const Tensor& t = ctx.input(i);
    if (t.dtype() != want || t.numel() != 1)
      ctx.fail("{} must be a single {} value, got {} of shape {}", what, dtype_name(want), dtype_name(t.dtype()),
               shape_to_string(t.shape()));
    return &t;
  }

  static Params params(const KernelContext& ctx) {
    Params p;
    if (const Tensor* t = scalar_input(ctx, 2, DType::Int64, "max_output_boxes_per_class"))
      p.max_per_class = std::max<int64_t>(0, t->data<int64_t>()[0]);  // negative selects nothing, as 0
    if (const Tensor* t = scalar_input(ctx, 3, DType::Float32, "iou_threshold")) p.iou_threshold = t->data<float>()[0];
    if (!(p.iou_threshold >= 0 && p.iou_threshold <= 1))
      ctx.fail("iou_threshold must be in [0, 1], got {}", p.iou_threshold);
    if (const Tensor* t = scalar_input(ctx, 4, DType::Float32, "score_threshold")) {
      p.has_score_threshold = true;
      p.score_threshold = t->data<float>()[0];
    }
    return p;
  }

  // One list of picks per (batch, class), in that order.
  std::vector<std::vector<Pick>> select(KernelContext& ctx, const Params& p) const {
    const Tensor& boxes_t = ctx.input(0);
    const Tensor& scores_t = ctx.input(1);
    const int64_t batches = boxes_t.dim(0), num_boxes = boxes_t.dim(1), classes = scores_t.dim(1);
    std::vector<std::vector<Pick>> picks(static_cast<size_t>(batches * classes));
    if (p.max_per_class == 0 || num_boxes == 0 || picks.empty()) return picks;
    const float* boxes = boxes_t.data<float>();
    const float* scores = scores_t.data<float>();
    std::vector<Corners> corners(static_cast<size_t>(batches * num_boxes));
    for (int64_t i = 0; i < batches * num_boxes; ++i) corners[i] = corners_of(boxes + 4 * i, center_point_box_ == 1);
    // A (batch, class) costs about num_boxes log num_boxes: chunks of ~16K boxes.
    parallel_for(ctx.threads(), batches * classes, std::max<int64_t>(1, 16384 / num_boxes),
                 [&](int64_t begin, int64_t end) {
                   std::vector<Candidate> heap;
                   std::vector<int64_t> kept;
                   for (int64_t bc = begin; bc < end; ++bc) {
                     const int64_t b = bc / classes, c = bc % classes;
                     select_class(scores + bc * num_boxes, corners.data() + b * num_boxes, num_boxes, p, heap, kept);
                     for (int64_t i : kept) picks[bc].push_back({b, c, i});
                   }
                 });
    return picks;
  }

  int64_t center_point_box_;
};

}  // namespace

ONNXMINI_REGISTER_KERNEL("non_max_suppression", "", "NonMaxSuppression", 10, INT_MAX,
                         make_kernel<NonMaxSuppressionKernel>);

}  // namespace onnxmini

ONNXMINI_KERNEL_FILE(vision_non_max_suppression);
