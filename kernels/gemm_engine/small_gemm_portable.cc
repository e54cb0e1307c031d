// Portable instance of the small-matrix SGEMM (small_gemm.h): plain loops the
// compiler vectorises with baseline SSE2.
// op(B) = B: each row of C accumulates A[i, k] * (B row k) into a 64-float row buffer
// (N <= 64), so the inner loop is a contiguous axpy over N.
// op(B) = B^T: each C element is a dot product along the contiguous K with 8 partial
// sums (a vectorisable reduction) when M <= 2, else B is transposed once per matrix.
#include <algorithm>
#include <vector>

#include "core/aligned_vector.h"
#include "kernels/gemm_engine/small_gemm.h"

namespace onnxmini {
namespace gemm {
namespace {

void store(const SgemmArgs& g, float* c, int64_t j, float v) { c[j] = g.alpha * v + (g.beta != 0.0f ? g.beta * c[j] : 0.0f); }

void rows_times_b(const SgemmArgs& g, const float* A, const float* B, float* C) {
  for (int64_t i = 0; i < g.M; ++i) {
    float acc[64] = {};
    for (int64_t k = 0; k < g.K; ++k) {
      const float av = g.trans_a ? A[k * g.lda + i] : A[i * g.lda + k];
      const float* br = B + k * g.ldb;
      for (int64_t j = 0; j < g.N; ++j) acc[j] += av * br[j];
    }
    float* c = C + i * g.ldc;
    for (int64_t j = 0; j < g.N; ++j) store(g, c, j, acc[j]);
  }
}

void rows_dot_rows(const SgemmArgs& g, const float* A, const float* B, float* C) {
  for (int64_t i = 0; i < g.M; ++i) {
    const float* ar = A + i * g.lda;
    float* c = C + i * g.ldc;
    for (int64_t j = 0; j < g.N; ++j) {
      const float* br = B + j * g.ldb;
      float acc[8] = {};
      int64_t k = 0;
      for (; k + 8 <= g.K; k += 8)
        for (int l = 0; l < 8; ++l) acc[l] += ar[k + l] * br[k + l];
      for (; k < g.K; ++k) acc[0] += ar[k] * br[k];
      store(g, c, j, ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7])));
    }
  }
}

// B^T with more than a couple of rows of A: transposed once into a thread-local K x N
// buffer, then the axpy rows (the dot products' reductions cost more than the copy).
void run_portable(const SgemmArgs& g, int64_t batch, const BatchStrides& s) {
  const bool transpose = g.trans_b && g.M > 2;
  SgemmArgs gt = g;
  float* bt = nullptr;
  if (transpose) {
    thread_local AlignedVector<float> buffer;  // grows once, reused by later calls on this thread
    if (buffer.size() < static_cast<size_t>(g.K * g.N)) buffer.resize(static_cast<size_t>(g.K * g.N));
    bt = buffer.data();
    gt.trans_b = false, gt.ldb = g.N;
  }
  for (int64_t b = 0; b < batch; ++b) {
    const float* B = g.B + b * s.b;
    if (transpose) {
      if (b == 0 || s.b != 0)
        for (int64_t j = 0; j < g.N; ++j)
          for (int64_t k = 0; k < g.K; ++k) bt[k * g.N + j] = B[j * g.ldb + k];
      rows_times_b(gt, g.A + b * s.a, bt, g.C + b * s.c);
    } else if (g.trans_b) {
      rows_dot_rows(g, g.A + b * s.a, B, g.C + b * s.c);
    } else {
      rows_times_b(g, g.A + b * s.a, B, g.C + b * s.c);
    }
  }
}

// One row of C at a time (N wide), or one dot product.
SmallTile tile_portable(const SgemmArgs& g) {
  if (g.trans_b && g.M <= 2) return SmallTile{1, 1, true};
  return SmallTile{1, static_cast<int>(g.N), false};
}

}  // namespace

const SmallSgemm& small_sgemm_portable() {
  static const SmallSgemm k{&run_portable, &tile_portable};
  return k;
}

}  // namespace gemm
}  // namespace onnxmini
