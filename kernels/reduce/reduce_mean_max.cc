// ReduceMeanMax (domain ai.onnxmini; made only by the optimizer's reduce_mean_max rule,
// runtime/graph_fusion.cc): ReduceMean and ReduceMax of one float32 tensor over the same
// single axis, computed in one pass over the input (CBAM-style channel attention reads
// both of one activation). Attributes: axis (>= 0), keepdims. Outputs: mean, max.
//
// Data layout and blocking: X is viewed as (outer, n, inner) around the axis. inner == 1:
// each output reduces one contiguous run of n floats. inner > 1: an output tile of kTile
// neighbouring columns reads the n rows of the tile once, adding each row to the sums and
// max'ing it into the maxima (a contiguous, vectorisable inner loop). Sums run over blocks
// of kLeaf rows / elements, block sums added in order: the same terms in the same order as
// ReduceMean's for n <= kLeaf. Work is split over outer x tiles, independent of the thread
// count, so results are bit-identical for any number of threads. Max propagates NaN as
// ReduceMax does.
#include <algorithm>
#include <climits>

#include "kernels/registry.h"
#include "kernels/tensor/tensor_utils.h"

namespace onnxmini {
namespace {

using namespace tensor_ops;

constexpr int64_t kTile = 64;   // output columns per tile when inner > 1
constexpr int64_t kLeaf = 128;  // rows (or elements) summed plainly before the block sum is added

inline float max_nan(float a, float b) { return (a > b || a != a) ? a : b; }

// inner == 1: mean and max of each contiguous run of n floats.
void mean_max_rows(const float* x, int64_t outer, int64_t n, float* mean, float* mx, ThreadPool* pool) {
  parallel_for(pool, outer, std::max<int64_t>(1, 16384 / n), [&](int64_t o0, int64_t o1) {
    for (int64_t o = o0; o < o1; ++o) {
      const float* row = x + o * n;
      float total = 0.0f, best = row[0];
      for (int64_t b = 0; b < n; b += kLeaf) {
        float block = 0.0f;
        for (int64_t i = b; i < std::min(n, b + kLeaf); ++i) block += row[i], best = max_nan(best, row[i]);
        total += block;
      }
      mean[o] = total / static_cast<float>(n);
      mx[o] = best;
    }
  });
}

// inner > 1: column tiles, rows read once for both results.
void mean_max_columns(const float* x, int64_t outer, int64_t n, int64_t inner, float* mean, float* mx,
                      ThreadPool* pool) {
  const int64_t tiles = (inner + kTile - 1) / kTile;
  parallel_for(pool, outer * tiles, std::max<int64_t>(1, 16384 / (n * kTile)), [&](int64_t t0, int64_t t1) {
    float total[kTile], block[kTile], best[kTile];
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t o = t / tiles, j0 = (t % tiles) * kTile, w = std::min(kTile, inner - j0);
      const float* base = x + o * n * inner + j0;
      std::fill(total, total + w, 0.0f);
      std::copy(base, base + w, best);
      for (int64_t b = 0; b < n; b += kLeaf) {
        std::fill(block, block + w, 0.0f);
        for (int64_t r = b; r < std::min(n, b + kLeaf); ++r) {
          const float* row = base + r * inner;
          for (int64_t j = 0; j < w; ++j) block[j] += row[j], best[j] = max_nan(best[j], row[j]);
        }
        for (int64_t j = 0; j < w; ++j) total[j] += block[j];
      }
      float* m = mean + o * inner + j0;
      for (int64_t j = 0; j < w; ++j) m[j] = total[j] / static_cast<float>(n);
      std::copy(best, best + w, mx + o * inner + j0);
    }
  });
}

class ReduceMeanMaxKernel : public Kernel {
 public:
  explicit ReduceMeanMaxKernel(const KernelInfo& info)
      : axis_(info.attrs.get_int("axis")), keepdims_(info.attrs.get_int("keepdims", 1) != 0) {}

  void prepare(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    if (x.dtype() != DType::Float32) ctx.unsupported("dtype {} is not supported (float32 only)", dtype_name(x.dtype()));
    const int64_t rank = static_cast<int64_t>(x.rank());
    if (axis_ < 0 || axis_ >= rank)
      ctx.fail("axis {} is out of range for input shape {}", axis_, shape_to_string(x.shape()));
    if (x.dim(axis_) == 0) ctx.fail("cannot reduce the empty axis {} (input shape {})", axis_, shape_to_string(x.shape()));
    Shape out;
    for (int64_t d = 0; d < rank; ++d) {
      if (d != axis_) out.push_back(x.dim(d));
      else if (keepdims_) out.push_back(1);
    }
    ctx.allocate_output(0, DType::Float32, out);
    ctx.allocate_output(1, DType::Float32, out);
  }

  void compute(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    float* mean = ctx.output(0).mutable_data<float>();
    float* mx = ctx.output(1).mutable_data<float>();
    const int64_t outer = shape_product(x.shape(), 0, axis_), n = x.dim(axis_);
    const int64_t inner = shape_product(x.shape(), axis_ + 1, x.rank());
    if (outer * inner == 0) return;
    // Plain loops the compiler vectorises for the baseline ISA (one path in reference mode too).
    ctx.stats().variant = inner == 1 ? "reduce_mean_max_rows" : "reduce_mean_max_columns";
    if (inner == 1) mean_max_rows(x.data<float>(), outer, n, mean, mx, ctx.threads());
    else mean_max_columns(x.data<float>(), outer, n, inner, mean, mx, ctx.threads());
  }

  KernelPlan describe(const KernelInfo&, const std::vector<const Shape*>& in) const override {
    if (in.empty() || !in[0] || axis_ < 0 || axis_ >= static_cast<int64_t>(in[0]->size())) return KernelPlan::at_run_time();
    const int64_t inner = shape_product(*in[0], static_cast<size_t>(axis_ + 1), in[0]->size());
    return KernelPlan{inner == 1 ? "reduce_mean_max_rows" : "reduce_mean_max_columns", "portable", ""};
  }

 private:
  int64_t axis_;
  bool keepdims_;
};

}  // namespace

ONNXMINI_REGISTER_KERNEL("reduce_mean_max", "ai.onnxmini", "ReduceMeanMax", 1, INT_MAX,
                         make_kernel<ReduceMeanMaxKernel>);

}  // namespace onnxmini

ONNXMINI_KERNEL_FILE(reduce_reduce_mean_max);
