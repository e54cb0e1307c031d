// Building one plan for a contraction order and a letter order, with its cost.
//
// Layouts: every slot is dense; a step reads a slot through a strided view
// (stride per letter, summed for a repeated letter = diagonal, 0 where absent).
// A GEMM operand is read in place when its m (or n) letters and its k letters
// each form one strided dimension and one of the two has unit stride; otherwise
// it is first packed into [batch, m, k] order (a Copy step, whose bytes the cost
// model charges). Intermediates are written as [batch, m, n] in the letter order.
//
// Cost model (nanoseconds, rough single-core figures for this class of machine):
//   loops:  elements * per-element cost * (1 + 8 / contiguous inner run) + per-row overhead
//   GEMM:   per call and per batch item overheads + flops / (peak * efficiency(M, N, K))
// It only has to rank plans of one equation, so relative accuracy is what matters.
#include <fmt/format.h>

#include <algorithm>
#include <numeric>

#include "kernels/einsum/einsum_planner.h"

namespace onnxmini {
namespace einsum_impl {

namespace {

constexpr double kLoopRowNs = 4.0;        // per inner-loop start
constexpr double kCopyElemNs = 0.25;      // per element moved, contiguous
constexpr double kMacElemNs = 0.35;       // per multiply-add in a plain loop nest, contiguous
constexpr double kGemmCallNs = 150.0;     // per sgemm / sgemm_batched call
constexpr double kGemmItemNs = 60.0;      // per matrix in a batch (packing setup, edges)
constexpr double kGemmPeakFlopsNs = 100.0;  // flops per ns at full efficiency (measured ~60 at 20x20x20)

using Strides = std::vector<int64_t>;  // letter -> stride in elements (0: absent)

struct Builder {
  const Canonical& c;
  const std::vector<int>& rank;
  Plan& p;
  int variant = 0;  // GemmVariant bits

  std::vector<int> by_rank(std::vector<int> letters) const {
    std::sort(letters.begin(), letters.end(), [&](int a, int b) { return rank[a] < rank[b]; });
    return letters;
  }
  int new_slot(const std::vector<int>& letters) {
    Slot s;
    s.letters = letters;
    for (int l : letters) s.elements *= c.size[l];
    p.slots.push_back(s);
    return static_cast<int>(p.slots.size()) - 1;
  }
  Strides view(int slot) const {
    Strides s(c.size.size(), 0);
    int64_t st = 1;
    const auto& ls = p.slots[slot].letters;
    for (size_t i = ls.size(); i-- > 0;) {
      s[ls[i]] += st;
      st *= c.size[ls[i]];
    }
    return s;
  }
  std::vector<int> unique_letters(int slot) const {
    std::vector<int> u;
    for (int l : p.slots[slot].letters)
      if (std::find(u.begin(), u.end(), l) == u.end()) u.push_back(l);
    return u;
  }
  std::string slot_name(int s) const {
    if (s < static_cast<int>(p.num_inputs())) return fmt::format("in{}", s);
    if (s == p.output_slot()) return "out";
    return fmt::format("t{}", s - p.output_slot());
  }
  std::string letters_text(const std::vector<int>& ls) const {
    std::string t;
    for (int l : ls) t += c.name[l].size() == 1 ? c.name[l] : "(" + c.name[l] + ")";
    return t;
  }
  std::string slot_text(int s) const { return slot_name(s) + "[" + letters_text(p.slots[s].letters) + "]"; }

  // Loop nest over `letters`, strides from up to three views; innermost = smallest
  // total stride (the most contiguous); loops that stay contiguous in all views merge.
  LoopNest nest(const std::vector<int>& letters, const Strides* v0, const Strides* v1, const Strides* v2) const {
    const Strides* v[3] = {v0, v1, v2};
    std::vector<int> ls = letters;
    auto key = [&](int l) {
      int64_t k = 0;
      for (auto* s : v) k += s ? (*s)[l] : 0;
      return k;
    };
    std::stable_sort(ls.begin(), ls.end(), [&](int a, int b) { return key(a) > key(b); });
    LoopNest n;
    for (int l : ls) {
      if (c.size[l] == 1) continue;
      bool merge = !n.size.empty();
      for (int t = 0; t < 3 && merge; ++t) {
        const int64_t inner = v[t] ? (*v[t])[l] : 0;
        merge = n.stride[t].back() == inner * c.size[l];
      }
      if (merge) {
        n.size.back() *= c.size[l];
        for (int t = 0; t < 3; ++t) n.stride[t].back() = v[t] ? (*v[t])[l] : 0;
        continue;
      }
      n.size.push_back(c.size[l]);
      for (int t = 0; t < 3; ++t) n.stride[t].push_back(v[t] ? (*v[t])[l] : 0);
    }
    return n;
  }
  static double loop_cost(const LoopNest& n, double per_elem) {
    if (n.size.empty()) return per_elem;
    const int64_t inner = n.size.back();
    bool contiguous = true;
    for (int t = 0; t < 3; ++t) contiguous = contiguous && (n.stride[t].back() == 0 || n.stride[t].back() == 1);
    const double run = contiguous ? static_cast<double>(inner) : 1.0;
    const double e = static_cast<double>(n.elements());
    return e * per_elem * (1.0 + 8.0 / run) + kLoopRowNs * e / static_cast<double>(inner);
  }

