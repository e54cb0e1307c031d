// com.microsoft MatMulNBits: Y = A @ dequant(B)^T (+ bias), the block-quantized weight
// matmul of int4 / int2 / int8 LLM exports. A float32 or float16 [..., K]; Y [..., N].
//
// Layout: B uint8 [N, k_blocks, blob] holds, per output column n, the codes of K weights
// in blocks of `block_size` along K, `bits` bits each, packed low bits first
// (blob = block_size * bits / 8); scales [N * k_blocks] (A's type); zero_points either
// uint8 packed the same way per row (ceil(k_blocks * bits / 8) bytes) or A's type
// [N * k_blocks], default 2^(bits - 1); weight = (code - zero_point) * scale. Inputs:
// A, B, scales, zero_points, g_idx (deprecated, refused), bias [N].
//
// The weights are dequantized once into a float32 matrix (at session creation when B,
// scales and zero points are constants, and prepacked for the GEMM engine), then every
// call is one GEMM over all rows of A, the bias in its epilogue. The dequantized copy costs
// 32 / bits times the quantized bytes: simple and exact, not the smallest footprint.
#include <cmath>
#include <vector>

#include "core/checked_math.h"
#include "core/float16.h"
#include "kernels/gemm_engine/gemm.h"
#include "kernels/registry.h"

namespace onnxmini {
namespace linalg {
namespace {

float as_float(const Tensor& t, int64_t i) {
  switch (t.dtype()) {
    case DType::Float32: return t.data<float>()[i];
    case DType::Float16: return half_to_float(static_cast<const uint16_t*>(t.raw())[i]);
    default: return bfloat16_to_float(static_cast<const uint16_t*>(t.raw())[i]);
  }
}

bool is_a_type(DType t) { return t == DType::Float32 || t == DType::Float16 || t == DType::BFloat16; }

class MatMulNBitsKernel : public Kernel {
 public:
  explicit MatMulNBitsKernel(const KernelInfo& info)
      : K_(info.attrs.get_int("K", -1)),
        N_(info.attrs.get_int("N", -1)),
        bits_(info.attrs.get_int("bits", 4)),
        block_(info.attrs.get_int("block_size", -1)),
        gemm_(&gemm::engine(info.gemm, info.mode)) {
    if (K_ < 1 || N_ < 1) info.fail("attributes K {} and N {} must be positive", K_, N_);
    if (bits_ != 2 && bits_ != 4 && bits_ != 8) info.fail("bits {} is not 2, 4 or 8", bits_);
    if (block_ < 16 || (block_ & (block_ - 1)) != 0 || block_ > (int64_t{1} << 20))
      info.fail("block_size {} must be a power of two >= 16", block_);
    k_blocks_ = (K_ + block_ - 1) / block_;
    checked_mul(checked_mul(N_, k_blocks_ * block_, [&] { return info.label() + ": N x padded K"; }), 4,
                [&] { return info.label() + ": dequantized weight bytes"; });
    if (info.has_input(4)) info.unsupported("g_idx (input 4, deprecated) is not supported");
    const bool constant = info.constant_input(1) && info.constant_input(2) &&
                          (!info.has_input(3) || info.constant_input(3));
    if (constant) {
      weights_ = dequantize(info, *info.constant_input(1), *info.constant_input(2),
                            info.has_input(3) ? info.constant_input(3) : nullptr);
      packed_ = gemm_->pack_b(true, K_, N_, weights_.data(), K_);
    }
  }

  void prepare(KernelContext& ctx) override {
    const Tensor& a = ctx.input(0);
    if (!is_a_type(a.dtype())) ctx.unsupported("A has dtype {} (float, float16, bfloat16)", dtype_name(a.dtype()));
    if (a.rank() < 1 || a.dim(a.rank() - 1) != K_)
      ctx.fail("A has shape {}; its last dim must be K = {}", shape_to_string(a.shape()), K_);
    if (ctx.has_input(5)) {
      const Tensor& bias = ctx.input(5);
      if (bias.dtype() != a.dtype() || bias.numel() != N_)
        ctx.fail("bias is {} {}, expected {} ({})", dtype_name(bias.dtype()), shape_to_string(bias.shape()),
                 dtype_name(a.dtype()), N_);
    }
    Shape out = a.shape();
    out.back() = N_;
    ctx.allocate_output(0, a.dtype(), out);
  }

