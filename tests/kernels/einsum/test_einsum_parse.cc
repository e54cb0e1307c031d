// Einsum equation parsing: shapes, implicit output, ellipsis, and one test per error.
#include <gtest/gtest.h>

#include "tests/common/model_builder.h"
#include "kernels/einsum/einsum_equation.h"
#include "kernels/einsum/einsum_planner.h"
#include "onnxmini/einsum.h"

using namespace onnxmini;
using onnxmini::test::error_message;
using einsum_impl::parse_equation;

namespace {
std::string parse_error(const std::string& eq, const std::vector<Shape>& shapes) {
  return error_message([&] { parse_equation(eq, shapes); });
}
}  // namespace

TEST(EinsumParse, ExplicitOutputShape) {
  auto s = parse_equation("bsnh,btnh->bnts", {{2, 3, 4, 5}, {2, 6, 4, 5}});
  EXPECT_EQ(s.output_shape, (Shape{2, 4, 6, 3}));
  EXPECT_EQ(s.num_letters(), 5u);
}

TEST(EinsumParse, ImplicitOutputIsSortedSingleLetters) {
  // numpy: letters used once, in ASCII order (upper case first); here 'c' only.
  EXPECT_EQ(parse_equation("bA,Ab,c", {{3, 3}, {3, 3}, {2}}).output_shape, (Shape{2}));
  EXPECT_EQ(parse_equation("ij,jk", {{2, 3}, {3, 4}}).output_shape, (Shape{2, 4}));
  EXPECT_EQ(parse_equation("ba", {{2, 3}}).output_shape, (Shape{3, 2}));
  EXPECT_EQ(parse_equation("ii", {{3, 3}}).output_shape, (Shape{}));
}

TEST(EinsumParse, EllipsisBroadcastsRightAligned) {
  EXPECT_EQ(parse_equation("i...,j...->ij...", {{2, 3}, {4, 1, 3}}).output_shape, (Shape{2, 4, 1, 3}));
  EXPECT_EQ(parse_equation("...ij,...jk->...ik", {{5, 2, 3}, {3, 4}}).output_shape, (Shape{5, 2, 4}));
  EXPECT_EQ(parse_equation("...ij", {{5, 2, 3}}).output_shape, (Shape{5, 2, 3}));
}

TEST(EinsumParse, SizeOneBroadcasts) {
  EXPECT_EQ(parse_equation("ij,ij->ij", {{1, 3}, {2, 3}}).output_shape, (Shape{2, 3}));
}

TEST(EinsumParse, ScalarOperandAndOutput) {
  EXPECT_EQ(parse_equation(",ij->", {{}, {2, 3}}).output_shape, (Shape{}));
}

TEST(EinsumParse, ErrorWrongLetterCountForRank) {
  const std::string e = parse_error("abc,cd->ad", {{2, 3}, {3, 4}});
  EXPECT_NE(e.find("operand 0 has rank 2"), std::string::npos) << e;
  EXPECT_NE(e.find("names 3 axes"), std::string::npos) << e;
  EXPECT_NE(e.find("(position 2)"), std::string::npos) << e;
  EXPECT_NE(e.find("\n    ^"), std::string::npos) << e;  // caret under 'c' (2 spaces indent + 2)
}

TEST(EinsumParse, ErrorOutputLetterAbsentFromInputs) {
  const std::string e = parse_error("ab,bc->az", {{2, 3}, {3, 4}});
  EXPECT_NE(e.find("output letter 'z' does not appear in any input"), std::string::npos) << e;
  EXPECT_NE(e.find("(position 8)"), std::string::npos) << e;
}

TEST(EinsumParse, ErrorInvalidCharacter) {
  const std::string e = parse_error("ab,b1->a", {{2, 3}, {3, 4}});
  EXPECT_NE(e.find("invalid character '1'"), std::string::npos) << e;
  EXPECT_NE(e.find("(position 4)"), std::string::npos) << e;
  EXPECT_NE(parse_error("a.b->a", {{2, 3}}).find("ellipsis"), std::string::npos);
  EXPECT_NE(parse_error("ab->-a", {{2, 3}}).find("unexpected '-'"), std::string::npos);
}

