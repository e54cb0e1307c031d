// StringNormalizer (opset 10), as the ONNX spec and onnxruntime define it:
// X is a string tensor [C] or [1, C]; elements equal to one of `stopwords`
// are removed (compared after lower-casing both when is_case_sensitive = 0,
// the default), then the survivors are lower-cased, upper-cased or kept
// (case_change_action LOWER / UPPER / NONE). Output [C'] or [1, C']; when
// nothing survives, one empty string ([1] or [1, 1]).
//
// Case mapping is per Unicode code point through std::ctype<wchar_t> of the
// `locale` attribute (tried as given, then with ".UTF-8"); when the machine
// lacks that locale, C.UTF-8 is used, whose mapping is Unicode's simple
// (locale-independent) one: language rules such as Turkish dotted i then do
// not apply. Strings must be valid UTF-8 (a bad one fails naming the element).
// (onnx's Python reference differs: it also strips accents and removes stop
// words inside strings; we follow the spec and onnxruntime.)
#include <locale>
#include <unordered_set>

#include "kernels/registry.h"
#include "kernels/string/utf8.h"

namespace onnxmini {
namespace strings {
namespace {

enum class CaseChange { None, Lower, Upper };

std::locale load_locale(const std::string& name) {
  for (const std::string& candidate : {name, name + ".UTF-8", name + ".utf8", std::string("C.UTF-8"), std::string("C.utf8")}) {
    if (candidate.empty() || candidate == ".UTF-8" || candidate == ".utf8") continue;
    try {
      return std::locale(candidate);
    } catch (const std::runtime_error&) {
    }
  }
  return std::locale::classic();
}

class StringNormalizerKernel : public Kernel {
 public:
  explicit StringNormalizerKernel(const KernelInfo& info)
      : case_sensitive_(info.attrs.get_int("is_case_sensitive", 0) != 0),
        locale_(load_locale(info.attrs.get_string("locale", "en_US"))),
        ctype_(&std::use_facet<std::ctype<wchar_t>>(locale_)) {
    const std::string action = info.attrs.get_string("case_change_action", "NONE");
    if (action == "LOWER") action_ = CaseChange::Lower;
    else if (action == "UPPER") action_ = CaseChange::Upper;
    else if (action != "NONE") info.fail("case_change_action '{}' is not one of LOWER, UPPER, NONE", action);
    for (const std::string& w : info.attrs.get_strings("stopwords", {})) {
      if (case_sensitive_) {
        stopwords_.insert(w);
      } else {
        auto lowered = change_case(w, CaseChange::Lower);
        if (!lowered) info.fail("stopword '{}' is not valid UTF-8", w);
        stopwords_.insert(*lowered);
      }
    }
    info.require_dtype(0, {DType::String});
  }

  void prepare(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    if (x.dtype() != DType::String) ctx.fail("X has dtype {}, want string", dtype_name(x.dtype()));
    if (!(x.rank() == 1 || (x.rank() == 2 && x.dim(0) == 1)))
      ctx.fail("X has shape {}, want [C] or [1, C]", shape_to_string(x.shape()));
    // The output length depends on the data: the stopword filter runs here to size the output
    // and again in compute() (cheap next to the case change; kernels keep no per-run state).
    const int64_t n = std::max<int64_t>(1, static_cast<int64_t>(surviving(ctx).size()));
    ctx.allocate_output(0, DType::String, x.rank() == 1 ? Shape{n} : Shape{1, n});
  }

  void compute(KernelContext& ctx) override {
    const std::string* in = ctx.input(0).data<std::string>();
    std::string* out = ctx.output(0).mutable_data<std::string>();
    ctx.stats().variant = "string_normalizer";
    const std::vector<int64_t> kept = surviving(ctx);
    if (kept.empty()) out[0].clear();
    for (size_t k = 0; k < kept.size(); ++k) {
      auto changed = change_case(in[kept[k]], action_);
      if (!changed) ctx.fail("X[{}] is not valid UTF-8", kept[k]);
      out[k] = std::move(*changed);
    }
  }

 private:
  // Indices of the elements of X that are not stop words.
  std::vector<int64_t> surviving(const KernelContext& ctx) const {
    const Tensor& x = ctx.input(0);
    const std::string* in = x.data<std::string>();
    std::vector<int64_t> kept;
    for (int64_t i = 0; i < x.numel(); ++i) {
      if (stopwords_.empty()) {
        kept.push_back(i);
        continue;
      }
      std::string key = in[i];
      if (!case_sensitive_) {
        auto lowered = change_case(in[i], CaseChange::Lower);
        if (!lowered) ctx.fail("X[{}] is not valid UTF-8", i);
        key = std::move(*lowered);
      }
      if (stopwords_.count(key) == 0) kept.push_back(i);
    }
    return kept;
  }

  std::optional<std::string> change_case(const std::string& s, CaseChange how) const {
    if (how == CaseChange::None) return s;
    auto cps = utf8_decode(s);
    if (!cps) return std::nullopt;
    for (char32_t& c : *cps) {
      const wchar_t w = static_cast<wchar_t>(c);
      c = static_cast<char32_t>(how == CaseChange::Lower ? ctype_->tolower(w) : ctype_->toupper(w));
    }
    return utf8_encode(*cps);
  }

  bool case_sensitive_;
  CaseChange action_ = CaseChange::None;
  std::locale locale_;
  const std::ctype<wchar_t>* ctype_;
  std::unordered_set<std::string> stopwords_;
};

}  // namespace

ONNXMINI_REGISTER_KERNEL("string_normalizer", "", "StringNormalizer", 10, INT_MAX,
                         make_kernel<StringNormalizerKernel>);

}  // namespace strings
}  // namespace onnxmini

ONNXMINI_KERNEL_FILE(string_string_normalizer);