  void compute(KernelContext& ctx) override {
    const Tensor& a = ctx.input(0);
    Tensor& y = ctx.output(0);
    const int64_t M = a.numel() / K_;
    ctx.stats().flops = 2.0 * M * N_ * K_;
    std::vector<float> runtime_weights;
    if (!packed_)
      runtime_weights = dequantize(ctx.info(), ctx.input(1), ctx.input(2), ctx.has_input(3) ? &ctx.input(3) : nullptr);
    std::vector<float> bias;
    if (ctx.has_input(5))
      for (int64_t n = 0; n < N_; ++n) bias.push_back(as_float(ctx.input(5), n));
    // float16 / bfloat16 A: widened to float32 rows, the result rounded once.
    const bool wide = a.dtype() == DType::Float32;
    std::vector<float> a32, y32;
    if (!wide) {
      a32.resize(a.numel());
      for (int64_t i = 0; i < a.numel(); ++i) a32[i] = as_float(a, i);
      y32.resize(y.numel());
    }
    gemm::SgemmArgs g;
    g.trans_b = true;
    g.M = M, g.N = N_, g.K = K_;
    g.A = wide ? a.data<float>() : a32.data(), g.lda = K_;
    g.B = packed_ ? nullptr : runtime_weights.data(), g.ldb = K_;
    g.C = wide ? y.mutable_data<float>() : y32.data(), g.ldc = N_;
    g.epilogue.bias = bias.empty() ? nullptr : bias.data();
    if (packed_) {
      ctx.stats().variant = "matmul_nbits_prepacked";
      gemm_->sgemm_packed(g, *packed_, ctx.threads());
    } else {
      ctx.stats().variant = "matmul_nbits_dequantize_per_run";
      gemm_->sgemm(g, ctx.threads());
    }
    if (!wide) {
      uint16_t* out = static_cast<uint16_t*>(y.raw_mut());
      const bool bf = y.dtype() == DType::BFloat16;
      for (int64_t i = 0; i < y.numel(); ++i) out[i] = bf ? float_to_bfloat16(y32[i]) : float_to_half(y32[i]);
    }
  }

 private:
  // The float32 weights W [N, K] (row n = output column n), checking every input's shape.
  std::vector<float> dequantize(const KernelInfo& info, const Tensor& b, const Tensor& scales, const Tensor* zp) const {
    const int64_t blob = block_ * bits_ / 8;
    if (b.dtype() != DType::UInt8 || b.numel() != N_ * k_blocks_ * blob)
      info.fail("B is {} {}, expected uint8 ({}, {}, {})", dtype_name(b.dtype()), shape_to_string(b.shape()), N_, k_blocks_,
                blob);
    if (!is_a_type(scales.dtype()) || scales.numel() != N_ * k_blocks_)
      info.fail("scales is {} {}, expected {} values ({} x {})", dtype_name(scales.dtype()), shape_to_string(scales.shape()),
                N_ * k_blocks_, N_, k_blocks_);
    const int64_t zp_row_bytes = (k_blocks_ * bits_ + 7) / 8;
    const bool zp_packed = zp && zp->dtype() == DType::UInt8;
    if (zp && !(zp_packed ? zp->numel() == N_ * zp_row_bytes : (is_a_type(zp->dtype()) && zp->numel() == N_ * k_blocks_)))
      info.fail("zero_points is {} {}, expected uint8 [{}] (packed) or [{}] in scales' type", dtype_name(zp->dtype()),
                shape_to_string(zp->shape()), N_ * zp_row_bytes, N_ * k_blocks_);
    const uint8_t* codes = b.data<uint8_t>();
    const unsigned mask = (1u << bits_) - 1;
    auto code_at = [&](const uint8_t* row, int64_t i) {  // i-th value of a low-bits-first packed row
      return static_cast<int>((row[i * bits_ / 8] >> ((i * bits_) % 8)) & mask);
    };
    std::vector<float> w(static_cast<size_t>(N_ * K_));
    const float default_zp = static_cast<float>(1 << (bits_ - 1));
    for (int64_t n = 0; n < N_; ++n)
      for (int64_t kb = 0; kb < k_blocks_; ++kb) {
        const float s = as_float(scales, n * k_blocks_ + kb);
        const float z = !zp ? default_zp
                            : zp_packed ? static_cast<float>(code_at(zp->data<uint8_t>() + n * zp_row_bytes, kb))
                                        : as_float(*zp, n * k_blocks_ + kb);
        const uint8_t* blk = codes + (n * k_blocks_ + kb) * blob;
        for (int64_t i = 0; i < block_ && kb * block_ + i < K_; ++i)
          w[n * K_ + kb * block_ + i] = (static_cast<float>(code_at(blk, i)) - z) * s;
      }
    return w;
  }

  int64_t K_, N_, bits_, block_, k_blocks_ = 0;
  const gemm::GemmEngine* gemm_;
  std::vector<float> weights_;
  std::shared_ptr<gemm::PackedB> packed_;
};

}  // namespace

ONNXMINI_REGISTER_KERNEL("matmul_nbits", "com.microsoft", "MatMulNBits", 1, INT_MAX, make_kernel<MatMulNBitsKernel>);

}  // namespace linalg
}  // namespace onnxmini

ONNXMINI_KERNEL_FILE(linalg_matmul_nbits);
