// Cast (target dtype from attribute `to`: a TensorProto.DataType code, a name such as
// "FLOAT" before opset 6) and CastLike (target dtype of input 1).
// Every pair of numeric types, bool, float16, bfloat16 and string converts:
//  - float -> integer: NaN gives 0, out-of-range values clamp to the limits
//    (C++ leaves both undefined; numpy gives platform-specific values);
//  - integer -> narrower integer wraps (two's complement), as numpy does;
//  - anything -> bool: value != 0 (NaN is true);
//  - float16/bfloat16 go through float, rounding to nearest even;
//  - number -> string: shortest text that reads back to the same value
//    ("0.1", "1e-05", "nan", "inf"); string -> number: strtod/strtoll, failing
//    on text that is not a number.
//  - float8 / float4e2m1 (core/minifloat.h) go through float: to them rounds to
//    nearest even and, with `saturate` (default 1), clamps to the type's range,
//    otherwise overflows give inf / NaN as the ONNX table says; from them gives
//    their float value (then the float rules above);
//  - int4 / uint4 / int2 / uint2: truncate toward zero (NaN -> 0) and keep the
//    low 4 / 2 bits (wrap, as the integer narrowing above, onnxruntime and the
//    ONNX reference (ml_dtypes) do, floats too: 3.0 -> int2 gives -1);
//  - float8e8m0 (exponent only, core/minifloat.h): from it gives 2^(e - 127) or
//    NaN; to it goes through float32 and rounds per the `round_mode` attribute
//    (opset 24: "up" default, "down", "nearest") with `saturate` keeping
//    round-ups from 2^127 there instead of NaN, bit for bit as onnx's reference;
//    strings do not convert to or from the 8-, 4- and 2-bit types.
// Data layout: dense input and output of one shape; numeric casts are one flat
// loop split across threads, string casts run on one thread.
#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <string>
#include <type_traits>

#include "core/minifloat.h"
#include "kernels/elementwise/elementwise.h"
#include "kernels/registry.h"

