// The int8 GEMM engine: MatMulInteger, QLinearMatMul, ConvInteger, QLinearConv, QGemm,
// DynamicQuantizeMatMul and MatMulIntegerToFloat all call qgemm(). Row-major.
//
//   acc[m, n] = sum_k (A[m, k] - za) * (B[k, n] - zb[n])        exact, int32 (wrapping)
//   A: M x K (or K x M when trans_a), uint8 or int8, one zero point za.
//   B: K x N, uint8 or int8, zero point per tensor or per column n.
// The output stage (QgemmOutput) then writes acc as int32, as float
// (acc * scale[n] + bias[n]) or requantized to uint8 / int8
// (saturate(round_half_even((acc + bias_i32[n]) * scale[n]) + zy)).
//
// Every signedness pair reduces to one kernel, u8 x s8 (docs/kernels/int8-gemm.md):
//   A int8:  A = (A ^ 0x80) - 128, so za' = za + 128 over the uint8 A ^ 0x80;
//   B uint8: B = (B ^ 0x80) + 128 as int8, so zb' = zb - 128 over the int8 B ^ 0x80.
// Then acc = sum A'B' - zb'[n] * rowsum(A')[m] - za' * colsum(B')[n] + K * za' * zb'[n].
#pragma once
#include <cstdint>
#include <memory>

#include "core/cpu_features.h"

namespace onnxmini {
class ThreadPool;

namespace gemm {

// A B operand packed once (constant weights) for one kernel set.
class QPackedB {
 public:
  virtual ~QPackedB() = default;
  virtual int64_t K() const = 0;
  virtual int64_t N() const = 0;
};

struct QgemmOutput {
  enum Kind { Int32, Float, UInt8, Int8 };
  Kind kind = Int32;
  void* y = nullptr;  // int32_t / float / uint8_t / int8_t
  int64_t ldy = 0;
  // Element (m, n) is stored at y[n * ldy + m] instead of y[m * ldy + n] (convolutions compute
  // the transposed product, pixels x channels, and write NCHW).
  bool transposed = false;
  // Float / UInt8 / Int8: scale[per_column ? n : 0].
  const float* scale = nullptr;
  bool scale_per_column = false;
  const float* bias = nullptr;        // Float: added after scaling, per column (may be null)
  // Added to acc before scaling (all kinds but Int32): element (m, n) at
  // bias_i32[m * bias_row_stride + n * bias_col_step] (a column vector, a row, a matrix, a scalar).
  const int32_t* bias_i32 = nullptr;
  int64_t bias_row_stride = 0, bias_col_step = 1;
  int32_t y_zero = 0;                 // UInt8 / Int8
};

// Supplies op(A) already packed, instead of A / lda / trans_a / a_signed (a convolution
// writes its patches straight into the layout: no im2col matrix). pack() fills rows
// [m0, m0 + rows) as `mr`-row slivers of kp / 4 groups of 4 uint8 k values
// (kernels/gemm_engine/qgemm_kernel.h) and their row sums: it must write every k < K of
// every row (the engine has zeroed the rest); qgemm_pack_row() writes one row. A is then
// uint8 with zero point a_zero.
class QgemmAPacker {
 public:
  virtual ~QgemmAPacker() = default;
  virtual void pack(int64_t m0, int64_t rows, int64_t kp, int mr, uint8_t* dst, int32_t* rowsum) const = 0;
};

// Row i (< mr) of a sliver (kp bytes per row, zeroed by the caller past K) from K contiguous bytes.
void qgemm_pack_row(const uint8_t* row, int64_t K, int mr, int i, uint8_t* sliver);

struct QgemmArgs {
  int64_t M = 0, N = 0, K = 0;
  const void* A = nullptr;  // uint8_t or int8_t
  bool a_signed = false;
  bool trans_a = false;     // A stored K x M
  int64_t lda = 0;
  int32_t a_zero = 0;
  const QgemmAPacker* a_packer = nullptr;  // when set, supplies A (then uint8)
  const void* B = nullptr;  // ignored with a QPackedB
  bool b_signed = true;
  int64_t ldb = 0;
  const int32_t* b_zero = nullptr;  // null: zero
  bool b_zero_per_column = false;
  QgemmOutput out;
};

// A kernel set / ISA path. Avx512vnni and AvxVnni (the 256-bit VEX form) use vpdpbusd; the
// others the exact split vpmaddubsw scheme (AVX2, AVX-512BW) or plain loops (portable).
enum class QIsa { Portable = 0, Avx2 = 1, AvxVnni = 2, Avx512bw = 3, Avx512vnni = 4 };
const char* qisa_name(QIsa isa);
// The paths this machine can run, best last; the active one honours ONNXMINI_ISA.
bool qisa_available(QIsa isa);
QIsa active_qisa();

// B (K x N, row-major, ldb) packed for `isa`; b_zero as in QgemmArgs is applied at run time.
std::shared_ptr<QPackedB> qgemm_pack_b(QIsa isa, int64_t K, int64_t N, const void* B, bool b_signed, int64_t ldb);

// Runs on `isa` (must match the packed B's when one is given).
void qgemm(QIsa isa, const QgemmArgs& args, const QPackedB* packed_b, ThreadPool* pool);
inline void qgemm(const QgemmArgs& args, const QPackedB* packed_b, ThreadPool* pool) {
  qgemm(active_qisa(), args, packed_b, pool);
}

// The oracle: int64 sums of (A - za)(B - zb) straight from the inputs, then the same output stage.
void qgemm_reference(const QgemmArgs& args);

// The output stage for one value (shared by the engine and the reference, so both round alike).
void qgemm_store(const QgemmOutput& o, int64_t m, int64_t n, int32_t acc);

}  // namespace gemm
}  // namespace onnxmini
