// StringConcat (opset 20): Y = X + Z element-wise on string tensors, with
// numpy broadcasting (kernels/elementwise/broadcast.h).
// StringSplit (opset 20): splits every string of X with Python's str.split
// semantics: by `delimiter` (each occurrence separates, "" gives one empty
// piece), or, when delimiter is absent or empty, by runs of whitespace
// (leading and trailing runs ignored, "" gives no piece). `maxsplit` (absent
// or negative: no limit) caps the number of splits from the left; the rest of
// the string is the last piece. Outputs: Y = X.shape + [most pieces], padded
// with empty strings, and Z (int64, X.shape) the number of pieces of each.
// Whitespace here is ASCII's (space, \t \n \v \f \r) and \x1c-\x1f, as
// Python's str.split counts them; non-ASCII spaces (U+00A0, ...) are not
// separators.
#include "kernels/elementwise/broadcast.h"
#include "kernels/registry.h"

namespace onnxmini {
namespace strings {
namespace {

class StringConcatKernel : public Kernel {
 public:
  explicit StringConcatKernel(const KernelInfo& info) {
    info.require_dtype(0, {DType::String});
    info.require_dtype(1, {DType::String});
  }
  void prepare(KernelContext& ctx) override {
    const Tensor &x = ctx.input(0), &z = ctx.input(1);
    if (x.dtype() != DType::String || z.dtype() != DType::String)
      ctx.fail("inputs have dtypes {} and {}, want string and string", dtype_name(x.dtype()), dtype_name(z.dtype()));
    Shape out;
    try {
      out = broadcast_shapes({x.shape(), z.shape()});
    } catch (const Error& e) {
      ctx.fail("{}", e.what());
    }
    ctx.allocate_output(0, DType::String, out);
  }
  void compute(KernelContext& ctx) override {
    const Tensor &x = ctx.input(0), &z = ctx.input(1);
    std::string* y = ctx.output(0).mutable_data<std::string>();
    ctx.stats().variant = "string_concat";
    if (ctx.output(0).numel() == 0) return;
    const BroadcastPlan plan({x.shape(), z.shape()});
    const std::string *a = x.data<std::string>(), *b = z.data<std::string>();
    const int64_t sa = plan.inner_stride(0), sb = plan.inner_stride(1);
    std::vector<int64_t> offsets;
    for (int64_t run = 0; run < plan.outer; ++run) {
      plan.run_offsets(run, offsets);
      for (int64_t i = 0; i < plan.inner; ++i) {
        std::string& out = y[run * plan.inner + i];
        const std::string &left = a[offsets[0] + i * sa], &right = b[offsets[1] + i * sb];
        out.reserve(left.size() + right.size());
        out.assign(left).append(right);
      }
    }
  }
};

bool is_split_space(char c) {
  return c == ' ' || (c >= '\t' && c <= '\r') || (c >= '\x1c' && c <= '\x1f');
}

// The pieces of s, Python's s.split(delimiter or None, maxsplit).
std::vector<std::string> split(const std::string& s, const std::string& delimiter, int64_t maxsplit) {
  std::vector<std::string> pieces;
  const bool unlimited = maxsplit < 0;
  if (!delimiter.empty()) {
    size_t start = 0;
    for (;;) {
      const size_t at = unlimited || static_cast<int64_t>(pieces.size()) < maxsplit ? s.find(delimiter, start)
                                                                                    : std::string::npos;
      if (at == std::string::npos) break;
      pieces.push_back(s.substr(start, at - start));
      start = at + delimiter.size();
    }
    pieces.push_back(s.substr(start));
    return pieces;
  }
  size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && is_split_space(s[i])) ++i;
    if (i == s.size()) break;
    if (!unlimited && static_cast<int64_t>(pieces.size()) == maxsplit) {  // the rest, trailing spaces kept
      pieces.push_back(s.substr(i));
      break;
    }
    size_t end = i;
    while (end < s.size() && !is_split_space(s[end])) ++end;
    pieces.push_back(s.substr(i, end - i));
    i = end;
  }
  return pieces;
}

class StringSplitKernel : public Kernel {
 public:
  explicit StringSplitKernel(const KernelInfo& info)
      : delimiter_(info.attrs.get_string("delimiter", "")), maxsplit_(info.attrs.get_int("maxsplit", -1)) {
    info.require_dtype(0, {DType::String});
  }
  void prepare(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    if (x.dtype() != DType::String) ctx.fail("X has dtype {}, want string", dtype_name(x.dtype()));
    // The widest split sizes Y: counted here, split again in compute() (kernels keep no per-run state).
    int64_t widest = 0;
    const std::string* in = x.data<std::string>();
    for (int64_t i = 0; i < x.numel(); ++i)
      widest = std::max<int64_t>(widest, static_cast<int64_t>(split(in[i], delimiter_, maxsplit_).size()));
    Shape y = x.shape();
    y.push_back(widest);
    ctx.check_tensor_size(DType::String, y, "Y");
    ctx.allocate_output(0, DType::String, y);
    if (ctx.num_outputs() > 1 && ctx.output_wanted(1)) ctx.allocate_output(1, DType::Int64, x.shape());
  }
  void compute(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    Tensor& y = ctx.output(0);
    ctx.stats().variant = "string_split";
    const int64_t width = y.dim(y.rank() - 1);
    std::string* out = y.mutable_data<std::string>();
    int64_t* counts = ctx.num_outputs() > 1 && ctx.output_wanted(1) ? ctx.output(1).mutable_data<int64_t>() : nullptr;
    const std::string* in = x.data<std::string>();
    for (int64_t i = 0; i < x.numel(); ++i) {
      std::vector<std::string> pieces = split(in[i], delimiter_, maxsplit_);
      for (int64_t k = 0; k < width; ++k)
        out[i * width + k] = k < static_cast<int64_t>(pieces.size()) ? std::move(pieces[k]) : std::string();
      if (counts) counts[i] = static_cast<int64_t>(pieces.size());
    }
  }

 private:
  std::string delimiter_;
  int64_t maxsplit_;
};

}  // namespace

ONNXMINI_REGISTER_KERNEL("string_concat", "", "StringConcat", 20, INT_MAX, make_kernel<StringConcatKernel>);
ONNXMINI_REGISTER_KERNEL("string_split", "", "StringSplit", 20, INT_MAX, make_kernel<StringSplitKernel>);

}  // namespace strings
}  // namespace onnxmini

ONNXMINI_KERNEL_FILE(string_string_concat_split);
