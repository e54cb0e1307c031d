// Col2Im (opsets 18-23): the inverse of im2col; float32, float64, int32, int64,
// and float16 / bfloat16 summed in float32 (half_float.h). Input
// [N, C * prod(block_shape), L] holds, for every block position l and kernel
// offset k, the value that goes to image position l * stride - pad_begin +
// k * dilation; overlapping contributions are summed. Any number of spatial
// axes (image_shape and block_shape have one entry per axis).
//
// The (kernel offset, block position) -> image position map does not depend
// on (n, c), so it is built once per run into a scratch tensor (-1 where the
// position falls in the padding); images (n, c) are then independent and are
// split across threads.
#include <algorithm>
#include <cstring>

#include "core/checked_math.h"
#include "core/thread_pool.h"
#include "kernels/registry.h"
#include "kernels/vision/half_float.h"

namespace onnxmini {

namespace {

// An absent attribute (empty) means `fallback` on each of the n entries.
std::vector<int64_t> or_default(const std::vector<int64_t>& v, size_t n, int64_t fallback) {
  return v.empty() ? std::vector<int64_t>(n, fallback) : v;
}

class Col2ImKernel : public Kernel {
 public:
  explicit Col2ImKernel(const KernelInfo& info)
      : dilations_(info.attrs.get_ints("dilations", {})),
        strides_(info.attrs.get_ints("strides", {})),
        pads_(info.attrs.get_ints("pads", {})) {
    info.require_dtype(0, {DType::Float32, DType::Float64, DType::Float16, DType::BFloat16, DType::Int32,
                           DType::Int64});
  }

  void prepare(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    const DType t = x.dtype();
    if (t != DType::Float32 && t != DType::Float64 && t != DType::Int32 && t != DType::Int64 && !vision::is_half(t))
      ctx.unsupported("input dtype {} is not supported (float32, float64, float16, bfloat16, int32, int64)",
                      dtype_name(t));
    if (x.rank() != 3) ctx.fail("input must be 3-D [N, C * prod(block_shape), L], got shape {}", shape_to_string(x.shape()));
    const std::vector<int64_t> image = int64_vector(ctx, 1, "image_shape");
    const std::vector<int64_t> block = int64_vector(ctx, 2, "block_shape");
    const size_t k = image.size();
    if (block.size() != k)
      ctx.fail("image_shape [{}] and block_shape [{}] have different lengths", fmt::join(image, ","),
               fmt::join(block, ","));
    const std::vector<int64_t> dil = or_default(dilations_, k, 1), str = or_default(strides_, k, 1),
                               pads = or_default(pads_, 2 * k, 0);
    if (dil.size() != k || str.size() != k || pads.size() != 2 * k)
      ctx.fail("dilations, strides and pads have {}, {} and {} entries, want {}, {} and {}", dil.size(), str.size(),
               pads.size(), k, k, 2 * k);
    int64_t kernel = 1, blocks = 1;
    for (size_t d = 0; d < k; ++d) {
      if (block[d] < 1 || dil[d] < 1 || str[d] < 1 || image[d] < 0)
        ctx.fail("axis {}: image {}, block {}, dilation {}, stride {} (want block, dilation, stride >= 1)", d,
                 image[d], block[d], dil[d], str[d]);
      // Every size here comes from inputs and attributes: sums and products are checked.
      auto where = [&ctx, d] { return fmt::format("{}: axis {} block / image geometry", ctx.info().label(), d); };
      const int64_t span = checked_add(checked_mul(dil[d], block[d] - 1, where), 1, where),
                    padded = checked_add(checked_add(image[d], pads[d], where), pads[d + k], where);
      if (padded < span) ctx.fail("axis {}: the block spans {} but the padded image is only {}", d, span, padded);
      kernel = checked_mul(kernel, block[d], where);
      blocks = checked_mul(blocks, (padded - span) / str[d] + 1, where);
    }
    if (x.dim(1) % kernel != 0)
      ctx.fail("input dim 1 ({}) is not divisible by prod(block_shape) = {}", x.dim(1), kernel);
    if (x.dim(2) != blocks)
      ctx.fail("input dim 2 is {} but image_shape [{}] with block_shape [{}] gives {} blocks", x.dim(2),
               fmt::join(image, ","), fmt::join(block, ","), blocks);
    Shape out = {x.dim(0), x.dim(1) / kernel};
    out.insert(out.end(), image.begin(), image.end());
    ctx.allocate_output(0, t, out);
  }

