// Planning an einsum: canonical form, contraction order, layouts, cost.
#pragma once
#include <string>
#include <vector>

#include "kernels/einsum/einsum_plan.h"

namespace onnxmini {
namespace einsum_impl {

// The equation with size-1 axes dropped and letters that always travel together
// merged ("bhqd,bhkd->bhqk" -> "(bh)qd,(bh)kd->(bh)qk").
struct Canonical {
  std::vector<std::string> name;
  std::vector<int64_t> size;
  std::vector<std::vector<int>> operands;  // operand -> axes (letters, repeats = diagonal)
  std::vector<int> output;
  std::string to_string() const;  // "(bh)qd,(bh)kd->(bh)qk"
};
Canonical canonicalize(const EinsumSpec& spec);

// Contraction order: pairs of positions in the list of live operands; the result
// of each pair is appended to the list (opt_einsum's convention).
using ContractionOrder = std::vector<std::pair<int, int>>;
// Best orders by a flops + intermediate-size estimate (exhaustive up to 6 operands, greedy after), best first.
std::vector<ContractionOrder> contraction_orders(const Canonical& c, size_t max_orders);

// Variants of how pairwise GEMM steps are set up (bits), as extra candidates:
// the cost model picks the cheaper operand roles and reads operands in place when
// it can; these force the other roles, or packing both operands contiguously.
enum GemmVariant { kGemmAuto = 0, kGemmPackOperands = 1, kGemmOtherRoles = 2 };

// Builds the plan for one contraction order and one letter order (`rank[letter]`:
// position of the letter in the order used to lay out intermediates).
Plan build_plan(const EinsumSpec& spec, const Canonical& c, const ContractionOrder& order,
                const std::vector<int>& rank, int variant = kGemmAuto);

// All candidate plans considered by the cost model, cheapest first, deduplicated
// (plans with the same steps). `limit` bounds how many are returned.
std::vector<Plan> candidate_plans(const EinsumSpec& spec, size_t limit);

// The plan with no search: first-appearance letter order, left-to-right contraction.
Plan naive_plan(const EinsumSpec& spec);

}  // namespace einsum_impl
}  // namespace onnxmini
