// Hand-off cost of one parallel_for on this machine: where does a second
// thread start to pay? For each amount of work W (ns on one thread, split in
// 64 equal items), times parallel_for on a 1-thread and a 2-thread pool,
// interleaved, with an inline "gap" of other work between calls as in a model
// (the worker is spinning, not asleep, as between a CNN's nodes). Prints the
// median per W and the ratio 2T/1T (run it with `chrt -f 10` on a shared machine
// to see a quiet machine's numbers); the break-even W sets
// kMinParallelWorkNs in core/thread_pool.h.
//
// Build (no cmake target: a one-off measurement):
//   g++ -O2 -std=c++17 -pthread -I. benchmarks/bench_pool_handoff.cc core/thread_pool.cc -o /tmp/bench_pool_handoff
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

#include "core/thread_pool.h"

namespace {
int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}
// About `iters` dependent multiply-adds: work that scales, touches no memory.
float busy(int64_t iters, float x) {
  for (int64_t i = 0; i < iters; ++i) x = x * 0.999999f + 1e-6f;
  return x;
}
volatile float g_sink;
volatile float g_one = 1.f;  // opaque start value: the compiler cannot fold busy()
}  // namespace

int main(int argc, char** argv) {
  const int reps = argc > 1 ? std::atoi(argv[1]) : 2000;
  // argv[2]: ns of inline work between calls; above the spin time (200 us) the worker
  // is asleep at every call and the hand-off is a condition-variable wake-up.
  const int64_t gap_ns = argc > 2 ? std::atoll(argv[2]) : 5000;
  // Calibrate: iterations per ns.
  int64_t t0 = now_ns();
  g_sink = busy(10000000, g_one);
  const double iters_per_ns = 1e7 / double(now_ns() - t0);
  onnxmini::ThreadPool p1(1), p2(2);
  std::printf("work_ns  1T_med_ns  2T_med_ns  ratio\n");
  for (int64_t work : {500, 1000, 2000, 4000, 8000, 16000, 32000, 64000}) {
    const int64_t items = 64, per_item = std::max<int64_t>(1, int64_t(work * iters_per_ns / items));
    std::vector<int64_t> t1, t2;
    auto fn = [&](int64_t b, int64_t e) {
      float x = g_one;
      for (int64_t i = b; i < e; ++i) x = busy(per_item, x);
      g_sink = x;
    };
    for (int r = 0; r < reps; ++r) {
      for (int which = 0; which < 2; ++which) {
        onnxmini::ThreadPool& p = (r + which) % 2 ? p2 : p1;
        g_sink = busy(int64_t(gap_ns * iters_per_ns), g_one);  // the inline nodes between two parallel ones
        const int64_t s = now_ns();
        p.parallel_for(items, 1, fn);
        ((&p == &p2) ? t2 : t1).push_back(now_ns() - s);
      }
    }
    auto med = [](std::vector<int64_t>& v) {
      std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
      return v[v.size() / 2];
    };
    const int64_t m1 = med(t1), m2 = med(t2);
    std::printf("%7lld  %9lld  %9lld  %.2f\n", (long long)work, (long long)m1, (long long)m2, double(m2) / double(m1));
  }
}
