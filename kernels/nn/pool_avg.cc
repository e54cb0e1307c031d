// avgpool2d_separable: the portable plane function, the ISA choice and the
// driver over planes (see pool_avg.h).
#include "kernels/nn/pool_avg.h"

#include <atomic>

#include "core/thread_pool.h"
#include "kernels/nn/pool_avg_impl.h"

namespace onnxmini {
namespace nn {
namespace {
std::atomic<int> g_isa_override{-1};
}  // namespace

const AvgPoolKernels& avgpool_kernels_portable() {
  static const AvgPoolKernels k{cpu::Isa::Portable, avg_plane_dispatch};
  return k;
}

const AvgPoolKernels& avgpool_kernels_for(cpu::Isa isa) {
  if (isa == cpu::Isa::Avx512 && cpu::hw_has_avx512()) return avgpool_kernels_avx512();
  if (isa != cpu::Isa::Portable && cpu::hw_has_avx2_fma()) return avgpool_kernels_avx2();
  return avgpool_kernels_portable();
}

cpu::Isa avgpool_isa() {
  const int o = g_isa_override.load(std::memory_order_relaxed);
  return o < 0 ? cpu::active_isa() : static_cast<cpu::Isa>(o);
}

void set_avgpool_isa_for_tests(cpu::Isa isa) { g_isa_override.store(static_cast<int>(isa)); }

void avgpool2d_separable(const AvgPool2dPlan& p, int64_t planes, const float* x, float* y, ThreadPool* pool) {
  const AvgPlaneFn plane = avgpool_kernels_for(avgpool_isa()).plane;
  const int64_t IP = p.H * p.W, OP = p.OH * p.OW;
  parallel_for(pool, planes, 1, [&](int64_t p0, int64_t p1) {
    thread_local std::vector<float> colsum;  // W floats; grows once, reused across runs
    if (colsum.size() < static_cast<size_t>(p.W)) colsum.resize(p.W);
    for (int64_t pl = p0; pl < p1; ++pl) plane(p, x + pl * IP, y + pl * OP, colsum.data());
  });
}

}  // namespace nn
}  // namespace onnxmini
