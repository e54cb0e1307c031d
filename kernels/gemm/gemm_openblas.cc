// OpenBLAS backend: cblas_sgemm / cblas_dgemm, row-major. The epilogue runs as
// a second pass over C (OpenBLAS has no fused epilogue).
#include <cblas.h>

#include "kernels/gemm/gemm.h"

namespace onnxmini {
namespace gemm {
bool has_epilogue(const Epilogue& e);

namespace {
class OpenBlasEngine : public GemmEngine {
 public:
  const char* name() const override { return "openblas"; }
  void sgemm(const SgemmArgs& a, ThreadPool*) const override {
    if (a.M == 0 || a.N == 0) return;
    cblas_sgemm(CblasRowMajor, a.trans_a ? CblasTrans : CblasNoTrans, a.trans_b ? CblasTrans : CblasNoTrans,
                static_cast<int>(a.M), static_cast<int>(a.N), static_cast<int>(a.K), a.alpha, a.A,
                static_cast<int>(a.lda), a.B, static_cast<int>(a.ldb), a.beta, a.C, static_cast<int>(a.ldc));
    if (has_epilogue(a.epilogue))
      for (int64_t i = 0; i < a.M; ++i) apply_epilogue(a.epilogue, a.C + i * a.ldc, a.N, i, 0);
  }
  void dgemm(const DgemmArgs& a, ThreadPool*) const override {
    if (a.M == 0 || a.N == 0) return;
    cblas_dgemm(CblasRowMajor, a.trans_a ? CblasTrans : CblasNoTrans, a.trans_b ? CblasTrans : CblasNoTrans,
                static_cast<int>(a.M), static_cast<int>(a.N), static_cast<int>(a.K), a.alpha, a.A,
                static_cast<int>(a.lda), a.B, static_cast<int>(a.ldb), a.beta, a.C, static_cast<int>(a.ldc));
  }
};
}  // namespace

const GemmEngine& openblas_engine() {
  static OpenBlasEngine e;
  return e;
}

}  // namespace gemm
}  // namespace onnxmini
