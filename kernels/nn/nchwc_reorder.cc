// ReorderToBlocked / ReorderFromBlocked (ai.onnxmini): the ends of a region in the blocked
// channel layout NCHW16c (nchwc_conv.h), inserted at load time by runtime/graph_layout_nchwc.cc.
//   ReorderToBlocked    X [N, C, H, W] float32 -> Y [N, ceil(C/16), H, W, 16], padding channels 0
//   ReorderFromBlocked  X [N, Cb, H, W, 16] -> Y [N, channels, H, W] (attribute `channels` = C,
//                       ceil(C/16) == Cb); the padding channels are dropped
// Blocking: one task per (image, channel block); the per-ISA routines (nchwc_conv.h) move one
// block: AVX-512 and AVX2 transpose 16 (8) pixels of the block's planes in registers, the
// portable loops go a tile of 64 pixels at a time so the 16 strided streams stay in L1.
#include <algorithm>
#include <climits>

#include "core/thread_pool.h"
#include "kernels/nn/nchwc_conv.h"
#include "kernels/registry.h"

namespace onnxmini {
namespace nn {
namespace {

// The routines run_blocks takes, as describe() reports them (reference mode: the portable loops).
cpu::Isa reorder_isa(KernelMode mode) {
  return mode == KernelMode::Reference ? cpu::Isa::Portable : nchwc_kernels_for(nchwc_isa()).isa;
}

void run_blocks(KernelContext& ctx, int64_t N, int64_t C, int64_t hw, bool to, const float* x, float* y) {
  const NchwcKernels& k = ctx.reference_mode() ? nchwc_kernels_portable() : nchwc_kernels_for(nchwc_isa());
  ctx.stats().isa = cpu::isa_name(k.isa);
  const int64_t Cb = nchwc_blocks(C);
  const int64_t bytes = static_cast<int64_t>(sizeof(float)) * N * Cb * 16 * hw;
  const ParallelCost cost{N * Cb * 16 * hw, 2 * bytes, bytes};
  parallel_for(ctx.threads(), N * Cb, 1, cost, [&](int64_t t0, int64_t t1) {
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t n = t / Cb, cb = t % Cb;
      const int64_t planes = std::min<int64_t>(16, C - cb * 16);
      const float* plain_x = x + (n * C + cb * 16) * hw;
      const int64_t blocked = (n * Cb + cb) * hw * 16;
      if (to) k.to_blocked(plain_x, planes, hw, y + blocked);
      else k.from_blocked(x + blocked, planes, hw, y + (n * C + cb * 16) * hw);
    }
  });
}

class ReorderToBlockedKernel : public Kernel {
 public:
  explicit ReorderToBlockedKernel(const KernelInfo&) {}
  KernelPlan describe(const KernelInfo& info, const std::vector<const Shape*>&) const override {
    return KernelPlan{"nchwc_reorder_to_blocked", cpu::isa_name(reorder_isa(info.mode)), ""};
  }
  void prepare(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    if (x.dtype() != DType::Float32) ctx.unsupported("dtype {} is not supported (float32 only)", dtype_name(x.dtype()));
    if (x.rank() != 4) ctx.fail("X has shape {}, expected N x C x H x W", shape_to_string(x.shape()));
    ctx.allocate_output(0, DType::Float32, {x.dim(0), nchwc_blocks(x.dim(1)), x.dim(2), x.dim(3), 16});
  }
  void compute(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    ctx.stats().variant = "nchwc_reorder_to_blocked";
    if (x.numel() == 0) return;
    run_blocks(ctx, x.dim(0), x.dim(1), x.dim(2) * x.dim(3), true, x.data<float>(),
               ctx.output(0).mutable_data<float>());
  }
};

class ReorderFromBlockedKernel : public Kernel {
 public:
  explicit ReorderFromBlockedKernel(const KernelInfo& info) : channels_(info.attrs.get_int("channels", -1)) {
    if (channels_ < 0) info.fail("attribute channels (the true channel count) is required, got {}", channels_);
  }
  KernelPlan describe(const KernelInfo& info, const std::vector<const Shape*>&) const override {
    return KernelPlan{"nchwc_reorder_from_blocked", cpu::isa_name(reorder_isa(info.mode)), ""};
  }
  void prepare(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    if (x.dtype() != DType::Float32) ctx.unsupported("dtype {} is not supported (float32 only)", dtype_name(x.dtype()));
    if (x.rank() != 5 || x.dim(4) != 16 || x.dim(1) != nchwc_blocks(channels_))
      ctx.fail("X has shape {}, expected N x {} x H x W x 16 for channels {}", shape_to_string(x.shape()),
               nchwc_blocks(channels_), channels_);
    ctx.allocate_output(0, DType::Float32, {x.dim(0), channels_, x.dim(2), x.dim(3)});
  }
  void compute(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    ctx.stats().variant = "nchwc_reorder_from_blocked";
    if (x.numel() == 0 || channels_ == 0) return;
    run_blocks(ctx, x.dim(0), channels_, x.dim(2) * x.dim(3), false, x.data<float>(),
               ctx.output(0).mutable_data<float>());
  }

 private:
  int64_t channels_;
};

}  // namespace
}  // namespace nn

ONNXMINI_REGISTER_KERNEL("reorder_to_blocked", "ai.onnxmini", "ReorderToBlocked", 1, INT_MAX,
                         make_kernel<nn::ReorderToBlockedKernel>);
ONNXMINI_REGISTER_KERNEL("reorder_from_blocked", "ai.onnxmini", "ReorderFromBlocked", 1, INT_MAX,
                         make_kernel<nn::ReorderFromBlockedKernel>);

}  // namespace onnxmini

ONNXMINI_KERNEL_FILE(nn_nchwc_reorder);
