// TopK (opsets 1-23): k is an attribute before opset 10 and an input after;
// largest / sorted from opset 11. Values keep the input dtype (float, double,
// int8..int64, uint8..uint64); indices are int64. Ties are broken by the lower
// index first, for both largest and smallest. NaN ranks above every number (so
// it comes first with largest=1 and last with largest=0), like numpy's sort.
// The output is always sorted, which sorted=0 allows.
//
// Data layout: the input is (outer, dim, inner) around `axis`; each of the
// outer*inner columns (stride `inner`) is copied into a small (value, index)
// buffer, the k best are selected with nth_element and sorted, and written to
// the (outer, k, inner) outputs. Columns are split across threads. The
// reference path stable-sorts the whole column instead.
#include <cmath>

#include "kernels/registry.h"
#include "kernels/tensor/tensor_utils.h"

namespace onnxmini {

namespace {

using namespace tensor_ops;

template <typename T>
bool is_nan(T v) {
  if constexpr (std::is_floating_point<T>::value) return std::isnan(v);
  else return false;
}

// Strict "a ranks before b" for largest=1 (ties broken by index by the caller).
template <typename T>
bool greater(T a, T b) {
  if (is_nan(a)) return !is_nan(b);
  if (is_nan(b)) return false;
  return a > b;
}

template <typename T>
struct Ranked {
  T value;
  int64_t index;
};

template <typename T>
struct RankOrder {
  bool largest;
  bool operator()(const Ranked<T>& a, const Ranked<T>& b) const {
    const bool ab = largest ? greater(a.value, b.value) : greater(b.value, a.value);
    const bool ba = largest ? greater(b.value, a.value) : greater(a.value, b.value);
    if (ab != ba) return ab;
    return a.index < b.index;  // equal values (or both NaN): lower index first
  }
};

template <typename T>
void topk_columns(KernelContext& ctx, const Tensor& x, int64_t axis, int64_t k, bool largest, Tensor& values,
                  Tensor& indices) {
  const int64_t dim = x.dim(axis);
  const int64_t outer = shape_product(x.shape(), 0, axis), inner = shape_product(x.shape(), axis + 1, x.rank());
  const T* in = x.data<T>();
  T* vout = values.mutable_data<T>();
  int64_t* iout = indices.mutable_data<int64_t>();
  const RankOrder<T> order{largest};
  const bool reference = ctx.reference_mode();
  parallel_for(reference ? nullptr : ctx.threads(), outer * inner, std::max<int64_t>(1, 4096 / std::max<int64_t>(1, dim)),
               [&](int64_t c0, int64_t c1) {
                 std::vector<Ranked<T>> buf(dim);
                 for (int64_t c = c0; c < c1; ++c) {
                   const int64_t o = c / inner, i = c % inner;
                   const T* col = in + o * dim * inner + i;
                   for (int64_t j = 0; j < dim; ++j) buf[j] = {col[j * inner], j};
                   if (reference) {
                     std::stable_sort(buf.begin(), buf.end(), order);
                   } else if (k < dim) {
                     std::nth_element(buf.begin(), buf.begin() + k, buf.end(), order);
                     std::sort(buf.begin(), buf.begin() + k, order);
                   } else {
                     std::sort(buf.begin(), buf.end(), order);
                   }
                   T* vcol = vout + o * k * inner + i;
                   int64_t* icol = iout + o * k * inner + i;
                   for (int64_t j = 0; j < k; ++j) {
                     vcol[j * inner] = buf[j].value;
                     icol[j * inner] = buf[j].index;
                   }
                 }
               });
}

class TopKKernel : public Kernel {
 public:
  explicit TopKKernel(const KernelInfo& info)
      : opset_(info.opset),
        axis_(info.attrs.get_int("axis", -1)),
        k_attr_(info.opset < 10 ? info.attrs.get_int("k") : 0),
        largest_(info.attrs.get_int("largest", 1) != 0) {}

  void prepare(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    const int64_t axis = normalize_axis(ctx, axis_, static_cast<int64_t>(x.rank()));
    const int64_t k = read_k(ctx);
    if (k < 0) ctx.fail("k is {}, must be >= 0", k);
    if (k > x.dim(axis))
      ctx.fail("k {} is larger than dimension {} (size {}) of input {}", k, axis, x.dim(axis), shape_to_string(x.shape()));
    Shape out = x.shape();
    out[axis] = k;
    ctx.allocate_output(0, x.dtype(), out);
    ctx.allocate_output(1, DType::Int64, out);
  }

  void compute(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    const int64_t axis = normalize_axis(ctx, axis_, static_cast<int64_t>(x.rank()));
    const int64_t k = read_k(ctx);
    if (ctx.output(0).numel() == 0) return;
    Tensor& v = ctx.output(0);
    Tensor& i = ctx.output(1);
    switch (x.dtype()) {
      case DType::Float32: return topk_columns<float>(ctx, x, axis, k, largest_, v, i);
      case DType::Float64: return topk_columns<double>(ctx, x, axis, k, largest_, v, i);
      case DType::Int8: return topk_columns<int8_t>(ctx, x, axis, k, largest_, v, i);
      case DType::UInt8: return topk_columns<uint8_t>(ctx, x, axis, k, largest_, v, i);
      case DType::Int16: return topk_columns<int16_t>(ctx, x, axis, k, largest_, v, i);
      case DType::UInt16: return topk_columns<uint16_t>(ctx, x, axis, k, largest_, v, i);
      case DType::Int32: return topk_columns<int32_t>(ctx, x, axis, k, largest_, v, i);
      case DType::UInt32: return topk_columns<uint32_t>(ctx, x, axis, k, largest_, v, i);
      case DType::Int64: return topk_columns<int64_t>(ctx, x, axis, k, largest_, v, i);
      case DType::UInt64: return topk_columns<uint64_t>(ctx, x, axis, k, largest_, v, i);
      default: ctx.unsupported("dtype {} is not supported", dtype_name(x.dtype()));
    }
  }

 private:
  int64_t read_k(const KernelContext& ctx) const {
    if (opset_ < 10) return k_attr_;
    const Tensor& k = ctx.input(1);
    if (k.dtype() != DType::Int64 || k.numel() != 1)
      ctx.fail("K must be an int64 tensor with one element, got {} {}", dtype_name(k.dtype()), shape_to_string(k.shape()));
    return k.data<int64_t>()[0];
  }

  int opset_;
  int64_t axis_, k_attr_;
  bool largest_;
};

}  // namespace

ONNXMINI_REGISTER_KERNEL("topk", "", "TopK", 1, INT_MAX, make_kernel<TopKKernel>);

}  // namespace onnxmini

ONNXMINI_KERNEL_FILE(tensor_topk);
