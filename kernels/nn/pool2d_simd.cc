// 2-D float pools: the portable plane functions, the ISA choice and the
// driver over planes (see pool2d_simd.h).
#include "kernels/nn/pool2d_simd.h"

#include <atomic>

#include "core/aligned_vector.h"
#include "core/thread_pool.h"
#include "kernels/nn/pool2d_simd_impl.h"

namespace onnxmini {
namespace nn {
namespace {
std::atomic<int> g_isa_override{-1};
}  // namespace

const Pool2dKernels& pool2d_kernels_portable() {
  static const Pool2dKernels k{cpu::Isa::Portable, pool_plane_dispatch<SumOp>, pool_plane_dispatch<MaxOp>};
  return k;
}

const Pool2dKernels& pool2d_kernels_for(cpu::Isa isa) {
  if (isa == cpu::Isa::Avx512 && cpu::hw_has_avx512()) return pool2d_kernels_avx512();
  if (isa != cpu::Isa::Portable && cpu::hw_has_avx2_fma()) return pool2d_kernels_avx2();
  return pool2d_kernels_portable();
}

cpu::Isa pool2d_isa() {
  const int o = g_isa_override.load(std::memory_order_relaxed);
  return o < 0 ? cpu::active_isa() : static_cast<cpu::Isa>(o);
}

void set_pool2d_isa_for_tests(cpu::Isa isa) { g_isa_override.store(static_cast<int>(isa)); }

void pool2d_simd(const Pool2dPlan& p, bool max, int64_t planes, const float* x, float* y, ThreadPool* pool) {
  const Pool2dKernels& k = pool2d_kernels_for(pool2d_isa());
  const Pool2dPlaneFn plane = max ? k.max : k.average;
  const int64_t IP = p.H * p.W, OP = p.OH * p.OW;
  // Cost rule (core/thread_pool.h): one operation per tap and output, X and Y once.
  const ParallelCost cost{planes * OP * p.KH * p.KW, static_cast<int64_t>(sizeof(float)) * planes * (IP + OP),
                          static_cast<int64_t>(sizeof(float)) * planes * OP};
  parallel_for(pool, planes, 1, cost, [&](int64_t p0, int64_t p1) {
    thread_local AlignedVector<float> scratch;  // grows once, reused across runs
    if (scratch.size() < static_cast<size_t>(p.scratch_floats())) scratch.resize(p.scratch_floats());
    for (int64_t pl = p0; pl < p1; ++pl) plane(p, x + pl * IP, y + pl * OP, scratch.data());
  });
}

}  // namespace nn
}  // namespace onnxmini
