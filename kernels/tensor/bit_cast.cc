// BitCast (opset 26): the input's bytes reinterpreted as the `to` type of the
// same width (float32 <-> int32, float16 <-> uint16, bool <-> uint8 / int8,
// ...), same shape. The output is a view of the input's buffer: no copy, no
// value conversion. Strings are refused, and types of different bit widths.
#include "core/minifloat.h"
#include "kernels/registry.h"

namespace onnxmini {

namespace {

// Bits per element: the 4- and 2-bit types are stored one code per byte (the low
// bits; readers mask them), so int4 <-> uint4 <-> float4e2m1 and int2 <-> uint2 are
// views, and uint8 -> int2 is refused as the spec's equal-width rule asks.
int bit_width(DType t) {
  const int packed = packed_bits(t);
  return packed ? packed : static_cast<int>(8 * dtype_size(t));
}

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
    if (bit_width(x.dtype()) != bit_width(to_))
      ctx.fail("input dtype {} ({} bits) and to = {} ({} bits) differ in width", dtype_name(x.dtype()),
               bit_width(x.dtype()), dtype_name(to_), bit_width(to_));
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
