// The process-wide plan cache, shared by the Einsum kernel and the public API.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "kernels/einsum/einsum_plan.h"
#include "onnxmini/einsum.h"

namespace onnxmini {
namespace einsum_impl {

struct CachedPlan {
  Plan plan;
  std::vector<EinsumCandidate> candidates;  // optimize=time only
};

// The plan for (equation, shapes). Cost: any cached optimized plan (a timed one is
// preferred, being measured); Time: times candidates unless a timed plan is cached;
// None: the unsearched plan. Plans are never evicted, so pointers into them (the
// profiler's variant string) stay valid for the life of the process.
std::shared_ptr<const CachedPlan> get_plan(const std::string& equation, const std::vector<Shape>& shapes,
                                           const EinsumOptions& options);

// Bumped whenever get_plan stores a plan (a new key, or a timed plan replacing one):
// a caller keeping the plan of its last shapes (the Einsum kernel) revalidates with it.
uint64_t plan_cache_generation();

// The short summary put in ctx.stats().variant.
std::string plan_summary(const Plan& p);

}  // namespace einsum_impl
}  // namespace onnxmini
