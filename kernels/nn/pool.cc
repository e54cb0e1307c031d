// MaxPool, AveragePool: N-D windows over
// N x C x D1..Dk tensors (float, double; MaxPool also int8 / uint8).
//
// Layout: each (n, c) plane is a dense D1..Dk block; planes are independent,
// so the fast path splits planes across threads. For one output position o
// the window taps along axis d are  i = o*stride - pad_begin + k*dilation,
// k in [0, K); taps outside [0, D) are padding: ignored by MaxPool, and counted
// by AveragePool only with count_include_pad (and only inside the declared pads,
// not the extra ceil_mode overhang, as onnxruntime does).
// Variants: pool_reference (one tap at a time with bounds checks, single
// thread), maxpool2d_separable (2-D MaxPool without Indices: row maxima, then
// column maxima, branch-free), pool2d_direct (other 2-D: valid tap ranges
// computed once per output row and column, no checks in the inner loop),
// pool_nd_direct (other ranks: the same ranges per axis, an odometer over each
// window's valid box), avgpool2d_separable (2-D float AveragePool:
// column sums then row sums, vectorised per ISA; pool2d_simd.h; float MaxPool
// without Indices takes the same table's max function, named
// maxpool2d_separable with its ISA, or maxpool2d_rows where the table's register kernel
// takes the window (stride_w 1, or maxpool2d_rows_s2 for 1- and 2-wide windows at
// stride_w 2); the template below serves the other types). The separable and
// SIMD paths need kernel_near_input (per-tap tables); the direct loops take any window
// in time proportional to its valid taps.
#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>
#include <vector>

#include "kernels/nn/pool2d_simd.h"
#include "kernels/nn/spatial.h"
#include "kernels/registry.h"
#include "core/thread_pool.h"

