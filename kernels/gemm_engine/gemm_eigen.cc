// Eigen backend: maps the row-major operands as Eigen matrices (no copies) and
// lets Eigen's own blocked product run.
#include <Eigen/Core>

#include "kernels/gemm_engine/gemm.h"

namespace onnxmini {
namespace gemm {
bool has_epilogue(const Epilogue& e);

namespace {
template <typename T, typename Args>
void eigen_gemm(const Args& a) {
  using Mat = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  using Stride = Eigen::OuterStride<>;
  using CMap = Eigen::Map<const Mat, 0, Stride>;
  Eigen::Map<Mat, 0, Stride> C(a.C, a.M, a.N, Stride(a.ldc));
  CMap A(a.A, a.trans_a ? a.K : a.M, a.trans_a ? a.M : a.K, Stride(a.lda));
  CMap B(a.B, a.trans_b ? a.N : a.K, a.trans_b ? a.K : a.N, Stride(a.ldb));
  if (a.beta == T(0)) C.setZero();
  else if (a.beta != T(1)) C *= a.beta;
  if (a.K == 0) return;
  if (!a.trans_a && !a.trans_b) C.noalias() += a.alpha * A * B;
  else if (a.trans_a && !a.trans_b) C.noalias() += a.alpha * A.transpose() * B;
  else if (!a.trans_a && a.trans_b) C.noalias() += a.alpha * A * B.transpose();
  else C.noalias() += a.alpha * A.transpose() * B.transpose();
}

class EigenEngine : public GemmEngine {
 public:
  const char* name() const override { return "eigen"; }
  void sgemm(const SgemmArgs& a, ThreadPool*) const override {
    if (a.M == 0 || a.N == 0) return;
    eigen_gemm<float>(a);
    if (has_epilogue(a.epilogue))
      for (int64_t i = 0; i < a.M; ++i) apply_epilogue(a.epilogue, a.C + i * a.ldc, a.N, i, 0);
  }
  void dgemm(const DgemmArgs& a, ThreadPool*) const override {
    if (a.M == 0 || a.N == 0) return;
    eigen_gemm<double>(a);
  }
};
}  // namespace

const GemmEngine& eigen_engine() {
  static EigenEngine e;
  return e;
}

}  // namespace gemm
}  // namespace onnxmini
