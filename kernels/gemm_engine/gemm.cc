// The GEMM interface's shared parts: default batched/prepacked paths, the
// epilogue, the reference engine, and backend selection.
#include "kernels/gemm_engine/gemm.h"

#include "core/cpu_features.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "core/cpu_features.h"
#include "core/thread_pool.h"
#include "kernels/simd/erf_scalar.h"
#include "kernels/simd/f32_kernels.h"

namespace onnxmini {
namespace gemm {

void apply_epilogue(const Epilogue& e, float* c, int64_t n, int64_t row, int64_t col0) {
  if (e.bias) {
    if (e.bias_per_row) {
      float b = e.bias[row];
      for (int64_t j = 0; j < n; ++j) c[j] += b;
    } else {
      for (int64_t j = 0; j < n; ++j) c[j] += e.bias[col0 + j];
    }
  }
  if (e.bias2)
    for (int64_t j = 0; j < n; ++j) c[j] += e.bias2[col0 + j];
  if (e.residual) {
    const float* z = e.residual + row * e.residual_ld + col0;
    for (int64_t j = 0; j < n; ++j) c[j] += z[j];
  }
  switch (e.activation) {
    case Epilogue::Activation::None: break;
    case Epilogue::Activation::Relu:
      for (int64_t j = 0; j < n; ++j) c[j] = c[j] > 0 ? c[j] : 0.0f;
      break;
    case Epilogue::Activation::Clip:
      for (int64_t j = 0; j < n; ++j) c[j] = std::fmin(std::fmax(c[j], e.clip_min), e.clip_max);
      break;
    case Epilogue::Activation::Sigmoid:
      for (int64_t j = 0; j < n; ++j) c[j] = 1.0f / (1.0f + std::exp(-c[j]));
      break;
    // std::min / std::max (not fmin / fmax) so the loops vectorise: these run as a
    // separate pass on the Conv paths without a GEMM epilogue (depthwise, direct).
    case Epilogue::Activation::HardSigmoid:
      for (int64_t j = 0; j < n; ++j) c[j] = std::max(0.0f, std::min(1.0f, e.hard_alpha * c[j] + e.hard_beta));
      break;
    case Epilogue::Activation::HardSwish:
      for (int64_t j = 0; j < n; ++j) c[j] *= std::max(0.0f, std::min(1.0f, e.hard_alpha * c[j] + e.hard_beta));
      break;
    case Epilogue::Activation::Swish: {  // x * sigmoid(alpha * x), the vectorised sigmoid of kernels/simd in chunks
      const simd::F32Kernels& k = simd::f32_kernels();
      const float alpha = e.swish_alpha;
      if (!k.sigmoid) {  // the portable table has no entries: the exact formula
        for (int64_t j = 0; j < n; ++j) c[j] = c[j] / (1.0f + std::exp(-(alpha * c[j])));
        break;
      }
      float s[256];
      for (int64_t j0 = 0; j0 < n; j0 += 256) {
        const int64_t len = std::min<int64_t>(256, n - j0);
        if (alpha == 1.0f) {
          k.sigmoid(c + j0, s, len);
        } else {  // sigmoid(alpha * x): scale into s, then the sigmoid in place there
          for (int64_t j = 0; j < len; ++j) s[j] = alpha * c[j0 + j];
          k.sigmoid(s, s, len);
        }
        for (int64_t j = 0; j < len; ++j) c[j0 + j] *= s[j];
      }
      break;
    }
    case Epilogue::Activation::Gelu:
    case Epilogue::Activation::GeluTanh: {  // the SIMD rows of kernels/simd in place, else their scalar twins
      const bool tanh_form = e.activation == Epilogue::Activation::GeluTanh;
      const simd::F32Kernels& k = simd::f32_kernels();
      const simd::UnaryFn f = tanh_form ? k.gelu_tanh : k.gelu_erf;
      if (f) {
        f(c, c, n);
      } else {
        for (int64_t j = 0; j < n; ++j) c[j] = tanh_form ? simd::gelu_tanh_scalar(c[j]) : simd::gelu_erf_scalar(c[j]);
      }
      break;
    }
    case Epilogue::Activation::PRelu:
      for (int64_t j = 0; j < n; ++j) {
        float s = e.bias_per_row ? e.prelu_slope[row] : e.prelu_slope[col0 + j];
        c[j] = c[j] < 0 ? c[j] * s : c[j];
      }
      break;
  }
}

bool has_epilogue(const Epilogue& e) {
  return e.bias || e.bias2 || e.residual || e.activation != Epilogue::Activation::None;
}

// ---- defaults ----

void GemmEngine::dgemm(const DgemmArgs& a, ThreadPool* pool) const { reference_engine().dgemm(a, pool); }

void GemmEngine::sgemm_batched(const SgemmArgs& args, int64_t batch, const BatchStrides& s, ThreadPool* pool) const {
  for (int64_t b = 0; b < batch; ++b) {
    SgemmArgs a = args;
    a.A = args.A + b * s.a;
    a.B = args.B + b * s.b;
    a.C = args.C + b * s.c;
    sgemm(a, pool);
  }
}

SgemmPath GemmEngine::sgemm_batched_path(const SgemmArgs& args) const { return sgemm_path(args, false); }

namespace {
class PlainPackedB : public PackedB {
 public:
  PlainPackedB(bool trans_b, int64_t K, int64_t N, const float* B, int64_t ldb) : trans_(trans_b), K_(K), N_(N) {
    int64_t rows = trans_b ? N : K, cols = trans_b ? K : N;
    data_.resize(static_cast<size_t>(rows * cols));
    for (int64_t r = 0; r < rows; ++r) std::memcpy(&data_[r * cols], B + r * ldb, sizeof(float) * cols);
  }
  int64_t K() const override { return K_; }
  int64_t N() const override { return N_; }
  bool trans_;
  int64_t K_, N_;
  std::vector<float> data_;
};
}  // namespace

std::shared_ptr<PackedB> GemmEngine::pack_b(bool trans_b, int64_t K, int64_t N, const float* B, int64_t ldb) const {
  return std::make_shared<PlainPackedB>(trans_b, K, N, B, ldb);
}

void GemmEngine::sgemm_packed(const SgemmArgs& args, const PackedB& packed, ThreadPool* pool) const {
  const auto& p = dynamic_cast<const PlainPackedB&>(packed);
  SgemmArgs a = args;
  a.trans_b = p.trans_;
  a.B = p.data_.data();
  a.ldb = p.trans_ ? p.K_ : p.N_;
  sgemm(a, pool);
}

namespace {
// op(A) as a plain row-major M x K copy.
class PlainPackedA : public PackedA {
 public:
  PlainPackedA(bool trans_a, int64_t M, int64_t K, const float* A, int64_t lda) : M_(M), K_(K) {
    data_.resize(static_cast<size_t>(M * K));
    for (int64_t i = 0; i < M; ++i)
      for (int64_t k = 0; k < K; ++k) data_[i * K + k] = trans_a ? A[k * lda + i] : A[i * lda + k];
  }
  int64_t M() const override { return M_; }
  int64_t K() const override { return K_; }
  int64_t M_, K_;
  std::vector<float> data_;
};
}  // namespace

std::shared_ptr<PackedA> GemmEngine::pack_a(bool trans_a, int64_t M, int64_t K, const float* A, int64_t lda) const {
  return std::make_shared<PlainPackedA>(trans_a, M, K, A, lda);
}

void GemmEngine::sgemm_packed_a(const SgemmArgs& args, const PackedA& packed, ThreadPool* pool) const {
  const auto& p = dynamic_cast<const PlainPackedA&>(packed);
  SgemmArgs a = args;
  a.trans_a = false;
  a.A = p.data_.data();
  a.lda = p.K_;
  sgemm(a, pool);
}

// B is gathered into a plain K x N matrix, row by row of runs.
void GemmEngine::sgemm_implicit(const SgemmArgs& args, const PackedA* packed, const ImplicitB& b,
                                ThreadPool* pool) const {
  const int64_t N = b.rows * b.row_len;
  std::vector<float> B(static_cast<size_t>(args.K * N));
  for (int64_t k = 0; k < args.K; ++k)
    for (int64_t r = 0; r < b.rows; ++r)
      std::memcpy(&B[k * N + r * b.row_len], b.base + b.k_offset[k] + r * b.row_stride, sizeof(float) * b.row_len);
  SgemmArgs a = args;
  a.N = N;
  a.trans_b = false;
  a.B = B.data();
  a.ldb = N;
  if (packed) sgemm_packed_a(a, *packed, pool);
  else sgemm(a, pool);
}

// ---- reference: the definition, loop by loop ----

namespace {
template <typename T, typename Args>
void reference_gemm(const Args& a) {
  for (int64_t i = 0; i < a.M; ++i) {
    for (int64_t j = 0; j < a.N; ++j) {
      // Accumulate in double so the reference is more exact than what it checks.
      double acc = 0;
      for (int64_t k = 0; k < a.K; ++k) {
        T av = a.trans_a ? a.A[k * a.lda + i] : a.A[i * a.lda + k];
        T bv = a.trans_b ? a.B[j * a.ldb + k] : a.B[k * a.ldb + j];
        acc += static_cast<double>(av) * static_cast<double>(bv);
      }
      T& c = a.C[i * a.ldc + j];
      c = static_cast<T>(a.alpha * acc + (a.beta == 0 ? 0.0 : a.beta * static_cast<double>(c)));
    }
  }
}

class ReferenceEngine : public GemmEngine {
 public:
  const char* name() const override { return "reference"; }
  SgemmPath sgemm_path(const SgemmArgs&, bool) const override { return SgemmPath{}; }
  void sgemm(const SgemmArgs& a, ThreadPool*) const override {
    reference_gemm<float>(a);
    if (has_epilogue(a.epilogue))
      for (int64_t i = 0; i < a.M; ++i) apply_epilogue(a.epilogue, a.C + i * a.ldc, a.N, i, 0);
  }
  void dgemm(const DgemmArgs& a, ThreadPool*) const override { reference_gemm<double>(a); }
};
}  // namespace

SgemmPath GemmEngine::sgemm_path(const SgemmArgs& args, bool) const {
  SgemmPath p;
  p.route = std::strcmp(name(), "openblas") == 0 ? SgemmRoute::OpenBlas : SgemmRoute::Eigen;
  if (args.M <= 0 || args.N <= 0) p.route = SgemmRoute::Empty;
  p.isa = cpu::isa_name(cpu::hw_isa());
  return p;
}

const char* sgemm_variant(GemmCaller caller, SgemmRoute route) {
  // [caller][route], routes in SgemmRoute's order.
  static const char* const names[4][8] = {
      {"gemm_empty", "gemm_skinny/builtin", "gemm_packed/builtin", "gemm_prepacked/builtin", "gemm/eigen",
       "gemm/openblas", "gemm/reference", "gemm_small/builtin"},
      {"matmul_folded+gemm_empty", "matmul_folded+gemm_skinny/builtin", "matmul_folded+gemm_packed/builtin",
       "matmul_folded+gemm_prepacked/builtin", "matmul_folded+gemm/eigen", "matmul_folded+gemm/openblas",
       "matmul_folded+gemm/reference", "matmul_folded+gemm_small/builtin"},
      {"matmul_batched+gemm_empty", "matmul_batched+gemm_skinny/builtin", "matmul_batched+gemm_packed/builtin",
       "matmul_batched+gemm_prepacked/builtin", "matmul_batched+gemm/eigen", "matmul_batched+gemm/openblas",
       "matmul_batched+gemm/reference", "matmul_batched+gemm_small/builtin"},
      {"matmul_broadcast+gemm_empty", "matmul_broadcast+gemm_skinny/builtin", "matmul_broadcast+gemm_packed/builtin",
       "matmul_broadcast+gemm_prepacked/builtin", "matmul_broadcast+gemm/eigen", "matmul_broadcast+gemm/openblas",
       "matmul_broadcast+gemm/reference", "matmul_broadcast+gemm_small/builtin"}};
  return names[static_cast<int>(caller)][static_cast<int>(route)];
}

std::string sgemm_blocking(const SgemmPath& p) {
  if (p.mr <= 0 || p.route == SgemmRoute::Empty) return "";
  std::string s = "micro-tile " + std::to_string(p.mr) + "x" + std::to_string(p.nr);
  if (p.route == SgemmRoute::Skinny) return s + ", A read in place, KC " + std::to_string(p.kc);
  if (p.route == SgemmRoute::Small)
    return s + (p.small_dot ? " of dot products along K" : " of broadcast FMAs") + ", operands read in place, no packing";
  return s + ", MC " + std::to_string(p.mc) + " KC " + std::to_string(p.kc) + " NC " + std::to_string(p.nc);
}

const GemmEngine& reference_engine() {
  static ReferenceEngine e;
  return e;
}

// Defined in gemm_builtin.cc, gemm_openblas.cc, gemm_eigen.cc.
const GemmEngine& builtin_engine();
const GemmEngine& openblas_engine();
const GemmEngine& eigen_engine();

const GemmEngine& engine(GemmBackend backend, KernelMode mode) {
  if (mode == KernelMode::Reference) return reference_engine();
  switch (backend) {
    case GemmBackend::Builtin: return builtin_engine();
    case GemmBackend::OpenBLAS: return openblas_engine();
    case GemmBackend::Eigen: return eigen_engine();
  }
  return builtin_engine();
}

}  // namespace gemm
}  // namespace onnxmini