namespace onnxmini {
namespace nn {
namespace {

enum class PoolKind { Max, Average };

struct PoolParams {
  PoolKind kind;
  bool count_include_pad = false;
  bool column_major_indices = false;  // MaxPool storage_order = 1
};

// Whether a window's kernel stays within a small multiple of the input along every axis.
// The separable and SIMD paths keep per-tap tables (a row of column ranges per kernel column,
// per kernel row) and loop over every tap; a kernel of 10^9 taps with pads of 5 * 10^8 on a
// 5x5 map (a legal window: every output covers the whole map) would allocate gigabytes for
// them. Such windows take the direct loops, which visit only the taps inside the input.
inline bool kernel_near_input(const Window& w) {
  for (size_t d = 0; d < w.rank; ++d)
    if (w.kernel[d] > 2 * w.in[d] + 64) return false;
  return true;
}

// Spatial flat index of coordinates, row-major (storage_order 0) or column-major (1).
inline int64_t spatial_index(const Window& w, const int64_t* c, bool column_major) {
  if (!column_major) return ravel_index(c, w.in);
  int64_t idx = 0;
  for (size_t d = w.rank; d-- > 0;) idx = idx * w.in[d] + c[d];
  return idx;
}

// One output of the reference and the N-D loops: the maximum and its flat index, or the sum
// over the divisor (0 for a window with nothing to count).
template <typename T>
inline void store_output(const PoolParams& p, T best, int64_t best_flat, double sum, double div, T* y, int64_t* index) {
  if (p.kind == PoolKind::Max) {
    *y = best;
    if (index) *index = best_flat;
  } else {
    *y = static_cast<T>(div > 0 ? sum / div : 0.0);
  }
}

// ---- reference: every tap of every window, checked one by one -------------
template <typename T>
void pool_reference(const Window& w, const PoolParams& p, int64_t planes, const T* x, T* y, int64_t* indices) {
  const int64_t IP = w.in_size(), OP = w.out_size(), KP = w.kernel_size();
  const size_t r = w.rank;
  std::vector<int64_t> oc(r), kc(r), ic(r);
  for (int64_t pl = 0; pl < planes; ++pl)
    for (int64_t o = 0; o < OP; ++o) {
      unravel_index(o, w.out, oc.data());
      double sum = 0;
      int64_t count = 0, padded_count = 0, best_idx = -1;
      T best = std::numeric_limits<T>::lowest();
      for (int64_t k = 0; k < KP; ++k) {
        unravel_index(k, w.kernel, kc.data());
        bool inside = true, inside_pads = true;
        for (size_t d = 0; d < r; ++d) {
          ic[d] = oc[d] * w.stride[d] - w.pad_begin[d] + kc[d] * w.dilation[d];
          inside = inside && ic[d] >= 0 && ic[d] < w.in[d];
          inside_pads = inside_pads && ic[d] >= -w.pad_begin[d] && ic[d] < w.in[d] + w.pad_end[d];
        }
        padded_count += inside_pads;
        if (!inside) continue;  // padding
        const int64_t s = spatial_index(w, ic.data(), false);
        const T v = x[pl * IP + s];
        ++count;
        sum += v;
        if (best_idx < 0 || v > best) best = v, best_idx = spatial_index(w, ic.data(), p.column_major_indices);
      }
      const int64_t div = p.count_include_pad ? padded_count : count;
      store_output(p, best, pl * IP + best_idx, sum, static_cast<double>(div), y + pl * OP + o,
                   indices ? indices + pl * OP + o : nullptr);
    }
}

// ---- fast 2-D: tap ranges per output row / column, plain inner loops -------
// A pool over `planes` planes for the cost rule (core/thread_pool.h): one
// operation per valid tap and output, X read and Y written once.
inline ParallelCost pool_cost(const Window& w, int64_t planes, size_t elem) {
  const int64_t ops = try_mul(planes * w.out_size(), w.taps_bound()).value_or(INT64_MAX);
  return ParallelCost{ops,
                      static_cast<int64_t>(elem) * planes * (w.in_size() + w.out_size()),
                      static_cast<int64_t>(elem) * planes * w.out_size()};
}

template <typename T>
void pool2d_direct(const Window& w, const PoolParams& p, int64_t planes, const T* x, T* y, int64_t* indices,
                   ThreadPool* pool) {
  const int64_t H = w.in[0], W = w.in[1], OH = w.out[0], OW = w.out[1];
  std::vector<WindowTaps> rows(OH), cols(OW);
  for (int64_t o = 0; o < OH; ++o) rows[o] = window_taps(w, 0, o);
  for (int64_t o = 0; o < OW; ++o) cols[o] = window_taps(w, 1, o);
  const int64_t sh = w.stride[0], sw = w.stride[1], dh = w.dilation[0], dw = w.dilation[1];
  const int64_t ph = w.pad_begin[0], pw = w.pad_begin[1];
  parallel_for(pool, planes, 1, pool_cost(w, planes, sizeof(T)), [&](int64_t p0, int64_t p1) {
    for (int64_t pl = p0; pl < p1; ++pl) {
      const T* xp = x + pl * H * W;
      T* yp = y + pl * OH * OW;
      for (int64_t oh = 0; oh < OH; ++oh) {
        const WindowTaps& rr = rows[oh];
        for (int64_t ow = 0; ow < OW; ++ow) {
          const WindowTaps& cr = cols[ow];
          if (p.kind == PoolKind::Max) {
            T best = std::numeric_limits<T>::lowest();
            int64_t bh = -1, bw = -1;
            for (int64_t kh = rr.lo; kh < rr.hi; ++kh) {
              const int64_t ih = oh * sh - ph + kh * dh;
              for (int64_t kw = cr.lo; kw < cr.hi; ++kw) {
                const int64_t iw = ow * sw - pw + kw * dw;
                const T v = xp[ih * W + iw];
                if (bh < 0 || v > best) best = v, bh = ih, bw = iw;
              }
            }
            yp[oh * OW + ow] = best;
            if (indices) indices[pl * OH * OW + oh * OW + ow] = pl * H * W + (p.column_major_indices ? bw * H + bh : bh * W + bw);
          } else {
            double sum = 0;
            for (int64_t kh = rr.lo; kh < rr.hi; ++kh) {
              const T* xrow = xp + (oh * sh - ph + kh * dh) * W + ow * sw - pw;
              for (int64_t kw = cr.lo; kw < cr.hi; ++kw) sum += xrow[kw * dw];
            }
            // In double: padded counts of two kernels of 5 * 10^9 would overflow int64.
            const double div = p.count_include_pad ? static_cast<double>(rr.padded) * static_cast<double>(cr.padded)
                                                   : static_cast<double>((rr.hi - rr.lo) * (cr.hi - cr.lo));
            yp[oh * OW + ow] = static_cast<T>(div > 0 ? sum / div : 0.0);
          }
        }
      }
    }
  });
}

// ---- other ranks (1-D, 3-D, ...): the box of valid taps of each window ----
// Per axis, the valid tap range of every output index is computed once; each output
// then walks its box [lo, hi) per axis with an odometer (last axis fastest), so the
// work per output is its valid taps, not the kernel's size.
template <typename T>
void pool_nd_direct(const Window& w, const PoolParams& p, int64_t planes, const T* x, T* y, int64_t* indices,
                    ThreadPool* pool) {
  const size_t r = w.rank;
  const int64_t IP = w.in_size(), OP = w.out_size();
  std::vector<std::vector<WindowTaps>> taps(r);
  for (size_t d = 0; d < r; ++d)
    for (int64_t o = 0; o < w.out[d]; ++o) taps[d].push_back(window_taps(w, d, o));
  const std::vector<int64_t> in_strides = row_major_strides(w.in);
  parallel_for(pool, planes, 1, pool_cost(w, planes, sizeof(T)), [&](int64_t p0, int64_t p1) {
    std::vector<int64_t> oc(r), kc(r), ic(r);
    for (int64_t pl = p0; pl < p1; ++pl) {
      const T* xp = x + pl * IP;
      for (int64_t o = 0; o < OP; ++o) {
        unravel_index(o, w.out, oc.data());
        bool empty = false;
        double valid = 1, padded = 1;  // counts can exceed int64 for huge kernels with count_include_pad
        for (size_t d = 0; d < r; ++d) {
          const WindowTaps& t = taps[d][oc[d]];
          kc[d] = t.lo;
          empty = empty || t.lo >= t.hi;
          valid *= static_cast<double>(t.hi - t.lo);
          padded *= static_cast<double>(t.padded);
        }
        double sum = 0;
        int64_t best_idx = -1;
        T best = std::numeric_limits<T>::lowest();
        while (!empty) {
          int64_t off = 0;
          for (size_t d = 0; d < r; ++d) {
            ic[d] = oc[d] * w.stride[d] - w.pad_begin[d] + kc[d] * w.dilation[d];
            off += ic[d] * in_strides[d];
          }
          const T v = xp[off];
          sum += v;
          if (best_idx < 0 || v > best) best = v, best_idx = spatial_index(w, ic.data(), p.column_major_indices);
          size_t d = r;  // next tap: last axis fastest
          while (d-- > 0 && ++kc[d] == taps[d][oc[d]].hi) kc[d] = taps[d][oc[d]].lo;
          if (d == static_cast<size_t>(-1)) break;
        }
        store_output(p, best, pl * IP + best_idx, sum, p.count_include_pad ? padded : valid, y + pl * OP + o,
                     indices ? indices + pl * OP + o : nullptr);
      }
    }
  });
}

// ---- fast 2-D MaxPool without Indices: separable, branch-free -------------
// A max over a KH x KW window is a max over KH row maxima of KW taps each, so
// each plane takes two passes instead of KH*KW taps per output: (1) for every
// input row, the max of each output column's KW taps into a H x OW row buffer
// (one pass per kw over the output columns where that tap is inside the row),
// (2) for every output row, the max over its KH valid buffer rows. Both inner
// loops run over consecutive output columns with `v > m ? v : m`, which the
// compiler turns into packed max instructions (stride 1: contiguous loads);
// the per-tap branch of pool2d_direct mispredicted on real feature maps
// (YOLO SPP layers, 13x13 windows on 13x13 maps, ran at ~1 GFLOP/s).
// NaN: the fast loops ignore NaN taps (a NaN never compares greater), then an
// output whose first valid tap is NaN takes it, which is exactly the result of
// pool2d_direct's scan (first tap, then strictly greater ones).
template <typename T>
T pool_max_identity() {
  if constexpr (std::numeric_limits<T>::has_infinity) return -std::numeric_limits<T>::infinity();
  return std::numeric_limits<T>::lowest();
}

// Output columns [lo, hi) whose tap k lies inside [0, size) along one axis.
inline std::pair<int64_t, int64_t> columns_with_tap(int64_t size, int64_t out, int64_t stride, int64_t pad,
                                                    int64_t dil, int64_t k) {
  const int64_t off = k * dil - pad;  // input index of column o: o * stride + off
  int64_t lo = off >= 0 ? 0 : (-off + stride - 1) / stride;
  int64_t hi = size - off <= 0 ? 0 : (size - off - 1) / stride + 1;
  lo = std::min(lo, out), hi = std::min(hi, out);
  return {lo, std::max(lo, hi)};
}

template <typename T>
void maxpool2d_separable(const Window& w, int64_t planes, const T* x, T* y, ThreadPool* pool) {
  const int64_t H = w.in[0], W = w.in[1], OH = w.out[0], OW = w.out[1], KW = w.kernel[1];
  const int64_t sh = w.stride[0], sw = w.stride[1], dh = w.dilation[0], dw = w.dilation[1];
  const int64_t ph = w.pad_begin[0], pw = w.pad_begin[1];
  std::vector<WindowTaps> rows(OH), cols(OW);
  for (int64_t o = 0; o < OH; ++o) rows[o] = window_taps(w, 0, o);
  for (int64_t o = 0; o < OW; ++o) cols[o] = window_taps(w, 1, o);
  std::vector<std::pair<int64_t, int64_t>> kw_cols(KW);
  for (int64_t k = 0; k < KW; ++k) kw_cols[k] = columns_with_tap(W, OW, sw, pw, dw, k);
  const T identity = pool_max_identity<T>();
  parallel_for(pool, planes, 1, pool_cost(w, planes, sizeof(T)), [&](int64_t p0, int64_t p1) {
    thread_local std::vector<T> row_max;  // H x OW; grows once, reused across runs
    if (row_max.size() < static_cast<size_t>(H * OW)) row_max.resize(H * OW);
    for (int64_t pl = p0; pl < p1; ++pl) {
      const T* xp = x + pl * H * W;
      T* yp = y + pl * OH * OW;
      for (int64_t ih = 0; ih < H; ++ih) {  // pass 1: KW taps along each row
        T* m = row_max.data() + ih * OW;
        std::fill(m, m + OW, identity);
        for (int64_t k = 0; k < KW; ++k) {
          const T* src = xp + ih * W + k * dw - pw;  // column o reads src[o * sw]
          for (int64_t o = kw_cols[k].first; o < kw_cols[k].second; ++o) {
            const T v = src[o * sw];
            m[o] = v > m[o] ? v : m[o];
          }
        }
      }
      for (int64_t oh = 0; oh < OH; ++oh) {  // pass 2: KH row maxima per output row
        T* out = yp + oh * OW;
        std::fill(out, out + OW, identity);
        for (int64_t kh = rows[oh].lo; kh < rows[oh].hi; ++kh) {
          const T* m = row_max.data() + (oh * sh - ph + kh * dh) * OW;
          for (int64_t o = 0; o < OW; ++o) out[o] = m[o] > out[o] ? m[o] : out[o];
        }
        // Windows with no tap inside (ceil_mode overhang) give lowest(), as pool2d_direct does.
        const bool row_empty = rows[oh].lo >= rows[oh].hi;
        const T* first_row = row_empty ? xp : xp + (oh * sh - ph + rows[oh].lo * dh) * W;
        for (int64_t o = 0; o < OW; ++o) {
          if (row_empty || cols[o].lo >= cols[o].hi) {
            out[o] = std::numeric_limits<T>::lowest();
            continue;
          }
          if constexpr (std::numeric_limits<T>::has_quiet_NaN) {
            const T f = first_row[o * sw - pw + cols[o].lo * dw];
            if (f != f) out[o] = f;
          }
        }
      }
    }
  });
}

// pool2d_simd's tap ranges and divisors for one window, into p (its
// vectors keep their capacity, so a warmed-up run does not allocate).
void make_pool2d_plan(const Window& w, bool count_include_pad, Pool2dPlan& p) {
  p.row_lo.clear(), p.row_hi.clear(), p.row_div.clear(), p.col_div.clear(), p.kh_rows.clear(), p.col_first.clear();
  p.H = w.in[0], p.W = w.in[1], p.OH = w.out[0], p.OW = w.out[1];
  p.sh = w.stride[0], p.sw = w.stride[1], p.dh = w.dilation[0], p.dw = w.dilation[1];
  p.ph = w.pad_begin[0], p.pw = w.pad_begin[1], p.KH = w.kernel[0], p.KW = w.kernel[1];
  // Row stride: the left pad and the input, widened until every output
  // column's last tap lies inside, rounded up to a multiple of stride_w.
  const int64_t reach = p.OW > 0 ? (p.OW - 1) * p.sw + (p.KW - 1) * p.dw + 1 : 0;
  p.Wp = (std::max(p.pw + p.W, reach) + p.sw - 1) / p.sw * p.sw;
  p.copy = !(p.pw == 0 && p.Wp == p.W);
  p.any_empty = false;
  // A window with no valid tap sums to 0; a divisor of 1 then keeps it 0
  // (the reference's "div > 0 ? sum / div : 0"); padded counts are 0 only then.
  auto factor = [&](const WindowTaps& t) {
    const int64_t n = count_include_pad ? t.padded : t.hi - t.lo;
    return static_cast<float>(n > 0 && t.hi > t.lo ? n : 1);
  };
  for (int64_t o = 0; o < p.OH; ++o) {
    const WindowTaps t = window_taps(w, 0, o);
    p.row_lo.push_back(t.lo), p.row_hi.push_back(t.hi), p.row_div.push_back(factor(t));
    p.any_empty = p.any_empty || t.lo >= t.hi;
  }
  for (int64_t o = 0; o < p.OW; ++o) {
    const WindowTaps t = window_taps(w, 1, o);
    p.col_div.push_back(factor(t));
    p.col_first.push_back(t.hi > t.lo ? o * p.sw - p.pw + t.lo * p.dw : -1);
    p.any_empty = p.any_empty || t.lo >= t.hi;
  }
  for (int64_t k = 0; k < p.KH; ++k) p.kh_rows.push_back(columns_with_tap(p.H, p.OH, p.sh, p.ph, p.dh, k));
}

// Whether pool2d_simd's per-thread scratch (a padded copy and the column sums, rows
// Wp = the padded width rounded up to stride_w) stays near the size of the plane: a
// huge stride_w on a small input (the fuzzer's 5x5 AveragePool with stride_w 239009791)
// would round Wp up to the stride and ask for gigabytes. Such windows take the direct loops.
bool plan_scratch_fits(const Pool2dPlan& p) {
  const int64_t plane = p.H * p.W + p.OH * p.OW;
  return p.scratch_floats() <= 4 * plane + (int64_t{1} << 16);
}

// The loops below; for window w (every dtype; float MaxPool / AveragePool without Indices
// first try pool2d_simd: simd_pool_takes) direct_pool_path picks one. One rule for compute()
// and describe(), so `--explain` names the path a run takes.
enum class DirectPool { Reference, MaxSeparable, Direct2d, DirectNd };
constexpr const char* kDirectPoolVariant[] = {"pool_reference", "maxpool2d_separable", "pool2d_direct",
                                              "pool_nd_direct"};

DirectPool direct_pool_path(const Window& w, PoolKind kind, bool indices, bool reference) {
  if (reference) return DirectPool::Reference;
  if (w.rank == 2 && kind == PoolKind::Max && !indices && kernel_near_input(w)) return DirectPool::MaxSeparable;
  return w.rank == 2 ? DirectPool::Direct2d : DirectPool::DirectNd;
}

// Whether pool2d_simd takes window w (2-D float, no Indices, fast kernels, a window near the
// input and scratch near the plane's size); fills plan p when it may.
bool simd_pool_takes(const Window& w, DType dt, const PoolParams& params, bool indices, bool reference,
                     Pool2dPlan& p) {
  if (dt != DType::Float32 || w.rank != 2 || indices || reference || !kernel_near_input(w)) return false;
  make_pool2d_plan(w, params.count_include_pad, p);
  return plan_scratch_fits(p);
}

// The variant pool2d_simd reports for plan p with the table of `isa`.
const char* simd_pool_variant(const Pool2dPlan& p, PoolKind kind, const Pool2dKernels& k) {
  if (kind != PoolKind::Max) return "avgpool2d_separable";
  return max_rows_fits(p, k.max_rows_lanes) ? max_rows_variant(p) : "maxpool2d_separable";
}

template <typename T>
const char* pool_run(KernelContext& ctx, const Window& w, const PoolParams& p, int64_t planes, int64_t* indices) {
  const T* x = ctx.input(0).data<T>();
  T* y = ctx.output(0).mutable_data<T>();
  const DirectPool path = direct_pool_path(w, p.kind, indices != nullptr, ctx.reference_mode());
  switch (path) {
    case DirectPool::Reference: pool_reference(w, p, planes, x, y, indices); break;
    case DirectPool::MaxSeparable: maxpool2d_separable(w, planes, x, y, ctx.threads()); break;
    case DirectPool::Direct2d: pool2d_direct(w, p, planes, x, y, indices, ctx.threads()); break;
    case DirectPool::DirectNd: pool_nd_direct(w, p, planes, x, y, indices, ctx.threads()); break;
  }
  return kDirectPoolVariant[static_cast<int>(path)];
}

class PoolKernel : public Kernel {
 public:
  PoolKernel(const KernelInfo& info, PoolKind kind) : attrs_(read_window_attrs(info)) {
    params_.kind = kind;
    params_.count_include_pad = info.attrs.get_int("count_include_pad", 0) != 0;
    params_.column_major_indices = info.attrs.get_int("storage_order", 0) == 1;
    if (attrs_.kernel.empty()) info.fail("attribute kernel_shape is required");
    if (kind == PoolKind::Average && info.opset < 19 && !attrs_.dilations.empty())
      info.fail("dilations need opset 19 for AveragePool (model imports opset {})", info.opset);
  }

