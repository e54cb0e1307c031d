// Unique (opsets 11-28): the distinct elements of the flattened input, or the
// distinct slices along `axis`; outputs Y, indices (first occurrence of each
// unique value in X, int64), inverse_indices (for each element / slice of X,
// its position in Y) and counts. sorted=1 (default) orders Y ascending
// (slices lexicographically, as numpy.unique); sorted=0 keeps the order of
// first occurrence. Numeric types (NaNs sort last and are one value, as
// numpy's equal_nan), bool and strings.
//
// Layout: X is (outer, len, inner) around the axis (1, numel, 1 flattened);
// slice j is the outer * inner elements (o, j, i) in (o, i) row-major order.
// The len slice numbers are stable-sorted with a lexicographic comparison,
// equal neighbours form the groups, and Y is gathered slice by slice.
#include <algorithm>
#include <cmath>
#include <numeric>

#include "kernels/elementwise/elementwise.h"
#include "kernels/registry.h"
#include "kernels/tensor/tensor_utils.h"

namespace onnxmini {

namespace {

using namespace tensor_ops;

// Three-way comparison with NaN after every number and equal to NaN.
template <typename C>
int compare_values(const C& a, const C& b) {
  if constexpr (std::is_floating_point_v<C>) {
    const bool na = std::isnan(a), nb = std::isnan(b);
    if (na || nb) return na == nb ? 0 : (na ? 1 : -1);
  }
  return a < b ? -1 : (b < a ? 1 : 0);
}

struct Groups {
  std::vector<int64_t> first;    // per unique slice (output order): its first slice number in X
  std::vector<int64_t> count;    // per unique slice: occurrences
  std::vector<int64_t> inverse;  // per slice of X: its unique slice's position
};

class UniqueKernel : public Kernel {
 public:
  explicit UniqueKernel(const KernelInfo& info)
      : has_axis_(info.attrs.has("axis")), axis_(info.attrs.get_int("axis", 0)),
        sorted_(info.attrs.get_int("sorted", 1) != 0) {}

  void prepare(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    int64_t outer = 1, len = x.numel(), inner = 1, axis = 0;
    if (has_axis_) {
      axis = normalize_axis(ctx, axis_, static_cast<int64_t>(x.rank()));
      outer = shape_product(x.shape(), 0, axis);
      len = x.dim(axis);
      inner = shape_product(x.shape(), axis + 1, x.rank());
    }
    Groups g;
    const bool known = ew::visit(ew::AllTypes{}, x.dtype(), [&](auto tag) {
      g = group<typename decltype(tag)::type>(x, outer, len, inner);
    });
    if (!known) ctx.unsupported("input dtype {} is not supported", dtype_name(x.dtype()));
    const int64_t n = static_cast<int64_t>(g.first.size());
    Shape yshape = {n};
    if (has_axis_) {
      yshape = x.shape();
      yshape[axis] = n;
    }
    Tensor& y = ctx.allocate_output(0, x.dtype(), yshape);
    dispatch_by_width(ctx, x.dtype(), [&](auto tag) {
      using T = decltype(tag);
      const T* in = elems<T>(x);
      T* out = elems_mut<T>(y);
      for (int64_t o = 0; o < outer; ++o)
        for (int64_t u = 0; u < n; ++u) {
          const T* src = in + (o * len + g.first[u]) * inner;
          std::copy(src, src + inner, out + (o * n + u) * inner);
        }
    });
    // The other outputs are small (one entry per unique value / slice): written here, with Y.
    auto write = [&](size_t i, const std::vector<int64_t>& v) {
      if (!ctx.output_wanted(i)) return;
      Tensor& t = ctx.allocate_output(i, DType::Int64, {static_cast<int64_t>(v.size())});
      std::copy(v.begin(), v.end(), t.mutable_data<int64_t>());
    };
    write(1, g.first);
    write(2, g.inverse);
    write(3, g.count);
  }

  void compute(KernelContext&) override {}  // everything happens in prepare: the output shape is the result

 private:
  template <typename T>
  Groups group(const Tensor& x, int64_t outer, int64_t len, int64_t inner) const {
    const T* p = static_cast<const T*>(x.raw());
    auto cmp = [&](int64_t a, int64_t b) {  // lexicographic three-way comparison of slices a and b
      for (int64_t o = 0; o < outer; ++o)
        for (int64_t i = 0; i < inner; ++i) {
          const int64_t base = o * len * inner + i;
          int c;
          if constexpr (std::is_same_v<T, std::string>) c = p[base + a * inner].compare(p[base + b * inner]);
          else c = compare_values(ew::Num<T>::load(p[base + a * inner]), ew::Num<T>::load(p[base + b * inner]));
          if (c != 0) return c;
        }
      return 0;
    };
    std::vector<int64_t> order(static_cast<size_t>(len));
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return cmp(a, b) < 0; });
    Groups g;
    std::vector<int64_t> group_of(static_cast<size_t>(len));  // sorted group id per slice
    for (int64_t k = 0; k < len; ++k) {
      if (k == 0 || cmp(order[k - 1], order[k]) != 0) {
        g.first.push_back(order[k]);  // stable sort: the smallest slice number of the group comes first
        g.count.push_back(0);
      }
      group_of[order[k]] = static_cast<int64_t>(g.first.size()) - 1;
      ++g.count.back();
    }
    std::vector<int64_t> rank_of(g.first.size());  // sorted group id -> output position
    std::iota(rank_of.begin(), rank_of.end(), 0);
    if (!sorted_) {
      std::vector<int64_t> by_first(g.first.size());
      std::iota(by_first.begin(), by_first.end(), 0);
      std::sort(by_first.begin(), by_first.end(), [&](int64_t a, int64_t b) { return g.first[a] < g.first[b]; });
      Groups reordered;
      for (size_t u = 0; u < by_first.size(); ++u) {
        rank_of[by_first[u]] = static_cast<int64_t>(u);
        reordered.first.push_back(g.first[by_first[u]]);
        reordered.count.push_back(g.count[by_first[u]]);
      }
      g.first.swap(reordered.first);
      g.count.swap(reordered.count);
    }
    g.inverse.resize(static_cast<size_t>(len));
    for (int64_t j = 0; j < len; ++j) g.inverse[j] = rank_of[group_of[j]];
    return g;
  }

  bool has_axis_;
  int64_t axis_;
  bool sorted_;
};

}  // namespace

ONNXMINI_REGISTER_KERNEL("unique", "", "Unique", 11, INT_MAX, make_kernel<UniqueKernel>);

}  // namespace onnxmini

ONNXMINI_KERNEL_FILE(tensor_unique);
