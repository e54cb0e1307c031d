// int8 GEMM driver: packing, zero-point correction, output stage, threads.
//
// Blocking: B is packed whole (Kp x Npad, NR-wide slivers: qgemm_kernel.h), once per call
// or once per session for constant weights. C is cut into tasks of mc rows x kTaskCols
// columns; a task packs its mc x Kp block of A (an L2-sized block: mc * Kp bytes) with the
// row sums, then walks its B slivers (Kp x NR, L1-sized for K up to ~1500) and, inside,
// the MR-row slivers of A, so a B sliver is reused by all of the block's rows while it sits
// in L1. K is not blocked: every tile sees all of K in one kernel call, so the raw sums are
// final and the output stage runs once per tile, fused into the store.
// Zero points: the kernels sum A' * B' of the u8 / s8 forms (qgemm.h); the driver adds
//   - zb'[n] * rowsum(A')[m] - za' * colsum(B')[n] + K * za' * zb'[n]
// in uint32 arithmetic (wrapping, like onnxruntime's int32 accumulators).
// Threads: tasks are independent and every element is computed by the same instructions
// whatever the thread count (identical results for 1 or N threads).
#include "kernels/gemm_engine/qgemm.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <new>
#include <vector>

#include "core/thread_pool.h"
#include "kernels/gemm_engine/qgemm_kernel.h"