  // The path depends on the window, so on X's shape: known before a run when it is declared.
  KernelPlan describe(const KernelInfo& info, const std::vector<const Shape*>& in) const override {
    const DType dt = info.input_dtypes.empty() ? DType::Undefined : info.input_dtypes[0];
    if (in.empty() || !in[0] || !supported(dt) || in[0]->size() != attrs_.kernel.size() + 2)
      return KernelPlan::at_run_time();
    const Window w =
        resolve_window(info, attrs_, std::vector<int64_t>(in[0]->begin() + 2, in[0]->end()), attrs_.kernel);
    const bool indices = info.output_present.size() > 1 && info.output_present[1];
    const bool reference = info.mode == KernelMode::Reference;
    Pool2dPlan plan;
    if (simd_pool_takes(w, dt, params_, indices, reference, plan)) {
      const Pool2dKernels& k = pool2d_kernels_for(pool2d_isa());
      return KernelPlan{simd_pool_variant(plan, params_.kind, k), cpu::isa_name(k.isa), ""};
    }
    return KernelPlan{kDirectPoolVariant[static_cast<int>(direct_pool_path(w, params_.kind, indices, reference))],
                      "portable", ""};
  }

  void prepare(KernelContext& ctx) override {
    const Window w = window(ctx);
    Shape out(ctx.input(0).shape().begin(), ctx.input(0).shape().begin() + 2);
    out.insert(out.end(), w.out.begin(), w.out.end());
    ctx.allocate_output(0, ctx.input(0).dtype(), out);
    if (ctx.output_wanted(1)) {
      if (params_.kind != PoolKind::Max) ctx.fail("only MaxPool has an Indices output");
      ctx.allocate_output(1, DType::Int64, out);
    }
  }