namespace onnxmini {
namespace ew {
namespace {

using CastTypes = concat_t<NumericTypes, BoolTypes>;  // strings handled separately

template <class TO, class TI>
TO convert(const TI& v) {
  if constexpr (std::is_same<TO, TI>::value) {
    return v;
  } else {
    const auto c = Num<TI>::load(v);  // float for float16/bfloat16
    using C = decltype(c);
    if constexpr (std::is_same<TO, bool>::value) return c != C(0);
    else if constexpr (std::is_integral<TO>::value && std::is_floating_point<C>::value) return saturate_cast<TO>(c);
    else return Num<TO>::store(static_cast<compute_t<TO>>(c));
  }
}

template <class T>
std::string to_text(const T& v) {
  if constexpr (std::is_same<T, bool>::value) return v ? "True" : "False";  // numpy's spelling
  else if constexpr (std::is_same<T, int8_t>::value || std::is_same<T, uint8_t>::value) return fmt::format("{}", int(v));
  else return fmt::format("{}", Num<T>::load(v));
}

// Parses `s` as T; false when it is not a number.
template <class T>
bool from_text(const std::string& s, T* out) {
  const char* begin = s.c_str();
  char* end = nullptr;
  errno = 0;
  if constexpr (std::is_same<T, bool>::value) {
    if (s == "True" || s == "true" || s == "False" || s == "false") {
      *out = s[0] == 'T' || s[0] == 't';
      return true;
    }
    const double d = std::strtod(begin, &end);
    *out = d != 0;
  } else if constexpr (std::is_integral<T>::value && std::is_signed<T>::value) {
    *out = static_cast<T>(std::strtoll(begin, &end, 10));
  } else if constexpr (std::is_integral<T>::value) {
    *out = static_cast<T>(std::strtoull(begin, &end, 10));
  } else {
    *out = Num<T>::store(static_cast<compute_t<T>>(std::strtod(begin, &end)));
  }
  return end != begin && *end == '\0' && errno != ERANGE;
}

bool is_small_type(DType t) { return is_minifloat(t) || is_int4(t) || is_int2(t) || t == DType::Float8E8M0; }

// Element i of x as a double; *integral tells whether x is an integer / bool type.
double small_cast_source(const Tensor& x, int64_t i, bool* integral) {
  const DType t = x.dtype();
  *integral = !(t == DType::Float32 || t == DType::Float64 || t == DType::Float16 || t == DType::BFloat16 ||
                is_minifloat(t) || t == DType::Float8E8M0);
  if (t == DType::Bool) return cdata<bool>(x)[i] ? 1.0 : 0.0;
  return x.get_as_double(i);
}

// Casts where either side is a float8 / float4 / int4 / int2 type, one element at a time.
void cast_small(KernelContext& ctx, const Tensor& x, Tensor& y, bool saturate, E8M0Rounding rounding) {
  const DType to = y.dtype();
  const int64_t n = x.numel();
  if (to == DType::Float8E8M0) {
    uint8_t* py = static_cast<uint8_t*>(y.raw_mut());
    parallel_for(ctx.threads(), n, kGrain, [&](int64_t b, int64_t e) {
      bool integral;
      for (int64_t i = b; i < e; ++i)
        py[i] = float_to_e8m0(static_cast<float>(small_cast_source(x, i, &integral)), rounding, saturate);
    });
    return;
  }
  if (const MiniFloatFormat* f = minifloat_format(to)) {
    uint8_t* py = static_cast<uint8_t*>(y.raw_mut());
    parallel_for(ctx.threads(), n, kGrain, [&](int64_t b, int64_t e) {
      bool integral;
      for (int64_t i = b; i < e; ++i)
        py[i] = float_to_minifloat(static_cast<float>(small_cast_source(x, i, &integral)), *f, saturate);
    });
    return;
  }
  if (is_int4(to) || is_int2(to)) {
    const uint8_t mask = is_int4(to) ? 0x0F : 0x03;
    uint8_t* py = static_cast<uint8_t*>(y.raw_mut());
    parallel_for(ctx.threads(), n, kGrain, [&](int64_t b, int64_t e) {
      bool integral;
      for (int64_t i = b; i < e; ++i) {
        const double v = small_cast_source(x, i, &integral);
        // Out-of-int64 floats and NaN: 0 (their low bits are meaningless).
        const int64_t q = std::isfinite(v) && std::fabs(v) < 9.2e18 ? static_cast<int64_t>(v) : 0;
        py[i] = static_cast<uint8_t>(q & mask);
      }
    });
    return;
  }
  visit(CastTypes{}, to, [&](auto to_tag) {
    using TO = typename decltype(to_tag)::type;
    TO* py = mdata<TO>(y);
    parallel_for(ctx.threads(), n, kGrain, [&](int64_t b, int64_t e) {
      bool integral;
      for (int64_t i = b; i < e; ++i) {
        const double v = small_cast_source(x, i, &integral);
        if constexpr (std::is_same<TO, bool>::value) py[i] = v != 0;
        else if constexpr (std::is_integral<TO>::value) py[i] = integral ? static_cast<TO>(static_cast<int64_t>(v))
                                                                          : saturate_cast<TO>(static_cast<float>(v));
        else py[i] = Num<TO>::store(static_cast<compute_t<TO>>(v));
      }
    });
  });
}

// Converts `x` into the already allocated `y` (dtype decides the target).
void cast_tensor(KernelContext& ctx, const Tensor& x, Tensor& y, bool saturate = true,
                 E8M0Rounding rounding = E8M0Rounding::Up) {
  const DType from = x.dtype(), to = y.dtype();
  const int64_t n = x.numel();
  if (is_small_type(from) || is_small_type(to)) {
    if (from == DType::String || to == DType::String)
      ctx.unsupported("cannot cast between {} and {}", dtype_name(from), dtype_name(to));
    if (from == to) {  // a copy: going through float would move e8m0's 2^-127 ("up" on a subnormal)
      std::copy_n(static_cast<const uint8_t*>(x.raw()), n, static_cast<uint8_t*>(y.raw_mut()));
      return;
    }
    return cast_small(ctx, x, y, saturate, rounding);
  }
  if (from == DType::String && to == DType::String) {
    for (int64_t i = 0; i < n; ++i) mdata<std::string>(y)[i] = cdata<std::string>(x)[i];
    return;
  }
  if (from == DType::String) {
    visit(CastTypes{}, to, [&](auto tag) {
      using TO = typename decltype(tag)::type;
      const std::string* px = cdata<std::string>(x);
      for (int64_t i = 0; i < n; ++i)
        if (!from_text(px[i], mdata<TO>(y) + i))
          ctx.fail("cannot convert string '{}' (element {}) to {}", px[i], i, dtype_name(to));
    });
    return;
  }
  if (to == DType::String) {
    visit(CastTypes{}, from, [&](auto tag) {
      using TI = typename decltype(tag)::type;
      for (int64_t i = 0; i < n; ++i) mdata<std::string>(y)[i] = to_text(cdata<TI>(x)[i]);
    });
    return;
  }
  // float32 <-> float16 / bfloat16, the Casts at the edges of float16 models: SIMD rows
  // (F16C), the same bits as convert<> (widening is exact, narrowing rounds to nearest even).
  if (!ctx.reference_mode() && (from == DType::Float32 || to == DType::Float32) &&
      (simd::is_half_dtype(from) || simd::is_half_dtype(to))) {
    parallel_for(ctx.threads(), n, kGrain, [&](int64_t b, int64_t e) {
      if (from == DType::Float32) simd::narrow_half_row(to, cdata<float>(x) + b, mdata<uint16_t>(y) + b, e - b);
      else simd::widen_half_row(from, cdata<uint16_t>(x) + b, mdata<float>(y) + b, e - b);
    });
    return;
  }
  visit(CastTypes{}, from, [&](auto ti) {
    using TI = typename decltype(ti)::type;
    visit(CastTypes{}, to, [&](auto to_tag) {
      using TO = typename decltype(to_tag)::type;
      const auto f = [](const TI& v) { return convert<TO>(v); };
      const TI* px = cdata<TI>(x);
      TO* py = mdata<TO>(y);
      if (ctx.reference_mode()) {
        for (int64_t i = 0; i < n; ++i) py[i] = f(px[i]);
      } else {
        parallel_for(ctx.threads(), n, kGrain, [&](int64_t b, int64_t e) {
          for (int64_t i = b; i < e; ++i) py[i] = f(px[i]);
        });
      }
    });
  });
}

bool castable(DType t) { return t == DType::String || is_small_type(t) || visit(CastTypes{}, t, [](auto) {}); }

// Cast 1-5 names the target type as a string, TensorProto.DataType's enum name ("FLOAT");
// returns its code, or -1 for a name that type set does not have.
int64_t data_type_code(const std::string& name) {
  static const char* const names[] = {"UNDEFINED", "FLOAT", "UINT8", "INT8", "UINT16", "INT16", "INT32", "INT64",
                                      "STRING", "BOOL", "FLOAT16", "DOUBLE", "UINT32", "UINT64", "COMPLEX64",
                                      "COMPLEX128", "BFLOAT16", "FLOAT8E4M3FN", "FLOAT8E4M3FNUZ", "FLOAT8E5M2",
                                      "FLOAT8E5M2FNUZ", "UINT4", "INT4", "FLOAT4E2M1", "FLOAT8E8M0", "UINT2", "INT2"};
  for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); ++i)
    if (name == names[i]) return static_cast<int64_t>(i);
  return -1;
}

class CastKernel : public Kernel {
 public:
  explicit CastKernel(const KernelInfo& info)
      : like_(info.op_type == "CastLike"), saturate_(info.attrs.get_int("saturate", 1) != 0) {
    const std::string round_mode = info.attrs.get_string("round_mode", "up");
    if (round_mode == "up") rounding_ = E8M0Rounding::Up;
    else if (round_mode == "down") rounding_ = E8M0Rounding::Down;
    else if (round_mode == "nearest") rounding_ = E8M0Rounding::Nearest;
    else info.fail("round_mode = '{}' is not one of 'up', 'down', 'nearest'", round_mode);
    if (like_) return;
    int64_t code = 0;
    if (info.opset < 6) {
      const std::string name = info.attrs.get_string("to");
      code = data_type_code(name);
      if (code < 0) info.fail("to = '{}' is not a TensorProto.DataType name (e.g. FLOAT, INT64)", name);
    } else {
      code = info.attrs.get_int("to");
    }
    if (code <= 0 || code > 26 || !castable(static_cast<DType>(code)))
      info.unsupported("cast to type {} ({}) is not supported", code,
                       dtype_is_valid(static_cast<int32_t>(code)) ? dtype_name(static_cast<DType>(code)) : "unknown");
    to_ = static_cast<DType>(code);
  }

