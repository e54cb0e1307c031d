// RegexFullMatch (opset 20): Y[i] = whether all of X[i] matches `pattern`
// (bool, X's shape). ONNX specifies RE2 syntax; this kernel runs std::regex
// (ECMAScript grammar) and accepts only the patterns on which the two agree,
// refusing the rest at session creation, naming the construct:
//   - RE2-only syntax we cannot honour: (?i) and other inline flags, named
//     groups (?P<n>...) / (?<n>...), \A \z \Q..\E \C \p{..} \P{..} \x{..};
//   - ECMAScript-only syntax RE2 rejects: lookahead (?= (?!, lookbehind,
//     back-references \1..\9, \u escapes.
// std::regex matches bytes while RE2 matches UTF-8 code points, so a
// pattern that can consume "any" character ('.', a negated class [^..], \W
// \S \D) would differ on multi-byte characters: such a pattern fails at run
// time on a string with non-ASCII bytes instead of answering differently.
// libstdc++'s default matcher backtracks (exponential time on patterns such
// as (a+)+b) and recurses per input character; since back-references are
// refused, the kernel asks libstdc++ for its breadth-first (Thompson-style)
// executor (regex_constants::__polynomial), whose time is polynomial in the
// input, like RE2's. Strings longer than kMaxLength bytes are still refused.
#include <regex>

#include "kernels/registry.h"

namespace onnxmini {
namespace strings {
namespace {

constexpr size_t kMaxLength = 20000;
#ifdef __GLIBCXX__
// Breadth-first matching (no back-references, which check_pattern refuses): polynomial time.
constexpr auto kSyntax = std::regex::ECMAScript | std::regex_constants::__polynomial;
#else
constexpr auto kSyntax = std::regex::ECMAScript;
#endif

struct PatternCheck {
  std::string refused;          // the construct we refuse, empty when the pattern is fine
  bool byte_sensitive = false;  // '.', [^...], \W \S \D: differs from RE2 on multi-byte UTF-8
};

PatternCheck check_pattern(const std::string& p) {
  PatternCheck c;
  bool in_class = false;
  for (size_t i = 0; i < p.size() && c.refused.empty(); ++i) {
    const char ch = p[i];
    if (ch == '\\') {
      if (i + 1 >= p.size()) {
        c.refused = "a trailing backslash";
        break;
      }
      const char e = p[++i];
      if (e >= '1' && e <= '9') c.refused = std::string("the back-reference \\") + e + " (RE2 has none)";
      else if (std::string("AzQECpPu").find(e) != std::string::npos) c.refused = std::string("the escape \\") + e;
      else if (e == 'x' && i + 1 < p.size() && p[i + 1] == '{') c.refused = "the escape \\x{...}";
      else if (e == 'W' || e == 'S' || e == 'D') c.byte_sensitive = true;
      continue;
    }
    if (in_class) {
      if (ch == ']') in_class = false;
      continue;
    }
    if (ch == '[') {
      in_class = true;
      if (i + 1 < p.size() && p[i + 1] == '^') c.byte_sensitive = true;
      if (i + 1 < p.size() && p[i + 1] == ']') ++i;  // a leading ']' is a literal
      continue;
    }
    if (ch == '.') c.byte_sensitive = true;
    if (ch == '(' && i + 1 < p.size() && p[i + 1] == '?') {
      if (i + 2 < p.size() && p[i + 2] == ':') continue;
      c.refused = "the group syntax '" + p.substr(i, std::min<size_t>(4, p.size() - i)) +
                  "' (only (?:...) is shared by RE2 and ECMAScript)";
    }
  }
  return c;
}

class RegexFullMatchKernel : public Kernel {
 public:
  explicit RegexFullMatchKernel(const KernelInfo& info) : pattern_(info.attrs.get_string("pattern")) {
    const PatternCheck c = check_pattern(pattern_);
    if (!c.refused.empty())
      info.unsupported("pattern '{}' uses {}: RE2 syntax is run with std::regex here, which cannot honour it",
                       pattern_, c.refused);
    byte_sensitive_ = c.byte_sensitive;
    try {
      regex_ = std::regex(pattern_, kSyntax);
    } catch (const std::regex_error& e) {
      info.fail("pattern '{}' is not a valid regular expression: {}", pattern_, e.what());
    }
    info.require_dtype(0, {DType::String});
  }

  void prepare(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    if (x.dtype() != DType::String) ctx.fail("X has dtype {}, want string", dtype_name(x.dtype()));
    ctx.allocate_output(0, DType::Bool, x.shape());
  }

  void compute(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    bool* y = ctx.output(0).mutable_data<bool>();
    ctx.stats().variant = "regex_std";
    const std::string* in = x.data<std::string>();
    for (int64_t i = 0; i < x.numel(); ++i) {
      const std::string& s = in[i];
      if (s.size() > kMaxLength)
        ctx.fail("X[{}] has {} bytes; the std::regex matcher is limited to {}", i, s.size(), kMaxLength);
      if (byte_sensitive_)
        for (unsigned char ch : s)
          if (ch >= 0x80)
            ctx.unsupported("X[{}] has non-ASCII text and pattern '{}' can match single characters ('.', [^..], "
                            "\\W, \\S or \\D): std::regex would see bytes where RE2 sees UTF-8 characters",
                            i, pattern_);
      try {
        y[i] = std::regex_match(s, regex_);
      } catch (const std::regex_error& e) {
        ctx.fail("matching X[{}] against '{}' failed: {}", i, pattern_, e.what());
      }
    }
  }

 private:
  std::string pattern_;
  bool byte_sensitive_ = false;
  std::regex regex_;
};

}  // namespace

ONNXMINI_REGISTER_KERNEL("regex_full_match", "", "RegexFullMatch", 20, INT_MAX, make_kernel<RegexFullMatchKernel>);

}  // namespace strings
}  // namespace onnxmini

ONNXMINI_KERNEL_FILE(string_regex_full_match);