TEST(EinsumParse, ErrorOperandCountMismatch) {
  const std::string e = parse_error("ab,bc->ac", {{2, 3}});
  EXPECT_NE(e.find("2 input term(s) but 1 operand(s)"), std::string::npos) << e;
  EXPECT_NE(e.find("(position 3)"), std::string::npos) << e;  // the surplus term "bc"
  const std::string f = parse_error("ab->a", {{2, 3}, {3}});
  EXPECT_NE(f.find("1 input term(s) but 2 operand(s)"), std::string::npos) << f;
}

TEST(EinsumParse, ErrorInconsistentSizes) {
  const std::string e = parse_error("ab,bc->ac", {{2, 3}, {4, 5}});
  EXPECT_NE(e.find("inconsistent sizes for 'b': 4 at operand 1 axis 0 but 3 at operand 0 axis 1"), std::string::npos) << e;
  EXPECT_NE(e.find("(position 3)"), std::string::npos) << e;
}

TEST(EinsumParse, ErrorDiagonalOfUnequalSizes) {
  const std::string e = parse_error("ii->i", {{2, 3}});
  EXPECT_NE(e.find("repeated in operand 0 with sizes 2 and 3"), std::string::npos) << e;
}

TEST(EinsumParse, ErrorRepeatedOutputLetter) {
  EXPECT_NE(parse_error("ab->aa", {{2, 3}}).find("output letter 'a' appears twice"), std::string::npos);
}

TEST(EinsumParse, ErrorEllipsisMissingFromOutput) {
  const std::string e = parse_error("...i->i", {{2, 3}});
  EXPECT_NE(e.find("the output has no '...'"), std::string::npos) << e;
}

TEST(EinsumParse, ErrorTwoEllipsesInOneTerm) {
  EXPECT_NE(parse_error("...i...->i", {{2, 3}}).find("only one ellipsis"), std::string::npos);
}

TEST(EinsumParse, PublicApiReportsTheSameErrors) {
  const std::string e = error_message([] { einsum_output_shape("ab,bc->az", {{2, 3}, {3, 4}}); });
  EXPECT_NE(e.find("position 8"), std::string::npos) << e;
}

TEST(EinsumCanonical, MergesLettersThatTravelTogether) {
  auto c = einsum_impl::canonicalize(parse_equation("bhqd,bhkd->bhqk", {{2, 12, 8, 64}, {2, 12, 8, 64}}));
  EXPECT_EQ(c.to_string(), "(bh)qd,(bh)kd->(bh)qk");
  EXPECT_EQ(c.size[0], 24);
}

TEST(EinsumCanonical, DropsSizeOneAxes) {
  auto c = einsum_impl::canonicalize(parse_equation("ij,jk->ik", {{1, 3}, {3, 4}}));
  // i has size 1 everywhere: gone; j, k stay separate because j is alone in the first operand.
  EXPECT_EQ(c.to_string(), "j,jk->k");
}

TEST(EinsumCanonical, KeepsDiagonalLettersApart) {
  auto c = einsum_impl::canonicalize(parse_equation("iij->ij", {{3, 3, 4}}));
  EXPECT_EQ(c.to_string(), "iij->ij");
}

// The letters' sizes multiply to little, but a letter repeated 45 times in one operand (a
// diagonal) makes that operand's own slot 3^45 elements: an error naming the operand, not
// a wrapped size in the planner (the einsum fuzzer found this overflow).
TEST(EinsumParse, ErrorOperandPast2To62ThroughRepeatedLetter) {
  const std::string eq = std::string(45, 'o') + "->o";
  const std::string e = parse_error(eq, {Shape(45, 3)});
  EXPECT_NE(e.find("operand 0's shape"), std::string::npos) << e;
  EXPECT_NE(e.find("more than 2^62"), std::string::npos) << e;
  // 39 repeats (3^39 < 2^62) still parse and plan.
  const std::string ok = std::string(39, 'o') + "->o";
  EXPECT_NO_THROW(einsum_impl::canonicalize(parse_equation(ok, {Shape(39, 3)})));
}
