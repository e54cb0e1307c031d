// The `reduction` attribute of ScatterElements and ScatterND (none, add, mul,
// max, min) and the typed combine step they share: out = combine(out, update)
// per element, in the storage type's arithmetic (ew::Num: float16 / bfloat16
// in float32, rounded on store). Bool add / mul are or / and, as in
// onnxruntime; strings and complex values only support `none`.
#pragma once
#include <algorithm>
#include <string>

#include "kernels/elementwise/elementwise.h"

namespace onnxmini {
namespace tensor_ops {

enum class ScatterReduction { None, Add, Mul, Max, Min };

inline ScatterReduction parse_scatter_reduction(const KernelInfo& info) {
  const std::string r = info.attrs.get_string("reduction", "none");
  if (r == "none") return ScatterReduction::None;
  if (r == "add") return ScatterReduction::Add;
  if (r == "mul") return ScatterReduction::Mul;
  if (r == "max" && info.opset >= 18) return ScatterReduction::Max;
  if (r == "min" && info.opset >= 18) return ScatterReduction::Min;
  info.fail("reduction '{}' is not supported at opset {} (none, add, mul; max, min from opset 18)", r, info.opset);
}

template <typename T>
T scatter_combine(ScatterReduction r, const T& a, const T& b) {
  using C = ew::compute_t<T>;
  const C x = ew::Num<T>::load(a), y = ew::Num<T>::load(b);
  if constexpr (std::is_same_v<T, bool>) {
    switch (r) {
      case ScatterReduction::Add: case ScatterReduction::Max: return x || y;
      case ScatterReduction::Mul: case ScatterReduction::Min: return x && y;
      default: return y;
    }
  } else {
    switch (r) {
      case ScatterReduction::Add: return ew::Num<T>::store(static_cast<C>(x + y));
      case ScatterReduction::Mul: return ew::Num<T>::store(static_cast<C>(x * y));
      case ScatterReduction::Max: return ew::Num<T>::store(std::max(x, y));
      case ScatterReduction::Min: return ew::Num<T>::store(std::min(x, y));
      default: return b;
    }
  }
}

// Calls fn(ew::Tag<T>{}) with the storage type of `dt` when `r` needs arithmetic
// (numeric and bool types), or with a same-width type for `none`.
template <typename Fn>
void dispatch_scatter(const KernelContext& ctx, DType dt, ScatterReduction r, Fn&& fn) {
  if (r == ScatterReduction::None) {
    dispatch_by_width(ctx, dt, [&](auto tag) { fn(ew::Tag<decltype(tag)>{}); });
    return;
  }
  if (!ew::visit(ew::concat_t<ew::NumericTypes, ew::BoolTypes>{}, dt, fn))
    ctx.unsupported("reduction on dtype {} is not supported (numeric and bool types only)", dtype_name(dt));
}

}  // namespace tensor_ops
}  // namespace onnxmini
