// The float32 SIMD kernels of f32_kernels.h, written once over a small vector
// interface V that each ISA provides (V512 in vec_avx512.h,
// V256 in vec_avx2.h):
//   reg / ireg / mask, W lanes; set1, load, store, tail(n) (first min(n, W)
//   lanes), load_fill(p, m, fill) (fill where m is off), store_mask; add sub
//   mul div max min abs sqrt fmadd; gt ge lt le unord -> mask; blend(m, t, f);
//   swap(v, level) (exchange neighbouring blocks of W >> (level + 1) lanes),
//   upper_blocks(level) (the mask of the second block of each pair); all(m);
//   lane(v, k) (lane k broadcast); lane0;
//   to_int, from_bits_shifted (2^n from an integer vector), gather of floats
//   at int32 indices, iset1, iblend, lane_times(n), store_i64.
// Include only from an ISA file: everything is in an anonymous namespace, so
// each ISA's instantiations stay private to its own object file.
#pragma once
#include <cmath>
#include <cstdint>
#include <limits>

#include "kernels/simd/f32_kernels.h"

namespace onnxmini {
namespace simd {
namespace {

// ---------------------------------------------------------------- helpers
// Horizontal combine of all W lanes by halving: after log2(W) steps every lane
// holds Comb over all lanes.
template <class V, class Comb>
inline float hreduce(typename V::reg v) {
  for (int level = 0; level < V::kLevels; ++level) v = Comb::template apply<V>(v, V::swap(v, level));
  return V::lane0(v);
}

struct AddC {
  template <class V> static typename V::reg apply(typename V::reg a, typename V::reg b) { return V::add(a, b); }
};
struct SubC {
  template <class V> static typename V::reg apply(typename V::reg a, typename V::reg b) { return V::sub(a, b); }
};
struct MulC {
  template <class V> static typename V::reg apply(typename V::reg a, typename V::reg b) { return V::mul(a, b); }
};
struct DivC {
  template <class V> static typename V::reg apply(typename V::reg a, typename V::reg b) { return V::div(a, b); }
};
// max / min that keep a NaN of either operand (vmaxps alone drops a NaN in its
// first operand), matching reduce_ops.h's Max/Min.
struct MaxNanC {
  template <class V> static typename V::reg apply(typename V::reg acc, typename V::reg v) {
    return V::blend(V::unord(v, v), v, V::max(v, acc));
  }
};
struct MinNanC {
  template <class V> static typename V::reg apply(typename V::reg acc, typename V::reg v) {
    return V::blend(V::unord(v, v), v, V::min(v, acc));
  }
};

// exp(x), the vector form of ew::fast_expf (fast_math.h): same Cephes
// polynomial, then the scaling by 2^n (V::scale_pow2). x is clamped to
// [lo, 89.5]: at 89.5 the product overflows to inf, at -104 it rounds to 0,
// so neither end needs a select; min/max take x as their second operand, which
// they return when it is NaN, so NaN flows through to the result. With kFlush
// (Softmax), results below e^-87 (~1.6e-38, about FLT_MIN) are flushed to 0:
// a multiply with a subnormal result takes a microcode assist (~100x slower),
// and softmax's padding lanes (exp(-inf)) would hit it on every row. Without
// it (the Exp op) subnormal results are kept, as fast_expf's.
// exp(c) for c already clamped to the range exp() below allows (shared with erf_impl.h's
// exp_floored, whose arguments are never large).
// e^r for r = c - n ln2 (ln2 in two parts, so r is exact enough), by the degree-6
// polynomial: the part of exp() shared by exp_clamped and exp_nonpositive.
// 1 + r + r^2 P(r), P's six coefficients taken in pairs (Estrin: three
// independent fmadds, then two combining with r^2 and r^4) rather than one
// Horner chain: 3 dependent fmadds instead of 6. The exp loops are bound by
// the dependency chain rather than the FMA pipes (Softmax's loop took ~10 cycles
// per vector where its FMA count allows ~5-6). With exp_nonpositive's dropped clamp, Softmax's exp-and-sum loop over a
// 6624-float row in L1 went 1.05 -> 0.80 us with AVX-512 and 1.83 -> 1.60 us
// with AVX2 (AMD EPYC Zen 5, best of 2000). Same coefficients: the largest
// error over every 37th float in [-103, 88.7] went 1.00 -> 1.01 ulp (both ISAs).
template <class V>
inline typename V::reg exp_reduced(typename V::reg c, typename V::reg n) {
  using R = typename V::reg;
  R r = V::fmadd(n, V::set1(-0.693359375f), c);
  r = V::fmadd(n, V::set1(2.12194440e-4f), r);
  const R r2 = V::mul(r, r);
  const R p01 = V::fmadd(V::set1(1.6666665459e-1f), r, V::set1(5.0000001201e-1f));
  const R p23 = V::fmadd(V::set1(8.3334519073e-3f), r, V::set1(4.1665795894e-2f));
  const R p45 = V::fmadd(V::set1(1.9875691500e-4f), r, V::set1(1.3981999507e-3f));
  const R p = V::fmadd(p45, V::mul(r2, r2), V::fmadd(p23, r2, p01));
  return V::add(V::fmadd(p, r2, r), V::set1(1.0f));
}

template <class V>
inline typename V::reg exp_clamped(typename V::reg c) {
  using R = typename V::reg;
  const R shifter = V::set1(12582912.0f);
  const R n = V::sub(V::fmadd(c, V::set1(1.44269504088896341f), shifter), shifter);
  return V::scale_pow2(exp_reduced<V>(c, n), n);
}

template <class V, bool kFlush = true>
inline typename V::reg exp(typename V::reg x) {
  using R = typename V::reg;
  const R hi = V::set1(89.5f), lo = V::set1(kFlush ? -87.0f : -104.0f);
  const R y = exp_clamped<V>(V::max(lo, V::min(hi, x)));
  return kFlush ? V::blend(V::lt(x, lo), V::set1(0.0f), y) : y;
}

// exp(x) for Softmax's x = v - max(row): x <= 0 or -inf, never NaN (a row whose
// max is NaN or infinite takes the scalar path first). Results below e^-87 are
// flushed to 0 as exp<V, true>'s; above that floor er * 2^n is always a normal
// float (at x = -87, n = -126 and er = e^0.336), so the scaling needs one
// exponent add instead of exp's two-step product, and no clamp at all: lanes
// below the floor (-inf included) compute garbage (NaN, a wrapped exponent)
// that V::scale_pow2_normal_or_zero replaces by 0 (AVX-512: a zero-masked
// vscalefps; AVX2: an AND with the compare mask), off the dependency chain.
// V::scale_pow2_normal takes n's bits from the rounding sum t = x log2(e) + 1.5 2^23.
// On AVX2 the exponent add took the loop from 30 to 24 instructions per vector
// (with the clamp, since dropped); AVX-512 keeps vscalefps.
template <class V>
inline typename V::reg exp_nonpositive(typename V::reg x) {
  using R = typename V::reg;
  const R shifter = V::set1(12582912.0f);
  const R t = V::fmadd(x, V::set1(1.44269504088896341f), shifter);
  const R n = V::sub(t, shifter);
  return V::scale_pow2_normal_or_zero(V::ge(x, V::set1(-87.0f)), exp_reduced<V>(x, n), n, t);
}

// ---------------------------------------------------------------- sqrt
// Dense x and y: W-wide vsqrtps (IEEE square root, exact like std::sqrt, which
// the compiler keeps scalar because it may set errno) and one masked tail.
template <class V>
void sqrt_n(const float* x, float* y, int64_t n) {
  const int64_t full = n - n % V::W;
  int64_t i = 0;
  for (; i < full; i += V::W) V::store(y + i, V::sqrt(V::load(x + i)));
  if (i < n) {
    const auto tail = V::tail(n - i);
    V::store_mask(y + i, tail, V::sqrt(V::load_fill(x + i, tail, V::set1(1.0f))));
  }
}

// ---------------------------------------------------------------- Exp, Sigmoid, Tanh
// Dense x and y, W at a time and one masked tail; the same formulas as
// fast_math.h's scalar functions (which the compiler does not vectorise: the
// 2^n bit trick through memcpy stays scalar), so results agree to the ulp
// budget tested there.
template <class V, class F>
inline void map_n(const float* x, float* y, int64_t n, F f) {
  const int64_t full = n - n % V::W;
  int64_t i = 0;
  for (; i < full; i += V::W) V::store(y + i, f(V::load(x + i)));
  if (i < n) {
    const auto tail = V::tail(n - i);
    V::store_mask(y + i, tail, f(V::load_fill(x + i, tail, V::set1(0.0f))));
  }
}

template <class V>
void exp_n(const float* x, float* y, int64_t n) {
  map_n<V>(x, y, n, [](typename V::reg v) { return exp<V, false>(v); });
}

// e = exp(-|x|) <= 1; 1 / (1 + e) for x >= 0, e / (1 + e) below (NaN: e is NaN).
template <class V>
inline typename V::reg sigmoid_reg(typename V::reg v) {
  const auto e = exp<V, false>(V::sub(V::set1(0.0f), V::abs(v)));
  const auto s = V::rcp(V::add(V::set1(1.0f), e));
  return V::blend(V::ge(v, V::set1(0.0f)), s, V::mul(e, s));
}

template <class V>
void sigmoid_n(const float* x, float* y, int64_t n) {
  map_n<V>(x, y, n, [](typename V::reg v) { return sigmoid_reg<V>(v); });
}

// Odd polynomial for |x| < 0.625, 1 - 2 / (e^(2|x|) + 1) with the sign of x above.
template <class V>
inline typename V::reg tanh_reg(typename V::reg v) {
  using R = typename V::reg;
  const R ax = V::abs(v), z = V::mul(v, v);
  R p = V::set1(-5.70498872745e-3f);
  p = V::fmadd(p, z, V::set1(2.06390887954e-2f));
  p = V::fmadd(p, z, V::set1(-5.37397155531e-2f));
  p = V::fmadd(p, z, V::set1(1.33314422036e-1f));
  p = V::fmadd(p, z, V::set1(-3.33332819422e-1f));
  const R small = V::fmadd(V::mul(p, z), v, v);
  const R e = exp<V, false>(V::mul(V::set1(2.0f), V::min(ax, V::set1(10.0f))));
  R big = V::sub(V::set1(1.0f), V::mul(V::set1(2.0f), V::rcp(V::add(e, V::set1(1.0f)))));
  big = V::blend(V::lt(v, V::set1(0.0f)), V::sub(V::set1(0.0f), big), big);
  const R r = V::blend(V::lt(ax, V::set1(0.625f)), small, big);
  return V::blend(V::unord(v, v), v, r);
}

template <class V>
void tanh_n(const float* x, float* y, int64_t n) {
  map_n<V>(x, y, n, [](typename V::reg v) { return tanh_reg<V>(v); });
}

// ---------------------------------------------------------------- binary
// Rows of y = a op b. Data layout: y dense with `cols` per row; each operand is
// a row of cols floats (vec) or one float repeated (scalar) at its row stride.
// The per-row work is W-wide loads/stores plus one masked tail, with the
// scalar operands broadcast once per row: a row of 8 (kmeans' [N,1] + [N,8])
// is one masked load, one op, one masked store.
template <class V, class Op, bool VA, bool VB>
void binary_rows_t(const BinaryRows& p, int64_t r0, int64_t r1) {
  using R = typename V::reg;
  const int64_t cols = p.cols;
  const auto tail = V::tail(cols % V::W);
  const int64_t full = cols - cols % V::W;
  for (int64_t r = r0; r < r1; ++r) {
    const float* pa = p.a + r * p.a_row;
    const float* pb = p.b + r * p.b_row;
    float* py = p.y + r * cols;
    const R sa = V::set1(pa[0]), sb = V::set1(pb[0]);
    int64_t c = 0;
    for (; c < full; c += V::W)
      V::store(py + c, Op::template apply<V>(VA ? V::load(pa + c) : sa, VB ? V::load(pb + c) : sb));
    if (c < cols) {
      const R ta = VA ? V::load_fill(pa + c, tail, sa) : sa, tb = VB ? V::load_fill(pb + c, tail, sb) : sb;
      V::store_mask(py + c, tail, Op::template apply<V>(ta, tb));
    }
  }
}

template <class V, class Op>
void binary_rows(const BinaryRows& p, int64_t r0, int64_t r1) {
  if (p.a_vec && p.b_vec) binary_rows_t<V, Op, true, true>(p, r0, r1);
  else if (p.a_vec) binary_rows_t<V, Op, true, false>(p, r0, r1);
  else if (p.b_vec) binary_rows_t<V, Op, false, true>(p, r0, r1);
  else binary_rows_t<V, Op, false, false>(p, r0, r1);
}

// ---------------------------------------------------------------- row reductions
// One row of n contiguous floats is folded W lanes at a time into one register
// (masked tail filled with the op's neutral value); groups of W rows are then
// combined together (transpose_reduce), leftover rows by halving. Accuracy: used for short rows (the caller limits n to 64), where
// each lane adds at most n / W terms and the halving adds log2(W) more levels:
// the error bound is the same order as reduce.cc's pairwise sum of such a row.
template <class V, class Map, class Comb>
inline typename V::reg fold_row(const float* row, int64_t n, int64_t full, typename V::mask tail, typename V::reg fill) {
  typename V::reg acc = fill;
  int64_t c = 0;
  for (; c < full; c += V::W) acc = Comb::template apply<V>(acc, Map::template apply<V>(V::load(row + c)));
  if (c < n) acc = Comb::template apply<V>(acc, Map::template apply<V>(V::load_fill(row + c, tail, fill)));
  return acc;
}

constexpr int bit_reverse(int k, int bits) {
  int r = 0;
  for (int b = 0; b < bits; ++b) r |= ((k >> b) & 1) << (bits - 1 - b);
  return r;
}

// W rows at once: v[k] holds the lanes of row bit_reverse(k). Level L pairs
// v[2i], v[2i+1]: blends put the first's lanes in the low blocks and the
// second's in the high blocks (blocks of W >> (L + 1) lanes), a block swap
// lines up the other halves, one Comb adds them. After log2(W) levels (W - 1
// combines, against W * log2(W) for W separate halvings) lane j holds row j.
template <class V, class Comb>
inline typename V::reg transpose_reduce(typename V::reg* v) {
  int m = V::W;
  for (int level = 0; level < V::kLevels; ++level, m /= 2) {
    const auto hi = V::upper_blocks(level);
    for (int i = 0; i < m / 2; ++i) {
      const typename V::reg lo_first = V::blend(hi, v[2 * i + 1], v[2 * i]);
      const typename V::reg hi_first = V::blend(hi, v[2 * i], v[2 * i + 1]);
      v[i] = Comb::template apply<V>(lo_first, V::swap(hi_first, level));
    }
  }
  return v[0];
}

template <class V, class Map, class Comb>
void reduce_rows_t(const float* x, int64_t rows, int64_t n, float* out, float neutral) {
  using R = typename V::reg;
  const R fill = V::set1(neutral);
  const auto tail = V::tail(n % V::W);
  const int64_t full = n - n % V::W;
  int64_t r = 0;
  for (; r + V::W <= rows; r += V::W) {
    R v[V::W];
#pragma GCC unroll 16
    for (int k = 0; k < V::W; ++k) v[k] = fold_row<V, Map, Comb>(x + (r + bit_reverse(k, V::kLevels)) * n, n, full, tail, fill);
    V::store(out + r, transpose_reduce<V, Comb>(v));
  }
  for (; r < rows; ++r) out[r] = hreduce<V, Comb>(fold_row<V, Map, Comb>(x + r * n, n, full, tail, fill));
}

struct IdentityM {
  template <class V> static typename V::reg apply(typename V::reg v) { return v; }
};
struct SquareM {
  template <class V> static typename V::reg apply(typename V::reg v) { return V::mul(v, v); }
};
struct AbsM {
  template <class V> static typename V::reg apply(typename V::reg v) { return V::abs(v); }
};

template <class V> void row_sum(const float* x, int64_t rows, int64_t n, float* out) {
  reduce_rows_t<V, IdentityM, AddC>(x, rows, n, out, 0.0f);
}
template <class V> void row_sum_square(const float* x, int64_t rows, int64_t n, float* out) {
  reduce_rows_t<V, SquareM, AddC>(x, rows, n, out, 0.0f);
}
template <class V> void row_abs_sum(const float* x, int64_t rows, int64_t n, float* out) {
  reduce_rows_t<V, AbsM, AddC>(x, rows, n, out, 0.0f);
}
template <class V> void row_max(const float* x, int64_t rows, int64_t n, float* out) {
  reduce_rows_t<V, IdentityM, MaxNanC>(x, rows, n, out, -std::numeric_limits<float>::infinity());
}
template <class V> void row_min(const float* x, int64_t rows, int64_t n, float* out) {
  reduce_rows_t<V, IdentityM, MinNanC>(x, rows, n, out, std::numeric_limits<float>::infinity());
}

// ---------------------------------------------------------------- ArgMin / ArgMax
// Vectorised across rows: lane j follows row g + j of a group of W rows, so the
// scalar kernel's scan (best = element 0; replace when strictly better, or
// better-or-equal with `last`) runs unchanged in every lane. Column r of the
// group is one gather at offsets j * n + r. Ordered compares are false for
// NaN, so NaN handling is the scalar kernel's. n <= 64 keeps the offsets small.
template <class V, bool kMax>
int64_t arg_rows(const float* x, int64_t rows, int64_t n, bool last, int64_t* out) {
  using R = typename V::reg;
  using I = typename V::ireg;
  const I offs = V::lane_times(static_cast<int>(n));
  const int64_t groups = rows / V::W;
  for (int64_t g = 0; g < groups; ++g) {
    const float* base = x + g * V::W * n;
    R best = V::gather(base, offs);
    I at = V::iset1(0);
    for (int64_t r = 1; r < n; ++r) {
      const R v = V::gather(base + r, offs);
      const auto take = kMax ? (last ? V::ge(v, best) : V::gt(v, best)) : (last ? V::le(v, best) : V::lt(v, best));
      best = V::blend(take, v, best);
      at = V::iblend(take, V::iset1(static_cast<int>(r)), at);
    }
    V::store_i64(out + g * V::W, at);
  }
  return groups * V::W;
}

// ---------------------------------------------------------------- Softmax
// Rows of n <= 2W floats held in two registers (masked; padding lanes read as
// -inf, so they add exp(-inf) = 0 to the sum). Rows of n <= W go W at a time
// (softmax_group); others one by one: max by halving, one vector exp, sum by
// halving, scale, masked stores. Rows whose max is not
// finite (all -inf, +inf, or a NaN, which every max here keeps: MaxNanC) take
// the scalar path with std::exp, the semantics softmax.cc's row kernel has for
// them (a NaN makes the sum NaN, hence every output NaN). So exp_nonpositive
// never sees a NaN.
inline void softmax_row_nonfinite(const float* x, int64_t n, float m, float* y) {
  float s = 0;
  for (int64_t j = 0; j < n; ++j) s += (y[j] = std::exp(x[j] - m));
  for (int64_t j = 0; j < n; ++j) y[j] /= s;
}

// W rows of n <= W at once: the maxima and the sums of the W rows come out of
// transpose_reduce as one register each (lane j = row j), so the W rows share
// two reductions and one division instead of a halving chain and a scalar
// division per row. false (nothing written): a row has a non-finite max.
template <class V>
bool softmax_group(const float* x, int64_t n, float* y) {
  using R = typename V::reg;
  const auto m0 = V::tail(n);
  const R ninf = V::set1(-std::numeric_limits<float>::infinity());
  R a[V::W], t[V::W];
#pragma GCC unroll 16
  for (int k = 0; k < V::W; ++k) a[k] = V::load_fill(x + k * n, m0, ninf);
#pragma GCC unroll 16
  for (int k = 0; k < V::W; ++k) t[k] = a[bit_reverse(k, V::kLevels)];
  const R mx = transpose_reduce<V, MaxNanC>(t);
  if (!V::all(V::lt(V::abs(mx), V::set1(std::numeric_limits<float>::infinity())))) return false;
#pragma GCC unroll 16
  for (int k = 0; k < V::W; ++k) a[k] = exp_nonpositive<V>(V::sub(a[k], V::lane(mx, k)));
#pragma GCC unroll 16
  for (int k = 0; k < V::W; ++k) t[k] = a[bit_reverse(k, V::kLevels)];
  const R inv = V::div(V::set1(1.0f), transpose_reduce<V, AddC>(t));
#pragma GCC unroll 16
  for (int k = 0; k < V::W; ++k) V::store_mask(y + k * n, m0, V::mul(a[k], V::lane(inv, k)));
  return true;
}

// One row of n <= 2W in two registers.
template <class V>
void softmax_row(const float* xr, int64_t n, float* yr) {
  using R = typename V::reg;
  const float inf = std::numeric_limits<float>::infinity();
  const R ninf = V::set1(-inf);
  const auto m0 = V::tail(n), m1 = V::tail(n > V::W ? n - V::W : 0);
  const bool two = n > V::W;
  const R a0 = V::load_fill(xr, m0, ninf);
  const R a1 = two ? V::load_fill(xr + V::W, m1, ninf) : ninf;
  const float m = hreduce<V, MaxNanC>(MaxNanC::template apply<V>(a1, a0));
  if (!(m > -inf && m < inf)) return softmax_row_nonfinite(xr, n, m, yr);
  const R mv = V::set1(m);
  const R e0 = exp_nonpositive<V>(V::sub(a0, mv)), e1 = two ? exp_nonpositive<V>(V::sub(a1, mv)) : V::set1(0.0f);
  const R inv = V::set1(1.0f / hreduce<V, AddC>(V::add(e0, e1)));
  V::store_mask(yr, m0, V::mul(e0, inv));
  if (two) V::store_mask(yr + V::W, m1, V::mul(e1, inv));
}

// One row longer than 2W: a max pass, an exp pass that stores exp(x - max)
// and sums it, and a scaling pass; each pass streams the row W at a time.
template <class V>
void softmax_long_row(const float* xr, int64_t n, float* yr) {
  using R = typename V::reg;
  const float inf = std::numeric_limits<float>::infinity();
  const int64_t full = n - n % V::W;
  const auto tail = V::tail(n - full);
  // Four independent max / sum chains (one chain waited on each vmaxps / vaddps: the
  // 40 x 6625 Softmax of PP-OCR's recognizer took 68 us against onnxruntime's 53, AMD EPYC).
  const int64_t full4 = n - n % (4 * V::W);
  R mx[4] = {V::set1(-inf), V::set1(-inf), V::set1(-inf), V::set1(-inf)};
  for (int64_t j = 0; j < full4; j += 4 * V::W)
    for (int u = 0; u < 4; ++u) mx[u] = MaxNanC::template apply<V>(mx[u], V::load(xr + j + u * V::W));
  for (int64_t j = full4; j < full; j += V::W) mx[0] = MaxNanC::template apply<V>(mx[0], V::load(xr + j));
  if (full < n) mx[1] = MaxNanC::template apply<V>(mx[1], V::load_fill(xr + full, tail, V::set1(-inf)));
  const float m = hreduce<V, MaxNanC>(
      MaxNanC::template apply<V>(MaxNanC::template apply<V>(mx[0], mx[1]), MaxNanC::template apply<V>(mx[2], mx[3])));
  if (!(m > -inf && m < inf)) return softmax_row_nonfinite(xr, n, m, yr);
  const R mv = V::set1(m);
  // The exp pass: one sum chain is enough (an exp is ~25 vector ops, its add waits on
  // nothing), and four exps in flight spilled AVX2's 16 registers (the polynomial's
  // constants reloaded from the stack in every exp: 40 x 6625 171 -> 160 us, AMD EPYC Zen 4).
  R sum = V::set1(0.0f);
  for (int64_t j = 0; j < full; j += V::W) {
    const R e = exp_nonpositive<V>(V::sub(V::load(xr + j), mv));
    V::store(yr + j, e);
    sum = V::add(sum, e);
  }
  if (full < n) {
    const R e = exp_nonpositive<V>(V::sub(V::load_fill(xr + full, tail, V::set1(-inf)), mv));
    V::store_mask(yr + full, tail, e);
    sum = V::add(sum, e);
  }
  const R inv = V::set1(1.0f / hreduce<V, AddC>(sum));
  for (int64_t j = 0; j < full; j += V::W) V::store(yr + j, V::mul(V::load(yr + j), inv));
  if (full < n) V::store_mask(yr + full, tail, V::mul(V::load_fill(yr + full, tail, V::set1(0.0f)), inv));
}

template <class V>
void softmax_rows(const float* x, int64_t rows, int64_t n, float* y) {
  if (n > 2 * V::W) {
    for (int64_t r = 0; r < rows; ++r) softmax_long_row<V>(x + r * n, n, y + r * n);
    return;
  }
  int64_t r = 0;
  for (; n <= V::W && r + V::W <= rows; r += V::W)
    if (!softmax_group<V>(x + r * n, n, y + r * n))
      for (int64_t i = r; i < r + V::W; ++i) softmax_row<V>(x + i * n, n, y + i * n);
  for (; r < rows; ++r) softmax_row<V>(x + r * n, n, y + r * n);
}

// ---------------------------------------------------------------- the table
// ---------------------------------------------------------------- dot_rows
// out[r] = sum_k a[r * lda + k] * x[k]: a matrix-vector product, row-major a.
// Layout: each row of a is read once, sequentially, W floats per load; x (n
// floats) stays in L1 and is re-read per block of rows. Blocking: 4 rows x 2
// vectors of columns per step = 8 independent FMA chains (2 FMA pipes x 4-cycle
// latency), one x load shared by the 4 rows; the row tail is one masked load
// (zeros past n), remaining rows one at a time. Each row's lanes are summed by
// halving at the end, so a row's result does not depend on the rows around it.
template <class V>
inline typename V::reg dot_row_tail(const float* a, const float* x, int64_t c, int64_t n, typename V::reg acc) {
  if (c < n) {
    const auto m = V::tail(n - c);
    const typename V::reg z = V::set1(0.0f);
    acc = V::fmadd(V::load_fill(a + c, m, z), V::load_fill(x + c, m, z), acc);
  }
  return acc;
}

template <class V>
void dot_rows(const float* a, int64_t lda, const float* x, int64_t rows, int64_t n, float* out) {
  using reg = typename V::reg;
  constexpr int W = V::W;
  const int64_t full2 = n / (2 * W) * (2 * W), full = n / W * W;
  int64_t r = 0;
  for (; r + 4 <= rows; r += 4) {
    const float* a0 = a + r * lda;
    const float* a1 = a0 + lda;
    const float* a2 = a1 + lda;
    const float* a3 = a2 + lda;
    reg p0 = V::set1(0.0f), p1 = p0, p2 = p0, p3 = p0, q0 = p0, q1 = p0, q2 = p0, q3 = p0;
    int64_t c = 0;
    for (; c < full2; c += 2 * W) {
      const reg x0 = V::load(x + c), x1 = V::load(x + c + W);
      p0 = V::fmadd(V::load(a0 + c), x0, p0), q0 = V::fmadd(V::load(a0 + c + W), x1, q0);
      p1 = V::fmadd(V::load(a1 + c), x0, p1), q1 = V::fmadd(V::load(a1 + c + W), x1, q1);
      p2 = V::fmadd(V::load(a2 + c), x0, p2), q2 = V::fmadd(V::load(a2 + c + W), x1, q2);
      p3 = V::fmadd(V::load(a3 + c), x0, p3), q3 = V::fmadd(V::load(a3 + c + W), x1, q3);
    }
    for (; c < full; c += W) {
      const reg x0 = V::load(x + c);
      p0 = V::fmadd(V::load(a0 + c), x0, p0), p1 = V::fmadd(V::load(a1 + c), x0, p1);
      p2 = V::fmadd(V::load(a2 + c), x0, p2), p3 = V::fmadd(V::load(a3 + c), x0, p3);
    }
    p0 = dot_row_tail<V>(a0, x, c, n, p0), p1 = dot_row_tail<V>(a1, x, c, n, p1);
    p2 = dot_row_tail<V>(a2, x, c, n, p2), p3 = dot_row_tail<V>(a3, x, c, n, p3);
    out[r] = hreduce<V, AddC>(V::add(p0, q0));
    out[r + 1] = hreduce<V, AddC>(V::add(p1, q1));
    out[r + 2] = hreduce<V, AddC>(V::add(p2, q2));
    out[r + 3] = hreduce<V, AddC>(V::add(p3, q3));
  }
  for (; r < rows; ++r) {
    const float* a0 = a + r * lda;
    reg p0 = V::set1(0.0f), q0 = p0;
    int64_t c = 0;
    for (; c < full2; c += 2 * W) {
      p0 = V::fmadd(V::load(a0 + c), V::load(x + c), p0);
      q0 = V::fmadd(V::load(a0 + c + W), V::load(x + c + W), q0);
    }
    for (; c < full; c += W) p0 = V::fmadd(V::load(a0 + c), V::load(x + c), p0);
    p0 = dot_row_tail<V>(a0, x, c, n, p0);
    out[r] = hreduce<V, AddC>(V::add(p0, q0));
  }
}

}  // namespace
}  // namespace simd
}  // namespace onnxmini

