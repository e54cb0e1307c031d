// OpenBLAS backend: cblas_sgemm / cblas_dgemm, row-major. The epilogue runs as
// a second pass over C (OpenBLAS has no fused epilogue).
//
// OpenBLAS is loaded on first use (dlopen), not linked: a linked OpenBLAS
// starts its thread server when the process loads, and those threads spin for
// about 0.1 s, taking a core from onnxmini's own pool in every process, even
// when this backend is never chosen. Its thread count follows the session's
// intra-op threads (openblas_set_num_threads before a call when it changed).
#include <cblas.h>
#include <dlfcn.h>

#include <atomic>
#include <string>

#include "kernels/gemm_engine/gemm.h"
#include "onnxmini/error.h"
#include "core/thread_pool.h"

#ifndef ONNXMINI_OPENBLAS_LIBRARY
#define ONNXMINI_OPENBLAS_LIBRARY "libopenblas.so"
#endif

namespace onnxmini {
namespace gemm {
bool has_epilogue(const Epilogue& e);

namespace {

struct OpenBlasApi {
  decltype(&cblas_sgemm) sgemm = nullptr;
  decltype(&cblas_dgemm) dgemm = nullptr;
  void (*set_num_threads)(int) = nullptr;
};

const OpenBlasApi& openblas() {
  static const OpenBlasApi api = [] {
    std::string tried;
    void* lib = nullptr;
    for (const char* name : {"libopenblas.so.0", ONNXMINI_OPENBLAS_LIBRARY}) {
      lib = dlopen(name, RTLD_NOW | RTLD_LOCAL);
      if (lib) break;
      tried += std::string(tried.empty() ? "" : "; ") + dlerror();
    }
    if (!lib) throw Error(ErrorCode::NotImplemented, "the openblas GEMM backend needs libopenblas: " + tried);
    OpenBlasApi a;
    a.sgemm = reinterpret_cast<decltype(&cblas_sgemm)>(dlsym(lib, "cblas_sgemm"));
    a.dgemm = reinterpret_cast<decltype(&cblas_dgemm)>(dlsym(lib, "cblas_dgemm"));
    a.set_num_threads = reinterpret_cast<void (*)(int)>(dlsym(lib, "openblas_set_num_threads"));
    if (!a.sgemm || !a.dgemm) throw Error(ErrorCode::NotImplemented, "libopenblas has no cblas_sgemm / cblas_dgemm");
    return a;
  }();
  return api;
}

// OpenBLAS's thread count is process-wide: set it to the calling session's.
void use_threads(const OpenBlasApi& api, ThreadPool* pool) {
  static std::atomic<int> current{-1};
  const int n = pool ? pool->num_threads() : 1;
  if (api.set_num_threads && current.exchange(n) != n) api.set_num_threads(n);
}

CBLAS_TRANSPOSE op(bool t) { return t ? CblasTrans : CblasNoTrans; }

class OpenBlasEngine : public GemmEngine {
 public:
  const char* name() const override { return "openblas"; }
  void sgemm(const SgemmArgs& a, ThreadPool* pool) const override {
    if (a.M == 0 || a.N == 0) return;
    const OpenBlasApi& api = openblas();
    use_threads(api, pool);
    api.sgemm(CblasRowMajor, op(a.trans_a), op(a.trans_b), static_cast<int>(a.M), static_cast<int>(a.N),
              static_cast<int>(a.K), a.alpha, a.A, static_cast<int>(a.lda), a.B, static_cast<int>(a.ldb), a.beta, a.C,
              static_cast<int>(a.ldc));
    if (has_epilogue(a.epilogue))
      for (int64_t i = 0; i < a.M; ++i) apply_epilogue(a.epilogue, a.C + i * a.ldc, a.N, i, 0);
  }
  void dgemm(const DgemmArgs& a, ThreadPool* pool) const override {
    if (a.M == 0 || a.N == 0) return;
    const OpenBlasApi& api = openblas();
    use_threads(api, pool);
    api.dgemm(CblasRowMajor, op(a.trans_a), op(a.trans_b), static_cast<int>(a.M), static_cast<int>(a.N),
              static_cast<int>(a.K), a.alpha, a.A, static_cast<int>(a.lda), a.B, static_cast<int>(a.ldb), a.beta, a.C,
              static_cast<int>(a.ldc));
  }
};
}  // namespace

const GemmEngine& openblas_engine() {
  static OpenBlasEngine e;
  return e;
}

}  // namespace gemm
}  // namespace onnxmini
