// The FMA loops behind measure_roofs() (profiler/roofline.cc): one per ISA, each
// in its own file compiled with that ISA's flags (*_avx2.cc, *_avx512.cc). Data
// layout: kAccumulators independent vector accumulators, all in registers, each
// updated acc = acc * m + c per iteration - enough independent chains to cover
// the FMA latency on both FMA ports, so the loop runs at the core's FMA peak.
// Internal to profiler/.
#pragma once
#include <cstdint>

namespace onnxmini {
namespace profile {

// Runs `iters` iterations; returns the floating-point operations done (2 per
// lane per FMA). `sink` receives a sum of the accumulators so nothing is elided.
double fma_loop_portable(int64_t iters, float* sink);
double fma_loop_avx2(int64_t iters, float* sink);    // only when cpu::hw_has_avx2_fma()
double fma_loop_avx512(int64_t iters, float* sink);  // only when cpu::hw_has_avx512()

}  // namespace profile
}  // namespace onnxmini
