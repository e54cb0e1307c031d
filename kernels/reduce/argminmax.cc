// ArgMax, ArgMin (opsets 1-23): axis (negative from 11), keepdims,
// select_last_index (from 12). Output int64. dtypes: float, double, int8,
// uint8, int16, uint16, int32, uint32, int64, uint64.
//
// Semantics follow onnxruntime: the first element of the axis is the initial
// best, and an element replaces it only when it compares strictly better (or
// equal, with select_last_index). NaN compares false, so a NaN never wins
// unless it is the first element, where it stays.
//
// Data layout: the input is (outer, n, inner) around `axis`. With inner == 1
// each output scans one contiguous run; float32 runs of n <= 64 go W rows at a
// time through the AVX-512/AVX2 kernel (one row per lane, gathered columns). With inner > 1 a tile of kTile
// neighbouring outputs scans rows of the tile together: the inner loop runs
// over contiguous memory with a running best value and index per column.
// Work is split over outer x tiles.
#include <type_traits>

#include "kernels/registry.h"
#include "kernels/simd/f32_kernels.h"
#include "kernels/tensor/tensor_utils.h"

namespace onnxmini {

namespace {

using namespace tensor_ops;

constexpr int64_t kTile = 64;

struct Greater {
  template <typename T> static bool better(T a, T b) { return a > b; }
  template <typename T> static bool better_or_equal(T a, T b) { return a >= b; }
};
struct Less {
  template <typename T> static bool better(T a, T b) { return a < b; }
  template <typename T> static bool better_or_equal(T a, T b) { return a <= b; }
};

template <typename Cmp, typename T>
bool replaces(T candidate, T best, bool last) {
  return last ? Cmp::better_or_equal(candidate, best) : Cmp::better(candidate, best);
}

// Reference: one output at a time, scanning its n elements with stride inner.
template <typename Cmp, typename T>
void arg_reference(const T* x, int64_t outer, int64_t n, int64_t inner, bool last, int64_t* out) {
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      const T* col = x + o * n * inner + i;
      T best = col[0];
      int64_t at = 0;
      for (int64_t r = 1; r < n; ++r)
        if (replaces<Cmp>(col[r * inner], best, last)) {
          best = col[r * inner];
          at = r;
        }
      out[o * inner + i] = at;
    }
}

// Short float32 rows with a SIMD table: groups of W rows are scanned together,
// one row per lane (f32_kernels_impl.h); returns the rows done from o0 on.
template <typename Cmp, typename T>
int64_t arg_rows_simd(const T* x, int64_t o0, int64_t o1, int64_t n, bool last, int64_t* out) {
  if constexpr (std::is_same<T, float>::value) {
    const simd::F32Kernels& k = simd::f32_kernels();
    const simd::ArgRowsFn fn = k.arg_rows[std::is_same<Cmp, Greater>::value ? 1 : 0];
    if (fn && n <= k.arg_max_len) return fn(x + o0 * n, o1 - o0, n, last, out + o0);
  }
  return 0;
}

template <typename Cmp, typename T>
void arg_fast(const T* x, int64_t outer, int64_t n, int64_t inner, bool last, int64_t* out, ThreadPool* pool) {
  if (inner == 1) {
    parallel_for(pool, outer, std::max<int64_t>(1, 16384 / n), [&](int64_t o0, int64_t o1) {
      for (int64_t o = o0 + arg_rows_simd<Cmp>(x, o0, o1, n, last, out); o < o1; ++o) {
        const T* row = x + o * n;
        T best = row[0];
        int64_t at = 0;
        for (int64_t r = 1; r < n; ++r)
          if (replaces<Cmp>(row[r], best, last)) {
            best = row[r];
            at = r;
          }
        out[o] = at;
      }
    });
    return;
  }
  const int64_t tiles = (inner + kTile - 1) / kTile;
  parallel_for(pool, outer * tiles, std::max<int64_t>(1, 16384 / (n * kTile)), [&](int64_t t0, int64_t t1) {
    T best[kTile];
    int64_t at[kTile];
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t o = t / tiles, j0 = (t % tiles) * kTile, w = std::min(kTile, inner - j0);
      const T* base = x + o * n * inner + j0;
      for (int64_t j = 0; j < w; ++j) {
        best[j] = base[j];
        at[j] = 0;
      }
      for (int64_t r = 1; r < n; ++r) {
        const T* row = base + r * inner;
        for (int64_t j = 0; j < w; ++j) {
          const bool take = replaces<Cmp>(row[j], best[j], last);
          best[j] = take ? row[j] : best[j];
          at[j] = take ? r : at[j];
        }
      }
      std::copy(at, at + w, out + o * inner + j0);
    }
  });
}

template <typename Cmp>
class ArgKernel : public Kernel {
 public:
  explicit ArgKernel(const KernelInfo& info)
      : axis_(info.attrs.get_int("axis", 0)),
        keepdims_(info.attrs.get_int("keepdims", 1) != 0),
        last_(info.opset >= 12 && info.attrs.get_int("select_last_index", 0) != 0) {}

