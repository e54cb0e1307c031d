// ai.onnx.ml ZipMap: turns each row of class scores into a map
// {class label: score}. The output is a sequence with one map per row.
//
// Layout: X is float32 rows x classes (a 1-D X is one row); the labels come
// from classlabels_int64s or classlabels_strings, one per column. Every map
// shares one keys tensor (built once, at session creation) and gets its own
// 1-D values tensor.
//
// Key order: onnxruntime stores the maps as std::map, so its maps iterate in
// ascending key order and a repeated label keeps the last column's score. We
// build the same: keys sorted and unique, each with the column it reads.
#include <algorithm>
#include <map>

#include "kernels/registry.h"
#include "core/thread_pool.h"

namespace onnxmini {
namespace ml {
namespace {

class ZipMapKernel : public Kernel {
 public:
  explicit ZipMapKernel(const KernelInfo& info) {
    auto ints = info.attrs.get_ints("classlabels_int64s", {});
    auto strings = info.attrs.get_strings("classlabels_strings", {});
    if (ints.empty() == strings.empty())
      info.fail("exactly one of classlabels_int64s and classlabels_strings must be given (got {} ints, {} strings)",
                ints.size(), strings.size());
    num_labels_ = static_cast<int64_t>(ints.empty() ? strings.size() : ints.size());
    if (!ints.empty()) keys_ = sorted_keys(ints);
    else keys_ = sorted_keys(strings);
  }

  void prepare(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    if (x.dtype() != DType::Float32) ctx.fail("input has dtype {}; expected float", dtype_name(x.dtype()));
    if (x.rank() != 1 && x.rank() != 2)
      ctx.fail("input has shape {}; expected [classes] or [rows, classes]", shape_to_string(x.shape()));
    const int64_t cols = x.dim(x.rank() - 1);
    if (cols != num_labels_)
      ctx.fail("input has {} columns but there are {} class labels", cols, num_labels_);
  }

  void compute(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    const int64_t rows = x.rank() == 1 ? 1 : x.dim(0), cols = num_labels_;
    const float* data = x.data<float>();
    const int64_t k = keys_.numel();
    std::vector<Value> maps(static_cast<size_t>(rows));
    auto fill = [&](int64_t r0, int64_t r1) {
      for (int64_t r = r0; r < r1; ++r) {
        Tensor values(DType::Float32, {k});
        float* v = values.mutable_data<float>();
        for (int64_t i = 0; i < k; ++i) v[i] = data[r * cols + column_[i]];
        maps[r] = Value::map(Map{keys_, values});
      }
    };
    if (ctx.reference_mode()) fill(0, rows);
    else parallel_for(ctx.threads(), rows, 256, fill);
    ctx.set_output(0, Value::sequence(std::move(maps)));
  }

 private:
  // Sorted unique keys; column_[i] is the last column labelled keys[i].
  template <typename K>
  Tensor sorted_keys(const std::vector<K>& labels) {
    std::map<K, int64_t> last_column;
    for (size_t c = 0; c < labels.size(); ++c) last_column[labels[c]] = static_cast<int64_t>(c);
    std::vector<K> keys;
    for (const auto& kv : last_column) {
      keys.push_back(kv.first);
      column_.push_back(kv.second);
    }
    return Tensor::from_vector<K>({static_cast<int64_t>(keys.size())}, keys);
  }

  int64_t num_labels_ = 0;
  Tensor keys_;
  std::vector<int64_t> column_;
};

ONNXMINI_REGISTER_KERNEL("zipmap", "ai.onnx.ml", "ZipMap", 1, INT_MAX, make_kernel<ZipMapKernel>);

}  // namespace
}  // namespace ml
}  // namespace onnxmini

ONNXMINI_KERNEL_FILE(ml_zipmap);
