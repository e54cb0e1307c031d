// BitCast (opset 26): the input's bytes reinterpreted as the `to` type of the
// same width (float32 <-> int32, float16 <-> uint16, bool <-> uint8 / int8,
// ...), same shape. The output is a view of the input's buffer: no copy, no
// value conversion. Strings, and types this runtime does not store (float8,
// 4- and 2-bit types), are refused naming the type.
#include "kernels/registry.h"

namespace onnxmini {

namespace {

class BitCastKernel : public Kernel {
 public:
  explicit BitCastKernel(const KernelInfo& info) {
    const int64_t code = info.attrs.get_int("to");
    if (code < INT32_MIN || code > INT32_MAX || !dtype_is_valid(static_cast<int32_t>(code)))
      info.unsupported("to = {} is not a data type this runtime stores", code);
    to_ = static_cast<DType>(code);
    if (to_ == DType::String) info.fail("to = string is not allowed (BitCast needs a fixed-width type)");
  }

  void prepare(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    if (x.dtype() == DType::String) ctx.fail("input dtype string cannot be bit-cast");
    if (dtype_size(x.dtype()) != dtype_size(to_))
      ctx.fail("input dtype {} ({} bytes) and to = {} ({} bytes) differ in width", dtype_name(x.dtype()),
               dtype_size(x.dtype()), dtype_name(to_), dtype_size(to_));
    ctx.set_output(0, Tensor(to_, x.shape(), x.buffer(), x.offset()));
  }

  void compute(KernelContext&) override {}

 private:
  DType to_ = DType::Undefined;
};

}  // namespace

ONNXMINI_REGISTER_KERNEL("bit_cast", "", "BitCast", 26, INT_MAX, make_kernel<BitCastKernel>);

}  // namespace onnxmini

ONNXMINI_KERNEL_FILE(tensor_bit_cast);
