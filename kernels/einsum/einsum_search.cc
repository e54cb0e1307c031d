// Plan search: contraction orders x letter orders, ranked by the cost model.
//
// The letter order decides how intermediates and packed copies are laid out and
// in which order grouped letters are merged, i.e. whether a later step can read
// its operands in place. Like the seed notebook we try every order when there
// are few letters (canonical form makes that common: "bhqd,bhkd->bhqk" has 4),
// but score them with the cost model instead of timing each one; optimize="time"
// then times the best few for real (einsum_api.cc).
#include <fmt/format.h>

#include <algorithm>
#include <numeric>
#include <set>

#include "kernels/einsum/einsum_planner.h"

namespace onnxmini {
namespace einsum_impl {

namespace {

std::vector<int> rank_of(const std::vector<int>& order) {
  std::vector<int> rank(order.size());
  for (size_t i = 0; i < order.size(); ++i) rank[order[i]] = static_cast<int>(i);
  return rank;
}

// Output letters first (in output order), then the others by first appearance.
std::vector<int> natural_order(const Canonical& c) {
  std::vector<int> order = c.output;
  for (int l = 0; l < static_cast<int>(c.size.size()); ++l)
    if (std::find(order.begin(), order.end(), l) == order.end()) order.push_back(l);
  return order;
}

std::vector<std::vector<int>> letter_orders(const Canonical& c) {
  const int L = static_cast<int>(c.size.size());
  std::vector<std::vector<int>> orders{natural_order(c)};
  if (L <= 6) {  // all L! orders (720 at most)
    std::vector<int> perm(L);
    std::iota(perm.begin(), perm.end(), 0);
    do orders.push_back(perm);
    while (std::next_permutation(perm.begin(), perm.end()));
    return orders;
  }
  // Many letters: the natural order, first appearance, each operand's own order first, reversed.
  std::vector<int> ident(L);
  std::iota(ident.begin(), ident.end(), 0);
  orders.push_back(ident);
  for (const auto& t : c.operands) {
    std::vector<int> o;
    for (int l : t)
      if (std::find(o.begin(), o.end(), l) == o.end()) o.push_back(l);
    for (int l : orders[0])
      if (std::find(o.begin(), o.end(), l) == o.end()) o.push_back(l);
    orders.push_back(o);
  }
  orders.emplace_back(orders[0].rbegin(), orders[0].rend());
  return orders;
}

std::string signature(const Plan& p) {
  std::string s;
  for (const Step& st : p.steps) s += st.text + "\n";
  return s;
}

}  // namespace

std::vector<Plan> candidate_plans(const EinsumSpec& spec, size_t limit) {
  const Canonical c = canonicalize(spec);
  std::vector<Plan> plans;
  const auto orders = letter_orders(c);
  for (const auto& order : contraction_orders(c, 3)) {
    size_t best = plans.size();
    std::vector<int> best_letters;
    for (const auto& letters : orders) {
      plans.push_back(build_plan(spec, c, order, rank_of(letters)));
      if (best_letters.empty() || plans.back().cost_ns < plans[best].cost_ns) {
        best = plans.size() - 1;
        best_letters = letters;
      }
    }
    // The GEMM set-up variants, for the best letter order only (for optimize=time to measure).
    for (int variant : {int{kGemmPackOperands}, int{kGemmOtherRoles}, kGemmPackOperands | kGemmOtherRoles})
      plans.push_back(build_plan(spec, c, order, rank_of(best_letters), variant));
  }
  std::stable_sort(plans.begin(), plans.end(), [](const Plan& a, const Plan& b) { return a.cost_ns < b.cost_ns; });
  std::vector<Plan> out;
  std::set<std::string> seen;
  for (auto& p : plans) {
    if (out.size() >= limit) break;
    if (seen.insert(signature(p)).second) out.push_back(std::move(p));
  }
  return out;
}

Plan naive_plan(const EinsumSpec& spec) {
  const Canonical c = canonicalize(spec);
  ContractionOrder order;
  for (size_t live = c.operands.size(); live > 1; --live) order.emplace_back(0, live == c.operands.size() ? 1 : static_cast<int>(live) - 1);
  std::vector<int> ident(c.size.size());
  std::iota(ident.begin(), ident.end(), 0);
  Plan p = build_plan(spec, c, order, rank_of(ident));
  p.optimizer = "none";
  return p;
}

std::string Plan::describe() const {
  std::vector<std::string> shapes;
  for (const auto& s : input_shapes) shapes.push_back(shape_to_string(s));
  std::string t = fmt::format("equation:  {}   {} -> {}\n", equation, fmt::join(shapes, ", "), shape_to_string(output_shape));
  t += fmt::format("canonical: {}   letter sizes:", canonical);
  for (size_t l = 0; l < letter_name.size(); ++l) t += fmt::format(" {}={}", letter_name[l], letter_size[l]);
  t += fmt::format("\noptimizer: {}   letter order: {}", optimizer, letter_order);
  if (!contraction_order.empty()) t += "   contraction order: " + contraction_order;
  t += "\nsteps:\n";
  for (size_t i = 0; i < steps.size(); ++i) {
    const Step& s = steps[i];
    t += fmt::format("  {}. {}\n     flops {:.4g}  bytes copied {:.4g}  estimated {:.2f} us\n", i + 1, s.text, s.flops,
                     s.bytes_copied, s.cost_ns / 1000.0);
  }
  t += fmt::format("total: flops {:.4g}, bytes copied {:.4g} (float32), estimated {:.2f} us", flops, bytes_copied,
                   cost_ns / 1000.0);
  if (measured_us >= 0) t += fmt::format(", measured {:.2f} us", measured_us);
  return t + "\n";
}

}  // namespace einsum_impl
}  // namespace onnxmini
