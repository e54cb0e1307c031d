// Canonical form and contraction order.
//
// Canonical form: axes of size 1 carry no data (they are either trivial or
// broadcast), so they are dropped; two letters that appear adjacent and in the
// same order in every term that uses them behave as one letter of the product
// size, so they are merged. Fewer letters means fewer loops, longer contiguous
// runs and fewer letter orders to search.
#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <limits>

#include "kernels/einsum/einsum_planner.h"

namespace onnxmini {
namespace einsum_impl {

std::string Canonical::to_string() const {
  auto term = [&](const std::vector<int>& t) {
    std::string s;
    for (int l : t) s += name[l].size() == 1 ? name[l] : "(" + name[l] + ")";
    return s;
  };
  std::vector<std::string> ins;
  for (const auto& t : operands) ins.push_back(term(t));
  return fmt::format("{}->{}", fmt::join(ins, ","), term(output));
}

Canonical canonicalize(const EinsumSpec& spec) {
  Canonical c;
  c.name = spec.letter_name;
  c.size = spec.letter_size;
  // 1. drop axes of size 1 (broadcast or trivial)
  for (size_t k = 0; k < spec.operand_axes.size(); ++k) {
    std::vector<int> axes;
    for (size_t a = 0; a < spec.operand_axes[k].size(); ++a)
      if (spec.operand_shapes[k][a] != 1) axes.push_back(spec.operand_axes[k][a]);
    c.operands.push_back(axes);
  }
  for (int l : spec.output_axes)
    if (spec.letter_size[l] != 1) c.output.push_back(l);

  // 2. merge letter pairs (x, y) where every term holding either holds "x y" once, adjacent.
  std::vector<std::vector<int>*> terms;
  for (auto& t : c.operands) terms.push_back(&t);
  terms.push_back(&c.output);
  auto mergeable = [&](int x, int y) {
    bool seen = false;
    for (const auto* t : terms) {
      const auto cx = std::count(t->begin(), t->end(), x), cy = std::count(t->begin(), t->end(), y);
      if (cx == 0 && cy == 0) continue;
      if (cx != 1 || cy != 1) return false;
      const auto px = std::find(t->begin(), t->end(), x) - t->begin();
      if (px + 1 >= static_cast<long>(t->size()) || (*t)[px + 1] != y) return false;
      seen = true;
    }
    return seen;
  };
  for (bool merged = true; merged;) {
    merged = false;
    for (auto* t : terms) {
      for (size_t i = 0; i + 1 < t->size() && !merged; ++i) {
        const int x = (*t)[i], y = (*t)[i + 1];
        if (x == y || !mergeable(x, y)) continue;
        for (auto* u : terms) u->erase(std::remove(u->begin(), u->end(), y), u->end());
        c.size[x] *= c.size[y];
        c.name[x] += c.name[y];
        merged = true;
      }
      if (merged) break;
    }
  }

  // 3. renumber the surviving letters 0..L-1 in order of first appearance
  std::vector<int> remap(c.size.size(), -1);
  std::vector<std::string> names;
  std::vector<int64_t> sizes;
  for (auto* t : terms)
    for (int& l : *t) {
      if (remap[l] < 0) {
        remap[l] = static_cast<int>(names.size());
        names.push_back(c.name[l]);
        sizes.push_back(c.size[l]);
      }
      l = remap[l];
    }
  c.name = names;
  c.size = sizes;
  return c;
}

// ---- contraction order ----

namespace {

using LetterSet = std::vector<bool>;

// Letters of the result of contracting a and b, given the other live operands.
LetterSet contract_letters(const LetterSet& a, const LetterSet& b, const std::vector<LetterSet>& others,
                           const LetterSet& output) {
  LetterSet r(a.size(), false);
  for (size_t l = 0; l < a.size(); ++l) {
    if (!a[l] && !b[l]) continue;
    bool kept = output[l];
    for (const auto& o : others) kept = kept || o[l];
    r[l] = kept;
  }
  return r;
}

double volume(const LetterSet& s, const std::vector<int64_t>& size) {
  double v = 1;
  for (size_t l = 0; l < s.size(); ++l)
    if (s[l]) v *= static_cast<double>(size[l]);
  return v;
}

// flops-like estimate of one pairwise step: multiply-adds over the union, plus writing the result.
double pair_cost(const LetterSet& a, const LetterSet& b, const LetterSet& r, const std::vector<int64_t>& size) {
  LetterSet u(a.size());
  for (size_t l = 0; l < a.size(); ++l) u[l] = a[l] || b[l];
  return volume(u, size) + volume(r, size);
}

}  // namespace

std::vector<ContractionOrder> contraction_orders(const Canonical& c, size_t max_orders) {
  const size_t n = c.operands.size(), L = c.size.size();
  if (n < 3) return {n == 2 ? ContractionOrder{{0, 1}} : ContractionOrder{}};
  std::vector<LetterSet> live;
  for (const auto& t : c.operands) {
    LetterSet s(L, false);
    for (int l : t) s[l] = true;
    live.push_back(s);
  }
  LetterSet output(L, false);
  for (int l : c.output) output[l] = true;

  std::vector<std::pair<double, ContractionOrder>> found;
  if (n <= 6) {
    // Exhaustive: every sequence of pairs (n=5: 180 sequences, n=6: 2700).
    ContractionOrder cur;
    std::function<void(std::vector<LetterSet>&, double)> search = [&](std::vector<LetterSet>& ops, double cost) {
      if (ops.size() == 1) {
        found.emplace_back(cost, cur);
        return;
      }
      for (size_t i = 0; i < ops.size(); ++i)
        for (size_t j = i + 1; j < ops.size(); ++j) {
          std::vector<LetterSet> rest;
          for (size_t k = 0; k < ops.size(); ++k)
            if (k != i && k != j) rest.push_back(ops[k]);
          LetterSet r = contract_letters(ops[i], ops[j], rest, output);
          const double step = pair_cost(ops[i], ops[j], r, c.size);
          rest.push_back(r);
          cur.emplace_back(static_cast<int>(i), static_cast<int>(j));
          search(rest, cost + step);
          cur.pop_back();
        }
    };
    search(live, 0);
  } else {
    // Greedy: repeatedly contract the cheapest pair.
    ContractionOrder order;
    double total = 0;
    while (live.size() > 1) {
      double best = std::numeric_limits<double>::infinity();
      size_t bi = 0, bj = 1;
      for (size_t i = 0; i < live.size(); ++i)
        for (size_t j = i + 1; j < live.size(); ++j) {
          std::vector<LetterSet> rest;
          for (size_t k = 0; k < live.size(); ++k)
            if (k != i && k != j) rest.push_back(live[k]);
          const double cost = pair_cost(live[i], live[j], contract_letters(live[i], live[j], rest, output), c.size);
          if (cost < best) best = cost, bi = i, bj = j;
        }
      std::vector<LetterSet> rest;
      for (size_t k = 0; k < live.size(); ++k)
        if (k != bi && k != bj) rest.push_back(live[k]);
      LetterSet r = contract_letters(live[bi], live[bj], rest, output);
      rest.push_back(r);
      live = rest;
      total += best;
      order.emplace_back(static_cast<int>(bi), static_cast<int>(bj));
    }
    found.emplace_back(total, order);
  }
  std::stable_sort(found.begin(), found.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<ContractionOrder> orders;
  for (size_t i = 0; i < found.size() && orders.size() < max_orders; ++i) orders.push_back(found[i].second);
  return orders;
}

}  // namespace einsum_impl
}  // namespace onnxmini