#include "kernels/simd/erf_impl.h"  // erf / Gelu rows, over exp, sigmoid_reg and map_n above

namespace onnxmini {
namespace simd {
namespace {

template <class V>
F32Kernels make_table(cpu::Isa isa) {
  F32Kernels k{};
  k.isa = isa;
  k.sqrt = sqrt_n<V>;
  k.exp = exp_n<V>;
  k.sigmoid = sigmoid_n<V>;
  k.tanh = tanh_n<V>;
  k.erf = erf_n<V>;
  k.gelu_erf = gelu_erf_n<V>;
  k.gelu_tanh = gelu_tanh_n<V>;
  k.gelu_erf_bias = gelu_erf_bias_n<V>;
  k.gelu_tanh_bias = gelu_tanh_bias_n<V>;
  k.binary[kAdd] = binary_rows<V, AddC>;
  k.binary[kSub] = binary_rows<V, SubC>;
  k.binary[kMul] = binary_rows<V, MulC>;
  k.binary[kDiv] = binary_rows<V, DivC>;
  k.reduce_rows[kRowSum] = row_sum<V>;
  k.reduce_rows[kRowSumSquare] = row_sum_square<V>;
  k.reduce_rows[kRowAbs] = row_abs_sum<V>;
  k.reduce_rows[kRowMax] = row_max<V>;
  k.reduce_rows[kRowMin] = row_min<V>;
  k.arg_rows[0] = arg_rows<V, false>;
  k.arg_rows[1] = arg_rows<V, true>;
  k.arg_max_len = 64;
  k.softmax_rows = softmax_rows<V>;
  k.softmax_max_len = std::numeric_limits<int64_t>::max();
  k.dot_rows = dot_rows<V>;
  return k;
}

}  // namespace
}  // namespace simd
}  // namespace onnxmini
