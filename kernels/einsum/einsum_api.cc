// Public einsum API (include/onnxmini/einsum.h), the plan cache and optimize="time".
#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <random>

#include "kernels/einsum/einsum_cache.h"
#include "kernels/einsum/einsum_executor.h"
#include "kernels/einsum/einsum_planner.h"
#include "kernels/gemm_engine/gemm.h"
#include "kernels/gemm_engine/small_gemm.h"
#include "core/cpu_features.h"
#include "core/logging.h"
#include "core/thread_pool.h"

namespace onnxmini {

const char* to_string(EinsumOptimize o) {
  switch (o) {
    case EinsumOptimize::None: return "none";
    case EinsumOptimize::Cost: return "cost";
    case EinsumOptimize::Time: return "time";
  }
  return "?";
}

EinsumOptimize einsum_optimize_from_string(const std::string& s) {
  if (s == "none") return EinsumOptimize::None;
  if (s == "cost") return EinsumOptimize::Cost;
  if (s == "time") return EinsumOptimize::Time;
  throw Error(ErrorCode::InvalidArgument, fmt::format("einsum: optimize must be none, cost or time, got '{}'", s));
}

namespace einsum_impl {

namespace {

std::string shapes_key(const std::vector<Shape>& shapes) {
  std::string k;
  for (const auto& s : shapes) k += shape_to_string(s) + ",";
  return k;
}

struct Cache {
  std::mutex mu;
  std::map<std::string, std::shared_ptr<const CachedPlan>> entries;
  std::vector<std::shared_ptr<const CachedPlan>> replaced;  // kept alive: profiles may point into them
  std::atomic<uint64_t> generation{0};                       // plan_cache_generation()
};
Cache& cache() {
  static Cache c;
  return c;
}

// EinsumOptions::threads, 0 meaning one per physical core (as sessions count it).
int pool_threads(int threads) { return threads > 0 ? threads : cpu::physical_cores(); }

std::vector<const Tensor*> pointers(const std::vector<Tensor>& ts) {
  std::vector<const Tensor*> p;
  for (const auto& t : ts) p.push_back(&t);
  return p;
}

// Times `plans` on random float32 data; returns the winner with every candidate's time.
std::shared_ptr<CachedPlan> time_plans(std::vector<Plan> plans, const EinsumOptions& o) {
  ThreadPool pool(pool_threads(o.threads));
  const auto& engine = gemm::engine(o.gemm);
  std::vector<Tensor> inputs;
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> dist(-1, 1);
  for (const auto& s : plans[0].input_shapes) {
    Tensor t(DType::Float32, s);
    for (int64_t i = 0; i < t.numel(); ++i) t.mutable_data<float>()[i] = dist(rng);
    inputs.push_back(t);
  }
  Tensor out(DType::Float32, plans[0].output_shape);
  const auto ops = pointers(inputs);
  const ScratchAllocator scratch = [](DType d, const Shape& s) { return Tensor(d, s); };
  auto res = std::make_shared<CachedPlan>();
  size_t best = 0;
  for (size_t i = 0; i < plans.size(); ++i) {
    if (o.progress) o.progress(i, plans.size());
    execute_plan(plans[i], ops, out, scratch, &pool, engine);  // warm-up
    double best_us = 1e30, spent = 0;
    for (int r = 0; r < 50 && (r < 3 || spent < 20000); ++r) {
      const auto t0 = std::chrono::steady_clock::now();
      execute_plan(plans[i], ops, out, scratch, &pool, engine);
      const double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
      best_us = std::min(best_us, us);
      spent += us;
    }
    plans[i].measured_us = best_us;
    ONNXMINI_LOG(default_logger(), Info, "einsum: timed plan {}/{}: {:.2f} us measured, {:.2f} us estimated: {}", i + 1,
                 plans.size(), best_us, plans[i].cost_ns / 1000.0, plan_summary(plans[i]));
    if (best_us < plans[best].measured_us || i == 0) best = i;
  }
  if (o.progress) o.progress(plans.size(), plans.size());
  for (const Plan& p : plans)
    res->candidates.push_back({p.letter_order, p.contraction_order, plan_summary(p), p.cost_ns / 1000.0, p.measured_us});
  std::stable_sort(res->candidates.begin(), res->candidates.end(),
                   [](const EinsumCandidate& a, const EinsumCandidate& b) { return a.measured_us < b.measured_us; });
  res->plan = plans[best];
  return res;
}

}  // namespace

// Whether a float32 run of this GEMM step takes the builtin engine's small-matrix route
// (gemm_engine/small_gemm.h): ",small" in the summary, the Einsum node's variant.
static bool small_gemm_step(const GemmShape& g) {
  gemm::SgemmArgs a;
  a.trans_a = g.trans_a, a.trans_b = g.trans_b;
  a.M = g.M, a.N = g.N, a.K = g.K;
  return gemm::small_sgemm_fits(a);
}

std::string plan_summary(const Plan& p) {
  std::vector<std::string> steps;
  for (const Step& s : p.steps) {
    if (s.kind == StepKind::Gemm)
      steps.push_back(fmt::format("gemm {}x({}x{}x{}{}{}{})", s.flops > 0 ? static_cast<int64_t>(s.flops / (2.0 * s.gemm.M * s.gemm.N * s.gemm.K)) : 0,
                                  s.gemm.M, s.gemm.N, s.gemm.K, s.gemm.trans_a ? ",A^T" : "", s.gemm.trans_b ? ",B^T" : "",
                                  small_gemm_step(s.gemm) ? ",small" : ""));
    else
      steps.push_back(fmt::format("{} {}", step_kind_name(s.kind), p.slots[s.out].elements));
  }
  return fmt::format("einsum {} optimize={} order={}{}: {}", p.canonical, p.optimizer, p.letter_order,
                     p.contraction_order.empty() ? "" : " pairs=" + p.contraction_order, fmt::join(steps, " | "));
}

std::shared_ptr<const CachedPlan> get_plan(const std::string& equation, const std::vector<Shape>& shapes,
                                           const EinsumOptions& options) {
  const bool none = options.optimize == EinsumOptimize::None;
  const std::string key = equation + "|" + shapes_key(shapes) + (none ? "|none" : "|opt");
  Cache& c = cache();
  {
    std::lock_guard<std::mutex> lock(c.mu);
    auto it = c.entries.find(key);
    if (it != c.entries.end() && (options.optimize != EinsumOptimize::Time || it->second->plan.optimizer == "time"))
      return it->second;
  }
  const EinsumSpec spec = parse_equation(equation, shapes);
  std::shared_ptr<CachedPlan> made;
  if (none) {
    made = std::make_shared<CachedPlan>();
    made->plan = naive_plan(spec);
  } else if (options.optimize == EinsumOptimize::Cost) {
    made = std::make_shared<CachedPlan>();
    made->plan = candidate_plans(spec, 1).at(0);
    made->plan.optimizer = "cost";
  } else {
    made = time_plans(candidate_plans(spec, std::max(1, options.time_candidates)), options);
    made->plan.optimizer = "time";
  }
  made->plan.summary = plan_summary(made->plan);
  std::lock_guard<std::mutex> lock(c.mu);
  auto& slot = c.entries[key];
  if (slot) {
    if (slot->plan.optimizer == "time" && options.optimize != EinsumOptimize::Time) return slot;  // raced: keep measured
    c.replaced.push_back(slot);
  }
  slot = made;
  c.generation.fetch_add(1, std::memory_order_release);
  return slot;
}

uint64_t plan_cache_generation() { return cache().generation.load(std::memory_order_acquire); }

}  // namespace einsum_impl

// ---- public API ----

Shape einsum_output_shape(const std::string& equation, const std::vector<Shape>& shapes) {
  return einsum_impl::parse_equation(equation, shapes).output_shape;
}

EinsumPlanInfo einsum_plan(const std::string& equation, const std::vector<Shape>& shapes, const EinsumOptions& options) {
  const auto cached = einsum_impl::get_plan(equation, shapes, options);
  const einsum_impl::Plan& p = cached->plan;
  EinsumPlanInfo info;
  info.equation = p.equation;
  info.canonical = p.canonical;
  info.letter_order = p.letter_order;
  info.contraction_order = p.contraction_order;
  info.optimizer = p.optimizer;
  info.input_shapes = p.input_shapes;
  info.output_shape = p.output_shape;
  for (const auto& s : p.steps)
    info.steps.push_back({einsum_impl::step_kind_name(s.kind), s.text, s.flops, s.bytes_copied, s.cost_ns / 1000.0});
  info.flops = p.flops;
  info.bytes_copied = p.bytes_copied;
  info.estimated_us = p.cost_ns / 1000.0;
  info.measured_us = p.measured_us;
  info.candidates = cached->candidates;
  info.summary = p.summary;
  info.text = p.describe();
  return info;
}

Tensor einsum(const std::string& equation, const std::vector<Tensor>& operands, const EinsumOptions& options) {
  std::vector<Shape> shapes;
  for (const auto& t : operands) shapes.push_back(t.shape());
  if (operands.empty()) throw Error(ErrorCode::InvalidArgument, "einsum: at least one operand is needed");
  const DType dt = operands[0].dtype();
  for (size_t i = 0; i < operands.size(); ++i) {
    if (operands[i].dtype() != dt)
      throw Error(ErrorCode::InvalidArgument, fmt::format("einsum: operand {} is {} but operand 0 is {}", i,
                                                          dtype_name(operands[i].dtype()), dtype_name(dt)));
  }
  if (!einsum_impl::einsum_dtype_supported(dt))
    throw Error(ErrorCode::NotImplemented, fmt::format("einsum: dtype {} is not supported", dtype_name(dt)));
  const auto ops = einsum_impl::pointers(operands);
  if (options.kernels == KernelMode::Reference) {
    const einsum_impl::EinsumSpec spec = einsum_impl::parse_equation(equation, shapes);
    Tensor out(dt, spec.output_shape);
    einsum_impl::reference_einsum(spec, ops, out);
    return out;
  }
  const auto cached = einsum_impl::get_plan(equation, shapes, options);
  Tensor out(dt, cached->plan.output_shape);
  ThreadPool pool(einsum_impl::pool_threads(options.threads));
  einsum_impl::execute_plan(cached->plan, ops, out, [](DType d, const Shape& s) { return Tensor(d, s); }, &pool,
                       gemm::engine(options.gemm));
  return out;
}

}  // namespace onnxmini