namespace onnxmini {
namespace gemm {
namespace {

constexpr int64_t kTaskCols = 256;  // narrowest column cut of a task (a multiple of every NR)

int64_t round_up(int64_t x, int64_t m) { return (x + m - 1) / m * m; }

// Aligned scratch, grown on demand, one per thread and use.
struct ByteScratch {
  uint8_t* p = nullptr;
  size_t cap = 0;
  ~ByteScratch() { std::free(p); }
  uint8_t* get(size_t n) {
    if (n > cap) {
      std::free(p);
      cap = (n + 63) / 64 * 64;
      p = static_cast<uint8_t*>(std::aligned_alloc(64, cap));
      if (!p) throw std::bad_alloc();
    }
    return p;
  }
};
thread_local ByteScratch t_pack_a, t_rowsum, t_pack_b;

// ---- portable micro-kernel: MR x NR = 4 x 16, plain loops over the packed layout ----
constexpr int kPortableMR = 4, kPortableNR = 16;
void kernel_portable(int64_t kgroups, const uint8_t* a, const int8_t* b, int32_t* c) {
  int32_t acc[kPortableMR * kPortableNR] = {};
  for (int64_t g = 0; g < kgroups; ++g) {
    const uint8_t* ag = a + g * kPortableMR * 4;
    const int8_t* bg = b + g * kPortableNR * 4;
    for (int i = 0; i < kPortableMR; ++i)
      for (int j = 0; j < kPortableNR; ++j) {
        int32_t s = 0;
        for (int t = 0; t < 4; ++t) s += int32_t(ag[i * 4 + t]) * int32_t(bg[j * 4 + t]);
        acc[i * kPortableNR + j] += s;
      }
  }
  std::memcpy(c, acc, sizeof(acc));
}

// ---- packing ----

// B (K x N, row-major) into NR slivers of the int8 form B' = B ^ 0x80 when B is uint8;
// colsum[n] = sum_k B'[k, n].
void pack_b_into(const QgemmKernelSet& ks, int64_t K, int64_t N, const uint8_t* B, bool b_signed, int64_t ldb,
                 int8_t* dst, int32_t* colsum) {
  const int nr = ks.nr;
  const int64_t kp = round_up(std::max<int64_t>(K, 1), 4);
  const uint8_t flip = b_signed ? 0 : 0x80;
  for (int64_t s = 0; s < N; s += nr) {
    const int64_t cols = std::min<int64_t>(nr, N - s);
    int8_t* d = dst + s * kp;
    std::memset(d, 0, static_cast<size_t>(kp * nr));
    for (int64_t k = 0; k < K; ++k) {
      const uint8_t* src = B + k * ldb + s;
      int8_t* dk = d + (k / 4) * nr * 4 + (k % 4);
      for (int64_t j = 0; j < cols; ++j) dk[j * 4] = static_cast<int8_t>(src[j] ^ flip);
    }
    for (int64_t j = 0; j < cols; ++j) {
      int32_t sum = 0;
      for (int64_t k = 0; k < K; ++k) sum += d[(k / 4) * nr * 4 + j * 4 + (k % 4)];
      colsum[s + j] = sum;
    }
  }
}

// Rows [m0, m0 + rows) of op(A) into MR slivers of the uint8 form A' = A ^ 0x80 when A is
// int8 (rows past `rows` in the last sliver zero); rowsum[i] = sum_k A'[m0 + i, k].
// Row-major A moves 4 bytes (one k group) at a time; a transposed A (K x M, convolutions'
// im2col) is read one contiguous run of the sliver's rows per k.
void pack_a_block(const QgemmKernelSet& ks, const QgemmArgs& g, int64_t m0, int64_t rows, int64_t kp, uint8_t* dst,
                  int32_t* rowsum) {
  const int mr = ks.mr;
  const uint8_t* A = static_cast<const uint8_t*>(g.A);
  const uint8_t flip = g.a_signed ? 0x80 : 0;
  const uint32_t flip4 = g.a_signed ? 0x80808080u : 0u;
  std::memset(dst, 0, static_cast<size_t>(round_up(rows, mr) * kp));
  for (int64_t s = 0; s < rows; s += mr) {
    const int64_t r = std::min<int64_t>(mr, rows - s);
    uint8_t* d = dst + s * kp;
    if (g.trans_a) {
      for (int64_t i = 0; i < r; ++i) rowsum[s + i] = 0;
      for (int64_t k = 0; k < g.K; ++k) {
        const uint8_t* src = A + k * g.lda + m0 + s;
        uint8_t* dk = d + (k / 4) * mr * 4 + (k % 4);
        for (int64_t i = 0; i < r; ++i) {
          const uint8_t v = src[i] ^ flip;
          dk[i * 4] = v;
          rowsum[s + i] += v;
        }
      }
      continue;
    }
    for (int64_t i = 0; i < r; ++i) {
      const uint8_t* src = A + (m0 + s + i) * g.lda;
      uint8_t* di = d + i * 4;
      int64_t k = 0;
      for (; k + 4 <= g.K; k += 4) {
        uint32_t v;
        std::memcpy(&v, src + k, 4);
        v ^= flip4;
        std::memcpy(di + (k / 4) * mr * 4, &v, 4);
      }
      for (; k < g.K; ++k) di[(k / 4) * mr * 4 + (k % 4)] = src[k] ^ flip;
      int32_t sum = 0;
      for (k = 0; k < g.K; ++k) sum += static_cast<uint8_t>(src[k] ^ flip);
      rowsum[s + i] = sum;
    }
  }
}

class QPackedBImpl : public QPackedB {
 public:
  QPackedBImpl(const QgemmKernelSet& ks, int64_t K, int64_t N, const void* B, bool b_signed, int64_t ldb)
      : ks_(ks), K_(K), N_(N), kp_(round_up(std::max<int64_t>(K, 1), 4)), b_signed_(b_signed) {
    data_.resize(static_cast<size_t>(kp_ * round_up(std::max<int64_t>(N, 1), ks.nr)));
    colsum_.resize(static_cast<size_t>(std::max<int64_t>(N, 1)));
    pack_b_into(ks, K, N, static_cast<const uint8_t*>(B), b_signed, ldb, data_.data(), colsum_.data());
  }
  int64_t K() const override { return K_; }
  int64_t N() const override { return N_; }
  const QgemmKernelSet& ks_;
  int64_t K_, N_, kp_;
  bool b_signed_;
  std::vector<int8_t> data_;
  std::vector<int32_t> colsum_;
};

const QgemmKernelSet& kernels_for(QIsa isa) {
  switch (isa) {
    case QIsa::Avx512vnni: return qgemm_kernels_avx512vnni();
    case QIsa::Avx512bw: return qgemm_kernels_avx512bw();
    case QIsa::AvxVnni: return qgemm_kernels_avx_vnni();
    case QIsa::Avx2: return qgemm_kernels_avx2();
    default: return qgemm_kernels_portable();
  }
}

bool hw_has_vnni() {
  static const bool v = cpu::hw_has_avx512() && __builtin_cpu_supports("avx512vnni");
  return v;
}

bool hw_has_avx_vnni() {
  static const bool v = cpu::hw_has_avx2_fma() && __builtin_cpu_supports("avxvnni");
  return v;
}

// Row segment y(m, n0 .. n0 + cnt) of the output stage from accumulators acc[0 .. cnt).
// Requantization: x = (acc + bias) * scale is clamped to [lo - zy, hi - zy] (which also maps
// NaN to the low bound) and rounded half to even with the 1.5 * 2^23 trick (exact for
// |x| < 2^22, the default rounding mode being to-nearest-even), then zy is added.
void store_row(const QgemmOutput& o, int64_t m, int64_t n0, int64_t cnt, const int32_t* acc) {
  const float* sc = o.scale ? (o.scale_per_column ? o.scale + n0 : o.scale) : nullptr;
  const int64_t sstep = o.scale_per_column ? 1 : 0;
  const int64_t base = o.transposed ? n0 * o.ldy + m : m * o.ldy + n0;
  const int64_t step = o.transposed ? o.ldy : 1;
  switch (o.kind) {
    case QgemmOutput::Int32: {
      int32_t* y = static_cast<int32_t*>(o.y) + base;
      for (int64_t j = 0; j < cnt; ++j) y[j * step] = acc[j];
      return;
    }
    case QgemmOutput::Float: {
      float* y = static_cast<float*>(o.y) + base;
      const float* bias = o.bias ? o.bias + n0 : nullptr;
      const int32_t* bi = o.bias_i32 ? o.bias_i32 + m * o.bias_row_stride + n0 * o.bias_col_step : nullptr;
      for (int64_t j = 0; j < cnt; ++j) {
        const uint32_t a = static_cast<uint32_t>(acc[j]) + (bi ? static_cast<uint32_t>(bi[j * o.bias_col_step]) : 0u);
        float v = static_cast<float>(static_cast<int32_t>(a)) * sc[j * sstep];
        if (bias) v += bias[j];
        y[j * step] = v;
      }
      return;
    }
    case QgemmOutput::UInt8:
    case QgemmOutput::Int8: {
      const bool u8 = o.kind == QgemmOutput::UInt8;
      const float lo = (u8 ? 0.0f : -128.0f) - static_cast<float>(o.y_zero);
      const float hi = (u8 ? 255.0f : 127.0f) - static_cast<float>(o.y_zero);
      const int32_t* bias = o.bias_i32 ? o.bias_i32 + m * o.bias_row_stride + n0 * o.bias_col_step : nullptr;
      const int64_t bstep = o.bias_col_step;
      constexpr float kMagic = 12582912.0f;  // 1.5 * 2^23
      for (int64_t j = 0; j < cnt; ++j) {
        const uint32_t a = static_cast<uint32_t>(acc[j]) + (bias ? static_cast<uint32_t>(bias[j * bstep]) : 0u);
        float x = static_cast<float>(static_cast<int32_t>(a)) * sc[j * sstep];
        x = x > lo ? x : lo;
        x = x < hi ? x : hi;
        const int32_t q = static_cast<int32_t>((x + kMagic) - kMagic) + o.y_zero;
        if (u8) static_cast<uint8_t*>(o.y)[base + j * step] = static_cast<uint8_t>(q);
        else static_cast<int8_t*>(o.y)[base + j * step] = static_cast<int8_t>(q);
      }
      return;
    }
  }
}

// Column segment y(m0 .. m0 + cnt, n) of a transposed output (contiguous there), with the
// arithmetic of store_row element for element (so both give identical values).
void store_col(const QgemmOutput& o, int64_t m0, int64_t n, int64_t cnt, const int32_t* acc) {
  const float sc = o.scale ? o.scale[o.scale_per_column ? n : 0] : 1.0f;
  const int64_t base = n * o.ldy + m0;
  const int32_t* bias = o.bias_i32 ? o.bias_i32 + m0 * o.bias_row_stride + n * o.bias_col_step : nullptr;
  const int64_t bstep = o.bias_row_stride;
  switch (o.kind) {
    case QgemmOutput::Int32: {
      std::memcpy(static_cast<int32_t*>(o.y) + base, acc, static_cast<size_t>(cnt) * 4);
      return;
    }
    case QgemmOutput::Float: {
      float* y = static_cast<float*>(o.y) + base;
      const float fb = o.bias ? o.bias[n] : 0.0f;
      for (int64_t i = 0; i < cnt; ++i) {
        const uint32_t a = static_cast<uint32_t>(acc[i]) + (bias ? static_cast<uint32_t>(bias[i * bstep]) : 0u);
        float v = static_cast<float>(static_cast<int32_t>(a)) * sc;
        if (o.bias) v += fb;
        y[i] = v;
      }
      return;
    }
    case QgemmOutput::UInt8:
    case QgemmOutput::Int8: {
      const bool u8 = o.kind == QgemmOutput::UInt8;
      const float lo = (u8 ? 0.0f : -128.0f) - static_cast<float>(o.y_zero);
      const float hi = (u8 ? 255.0f : 127.0f) - static_cast<float>(o.y_zero);
      constexpr float kMagic = 12582912.0f;  // 1.5 * 2^23
      uint8_t* y = static_cast<uint8_t*>(o.y) + base;
      for (int64_t i = 0; i < cnt; ++i) {
        const uint32_t a = static_cast<uint32_t>(acc[i]) + (bias ? static_cast<uint32_t>(bias[i * bstep]) : 0u);
        float x = static_cast<float>(static_cast<int32_t>(a)) * sc;
        x = x > lo ? x : lo;
        x = x < hi ? x : hi;
        y[i] = static_cast<uint8_t>(static_cast<int32_t>((x + kMagic) - kMagic) + o.y_zero);
      }
      return;
    }
  }
}

// The zero-point terms of the u8 x s8 form (qgemm.h): za' and zb'(n).
struct ZeroPoints {
  uint32_t za;  // za'
  const int32_t* zb;
  bool per_column;
  int32_t zb_shift;  // -128 when B was uint8
  uint32_t zb_at(int64_t n) const {
    return static_cast<uint32_t>((zb ? zb[per_column ? n : 0] : 0) + zb_shift);
  }
};

struct Problem {
  const QgemmKernelSet* ks;
  const QgemmArgs* g;
  const int8_t* b;         // packed B
  const int32_t* colsum;
  int64_t kp;
  ZeroPoints zp;
};

// C rows [m0, m1), columns [n0, n1) (n0 a multiple of NR).
void run_task(const Problem& p, int64_t m0, int64_t m1, int64_t n0, int64_t n1) {
  const QgemmKernelSet& ks = *p.ks;
  const QgemmArgs& g = *p.g;
  const int mr = ks.mr, nr = ks.nr;
  const int64_t rows = m1 - m0;
  uint8_t* a = t_pack_a.get(static_cast<size_t>(round_up(rows, mr) * p.kp));
  int32_t* rowsum = reinterpret_cast<int32_t*>(t_rowsum.get(static_cast<size_t>(rows) * 4 + 64));
  if (g.a_packer) {
    // The packer writes every (row, k < K) byte: only the k padding (K % 4 != 0) and the
    // rows past `rows` in the last sliver must be zeroed first.
    if (g.K % 4 != 0) std::memset(a, 0, static_cast<size_t>(round_up(rows, mr) * p.kp));
    else if (rows % mr != 0) std::memset(a + (rows / mr) * mr * p.kp, 0, static_cast<size_t>(mr * p.kp));
    g.a_packer->pack(m0, rows, p.kp, mr, a, rowsum);
  } else {
    pack_a_block(ks, g, m0, rows, p.kp, a, rowsum);
  }
  alignas(64) int32_t tile[16 * 64];
  int32_t out[64];
  uint32_t colterm[64], zbn[64];
  const uint32_t K = static_cast<uint32_t>(g.K);
  for (int64_t jc = n0; jc < n1; jc += nr) {
    const int64_t n = std::min<int64_t>(nr, n1 - jc);
    for (int64_t j = 0; j < n; ++j) {  // - za' * colsum + K * za' * zb'
      zbn[j] = p.zp.zb_at(jc + j);
      colterm[j] = K * p.zp.za * zbn[j] - p.zp.za * static_cast<uint32_t>(p.colsum[jc + j]);
    }
    const int8_t* bs = p.b + jc * p.kp;
    for (int64_t ir = 0; ir < rows; ir += mr) {
      const int64_t m = std::min<int64_t>(mr, rows - ir);
      ks.kernel(p.kp / 4, a + ir * p.kp, bs, tile);
      if (g.out.transposed) {  // NCHW convolutions: each tile column is a contiguous run of y
        for (int64_t j = 0; j < n; ++j) {
          for (int64_t i = 0; i < m; ++i)
            out[i] = static_cast<int32_t>(static_cast<uint32_t>(tile[i * nr + j]) -
                                          zbn[j] * static_cast<uint32_t>(rowsum[ir + i]) + colterm[j]);
          store_col(g.out, m0 + ir, jc + j, m, out);
        }
        continue;
      }
      for (int64_t i = 0; i < m; ++i) {
        const uint32_t rs = static_cast<uint32_t>(rowsum[ir + i]);
        const int32_t* t = tile + i * nr;
        for (int64_t j = 0; j < n; ++j)
          out[j] = static_cast<int32_t>(static_cast<uint32_t>(t[j]) - zbn[j] * rs + colterm[j]);
        store_row(g.out, m0 + ir + i, jc, n, out);
      }
    }
  }
}

}  // namespace

const QgemmKernelSet& qgemm_kernels_portable() {
  static const QgemmKernelSet ks{QIsa::Portable, kPortableMR, kPortableNR, 128, kernel_portable};
  return ks;
}

const char* qisa_name(QIsa isa) {
  switch (isa) {
    case QIsa::Avx512vnni: return "avx512vnni";
    case QIsa::Avx512bw: return "avx512bw";
    case QIsa::AvxVnni: return "avxvnni";
    case QIsa::Avx2: return "avx2";
    default: return "portable";
  }
}

bool qisa_available(QIsa isa) {
  switch (isa) {
    case QIsa::Avx512vnni: return hw_has_vnni();
    case QIsa::Avx512bw: return cpu::hw_has_avx512();
    case QIsa::AvxVnni: return hw_has_avx_vnni();
    case QIsa::Avx2: return cpu::hw_has_avx2_fma();
    default: return true;
  }
}

QIsa active_qisa() {
  switch (cpu::active_isa()) {
    case cpu::Isa::Avx512: return hw_has_vnni() ? QIsa::Avx512vnni : QIsa::Avx512bw;
    case cpu::Isa::Avx2: return hw_has_avx_vnni() ? QIsa::AvxVnni : QIsa::Avx2;
    default: return QIsa::Portable;
  }
}

std::shared_ptr<QPackedB> qgemm_pack_b(QIsa isa, int64_t K, int64_t N, const void* B, bool b_signed, int64_t ldb) {
  return std::make_shared<QPackedBImpl>(kernels_for(isa), K, N, B, b_signed, ldb);
}

void qgemm(QIsa isa, const QgemmArgs& g, const QPackedB* packed_b, ThreadPool* pool) {
  if (g.M <= 0 || g.N <= 0) return;
  const QgemmKernelSet& ks = kernels_for(isa);
  Problem p;
  p.ks = &ks;
  p.g = &g;
  p.kp = round_up(std::max<int64_t>(g.K, 1), 4);
  bool b_signed = g.b_signed;
  if (packed_b) {
    const auto& pb = static_cast<const QPackedBImpl&>(*packed_b);
    p.b = pb.data_.data();
    p.colsum = pb.colsum_.data();
    b_signed = pb.b_signed_;
  } else {
    uint8_t* buf = t_pack_b.get(static_cast<size_t>(p.kp * round_up(g.N, ks.nr) + g.N * 4 + 64));
    int8_t* b = reinterpret_cast<int8_t*>(buf);
    int32_t* colsum = reinterpret_cast<int32_t*>(buf + round_up(p.kp * round_up(g.N, ks.nr), 64));
    pack_b_into(ks, g.K, g.N, static_cast<const uint8_t*>(g.B), g.b_signed, g.ldb, b, colsum);
    p.b = b;
    p.colsum = colsum;
  }
  p.zp.za = static_cast<uint32_t>(g.a_zero + (g.a_signed && !g.a_packer ? 128 : 0));
  p.zp.zb = g.b_zero;
  p.zp.per_column = g.b_zero_per_column;
  p.zp.zb_shift = b_signed ? 0 : -128;

  // Tasks: row blocks of mc rows over all N when there are enough of them for the threads
  // (A packed once); otherwise the columns are cut too (a narrow or short C).
  const int threads = pool ? pool->num_threads() : 1;
  const int64_t mtasks = (g.M + ks.mc - 1) / ks.mc;
  int64_t task_cols = round_up(g.N, ks.nr);
  if (mtasks < 4 * threads) {
    const int64_t cuts = (4 * threads + mtasks - 1) / mtasks;
    task_cols = std::max<int64_t>(kTaskCols, round_up((g.N + cuts - 1) / cuts, ks.nr));
  }
  const int64_t ntasks = (g.N + task_cols - 1) / task_cols;
  const int64_t tasks = mtasks * ntasks;
  auto body = [&](int64_t t0, int64_t t1) {
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t mi = t / ntasks, ni = t % ntasks;
      run_task(p, mi * ks.mc, std::min(g.M, (mi + 1) * ks.mc), ni * task_cols, std::min(g.N, (ni + 1) * task_cols));
    }
  };
  const bool parallel = pool && pool->num_threads() > 1 && tasks > 1 && g.M * g.N * g.K > 64 * 64 * 64;
  if (parallel) pool->parallel_for(tasks, 1, body);
  else body(0, tasks);
}

void qgemm_pack_row(const uint8_t* row, int64_t K, int mr, int i, uint8_t* sliver) {
  uint8_t* d = sliver + i * 4;
  int64_t k = 0;
  for (; k + 4 <= K; k += 4) std::memcpy(d + (k / 4) * mr * 4, row + k, 4);
  for (; k < K; ++k) d[(k / 4) * mr * 4 + (k % 4)] = row[k];
}

void qgemm_store(const QgemmOutput& o, int64_t m, int64_t n, int32_t acc) { store_row(o, m, n, 1, &acc); }

void qgemm_reference(const QgemmArgs& g) {
  const uint8_t* A = static_cast<const uint8_t*>(g.A);
  const uint8_t* B = static_cast<const uint8_t*>(g.B);
  auto a_at = [&](int64_t m, int64_t k) -> int64_t {
    const uint8_t v = g.trans_a ? A[k * g.lda + m] : A[m * g.lda + k];
    return g.a_signed ? static_cast<int64_t>(static_cast<int8_t>(v)) : static_cast<int64_t>(v);
  };
  auto b_at = [&](int64_t k, int64_t n) -> int64_t {
    const uint8_t v = B[k * g.ldb + n];
    return g.b_signed ? static_cast<int64_t>(static_cast<int8_t>(v)) : static_cast<int64_t>(v);
  };
  for (int64_t m = 0; m < g.M; ++m)
    for (int64_t n = 0; n < g.N; ++n) {
      const int64_t zb = g.b_zero ? g.b_zero[g.b_zero_per_column ? n : 0] : 0;
      int64_t acc = 0;
      for (int64_t k = 0; k < g.K; ++k) acc += (a_at(m, k) - g.a_zero) * (b_at(k, n) - zb);
      // int32 accumulators wrap (two's complement), as the engine's and onnxruntime's do.
      qgemm_store(g.out, m, n, static_cast<int32_t>(static_cast<uint32_t>(static_cast<uint64_t>(acc))));
    }
}

}  // namespace gemm
}  // namespace onnxmini
