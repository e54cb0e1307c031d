// Internal interface between the int8 GEMM driver (qgemm.cc) and its micro-kernels
// (qgemm_kernel_{avx2,avx512}.cc and the portable one in qgemm.cc).
//
// Packed formats (K padded to Kp = a multiple of 4 with zeros; k groups of 4 bytes):
//   A sliver: MR rows x Kp, uint8:  a[(k / 4) * MR * 4 + i * 4 + k % 4]  (rows >= m zero)
//   B sliver: Kp x NR cols, int8:   b[(k / 4) * NR * 4 + j * 4 + k % 4]  (cols >= n zero)
// so one 32-bit load of A is 4 consecutive k of one row, and one vector of B holds
// 4 consecutive k for each of its columns: exactly the operands of vpdpbusd, and of
// vpmaddubsw + vpmaddwd (pairs, then pairs of pairs).
// A kernel computes the whole MR x NR tile of raw sums sum_k a * b over `kgroups` groups
// into c (row-major, row stride NR); the driver applies zero points and the output stage.
#pragma once
#include <cstdint>

#include "kernels/gemm_engine/qgemm.h"

namespace onnxmini {
namespace gemm {

using QgemmMicroKernel = void (*)(int64_t kgroups, const uint8_t* a, const int8_t* b, int32_t* c);

struct QgemmKernelSet {
  QIsa isa;
  int mr, nr;
  int64_t mc;  // rows of A packed per task (a multiple of mr; an A block mc x Kp stays in L2)
  QgemmMicroKernel kernel;
};

const QgemmKernelSet& qgemm_kernels_portable();
const QgemmKernelSet& qgemm_kernels_avx2();        // only when cpu::hw_has_avx2_fma()
const QgemmKernelSet& qgemm_kernels_avx_vnni();    // only when hw_has_avx2_fma() and the CPU has avx_vnni
const QgemmKernelSet& qgemm_kernels_avx512bw();    // only when cpu::hw_has_avx512()
const QgemmKernelSet& qgemm_kernels_avx512vnni();  // only when hw_has_avx512() and the CPU has avx512_vnni

}  // namespace gemm
}  // namespace onnxmini