  void add(Step s) {
    p.flops += s.flops;
    p.bytes_copied += s.bytes_copied;
    p.cost_ns += s.cost_ns;
    p.steps.push_back(std::move(s));
  }

  // out = permute(in) (out's letters are a permutation of in's unique letters).
  void copy(int in, int out) {
    Step s;
    s.kind = StepKind::Copy;
    s.in0 = in, s.out = out;
    const Strides vi = view(in), vo = view(out);
    s.loops = nest(p.slots[out].letters, &vo, &vi, nullptr);
    s.bytes_copied = 4.0 * static_cast<double>(p.slots[out].elements);
    s.cost_ns = loop_cost(s.loops, kCopyElemNs);
    s.text = fmt::format("copy    {} <- {}", slot_text(out), slot_text(in));
    add(std::move(s));
  }

  // out = sum of in over its letters missing from out.
  void sum(int in, int out) {
    Step s;
    s.kind = StepKind::Sum;
    s.in0 = in, s.out = out;
    const Strides vi = view(in), vo = view(out);
    const auto all = unique_letters(in);
    for (int l : all)
      if (vo[l] == 0) s.reduced.push_back(l);
    s.loops = nest(all, &vo, &vi, nullptr);
    s.flops = static_cast<double>(s.loops.elements());
    s.cost_ns = loop_cost(s.loops, kCopyElemNs);
    s.text = fmt::format("sum     {} <- {} over [{}]", slot_text(out), slot_text(in), letters_text(s.reduced));
    add(std::move(s));
  }

  // out = sum over reduced letters of a * b, one loop nest.
  void product(int a, int b, int out) {
    Step s;
    s.kind = StepKind::Product;
    s.in0 = a, s.in1 = b, s.out = out;
    const Strides va = view(a), vb = view(b), vo = view(out);
    std::vector<int> all = p.slots[out].letters;
    for (int l = 0; l < static_cast<int>(c.size.size()); ++l)
      if (vo[l] == 0 && (va[l] != 0 || vb[l] != 0)) {
        all.push_back(l);
        s.reduced.push_back(l);
      }
    s.loops = nest(all, &vo, &va, &vb);
    s.flops = 2.0 * static_cast<double>(s.loops.elements());
    s.cost_ns = loop_cost(s.loops, kMacElemNs);
    s.text = fmt::format("product {} <- {} * {}{}", slot_text(out), slot_text(a), slot_text(b),
                         s.reduced.empty() ? "" : fmt::format(" summed over [{}]", letters_text(s.reduced)));
    add(std::move(s));
  }

  // True when `group` (outermost first) forms one strided dimension in `v`.
  bool chained(const std::vector<int>& group, const Strides& v) const {
    for (size_t i = 0; i + 1 < group.size(); ++i)
      if (v[group[i]] != v[group[i + 1]] * c.size[group[i + 1]] || v[group[i + 1]] == 0) return false;
    return !group.empty() && v[group.back()] != 0;
  }
  int64_t volume(const std::vector<int>& g) const {
    int64_t v = 1;
    for (int l : g) v *= c.size[l];
    return v;
  }
  static std::vector<int> cat(std::vector<int> a, const std::vector<int>& b, const std::vector<int>& d = {}) {
    a.insert(a.end(), b.begin(), b.end());
    a.insert(a.end(), d.begin(), d.end());
    return a;
  }

