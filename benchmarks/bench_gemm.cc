// SGEMM throughput: builtin engine vs OpenBLAS vs Eigen, 1 and 2 threads.
// `bench_gemm --ladder` runs only the learning ladder of docs/kernels/gemm-ladder.md
// instead (benchmarks/gemm_ladder.py drives it in interleaved rounds): one shape,
// one change per row - the reference loop, the packed driver with the portable,
// AVX2 and AVX-512 micro-kernels, then two threads - plus the FMA peak.
//
// Shapes: square n x n x n, and the convolutions of a small CNN (224x224 input) as
// im2col GEMMs, C[Cout, OH*OW] = W[Cout, Cin*kh*kw] * cols[Cin*kh*kw, OH*OW]:
//   conv0   3x3  3->64, 112x112 s1:  M=64 N=12544 K=27
//   spatial 7x7  2->1,  112x112 s1:  M=1  N=12544 K=98
//   conv9   3x3 64->64, 112x112 s1:  M=64 N=12544 K=576
//   conv11  3x3 64->64, s2 -> 56x56: M=64 N=3136  K=576
//   conv12  1x1 64->64, s2 -> 56x56: M=64 N=3136  K=64
//   pw_*    1x1 with few input channels (K = 16, 32, 48), from ppocr_v4_det / nudenet_320n
// Counter GFLOPS = 2*M*N*K / time. Threads: builtin gets an onnxmini::ThreadPool,
// OpenBLAS openblas_set_num_threads(); Eigen is built without OpenMP here, so
// it only runs single-threaded. "builtin_avx2" pins the AVX2 kernel path.
// Run OpenBLAS comparisons with OPENBLAS_CORETYPE / OPENBLAS_L2_SIZE unset
// (see docs/gemm.md), so it picks its own kernels for this CPU.
#include <benchmark/benchmark.h>
#include <immintrin.h>
#include <cblas.h>

#include <memory>
#include <random>
#include <string>
#include <vector>

#include "core/cpu_features.h"
#include "kernels/gemm_engine/gemm.h"
#include "kernels/gemm_engine/sgemm_kernel.h"
#include "core/thread_pool.h"

extern "C" void openblas_set_num_threads(int);
extern "C" char* openblas_get_config(void);
extern "C" char* openblas_get_corename(void);