  void prepare(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    const DType to = like_ ? ctx.input(1).dtype() : to_;
    if (!castable(x.dtype())) ctx.unsupported("cannot cast from {}", dtype_name(x.dtype()));
    if (!castable(to)) ctx.unsupported("cannot cast to {}", dtype_name(to));
    ctx.allocate_output(0, to, x.shape());
  }

  void compute(KernelContext& ctx) override {
    cast_tensor(ctx, ctx.input(0), ctx.output(0), saturate_, rounding_);
  }

 private:
  bool like_, saturate_;
  E8M0Rounding rounding_ = E8M0Rounding::Up;
  DType to_ = DType::Undefined;
};

}  // namespace

// Cast 1 took `to` as a string, 6+ as an int; later versions added types
// (bfloat16 in 13, float8 in 19, int4 in 21, float8e8m0 in 24, int2 in 25, ...),
// `saturate` (19) and `round_mode` (24).
ONNXMINI_REGISTER_KERNEL("cast", "", "Cast", 1, INT_MAX, make_kernel<CastKernel>);
ONNXMINI_REGISTER_KERNEL("cast", "", "CastLike", 15, INT_MAX, make_kernel<CastKernel>);

}  // namespace ew
}  // namespace onnxmini

ONNXMINI_KERNEL_FILE(elementwise_cast);