  // out[bt, m, n] = sum_k a[bt, m, k] * b[bt, k, n] with a providing m, b providing n.
  // `out` < 0: a fresh intermediate. Returns the slot written.
  int gemm(int a, int b, int out, const std::vector<int>& bt, const std::vector<int>& m, const std::vector<int>& n,
           const std::vector<int>& k) {
    // A: in place as [m, k] (k contiguous) or [k, m] (m contiguous, trans_a); else pack [bt, m, k].
    Strides va = view(a);
    bool ta = false;
    const bool pack = variant & kGemmPackOperands;
    if (pack || !(chained(m, va) && chained(k, va) && (va[k.back()] == 1 || va[m.back()] == 1))) {
      const int packed = new_slot(cat(bt, m, k));
      copy(a, packed);
      a = packed;
      va = view(a);
    }
    ta = va[k.back()] != 1;
    Strides vb = view(b);
    if (pack || !(chained(k, vb) && chained(n, vb) && (vb[n.back()] == 1 || vb[k.back()] == 1))) {
      const int packed = new_slot(cat(bt, k, n));
      copy(b, packed);
      b = packed;
      vb = view(b);
    }
    const bool tb = vb[n.back()] != 1;
    // C: the output when it can be written as [m, n] rows; otherwise a fresh [bt, m, n] slot.
    int final_out = -1;
    if (out >= 0) {
      const Strides vo = view(out);
      if (!(chained(m, vo) && chained(n, vo) && vo[n.back()] == 1)) final_out = out, out = -1;
    }
    if (out < 0) out = new_slot(cat(bt, m, n));
    const Strides vc = view(out);

    Step s;
    s.kind = StepKind::Gemm;
    s.in0 = a, s.in1 = b, s.out = out;
    s.batch = bt, s.m = m, s.n = n, s.k = k;
    GemmShape& g = s.gemm;
    g.trans_a = ta, g.trans_b = tb;
    g.M = volume(m), g.N = volume(n), g.K = volume(k);
    g.lda = ta ? va[k.back()] : va[m.back()];
    g.ldb = tb ? vb[n.back()] : vb[k.back()];
    g.ldc = vc[m.back()];
    // Batch loops: chained batch letters merge; the innermost goes to sgemm_batched.
    LoopNest batch;
    for (int l : bt) {
      const int64_t st[3] = {vc[l], va[l], vb[l]};
      bool merge = !batch.size.empty();
      for (int t = 0; t < 3 && merge; ++t) merge = batch.stride[t].back() == st[t] * c.size[l];
      if (merge) {
        batch.size.back() *= c.size[l];
        for (int t = 0; t < 3; ++t) batch.stride[t].back() = st[t];
      } else {
        batch.size.push_back(c.size[l]);
        for (int t = 0; t < 3; ++t) batch.stride[t].push_back(st[t]);
      }
    }
    if (!batch.size.empty()) {
      g.inner_batch = batch.size.back();
      g.inner_stride[0] = batch.stride[1].back();  // a
      g.inner_stride[1] = batch.stride[2].back();  // b
      g.inner_stride[2] = batch.stride[0].back();  // c
      batch.size.pop_back();
      for (int t = 0; t < 3; ++t) batch.stride[t].pop_back();
    }
    g.outer = batch;
    s.loops = nest(cat(bt, m, cat(n, k)), &vc, &va, &vb);  // the same product as plain loops (int dtypes)
    const double items = static_cast<double>(volume(bt));
    s.flops = 2.0 * items * static_cast<double>(g.M) * static_cast<double>(g.N) * static_cast<double>(g.K);
    const double eff = (g.M / (g.M + 4.0)) * (g.N / (g.N + 4.0)) * (g.K / (g.K + 4.0));
    s.cost_ns = kGemmCallNs * static_cast<double>(g.outer.elements()) + kGemmItemNs * items +
                s.flops / (kGemmPeakFlopsNs * eff);
    s.text = fmt::format("gemm    {} <- {} x {}  batch {} x (M {} N {} K {}){}{}", slot_text(out), slot_text(a),
                         slot_text(b), static_cast<int64_t>(items), g.M, g.N, g.K, ta ? " A^T" : "",
                         tb ? " B^T" : "");
    add(std::move(s));
    if (final_out >= 0) {
      copy(out, final_out);
      return final_out;
    }
    return out;
  }