  void compute(KernelContext& ctx) override {
    const Window w = window(ctx);
    const Tensor& x = ctx.input(0);
    const int64_t planes = x.dim(0) * x.dim(1);
    int64_t* indices = ctx.output_wanted(1) ? ctx.output(1).mutable_data<int64_t>() : nullptr;
    ctx.stats().flops = static_cast<double>(planes) * w.out_size() * w.kernel_size();
    const char* v = nullptr;
    // Per calling thread, not a member: concurrent runs share the kernel object.
    thread_local Pool2dPlan plan;
    if (simd_pool_takes(w, x.dtype(), params_, indices != nullptr, ctx.reference_mode(), plan)) {
      pool2d_simd(plan, params_.kind == PoolKind::Max, planes, x.data<float>(), ctx.output(0).mutable_data<float>(),
                  ctx.threads());
      const Pool2dKernels& k = pool2d_kernels_for(pool2d_isa());
      ctx.stats().variant = simd_pool_variant(plan, params_.kind, k);
      ctx.stats().isa = cpu::isa_name(k.isa);
      return;
    }
    switch (x.dtype()) {
      case DType::Float32: v = pool_run<float>(ctx, w, params_, planes, indices); break;
      case DType::Float64: v = pool_run<double>(ctx, w, params_, planes, indices); break;
      case DType::Int8: v = pool_run<int8_t>(ctx, w, params_, planes, indices); break;
      case DType::UInt8: v = pool_run<uint8_t>(ctx, w, params_, planes, indices); break;
      default: ctx.unsupported("dtype {} is not supported", dtype_name(x.dtype()));
    }
    ctx.stats().variant = v;
  }

