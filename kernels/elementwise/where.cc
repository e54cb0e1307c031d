// Where(condition, X, Y): y = condition ? X : Y, all three broadcast together
// (numpy rules), any dtype for X and Y (string included), bool condition.
// Data layout: a three-input BroadcastPlan; in each contiguous run every
// operand advances by 0 or 1 element. The common case (all three full-size)
// gets its own unit-stride loop; the others index with the 0/1 strides.
#include <string>

#include "kernels/elementwise/elementwise.h"
#include "kernels/registry.h"

namespace onnxmini {
namespace ew {
namespace {

template <typename T>
void where_fast(const BroadcastPlan& plan, const bool* c, const T* x, const T* y, T* out, ThreadPool* pool) {
  const int64_t sc = plan.inner_stride(0), sx = plan.inner_stride(1), sy = plan.inner_stride(2);
  for_each_piece(plan, pool, [&](const int64_t* off, int64_t n, int64_t o) {
    const bool* pc = c + off[0];
    const T* px = x + off[1];
    const T* py = y + off[2];
    T* po = out + o;
    if (sc && sx && sy) {
      for (int64_t i = 0; i < n; ++i) po[i] = pc[i] ? px[i] : py[i];
    } else {
      for (int64_t i = 0; i < n; ++i) po[i] = pc[i * sc] ? px[i * sx] : py[i * sy];
    }
  });
}

// Every output element looks up its three inputs with the broadcasting index math.
template <typename T>
void where_reference(const Shape& out_shape, const Tensor& c, const Tensor& x, const Tensor& y, T* out) {
  const int64_t n = shape_numel(out_shape);
  for (int64_t i = 0; i < n; ++i) {
    const bool cond = cdata<bool>(c)[broadcast_offset(out_shape, c.shape(), i)];
    out[i] = cond ? cdata<T>(x)[broadcast_offset(out_shape, x.shape(), i)]
                  : cdata<T>(y)[broadcast_offset(out_shape, y.shape(), i)];
  }
}

class WhereKernel : public Kernel {
 public:
  using Types = AllTypes;
  explicit WhereKernel(const KernelInfo&) {}

  void prepare(KernelContext& ctx) override {
    const Tensor& c = ctx.input(0);
    const Tensor& x = ctx.input(1);
    const Tensor& y = ctx.input(2);
    if (c.dtype() != DType::Bool) ctx.fail("condition has dtype {}, expected bool", dtype_name(c.dtype()));
    if (x.dtype() != y.dtype())
      ctx.fail("X and Y have different dtypes ({} and {})", dtype_name(x.dtype()), dtype_name(y.dtype()));
    if (!visit(Types{}, x.dtype(), [](auto) {}))
      ctx.unsupported("X has dtype {}; supported: {}", dtype_name(x.dtype()), type_names(Types{}));
    ctx.allocate_output(0, x.dtype(), broadcast_or_fail(ctx, {c.shape(), x.shape(), y.shape()}));
  }

  void compute(KernelContext& ctx) override {
    const Tensor& c = ctx.input(0);
    const Tensor& x = ctx.input(1);
    const Tensor& y = ctx.input(2);
    Tensor& out = ctx.output(0);
    visit(Types{}, x.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      if (ctx.reference_mode()) {
        where_reference(out.shape(), c, x, y, mdata<T>(out));
      } else {
        BroadcastPlan plan({c.shape(), x.shape(), y.shape()});
        where_fast(plan, cdata<bool>(c), cdata<T>(x), cdata<T>(y), mdata<T>(out), ctx.threads());
      }
    });
  }
};

}  // namespace

// Opset 9; 16 only added bfloat16.
ONNXMINI_REGISTER_KERNEL("where", "", "Where", 9, INT_MAX, make_kernel<WhereKernel>);

}  // namespace ew
}  // namespace onnxmini

ONNXMINI_KERNEL_FILE(elementwise_where);
