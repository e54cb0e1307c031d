// Einsum (ai.onnx, opset 12+): runs the cached plan of (equation, input shapes).
// Data layout: inputs are dense row-major tensors; the plan reads them in place
// through strided views and batched GEMM (see einsum_plan.h), copying only what
// GEMM cannot read. The plan summary and letter order go to ctx.stats().variant,
// which the profiler writes into the node's kernel_time args.
// Reference mode runs the plain nested-loop definition (einsum_reference.cc).
#include <algorithm>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "kernels/einsum/einsum_cache.h"
#include "kernels/einsum/einsum_executor.h"
#include "kernels/gemm_engine/gemm.h"
#include "kernels/registry.h"

namespace onnxmini {

namespace {

class EinsumKernel : public Kernel {
 public:
  explicit EinsumKernel(const KernelInfo& info) {
    if (!info.attrs.has("equation")) info.fail("attribute 'equation' is required");
    equation_ = info.attrs.get_string("equation");
    equation_.erase(std::remove(equation_.begin(), equation_.end(), ' '), equation_.end());
  }

  // The plan is made for the operands' shapes: known before a run when every one is declared
  // (or constant). The same cache as compute(), so the summary is the one the run reports; bad
  // shapes throw here as they would there (explain notes the error).
  KernelPlan describe(const KernelInfo& info, const std::vector<const Shape*>& in) const override {
    std::vector<Shape> shapes;
    for (const Shape* s : in) {
      if (!s) return KernelPlan::at_run_time();
      shapes.push_back(*s);
    }
    if (shapes.empty()) return KernelPlan::at_run_time();
    const auto cached = einsum_impl::get_plan(equation_, shapes, EinsumOptions{});
    return KernelPlan{cached->plan.summary.c_str(),  // cached plans live for the whole process
                      gemm::engine(info.gemm, info.mode).sgemm_path(gemm::SgemmArgs{}, false).isa, ""};
  }

  void prepare(KernelContext& ctx) override {
    std::vector<Shape> shapes;
    const DType dt = ctx.input(0).dtype();
    for (size_t i = 0; i < ctx.num_inputs(); ++i) {
      const Tensor& t = ctx.input(i);
      if (t.dtype() != dt) ctx.fail("input {} is {} but input 0 is {}", i, dtype_name(t.dtype()), dtype_name(dt));
      shapes.push_back(t.shape());
    }
    if (!einsum_impl::einsum_dtype_supported(dt)) ctx.unsupported("dtype {} is not supported", dtype_name(dt));
    ctx.allocate_output(0, dt, plan(ctx, shapes)->plan.output_shape);
  }

  void compute(KernelContext& ctx) override {
    std::vector<Shape> shapes;
    std::vector<const Tensor*> ops;
    for (size_t i = 0; i < ctx.num_inputs(); ++i) {
      shapes.push_back(ctx.input(i).shape());
      ops.push_back(&ctx.input(i));
    }
    Tensor& y = ctx.output(0);
    if (ctx.reference_mode()) {
      ctx.stats().variant = "einsum_reference_loops";
      return einsum_impl::reference_einsum(einsum_impl::parse_equation(equation_, shapes), ops, y);
    }
    const auto cached = plan(ctx, shapes);  // a cache hit: prepare() built it
    ctx.stats().flops = cached->plan.flops;
    ctx.stats().variant = cached->plan.summary.c_str();  // cached plans live for the whole process
    ctx.stats().isa = ctx.gemm().sgemm_path(gemm::SgemmArgs{}, false).isa;  // its products go through the engine
    einsum_impl::execute_plan(cached->plan, ops, y, [&ctx](DType d, const Shape& s) { return ctx.scratch(d, s); },
                         ctx.threads(), ctx.gemm());
  }

 private:
  // The plan of the last shapes seen is kept (prepare and compute both ask, every run):
  // a hit skips building the cache key from shape strings and the map lookup, a few
  // hundred ns that matter next to a 3 us attention-sized Einsum. It is revalidated
  // against the cache generation, so a plan timed later for these shapes is picked up.
  std::shared_ptr<const einsum_impl::CachedPlan> plan(KernelContext& ctx, const std::vector<Shape>& shapes) const {
    const uint64_t gen = einsum_impl::plan_cache_generation();
    {
      std::lock_guard<std::mutex> lock(last_mu_);  // the kernel is shared by concurrent runs
      if (last_plan_ && last_generation_ == gen && last_shapes_ == shapes) return last_plan_;
    }
    std::shared_ptr<const einsum_impl::CachedPlan> p;
    try {
      EinsumOptions o;  // cost model; a plan timed earlier (optimize="time") for these shapes is reused
      p = einsum_impl::get_plan(equation_, shapes, o);
    } catch (const Error& e) {
      ctx.fail("{}", e.what());
    }
    std::lock_guard<std::mutex> lock(last_mu_);
    last_plan_ = p, last_shapes_ = shapes, last_generation_ = gen;
    return p;
  }
  std::string equation_;
  mutable std::mutex last_mu_;
  mutable std::vector<Shape> last_shapes_;
  mutable std::shared_ptr<const einsum_impl::CachedPlan> last_plan_;
  mutable uint64_t last_generation_ = 0;
};

}  // namespace

ONNXMINI_REGISTER_KERNEL("einsum_kernel", "", "Einsum", 12, INT_MAX, make_kernel<EinsumKernel>);

}  // namespace onnxmini

ONNXMINI_KERNEL_FILE(einsum_einsum_kernel);
