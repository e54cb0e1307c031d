// What the host gives two threads right now, for reading 2-thread timings on a shared VM
// (benchmarks/host_probe.py runs it between model timings; docs/threads.md "Slow periods").
// Prints one line of key=value pairs:
//   handoff_ns   one-way latency of a cache line passed back and forth between two threads
//                (200 000 round trips; the line's owner changes every time)
//   remote_us    one thread writes 256 KB, the other then reads it (2000 rounds, per round):
//                the cost of reading data another core just wrote
//   fma1, fma2   GFLOP/s of a register-only FMA loop (16 independent zmm / ymm chains) on one
//                thread alone and on two at once (sum): whether the two vCPUs get two cores
// Build: g++ -O2 -std=c++17 -pthread -march=native benchmarks/host_probe.cc -o host_probe
#include <immintrin.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <thread>
#include <vector>

namespace {

double now_s() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

double handoff_ns() {
  alignas(64) static std::atomic<int> flag{0};
  constexpr int kRounds = 200000;
  flag = 0;
  std::thread t([] {
    for (int i = 0; i < kRounds; ++i) {
      while (flag.load(std::memory_order_acquire) != 2 * i + 1) {
      }
      flag.store(2 * i + 2, std::memory_order_release);
    }
  });
  const double t0 = now_s();
  for (int i = 0; i < kRounds; ++i) {
    flag.store(2 * i + 1, std::memory_order_release);
    while (flag.load(std::memory_order_acquire) != 2 * i + 2) {
    }
  }
  const double dt = now_s() - t0;
  t.join();
  return dt / kRounds / 2 * 1e9;
}

double remote_us() {
  constexpr size_t kFloats = 256 * 1024 / 4;
  constexpr int kRounds = 2000;
  std::vector<float> buf(kFloats);
  std::atomic<int> turn{0};
  volatile float sink = 0;
  std::thread reader([&] {
    float s = 0;
    for (int r = 0; r < kRounds; ++r) {
      while (turn.load() != 2 * r + 1) {
      }
      for (size_t i = 0; i < kFloats; i += 16) s += buf[i];  // one read per cache line
      turn.store(2 * r + 2);
    }
    sink = s;
  });
  const double t0 = now_s();
  for (int r = 0; r < kRounds; ++r) {
    while (turn.load() != 2 * r) {
    }
    for (size_t i = 0; i < kFloats; ++i) buf[i] = static_cast<float>(r + i);
    turn.store(2 * r + 1);
  }
  while (turn.load() != 2 * kRounds) {
  }
  const double dt = now_s() - t0;
  reader.join();
  (void)sink;
  return dt / kRounds * 1e6;
}

#if defined(__AVX512F__)
using Vec = __m512;
constexpr int kLanes = 16;
inline Vec vset(float x) { return _mm512_set1_ps(x); }
inline Vec vfma(Vec a, Vec b, Vec c) { return _mm512_fmadd_ps(a, b, c); }
inline float vsum(Vec a) { return _mm512_reduce_add_ps(a); }
#else
using Vec = __m256;
constexpr int kLanes = 8;
inline Vec vset(float x) { return _mm256_set1_ps(x); }
inline Vec vfma(Vec a, Vec b, Vec c) { return _mm256_fmadd_ps(a, b, c); }
inline float vsum(Vec a) {
  alignas(32) float t[8];
  _mm256_store_ps(t, a);
  float s = 0;
  for (float x : t) s += x;
  return s;
}
#endif

// GFLOP/s of 16 independent FMA chains for `secs` seconds (registers only).
double fma_gflops(double secs) {
  Vec a[16];
  for (int i = 0; i < 16; ++i) a[i] = vset(0.001f * i);
  const Vec b = vset(0.9999f), c = vset(0.0001f);
  long iters = 0;
  const double t0 = now_s();
  while (now_s() - t0 < secs) {
    for (int k = 0; k < 10000; ++k) {
#pragma GCC unroll 16
      for (int i = 0; i < 16; ++i) a[i] = vfma(a[i], b, c);
    }
    iters += 10000;
  }
  const double dt = now_s() - t0;
  float s = 0;
  for (int i = 0; i < 16; ++i) s += vsum(a[i]);
  if (s == 12345.f) std::printf(" ");
  return iters * 16.0 * kLanes * 2 / dt / 1e9;
}

}  // namespace

int main() {
  const double h = handoff_ns(), r = remote_us(), f1 = fma_gflops(0.1);
  double f2a = 0, f2b = 0;
  std::thread t([&] { f2b = fma_gflops(0.1); });
  f2a = fma_gflops(0.1);
  t.join();
  std::printf("handoff_ns=%.0f remote_us=%.1f fma1=%.0f fma2=%.0f\n", h, r, f1, f2a + f2b);
  return 0;
}
