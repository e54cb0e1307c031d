// Optional, OptionalHasElement, OptionalGetElement (opset 15+). An optional is
// a Value of Kind::Optional (include/onnxmini/value.h): Optional() with no
// input makes an empty one, which is present (not a missing input).
// OptionalHasElement and OptionalGetElement take a plain tensor or sequence as
// an element at every opset, not only from 18 as the schema says: a Loop
// carrying an optional gets the body's plain output back from iteration 1 on
// (the node test test_loop16_seq_none, opset 16, relies on it, and onnxruntime
// runs it). A missing input is allowed (no element) from opset 18.
#include "kernels/registry.h"

namespace onnxmini {
namespace {

class OptionalKernel : public Kernel {
 public:
  explicit OptionalKernel(const KernelInfo&) {}
  void prepare(KernelContext& ctx) override {
    if (!ctx.has_input(0)) return ctx.set_output(0, Value::optional());
    const Value& v = ctx.input_value(0);
    if (v.is_optional()) ctx.fail("input is {}: an optional cannot hold an optional", v.type_string());
    ctx.set_output(0, Value::optional(v));
  }
  void compute(KernelContext&) override {}
};

// The input's element when there is one: an optional's element, or a plain input itself.
const Value* element_of(const KernelContext& ctx, int opset) {
  if (!ctx.has_input(0)) {
    if (opset < 18) ctx.fail("input 0 is missing");
    return nullptr;
  }
  const Value& v = ctx.input_value(0);
  if (v.is_optional()) return v.has_element() ? &v.optional_element() : nullptr;
  return &v;
}

class OptionalHasElementKernel : public Kernel {
 public:
  explicit OptionalHasElementKernel(const KernelInfo& info) : opset_(info.opset) {}
  void prepare(KernelContext& ctx) override {
    const bool has = element_of(ctx, opset_) != nullptr;
    ctx.allocate_output(0, DType::Bool, {}).mutable_data<bool>()[0] = has;
  }
  void compute(KernelContext&) override {}

 private:
  int opset_;
};

class OptionalGetElementKernel : public Kernel {
 public:
  explicit OptionalGetElementKernel(const KernelInfo& info) : opset_(info.opset) {}
  void prepare(KernelContext& ctx) override {
    const Value* e = element_of(ctx, opset_);
    if (!e) ctx.fail("the optional is empty: it has no element to get");
    ctx.set_output(0, *e);
  }
  void compute(KernelContext&) override {}

 private:
  int opset_;
};

}  // namespace

ONNXMINI_REGISTER_KERNEL("optional", "", "Optional", 15, INT_MAX, make_kernel<OptionalKernel>);
ONNXMINI_REGISTER_KERNEL("optional_has_element", "", "OptionalHasElement", 15, INT_MAX,
                         make_kernel<OptionalHasElementKernel>);
ONNXMINI_REGISTER_KERNEL("optional_get_element", "", "OptionalGetElement", 15, INT_MAX,
                         make_kernel<OptionalGetElementKernel>);

}  // namespace onnxmini

ONNXMINI_KERNEL_FILE(sequence_optional);