  void compute(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    Tensor& y = ctx.output(0);
    if (y.nbytes() > 0) std::memset(y.raw_mut(), 0, y.nbytes());  // all-zero bits: 0 in every supported dtype
    if (y.numel() == 0 || x.numel() == 0) return;
    const std::vector<int64_t> image = ctx.input(1).to_int64_vector(), block = ctx.input(2).to_int64_vector();
    const size_t k = image.size();
    const std::vector<int64_t> dil = or_default(dilations_, k, 1), str = or_default(strides_, k, 1),
                               pads = or_default(pads_, 2 * k, 0);
    const int64_t kernel = x.dim(1) / y.dim(1), blocks = x.dim(2);
    std::vector<int64_t> blocks_per_axis(k);
    for (size_t d = 0; d < k; ++d)
      blocks_per_axis[d] = (image[d] + pads[d] + pads[d + k] - dil[d] * (block[d] - 1) - 1) / str[d] + 1;
    // map[kk * blocks + l] = flat image position, or -1 in the padding.
    Tensor map_t = ctx.scratch(DType::Int64, {kernel * blocks});
    int64_t* map = map_t.mutable_data<int64_t>();
    for (int64_t kk = 0; kk < kernel; ++kk)
      for (int64_t l = 0; l < blocks; ++l) {
        int64_t pos = 0, krem = kk, lrem = l, inner_k = kernel, inner_l = blocks;
        for (size_t d = 0; d < k && pos >= 0; ++d) {
          inner_k /= block[d];
          inner_l /= blocks_per_axis[d];
          const int64_t kd = krem / inner_k, ld = lrem / inner_l;
          krem %= inner_k;
          lrem %= inner_l;
          const int64_t at = ld * str[d] - pads[d] + kd * dil[d];
          pos = at >= 0 && at < image[d] ? pos * image[d] + at : -1;
        }
        map[kk * blocks + l] = pos;
      }
    switch (x.dtype()) {
      case DType::Float32: scatter_add(ctx, x.data<float>(), y.mutable_data<float>(), map, y); break;
      case DType::Float64: scatter_add(ctx, x.data<double>(), y.mutable_data<double>(), map, y); break;
      case DType::Int32: scatter_add(ctx, x.data<int32_t>(), y.mutable_data<int32_t>(), map, y); break;
      case DType::Int64: scatter_add(ctx, x.data<int64_t>(), y.mutable_data<int64_t>(), map, y); break;
      default: {  // float16 / bfloat16: widen, sum in float32, round once
        Tensor wide_x = ctx.scratch(DType::Float32, x.shape()), wide_y = ctx.scratch(DType::Float32, y.shape());
        vision::widen_half(x, wide_x.mutable_data<float>());
        float* wy = wide_y.mutable_data<float>();
        std::fill(wy, wy + y.numel(), 0.f);
        scatter_add(ctx, wide_x.data<float>(), wy, map, y);
        vision::narrow_to_half(wy, y);
      }
    }
  }

 private:
  // out (zeroed, shaped as y) += the columns of `in` at their image positions:
  // map[kk * blocks + l] for the [kernel, blocks] rows of each image (n, c).
  template <typename T>
  static void scatter_add(const KernelContext& ctx, const T* in, T* out, const int64_t* map, const Tensor& y) {
    const int64_t plane = y.numel() / (y.dim(0) * y.dim(1));
    const int64_t cols_per_image = ctx.input(0).dim(1) / y.dim(1) * ctx.input(0).dim(2);  // kernel * blocks
    parallel_for(ctx.threads(), y.dim(0) * y.dim(1), std::max<int64_t>(1, 16384 / cols_per_image),
                 [&](int64_t begin, int64_t end) {
                   for (int64_t img = begin; img < end; ++img) {
                     const T* cols = in + img * cols_per_image;  // rows (n, c * kernel + kk) are contiguous
                     T* dst = out + img * plane;
                     for (int64_t i = 0; i < cols_per_image; ++i)
                       if (map[i] >= 0) dst[map[i]] += cols[i];
                   }
                 });
  }

  static std::vector<int64_t> int64_vector(const KernelContext& ctx, size_t i, const char* what) {
    const Tensor& t = ctx.input(i);
    if (t.dtype() != DType::Int64 || t.rank() != 1)
      ctx.fail("{} must be a 1-D int64 tensor, got {} of shape {}", what, dtype_name(t.dtype()),
               shape_to_string(t.shape()));
    return t.to_int64_vector();
  }
  std::vector<int64_t> dilations_, strides_, pads_;  // empty when absent (length = spatial rank, known at run)
};

}  // namespace

ONNXMINI_REGISTER_KERNEL("col2im", "", "Col2Im", 18, INT_MAX, make_kernel<Col2ImKernel>);

}  // namespace onnxmini

ONNXMINI_KERNEL_FILE(vision_col2im);