namespace {
using namespace onnxmini;

struct Shape {
  std::string name;
  int64_t M, N, K;
};

const gemm::GemmEngine& engine_named(const std::string& b) {
  if (b == "openblas") return gemm::engine(GemmBackend::OpenBLAS);
  if (b == "eigen") return gemm::engine(GemmBackend::Eigen);
  if (b == "builtin_avx2") return gemm::builtin_engine_for(cpu::Isa::Avx2);
  if (b == "reference") return gemm::reference_engine();
  if (b == "portable") return gemm::builtin_engine_for(cpu::Isa::Portable);
  if (b == "avx2") return gemm::builtin_engine_for(cpu::Isa::Avx2);
  if (b == "avx512") return gemm::builtin_engine_for(cpu::Isa::Avx512);
  return gemm::builtin_engine_for(cpu::active_isa());
}

void run_sgemm(benchmark::State& state, std::string backend, Shape s, int threads) {
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> d(-1, 1);
  std::vector<float> A(s.M * s.K), B(s.K * s.N), C(s.M * s.N);
  for (auto& x : A) x = d(rng);
  for (auto& x : B) x = d(rng);
  const auto& e = engine_named(backend);
  std::unique_ptr<ThreadPool> pool;
  if (backend == "openblas") openblas_set_num_threads(threads);
  else if (threads > 1) pool = std::make_unique<ThreadPool>(threads);
  gemm::SgemmArgs a;
  a.M = s.M;
  a.N = s.N;
  a.K = s.K;
  a.A = A.data();
  a.lda = s.K;
  a.B = B.data();
  a.ldb = s.N;
  a.C = C.data();
  a.ldc = s.N;
  for (auto _ : state) {
    e.sgemm(a, pool.get());
    benchmark::DoNotOptimize(C.data());
    benchmark::ClobberMemory();
  }
  state.counters["GFLOPS"] =
      benchmark::Counter(2.0 * s.M * s.N * s.K / 1e9, benchmark::Counter::kIsIterationInvariantRate);
  openblas_set_num_threads(1);
}

// The core's FMA peak, the ceiling for every SGEMM figure above: 12 independent
// chains of 16-lane FMAs (enough to cover 2 FMA pipes x 4 cycles of latency),
// no memory traffic. GFLOPS = 12 chains x 16 lanes x 2 flops per iteration.
__attribute__((target("avx512f"))) void fma_peak_avx512(benchmark::State& state) {
  __m512 a0 = _mm512_set1_ps(0.1f), a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0, a6 = a0, a7 = a0, a8 = a0, a9 = a0,
         a10 = a0, a11 = a0;
  const __m512 b = _mm512_set1_ps(0.999f), c = _mm512_set1_ps(0.001f);
  const int64_t inner = 1 << 16;
  for (auto _ : state) {
    for (int64_t k = 0; k < inner; ++k) {
      a0 = _mm512_fmadd_ps(a0, b, c), a1 = _mm512_fmadd_ps(a1, b, c), a2 = _mm512_fmadd_ps(a2, b, c);
      a3 = _mm512_fmadd_ps(a3, b, c), a4 = _mm512_fmadd_ps(a4, b, c), a5 = _mm512_fmadd_ps(a5, b, c);
      a6 = _mm512_fmadd_ps(a6, b, c), a7 = _mm512_fmadd_ps(a7, b, c), a8 = _mm512_fmadd_ps(a8, b, c);
      a9 = _mm512_fmadd_ps(a9, b, c), a10 = _mm512_fmadd_ps(a10, b, c), a11 = _mm512_fmadd_ps(a11, b, c);
      // Keeps the 12 chains in registers and the loop from being folded away.
      asm volatile("" : "+v"(a0), "+v"(a1), "+v"(a2), "+v"(a3), "+v"(a4), "+v"(a5), "+v"(a6), "+v"(a7), "+v"(a8),
                   "+v"(a9), "+v"(a10), "+v"(a11));
    }
  }
  benchmark::DoNotOptimize(a0);
  state.counters["GFLOPS"] = benchmark::Counter(12.0 * 16 * 2 * inner / 1e9, benchmark::Counter::kIsIterationInvariantRate);
}

// The ladder: each row changes one thing from the row above (see docs/kernels/gemm-ladder.md).
void register_ladder() {
  if (cpu::hw_has_avx512()) benchmark::RegisterBenchmark("fma_peak/avx512/T1", fma_peak_avx512)->Unit(benchmark::kMicrosecond)->UseRealTime();
  struct Step {
    const char* engine;
    int threads;
    bool available;
  };
  const Step steps[] = {{"reference", 1, true},
                        {"portable", 1, true},
                        {"avx2", 1, cpu::hw_has_avx2_fma()},
                        {"avx512", 1, cpu::hw_has_avx512()},
                        {"avx512", 2, cpu::hw_has_avx512()}};
  for (const Shape& s : {Shape{"sq512", 512, 512, 512}, Shape{"conv9_3x3_c64", 64, 12544, 576}})
    for (const Step& st : steps) {
      if (!st.available) continue;
      const std::string name = "ladder/" + s.name + "/" + st.engine + "/T" + std::to_string(st.threads);
      benchmark::RegisterBenchmark(name.c_str(), run_sgemm, st.engine, s, st.threads)->Unit(benchmark::kMicrosecond)->UseRealTime();
    }
}

void register_all() {
  if (cpu::hw_has_avx512()) benchmark::RegisterBenchmark("fma_peak/avx512/T1", fma_peak_avx512)->Unit(benchmark::kMicrosecond)->UseRealTime();
  std::vector<Shape> shapes;
  for (int64_t n : {64, 100, 128, 255, 256, 257, 500, 512, 1000, 1024, 2048})
    shapes.push_back({"sq" + std::to_string(n), n, n, n});
  shapes.push_back({"conv0_3x3_c3", 64, 12544, 27});
  shapes.push_back({"spatial_7x7", 1, 12544, 98});
  shapes.push_back({"conv9_3x3_c64", 64, 12544, 576});
  shapes.push_back({"conv11_3x3_s2", 64, 3136, 576});
  shapes.push_back({"conv12_1x1_s2", 64, 3136, 64});
  // Pointwise layers with few input channels (ppocr_v4_det, nudenet_320n): K <= 48.
  shapes.push_back({"pw_16to32_160x160", 32, 25600, 16});
  shapes.push_back({"pw_32to48_80x80", 48, 6400, 32});
  shapes.push_back({"pw_48to32_80x80", 32, 6400, 48});
  shapes.push_back({"pw_16to32_40x64", 32, 2560, 16});  // C in L2: the same tiles without the memory traffic
  const bool avx2 = cpu::hw_has_avx2_fma() && cpu::active_isa() == cpu::Isa::Avx512;
  for (const auto& s : shapes)
    for (int t : {1, 2})
      for (std::string b : {"builtin", "openblas", "eigen", "builtin_avx2"}) {
        if (b == "eigen" && t > 1) continue;
        if (b == "builtin_avx2" && (!avx2 || t > 1)) continue;
        std::string name = "sgemm/" + s.name + "/" + b + "/T" + std::to_string(t);
        benchmark::RegisterBenchmark(name.c_str(), run_sgemm, b, s, t)->Unit(benchmark::kMicrosecond)->UseRealTime();
      }
}
}  // namespace

int main(int argc, char** argv) {
  bool ladder = false;
  for (int i = 1; i < argc; ++i)
    if (std::string(argv[i]) == "--ladder") {
      ladder = true;
      for (int j = i; j + 1 < argc; ++j) argv[j] = argv[j + 1];
      --argc;
      break;
    }
  benchmark::Initialize(&argc, argv);
  benchmark::AddCustomContext("builtin_isa", cpu::active_isa_name());
  benchmark::AddCustomContext("openblas_config", openblas_get_config());
  benchmark::AddCustomContext("openblas_core", openblas_get_corename());
  if (ladder) register_ladder();
  else register_all();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
