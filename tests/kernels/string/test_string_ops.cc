// String ops: StringNormalizer (stopwords with and without case, UTF-8 case
// change, all-removed shapes), StringConcat (broadcasting), StringSplit
// (Python str.split semantics, checked on cases whose Python results are
// written out), RegexFullMatch (matches, refused RE2 / ECMAScript
// differences, byte-vs-UTF-8 guard), TfIdfVectorizer (TF / IDF / TFIDF,
// skip-grams, int and string pools) against counts worked out by hand.
#include <gtest/gtest.h>

#include "tests/common/op_test_util.h"

namespace onnxmini {
namespace test {
namespace {

Tensor strs(const Shape& s, const std::vector<std::string>& v) { return Tensor::from_vector<std::string>(s, v); }
std::vector<std::string> items(const Tensor& t) {
  return std::vector<std::string>(t.data<std::string>(), t.data<std::string>() + t.numel());
}
using Strings = std::vector<std::string>;
std::vector<float> values_of_float(const Tensor& t) { return std::vector<float>(t.data<float>(), t.data<float>() + t.numel()); }

TEST(StringNormalizer, StopwordsAndCase) {
  const Tensor x = strs({6}, {"Monday", "tuesday", "THE", "the", "Straße", "Émile"});
  auto setup = [](const char* action, int64_t sensitive) {
    return [=](NodeBuilder& n) {
      n.attr("case_change_action", action).attr("is_case_sensitive", sensitive).attr("stopwords", Strings{"the", "monday"});
    };
  };
  Tensor y = run_op(10, "StringNormalizer", {x}, setup("UPPER", 0));
  EXPECT_EQ(items(y), (Strings{"TUESDAY", "STRAßE", "ÉMILE"}));  // simple (one code point) mapping: ß stays
  y = run_op(10, "StringNormalizer", {x}, setup("LOWER", 1));
  EXPECT_EQ(items(y), (Strings{"monday", "tuesday", "the", "straße", "émile"}));  // case-sensitive: only "the" and "monday" exact
  EXPECT_EQ(y.shape(), (Shape{5}));
  const Tensor row = strs({1, 2}, {"the", "THE"});
  y = run_op(10, "StringNormalizer", {row}, setup("NONE", 0));
  EXPECT_EQ(y.shape(), (Shape{1, 1}));
  EXPECT_EQ(items(y), Strings{""});
  EXPECT_NE(op_error(10, "StringNormalizer", {strs({2, 2}, {"a", "b", "c", "d"})}).find("want [C] or [1, C]"), std::string::npos);
  EXPECT_NE(op_error(10, "StringNormalizer", {strs({1}, {"\xff"})}, setup("LOWER", 1)).find("X[0] is not valid UTF-8"),
            std::string::npos);
  EXPECT_NE(op_error(10, "StringNormalizer", {x}, [](NodeBuilder& n) { n.attr("case_change_action", "TITLE"); })
                .find("case_change_action 'TITLE'"),
            std::string::npos);
}

TEST(StringConcat, Broadcasts) {
  const Tensor y = run_op(20, "StringConcat", {strs({2, 1}, {"a", "b"}), strs({3}, {"x", "yy", ""})});
  EXPECT_EQ(y.shape(), (Shape{2, 3}));
  EXPECT_EQ(items(y), (Strings{"ax", "ayy", "a", "bx", "byy", "b"}));
  EXPECT_NE(op_error(20, "StringConcat", {strs({2}, {"a", "b"}), strs({3}, {"x", "y", "z"})}).find("broadcast"), std::string::npos);
}

TEST(StringSplit, PythonSemantics) {
  // Python: "a,b,,c".split(",") = ['a', 'b', '', 'c']; "".split(",") = ['']; "x".split(",") = ['x'].
  const Tensor x = strs({3}, {"a,b,,c", "", "x"});
  auto comma = [](NodeBuilder& n) { n.attr("delimiter", ","); };
  auto one = [](int64_t maxsplit) { return [=](NodeBuilder& n) { n.attr("delimiter", ",").attr("maxsplit", maxsplit); }; };
  ModelBuilder mb(20);
  mb.input("X", DType::String, {3});
  mb.node("StringSplit", {"X"}, {"Y", "Z"}).attr("delimiter", ",");
  mb.output("Y");
  mb.output("Z");
  auto s = mb.session();
  auto outs = run_all(*s, {{"X", x}});
  EXPECT_EQ(outs[0].shape(), (Shape{3, 4}));
  EXPECT_EQ(items(outs[0]), (Strings{"a", "b", "", "c", "", "", "", "", "x", "", "", ""}));
  EXPECT_EQ(outs[1].to_int64_vector(), (std::vector<int64_t>{4, 1, 1}));
  // "a,b,,c".split(",", 1) = ['a', 'b,,c']
  EXPECT_EQ(items(run_op(20, "StringSplit", {strs({1}, {"a,b,,c"})}, one(1))), (Strings{"a", "b,,c"}));
  // Whitespace: "  a \t b  c ".split() = ['a', 'b', 'c']; "   ".split() = []; .split(None, 1) = ['a', 'b  c '].
  const Tensor w = strs({2}, {"  a \t b  c ", "   "});
  const Tensor ws = run_op(20, "StringSplit", {w});
  EXPECT_EQ(ws.shape(), (Shape{2, 3}));
  EXPECT_EQ(items(ws), (Strings{"a", "b", "c", "", "", ""}));
  EXPECT_EQ(items(run_op(20, "StringSplit", {strs({1}, {"  a \t b  c "})}, [](NodeBuilder& n) { n.attr("maxsplit", int64_t{1}); })),
            (Strings{"a", "b  c "}));
  EXPECT_EQ(items(run_op(20, "StringSplit", {strs({1}, {"a::b::c"})}, [](NodeBuilder& n) { n.attr("delimiter", "::"); })),
            (Strings{"a", "b", "c"}));
  (void)comma;
}

TEST(RegexFullMatch, MatchesAndRefusals) {
  const Tensor x = strs({4}, {"www.google.com", "www.facebook.com", "www.bbc.co.uk", "google.com"});
  const Tensor y = run_op(20, "RegexFullMatch", {x}, [](NodeBuilder& n) { n.attr("pattern", R"(www\.[\w.-]+\.\bcom)"); });
  EXPECT_EQ(y.dtype(), DType::Bool);
  EXPECT_EQ(y.shape(), (Shape{4}));
  std::vector<double> got;
  for (int64_t i = 0; i < 4; ++i) got.push_back(y.get_as_double(i));
  EXPECT_EQ(got, (std::vector<double>{1, 1, 0, 0}));
  for (const char* bad : {"(?i)abc", "(?P<name>a)", "(?=a)b", "(a)\\1", "\\Aabc\\z", "\\p{L}+"}) {
    const std::string e = op_error(20, "RegexFullMatch", {x}, [&](NodeBuilder& n) { n.attr("pattern", bad); });
    EXPECT_NE(e.find("RE2 syntax is run with std::regex"), std::string::npos) << bad << ": " << e;
  }
  EXPECT_NE(op_error(20, "RegexFullMatch", {x}, [](NodeBuilder& n) { n.attr("pattern", "a(b"); }).find("not a valid regular expression"),
            std::string::npos);
  // '.' on multi-byte UTF-8 would count bytes: refused; a literal non-ASCII pattern is fine.
  EXPECT_NE(op_error(20, "RegexFullMatch", {strs({1}, {"é"})}, [](NodeBuilder& n) { n.attr("pattern", "."); }).find("non-ASCII"),
            std::string::npos);
  const Tensor lit = run_op(20, "RegexFullMatch", {strs({2}, {"café", "cafe"})}, [](NodeBuilder& n) { n.attr("pattern", "caf(é|e)"); });
  EXPECT_EQ(lit.get_as_double(0) + lit.get_as_double(1), 2.0);
  // A pattern a backtracking matcher needs 2^n steps for (n = 5000 here) answers at once.
  const Tensor slow = run_op(20, "RegexFullMatch", {strs({2}, {std::string(5000, 'a'), std::string(5000, 'a') + "b"})},
                             [](NodeBuilder& n) { n.attr("pattern", "(a+)+b"); });
  EXPECT_EQ(slow.get_as_double(0), 0.0);
  EXPECT_EQ(slow.get_as_double(1), 1.0);
  EXPECT_NE(op_error(20, "RegexFullMatch", {strs({1}, {std::string(30000, 'a')})}, [](NodeBuilder& n) { n.attr("pattern", "a*"); })
                .find("limited to 20000"),
            std::string::npos);
}

// Pool: 1-grams {2, 3, 5, 4} -> columns 0..3, 2-grams {(5, 6), (7, 8), (6, 7)} -> columns 4..6.
void tfidf_attrs(NodeBuilder& n, const char* mode, int64_t min_gram, int64_t max_gram, int64_t skip) {
  n.attr("mode", mode).attr("min_gram_length", min_gram).attr("max_gram_length", max_gram).attr("max_skip_count", skip)
      .attr("ngram_counts", std::vector<int64_t>{0, 4}).attr("ngram_indexes", std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6})
      .attr("pool_int64s", std::vector<int64_t>{2, 3, 5, 4, 5, 6, 7, 8, 6, 7});
}

TEST(TfIdfVectorizer, CountsNgramsAndSkipGrams) {
  const Tensor x = Tensor::from_vector<int32_t>({2, 6}, {1, 1, 3, 3, 3, 7, 8, 6, 7, 5, 6, 8});
  // Row 0: 3 three times; row 1: 5 once, bigrams (7,8)? no - 8 is before 6: (6,7) once, (5,6) once.
  Tensor y = run_op(9, "TfIdfVectorizer", {x}, [](NodeBuilder& n) { tfidf_attrs(n, "TF", 1, 2, 0); });
  EXPECT_EQ(y.shape(), (Shape{2, 7}));
  EXPECT_EQ(values_of_float(y), (std::vector<float>{0, 3, 0, 0, 0, 0, 0, /**/ 0, 0, 1, 0, 1, 0, 1}));
  // Skip up to 1: row 1 "8 6 7 5 6 8" adds (7, _, 6)? no; (6, _, 5)? no; the pairs one apart are
  // (8,7) (6,5) (7,6) (5,8): none in the pool. Row 0 gains nothing either. Unigrams are not double counted.
  y = run_op(9, "TfIdfVectorizer", {x}, [](NodeBuilder& n) { tfidf_attrs(n, "TF", 1, 2, 1); });
  EXPECT_EQ(values_of_float(y), (std::vector<float>{0, 3, 0, 0, 0, 0, 0, /**/ 0, 0, 1, 0, 1, 0, 1}));
  // Skip 2 (distance 3): row 1 pairs (8,5) (6,6) (7,8): (7, 8) counts.
  y = run_op(9, "TfIdfVectorizer", {x}, [](NodeBuilder& n) { tfidf_attrs(n, "TF", 2, 2, 2); });
  EXPECT_EQ(values_of_float(y), (std::vector<float>{0, 0, 0, 0, 0, 0, 0, /**/ 0, 0, 0, 0, 1, 1, 1}));
  // IDF / TFIDF with weights.
  auto weighted = [](const char* mode) {
    return [=](NodeBuilder& n) {
      tfidf_attrs(n, mode, 1, 2, 0);
      n.attr("weights", std::vector<float>{1, 2, 3, 4, 5, 6, 7});
    };
  };
  EXPECT_EQ(values_of_float(run_op(9, "TfIdfVectorizer", {x}, weighted("IDF"))),
            (std::vector<float>{0, 2, 0, 0, 0, 0, 0, /**/ 0, 0, 3, 0, 5, 0, 7}));
  EXPECT_EQ(values_of_float(run_op(9, "TfIdfVectorizer", {x}, weighted("TFIDF"))),
            (std::vector<float>{0, 6, 0, 0, 0, 0, 0, /**/ 0, 0, 3, 0, 5, 0, 7}));
}

TEST(TfIdfVectorizer, StringPoolAndErrors) {
  auto setup = [](NodeBuilder& n) {
    n.attr("mode", "TF").attr("min_gram_length", int64_t{1}).attr("max_gram_length", int64_t{2}).attr("max_skip_count", int64_t{0})
        .attr("ngram_counts", std::vector<int64_t>{0, 2}).attr("ngram_indexes", std::vector<int64_t>{1, 0, 2})
        .attr("pool_strings", Strings{"a", "b", "a", "b"});
  };
  const Tensor y = run_op(9, "TfIdfVectorizer", {strs({5}, {"a", "b", "a", "b", "c"})}, setup);
  EXPECT_EQ(y.shape(), (Shape{3}));
  EXPECT_EQ(values_of_float(y), (std::vector<float>{2, 2, 2}));  // b -> column 0, a -> 1, "a b" -> 2
  EXPECT_NE(op_error(9, "TfIdfVectorizer", {Tensor::from_vector<int64_t>({2}, {1, 2})}, setup).find("the pool holds strings"),
            std::string::npos);
  EXPECT_NE(op_error(9, "TfIdfVectorizer", {strs({1}, {"a"})},
                     [](NodeBuilder& n) {
                       n.attr("mode", "TF").attr("min_gram_length", int64_t{1}).attr("max_gram_length", int64_t{2})
                           .attr("max_skip_count", int64_t{0}).attr("ngram_counts", std::vector<int64_t>{0, 2})
                           .attr("ngram_indexes", std::vector<int64_t>{0, 1, 2}).attr("pool_strings", Strings{"a", "b", "c"});
                     })
                .find("level 2 of the pool has 1 items, not a multiple of 2"),
            std::string::npos);
  EXPECT_NE(op_error(9, "TfIdfVectorizer", {strs({1}, {"a"})},
                     [](NodeBuilder& n) {
                       n.attr("mode", "TF").attr("min_gram_length", int64_t{1}).attr("max_gram_length", int64_t{1})
                           .attr("max_skip_count", int64_t{0}).attr("ngram_counts", std::vector<int64_t>{0})
                           .attr("ngram_indexes", std::vector<int64_t>{int64_t{1} << 60}).attr("pool_strings", Strings{"a"});
                     })
                .find("exceeds max_tensor_bytes"),
            std::string::npos);
}

}  // namespace
}  // namespace test
}  // namespace onnxmini