  // Contracts slots a and b into `out` (or a fresh slot when out < 0), keeping `kept` letters.
  int contract(int a, int b, int out, const std::vector<bool>& kept) {
    const Strides va = view(a), vb = view(b);
    std::vector<int> bt, m, n, k, result;
    for (int l = 0; l < static_cast<int>(c.size.size()); ++l) {
      const bool ia = va[l] != 0, ib = vb[l] != 0;
      if (!ia && !ib) continue;
      if (ia && ib) (kept[l] ? bt : k).push_back(l);
      else if (ia) m.push_back(l);
      else n.push_back(l);
      if (kept[l]) result.push_back(l);
    }
    bt = by_rank(bt), m = by_rank(m), n = by_rank(n), k = by_rank(k);
    if (k.empty() || m.empty() || n.empty()) {  // Hadamard, broadcast, outer, matrix-vector: plain loops
      if (out < 0) out = new_slot(by_rank(result));
      product(a, b, out);
      return out;
    }
    // GEMM: try both operand roles; keep the cheaper.
    const Plan saved = p;
    const int r1 = gemm(a, b, out, bt, m, n, k);
    Plan first = p;
    p = saved;
    const int r2 = gemm(b, a, out, bt, n, m, k);
    const bool keep_first = variant & kGemmOtherRoles ? first.cost_ns > p.cost_ns : first.cost_ns <= p.cost_ns;
    if (keep_first) {
      p = std::move(first);
      return r1;
    }
    return r2;
  }
};

}  // namespace

int64_t LoopNest::elements() const {
  int64_t e = 1;
  for (int64_t s : size) e *= s;
  return e;
}

size_t LoopNest::parallel_depth() const {
  size_t d = 0;
  while (d + 1 < size.size() && stride[0][d] != 0) ++d;
  return d;
}

const char* step_kind_name(StepKind k) {
  switch (k) {
    case StepKind::Copy: return "copy";
    case StepKind::Sum: return "sum";
    case StepKind::Product: return "product";
    case StepKind::Gemm: return "gemm";
    case StepKind::Zero: return "zero";
  }
  return "?";
}

Plan build_plan(const EinsumSpec& spec, const Canonical& c, const ContractionOrder& order,
                const std::vector<int>& rank, int variant) {
  Plan p;
  p.equation = spec.equation;
  p.input_shapes = spec.operand_shapes;
  p.output_shape = spec.output_shape;
  p.canonical = c.to_string();
  p.letter_name = c.name;
  p.letter_size = c.size;
  p.output_letters = c.output;
  Builder b{c, rank, p, variant};
  for (const auto& t : c.operands) b.new_slot(t);
  const int out = b.new_slot(c.output);
  {
    std::vector<int> ls(c.size.size());
    std::iota(ls.begin(), ls.end(), 0);
    p.letter_order = b.letters_text(b.by_rank(ls));
  }
  const int L = static_cast<int>(c.size.size());
  if (std::find(c.size.begin(), c.size.end(), 0) != c.size.end()) {  // an empty letter: the result is all zeros
    Step s;
    s.kind = StepKind::Zero;
    s.out = out;
    s.text = fmt::format("zero    {}  (a letter has size 0)", b.slot_text(out));
    b.add(s);
    return p;
  }

  std::vector<int> live;
  for (size_t i = 0; i < c.operands.size(); ++i) live.push_back(static_cast<int>(i));
  auto kept_letters = [&](const std::vector<int>& others) {
    std::vector<bool> kept(L, false);
    for (int l : c.output) kept[l] = true;
    for (int s : others)
      for (int l : p.slots[s].letters) kept[l] = true;
    return kept;
  };
  // Single operand: one Sum or Copy straight into the output.
  if (live.size() == 1) {
    if (b.unique_letters(0).size() > c.output.size()) b.sum(0, out);
    else b.copy(0, out);
    return p;
  }
  // Letters used by one operand only and not in the output are summed out first.
  for (size_t i = 0; i < live.size(); ++i) {
    std::vector<int> others;
    for (size_t j = 0; j < live.size(); ++j)
      if (j != i) others.push_back(live[j]);
    const auto kept = kept_letters(others);
    std::vector<int> keep;
    for (int l : b.unique_letters(live[i]))
      if (kept[l]) keep.push_back(l);
    if (keep.size() < b.unique_letters(live[i]).size()) {
      const int t = b.new_slot(b.by_rank(keep));
      b.sum(live[i], t);
      live[i] = t;
    }
  }
  std::vector<std::string> order_text;
  for (const auto& [i, j] : order) {
    std::vector<int> others;
    for (size_t k = 0; k < live.size(); ++k)
      if (static_cast<int>(k) != i && static_cast<int>(k) != j) others.push_back(live[k]);
    const bool last = others.empty();
    const int r = b.contract(live[i], live[j], last ? out : -1, kept_letters(others));
    order_text.push_back(fmt::format("({},{})", i, j));
    others.push_back(r);
    live = others;
  }
  if (live[0] != out) b.copy(live[0], out);
  if (c.operands.size() > 2) p.contraction_order = fmt::format("{}", fmt::join(order_text, ","));
  return p;
}

}  // namespace einsum_impl
}  // namespace onnxmini