 private:
  Window window(const KernelContext& ctx) const {
    const Tensor& x = ctx.input(0);
    if (!supported(x.dtype())) ctx.unsupported("dtype {} is not supported", dtype_name(x.dtype()));
    if (x.rank() != attrs_.kernel.size() + 2)
      ctx.fail("input has shape {}, expected N x C and {} spatial axes (kernel_shape [{}])", shape_to_string(x.shape()),
               attrs_.kernel.size(), fmt::join(attrs_.kernel, ","));
    return resolve_window(ctx, attrs_, std::vector<int64_t>(x.shape().begin() + 2, x.shape().end()), attrs_.kernel);
  }

  // float, double; MaxPool also int8 / uint8.
  bool supported(DType t) const {
    const bool integer = t == DType::Int8 || t == DType::UInt8;
    return t == DType::Float32 || t == DType::Float64 || (integer && params_.kind == PoolKind::Max);
  }

  WindowAttrs attrs_;
  PoolParams params_;
};

std::unique_ptr<Kernel> make_max_pool(const KernelInfo& i) { return std::make_unique<PoolKernel>(i, PoolKind::Max); }
std::unique_ptr<Kernel> make_avg_pool(const KernelInfo& i) { return std::make_unique<PoolKernel>(i, PoolKind::Average); }

}  // namespace

ONNXMINI_REGISTER_KERNEL("pool", "", "MaxPool", 1, INT_MAX, make_max_pool);
ONNXMINI_REGISTER_KERNEL("pool", "", "AveragePool", 1, INT_MAX, make_avg_pool);

}  // namespace nn
}  // namespace onnxmini

ONNXMINI_KERNEL_FILE(nn_pool);
