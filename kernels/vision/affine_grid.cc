// AffineGrid (opsets 20-23): the sampling grid of an affine transform, for
// GridSample. theta [N, 2, 3] with size (N, C, H, W) gives grid [N, H, W, 2];
// theta [N, 3, 4] with size (N, C, D, H, W) gives grid [N, D, H, W, 3].
// grid[n, ..., :] = theta[n] @ (x, y[, z], 1), where x, y, z are the
// normalised coordinates of the output pixel along W, H, D:
//   align_corners 1: -1 + 2 i / (L - 1)   (pixel centres on -1 and 1; 0 when L = 1, as in
//                    PyTorch; the ONNX reference gives -1 there and onnxruntime +1)
//   align_corners 0: -1 + (2 i + 1) / L    (pixel edges on -1 and 1)
// Rows (n, d, h) are independent and split across threads; each row walks w.
// float16 / bfloat16 compute in float, double in double.
#include <vector>

#include "kernels/elementwise/elementwise.h"
#include "kernels/registry.h"

namespace onnxmini {

namespace {

using ew::compute_t;
using ew::Num;

class AffineGridKernel : public Kernel {
 public:
  explicit AffineGridKernel(const KernelInfo& info) : align_corners_(info.attrs.get_int("align_corners", 0) != 0) {
    info.require_dtype(0, {DType::Float32, DType::Float64, DType::Float16, DType::BFloat16});
  }

  void prepare(KernelContext& ctx) override {
    const Tensor& theta = ctx.input(0);
    const Tensor& size_t_ = ctx.input(1);
    if (!ew::visit(ew::FloatTypes{}, theta.dtype(), [](auto) {}))
      ctx.unsupported("theta dtype {} is not supported (float32, float64, float16, bfloat16)",
                      dtype_name(theta.dtype()));
    if (size_t_.dtype() != DType::Int64 || size_t_.rank() != 1 || (size_t_.dim(0) != 4 && size_t_.dim(0) != 5))
      ctx.fail("size must be 1-D int64 (N, C, H, W) or (N, C, D, H, W), got {} of shape {}",
               dtype_name(size_t_.dtype()), shape_to_string(size_t_.shape()));
    const std::vector<int64_t> size = size_t_.to_int64_vector();
    const int64_t spatial = static_cast<int64_t>(size.size()) - 2;
    for (int64_t v : size)
      if (v < 0) ctx.fail("size [{}] has a negative entry", fmt::join(size, ","));
    if (theta.rank() != 3 || theta.dim(0) != size[0] || theta.dim(1) != spatial || theta.dim(2) != spatial + 1)
      ctx.fail("theta shape {} does not fit size [{}] (want [{}, {}, {}])", shape_to_string(theta.shape()),
               fmt::join(size, ","), size[0], spatial, spatial + 1);
    Shape out = {size[0]};
    out.insert(out.end(), size.begin() + 2, size.end());
    out.push_back(spatial);
    ctx.allocate_output(0, theta.dtype(), out);
  }

  void compute(KernelContext& ctx) override {
    ew::visit(ew::FloatTypes{}, ctx.input(0).dtype(), [&](auto tag) { run<typename decltype(tag)::type>(ctx); });
  }

 private:
  template <typename C>
  C base_coordinate(int64_t i, int64_t length) const {
    if (align_corners_) return length > 1 ? C(-1) + C(2) * static_cast<C>(i) / static_cast<C>(length - 1) : C(0);
    return C(-1) + static_cast<C>(2 * i + 1) / static_cast<C>(length);
  }

  template <typename T>
  void run(KernelContext& ctx) const {
    using C = compute_t<T>;
    Tensor& grid_t = ctx.output(0);
    if (grid_t.numel() == 0) return;
    const Tensor& theta_t = ctx.input(0);
    const int64_t spatial = theta_t.dim(1), batch = theta_t.dim(0);
    const std::vector<int64_t> size = ctx.input(1).to_int64_vector();
    const int64_t depth = spatial == 3 ? size[2] : 1, height = size[size.size() - 2], width = size.back();
    const T* theta = ew::cdata<T>(theta_t);
    T* grid = ew::mdata<T>(grid_t);
    // The x coordinates are the same on every row: computed once.
    Tensor xs_t = ctx.scratch(std::is_same<C, double>::value ? DType::Float64 : DType::Float32, {width});
    C* xs = ew::mdata<C>(xs_t);
    for (int64_t w = 0; w < width; ++w) xs[w] = base_coordinate<C>(w, width);
    const int64_t row_len = width * spatial, theta_len = spatial * (spatial + 1);
    parallel_for(ctx.threads(), batch * depth * height, std::max<int64_t>(1, 32768 / std::max<int64_t>(row_len, 1)),
                 [&](int64_t begin, int64_t end) {
                   for (int64_t row = begin; row < end; ++row) {
                     const int64_t n = row / (depth * height), d = row / height % depth, h = row % height;
                     C th[12];
                     for (int64_t k = 0; k < theta_len; ++k) th[k] = Num<T>::load(theta[n * theta_len + k]);
                     const C y = base_coordinate<C>(h, height);
                     const C z = spatial == 3 ? base_coordinate<C>(d, depth) : C(0);
                     // Per output component o: grid = th[o][0] * x + (the row's constant part).
                     C slope[3], constant[3];
                     for (int64_t o = 0; o < spatial; ++o) {
                       const C* t = th + o * (spatial + 1);
                       slope[o] = t[0];
                       constant[o] = spatial == 3 ? t[1] * y + t[2] * z + t[3] : t[1] * y + t[2];
                     }
                     T* out = grid + row * row_len;
                     if (spatial == 2) {
                       for (int64_t w = 0; w < width; ++w) {
                         out[2 * w] = Num<T>::store(slope[0] * xs[w] + constant[0]);
                         out[2 * w + 1] = Num<T>::store(slope[1] * xs[w] + constant[1]);
                       }
                     } else {
                       for (int64_t w = 0; w < width; ++w)
                         for (int o = 0; o < 3; ++o) out[3 * w + o] = Num<T>::store(slope[o] * xs[w] + constant[o]);
                     }
                   }
                 });
  }

  bool align_corners_;
};

}  // namespace

ONNXMINI_REGISTER_KERNEL("affine_grid", "", "AffineGrid", 20, INT_MAX, make_kernel<AffineGridKernel>);

}  // namespace onnxmini

ONNXMINI_KERNEL_FILE(vision_affine_grid);
