// measure_roofs(): the roofline's two roofs on the machine at hand (see
// include/onnxmini/profile.h). FMA peak: the loop of the widest ISA cpu
// detection allows, calibrated to ~40 ms, best of 3. Bandwidth: memcpy of a
// 64 MiB buffer (beyond any last-level cache of today's CPUs), pages touched
// first, best of 4; GB/s counts the bytes read plus the bytes written. Passes
// are timed in thread CPU time (robust to a loaded machine). About 0.25 s in all.
#include <algorithm>
#include <ctime>
#include <cstring>
#include <vector>

#include "core/cpu_features.h"
#include "onnxmini/profile.h"
#include "profiler/roofline_fma.h"

namespace onnxmini {
namespace profile {

namespace {

// The calling thread's CPU time: on a shared machine a wall-clock pass includes the
// time the thread waited descheduled (a loaded 2-core host measured memcpy at
// 0.8 GB/s by the wall clock), which is no property of the hardware.
double thread_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

}  // namespace

// Scalar C++ the compiler vectorises for the baseline ISA (SSE2: a multiply and
// an add, no FMA): 32 independent accumulators.
double fma_loop_portable(int64_t iters, float* sink) {
  constexpr int kAccumulators = 32;
  float acc[kAccumulators];
  for (int j = 0; j < kAccumulators; ++j) acc[j] = 0.5f + 0.01f * j;
  const float m = 0.999999f, c = 1e-6f;
  for (int64_t i = 0; i < iters; ++i)
    for (int j = 0; j < kAccumulators; ++j) acc[j] = acc[j] * m + c;
  float s = 0;
  for (float v : acc) s += v;
  *sink = s;
  return 2.0 * kAccumulators * static_cast<double>(iters);
}

Roofs measure_roofs() {
  Roofs r;
  const cpu::Isa isa = cpu::active_isa();
  double (*loop)(int64_t, float*) = fma_loop_portable;
  if (isa == cpu::Isa::Avx512) loop = fma_loop_avx512;
  else if (isa == cpu::Isa::Avx2) loop = fma_loop_avx2;
  r.isa = cpu::isa_name(isa);

  float sink = 0;
  int64_t iters = 1 << 16;
  for (;;) {  // calibrate: grow until one pass takes >= 5 ms
    const double t0 = thread_seconds();
    loop(iters, &sink);
    const double s = (thread_seconds() - t0);
    if (s >= 0.005) {
      iters = std::max<int64_t>(iters, static_cast<int64_t>(iters * 0.04 / s));  // ~40 ms per pass
      break;
    }
    iters *= 4;
  }
  for (int rep = 0; rep < 3; ++rep) {
    const double t0 = thread_seconds();
    const double flops = loop(iters, &sink);
    r.peak_gflops = std::max(r.peak_gflops, flops / (thread_seconds() - t0) * 1e-9);
  }

  const size_t bytes = size_t(64) << 20;
  std::vector<char> src(bytes, 1), dst(bytes, 0);  // touched: no page faults in the timed copies
  for (int rep = 0; rep < 4; ++rep) {
    src[rep] = static_cast<char>(sink > 0 ? rep : rep + 1);  // the copies differ, nothing to elide
    const double t0 = thread_seconds();
    std::memcpy(dst.data(), src.data(), bytes);
    const double s = (thread_seconds() - t0);
    r.peak_gbs = std::max(r.peak_gbs, 2.0 * bytes / s * 1e-9);
  }
  if (dst[1] != 1) r.peak_gbs = 0;  // keeps the copies observable
  return r;
}

}  // namespace profile
}  // namespace onnxmini
