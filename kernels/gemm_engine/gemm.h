// The one GEMM interface that Gemm, MatMul, Conv and Einsum call. Backends:
// builtin (our packed engine, kernels/gemm_engine/), OpenBLAS, Eigen, and the plain
// reference loop (KernelMode::Reference). Everything is row-major.
//
//   C[m, n] = alpha * sum_k op(A)[m, k] * op(B)[k, n] + beta * C[m, n]
//   op(A) = A (M x K, row stride lda) or A^T (A stored K x M) when trans_a.
//   op(B) = B (K x N, row stride ldb) or B^T (B stored N x K) when trans_b.
//   beta == 0 means C is write-only (its old contents, even NaN, are ignored).
#pragma once
#include <cstdint>
#include <memory>
#include <string>

#include "kernels/fused_attributes.h"
#include "onnxmini/session.h"

namespace onnxmini {
class ThreadPool;

namespace gemm {

// Applied to every C element after alpha/beta, fused into the store.
struct Epilogue {
  using Activation = FusedActivationKind;  // what the graph pass fuses is what the epilogue applies
  const float* bias = nullptr;  // added before the activation; indexed by column (bias_per_row = false) or row
  bool bias_per_row = false;
  // A second bias, always indexed by column, added after `bias` (a Gemm whose C is a
  // column plus a fused Add of a row vector: runtime/graph_fusion.cc).
  const float* bias2 = nullptr;
  // A residual shaped like C (a Conv's fused Add input Z, onnxruntime FusedConv's 4th
  // input): residual[row * residual_ld + col] is added after the biases, before the
  // activation. Rows and columns count from the call's C[0, 0].
  const float* residual = nullptr;
  int64_t residual_ld = 0;
  Activation activation = Activation::None;
  float clip_min = 0, clip_max = 0;     // Clip
  float hard_alpha = 0, hard_beta = 0;  // HardSigmoid / HardSwish: max(0, min(1, alpha * x + beta)) [* x]
  float swish_alpha = 1.0f;             // Swish: x * sigmoid(swish_alpha * x) (1.702: QuickGelu)
  const float* prelu_slope = nullptr;   // PRelu, indexed like bias
};

struct SgemmArgs {
  bool trans_a = false, trans_b = false;
  int64_t M = 0, N = 0, K = 0;
  float alpha = 1.0f;
  const float* A = nullptr;
  int64_t lda = 0;
  const float* B = nullptr;
  int64_t ldb = 0;
  float beta = 0.0f;
  float* C = nullptr;
  int64_t ldc = 0;
  Epilogue epilogue;
};

struct DgemmArgs {
  bool trans_a = false, trans_b = false;
  int64_t M = 0, N = 0, K = 0;
  double alpha = 1.0;
  const double* A = nullptr;
  int64_t lda = 0;
  const double* B = nullptr;
  int64_t ldb = 0;
  double beta = 0.0;
  double* C = nullptr;
  int64_t ldc = 0;
};

// Strides (in elements) between consecutive matrices of a batch; 0 broadcasts.
struct BatchStrides {
  int64_t a = 0, b = 0, c = 0;
};

// A B operand packed once (constant weights) for repeated use with the builtin engine.
class PackedB {
 public:
  virtual ~PackedB() = default;
  virtual int64_t K() const = 0;
  virtual int64_t N() const = 0;
};

// An A operand packed once (constant weights: Conv filters) for repeated use.
class PackedA {
 public:
  virtual ~PackedA() = default;
  virtual int64_t M() const = 0;
  virtual int64_t K() const = 0;
};

// The B operand of an implicit GEMM (a convolution without an im2col matrix).
// op(B) is K x N with N = rows * row_len and
//   B[k][r * row_len + w] = base[k_offset[k] + r * row_stride + w]
// so every (k, r) pair is a contiguous run of row_len floats. For a 2-D
// convolution on a zero-padded input: k = (c, kh, kw), r = output row,
// w = output column (stride 1 along w; see kernels/nn/conv_implicit.cc).
struct ImplicitB {
  const float* base = nullptr;
  const int64_t* k_offset = nullptr;  // K entries
  int64_t rows = 0, row_len = 0, row_stride = 0;
};

// The route one sgemm / sgemm_packed call takes (profiles, `onnxmini run --explain`):
//   Skinny    builtin, N <= NR: A read in place, B packed once (gemm_builtin.cc run_skinny)
//   Packed    builtin, A and B packed into MC x KC / KC x NC panels per call
//   Prepacked builtin, B packed at session creation (constant weights)
//   Eigen / OpenBlas: the external library; Reference: the plain triple loop; Empty: no product (M, N or K is 0).
//   Small     builtin sgemm_batched on tiny matrices: nothing packed, register tile sized to the
//             matrix (small_gemm.h; small_sgemm_fits is the rule)
enum class SgemmRoute { Empty, Skinny, Packed, Prepacked, Eigen, OpenBlas, Reference, Small };

struct SgemmPath {
  SgemmRoute route = SgemmRoute::Reference;
  const char* isa = "portable";    // the micro-kernels' instruction set (cpu::isa_name)
  int mr = 0, nr = 0;              // register tile (builtin only; 0 otherwise)
  int64_t mc = 0, kc = 0, nc = 0;  // cache blocks (builtin only)
  bool small_dot = false;          // Small route: the mr x nr tile is of dot products along K (B^T)
};

// Who called the engine, for the variant name.
enum class GemmCaller { Gemm, MatMulFolded, MatMulBatched, MatMulBroadcast };

// Static variant names, e.g. "gemm_skinny/builtin", "gemm_prepacked/builtin",
// "gemm/openblas", "matmul_folded+gemm_packed/builtin", "matmul_batched+gemm/eigen".
const char* sgemm_variant(GemmCaller caller, SgemmRoute route);
// "micro-tile 14x32, MC 112 KC 256 NC 2048" for the builtin routes, "" otherwise (--explain).
std::string sgemm_blocking(const SgemmPath& path);
// Whether a [M, K] x [K, N] product is worth splitting over threads: above 1 MFLOP, or with
// B of 512 KB or more (split over N, each core keeps its share of B in its L2 from call to
// call). The builtin engine's rule (gemm_builtin.cc); the RNN kernels use it to split a step.
bool sgemm_threads_pay(int64_t M, int64_t N, int64_t K);

class GemmEngine {
 public:
  virtual ~GemmEngine() = default;
  virtual const char* name() const = 0;
  // The route sgemm (prepacked_b: sgemm_packed with a PackedB of this engine) takes for
  // args' shape (M, N, K, trans_a); no data is read. Default: the external library named
  // by name(), isa the CPU's level (the libraries pick their own kernels at run time).
  virtual SgemmPath sgemm_path(const SgemmArgs& args, bool prepacked_b) const;
  virtual void sgemm(const SgemmArgs& args, ThreadPool* pool) const = 0;
  virtual void dgemm(const DgemmArgs& args, ThreadPool* pool) const;
  // Default: loops over sgemm. Engines may parallelise across the batch.
  virtual void sgemm_batched(const SgemmArgs& args, int64_t batch, const BatchStrides& strides,
                             ThreadPool* pool) const;
  // The route sgemm_batched takes for args' shape (the builtin engine's Small route for tiny
  // matrices); default: sgemm_path(args, false).
  virtual SgemmPath sgemm_batched_path(const SgemmArgs& args) const;
  // Prepacking; the default keeps a plain copy and calls sgemm.
  virtual std::shared_ptr<PackedB> pack_b(bool trans_b, int64_t K, int64_t N, const float* B, int64_t ldb) const;
  // args.B / ldb / trans_b are ignored; `packed` supplies B.
  virtual void sgemm_packed(const SgemmArgs& args, const PackedB& packed, ThreadPool* pool) const;
  // A prepacked (op(A) is M x K); the default keeps a plain row-major copy.
  virtual std::shared_ptr<PackedA> pack_a(bool trans_a, int64_t M, int64_t K, const float* A, int64_t lda) const;
  // args.A / lda / trans_a are ignored; `packed` supplies A.
  virtual void sgemm_packed_a(const SgemmArgs& args, const PackedA& packed, ThreadPool* pool) const;
  // C (M x N, N = b.rows * b.row_len, row stride ldc) = alpha * op(A) * B + beta * C, then the
  // epilogue. A comes from `packed` when non-null, else from args.A / lda / trans_a; args.B, ldb,
  // trans_b and N are ignored. The default materialises B and calls sgemm.
  virtual void sgemm_implicit(const SgemmArgs& args, const PackedA* packed, const ImplicitB& b, ThreadPool* pool) const;
};

// The engine for a backend; KernelMode::Reference always gives the reference loop.
const GemmEngine& engine(GemmBackend backend, KernelMode mode = KernelMode::Fast);
const GemmEngine& reference_engine();

// Applies an epilogue to one row segment C[0..n) of row `row` starting at column `col0`.
void apply_epilogue(const Epilogue& e, float* c, int64_t n, int64_t row, int64_t col0);

}  // namespace gemm
}  // namespace onnxmini