  void prepare(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    const int64_t rank = static_cast<int64_t>(x.rank());
    if (rank == 0) ctx.fail("input must have rank >= 1 (got a scalar)");
    const int64_t axis = normalize_axis(ctx, axis_, rank);
    if (x.dim(axis) == 0) ctx.fail("cannot take the arg of an empty axis {} (input shape {})", axis, shape_to_string(x.shape()));
    Shape out;
    for (int64_t d = 0; d < rank; ++d) {
      if (d != axis) out.push_back(x.dim(d));
      else if (keepdims_) out.push_back(1);
    }
    ctx.allocate_output(0, DType::Int64, out);
  }

  // Mirrors run()'s choice (keep the two in step).
  KernelPlan describe(const KernelInfo& info, const std::vector<const Shape*>& in) const override {
    if (in.empty() || !in[0] || in[0]->empty()) return KernelPlan::at_run_time();
    const Shape& s = *in[0];
    const int64_t rank = static_cast<int64_t>(s.size());
    if (axis_ < -rank || axis_ >= rank) return KernelPlan::at_run_time();
    const int64_t axis = axis_ < 0 ? axis_ + rank : axis_;
    const int64_t outer = shape_product(s, 0, axis), n = s[axis], inner = shape_product(s, axis + 1, rank);
    if (inner > 1) return KernelPlan{"arg_columns_tiled", "portable", "64-column tiles"};
    return row_plan(info.input_dtypes.empty() ? DType::Undefined : info.input_dtypes[0], outer, n);
  }

  void compute(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    Tensor& y = ctx.output(0);
    if (y.numel() == 0) return;
    switch (x.dtype()) {
      case DType::Float32: return run<float>(ctx, x, y);
      case DType::Float64: return run<double>(ctx, x, y);
      case DType::Int8: return run<int8_t>(ctx, x, y);
      case DType::UInt8: return run<uint8_t>(ctx, x, y);
      case DType::Int16: return run<int16_t>(ctx, x, y);
      case DType::UInt16: return run<uint16_t>(ctx, x, y);
      case DType::Int32: return run<int32_t>(ctx, x, y);
      case DType::UInt32: return run<uint32_t>(ctx, x, y);
      case DType::Int64: return run<int64_t>(ctx, x, y);
      case DType::UInt64: return run<uint64_t>(ctx, x, y);
      default: ctx.unsupported("dtype {} is not supported", dtype_name(x.dtype()));
    }
  }

 private:
  template <typename T>
  void run(KernelContext& ctx, const Tensor& x, Tensor& y) {
    const int64_t axis = normalize_axis(ctx, axis_, static_cast<int64_t>(x.rank()));
    const int64_t outer = shape_product(x.shape(), 0, axis), n = x.dim(axis), inner = shape_product(x.shape(), axis + 1, x.rank());
    if (ctx.reference_mode()) arg_reference<Cmp>(x.data<T>(), outer, n, inner, last_, y.mutable_data<int64_t>());
    else arg_fast<Cmp>(x.data<T>(), outer, n, inner, last_, y.mutable_data<int64_t>(), ctx.threads());
    if (ctx.reference_mode()) return;
    // The path arg_fast took (static strings, for profiles).
    const KernelPlan p = inner > 1 ? KernelPlan{"arg_columns_tiled", "portable", ""}
                                   : row_plan(storage_dtype<T>(), outer, n);
    ctx.stats().variant = p.variant;
    ctx.stats().isa = p.isa;
  }

  // Contiguous rows: the SIMD kernel for float32 rows of n <= arg_max_len, in
  // whole groups of one row per lane; the scalar loop otherwise.
  static KernelPlan row_plan(DType dt, int64_t outer, int64_t n) {
    if (dt == DType::Float32) {
      const simd::F32Kernels& k = simd::f32_kernels();
      const int64_t width = k.isa == cpu::Isa::Avx512 ? 16 : 8;  // rows per SIMD group (one per lane)
      if (k.arg_rows[0] && n <= k.arg_max_len && outer >= width)
        return KernelPlan{"arg_rows_simd", cpu::isa_name(k.isa), "one row per lane"};
    }
    if (dt == DType::Undefined) return KernelPlan::at_run_time();
    return KernelPlan{"arg_rows_scalar", "portable", ""};
  }

  template <typename T>
  static DType storage_dtype() {
    if constexpr (std::is_same<T, float>::value) return DType::Float32;
    return DType::Int64;  // any non-float32: only the float32 test matters
  }

  int64_t axis_;
  bool keepdims_, last_;
};

}  // namespace

ONNXMINI_REGISTER_KERNEL("argminmax", "", "ArgMax", 1, INT_MAX, make_kernel<ArgKernel<Greater>>);
ONNXMINI_REGISTER_KERNEL("argminmax", "", "ArgMin", 1, INT_MAX, make_kernel<ArgKernel<Less>>);

}  // namespace onnxmini

ONNXMINI_KERNEL_FILE(reduce_argminmax);
