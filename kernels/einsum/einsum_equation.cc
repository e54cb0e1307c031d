// Einsum equation parser. Two passes: the text is split into terms (one per
// operand, plus the output) with every character's position remembered, then
// the terms are matched against the shapes to give each letter one size.
#include "kernels/einsum/einsum_equation.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>

namespace onnxmini {
namespace einsum_impl {

namespace {

// One subscript in a term: a letter, or the ellipsis.
struct Symbol {
  char letter = 0;  // 0 for the ellipsis
  size_t pos = 0;   // index in the equation
};
struct Term {
  std::vector<Symbol> symbols;
  size_t pos = 0;  // where the term starts
  bool has_ellipsis() const {
    return std::any_of(symbols.begin(), symbols.end(), [](const Symbol& s) { return s.letter == 0; });
  }
  size_t named() const { return symbols.size() - (has_ellipsis() ? 1 : 0); }
};

[[noreturn]] void fail_at(const std::string& eq, size_t pos, const std::string& what) {
  throw Error(ErrorCode::InvalidArgument, fmt::format("einsum equation '{}': {} (position {})\n  {}\n  {}^", eq, what,
                                                      pos, eq, std::string(std::min(pos, eq.size()), ' ')));
}

bool is_letter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

// Reads the terms of one side: "ab,...c" -> [ab][...c]. Spaces are skipped.
std::vector<Term> read_terms(const std::string& eq, size_t begin, size_t end) {
  std::vector<Term> terms(1);
  terms[0].pos = begin;
  for (size_t i = begin; i < end; ++i) {
    const char c = eq[i];
    if (c == ' ') continue;
    if (c == ',') {
      terms.emplace_back();
      terms.back().pos = i + 1;
    } else if (is_letter(c)) {
      terms.back().symbols.push_back({c, i});
    } else if (c == '.') {
      if (i + 2 >= end || eq[i + 1] != '.' || eq[i + 2] != '.') fail_at(eq, i, "'.' must be part of an ellipsis '...'");
      if (terms.back().has_ellipsis()) fail_at(eq, i, "a term may hold only one ellipsis");
      terms.back().symbols.push_back({0, i});
      i += 2;
    } else {
      fail_at(eq, i, fmt::format("invalid character '{}': only letters a-z, A-Z, ',', '...' and '->' are allowed", c));
    }
  }
  return terms;
}

}  // namespace

EinsumSpec parse_equation(const std::string& eq, const std::vector<Shape>& shapes) {
  EinsumSpec spec;
  spec.equation = eq;
  spec.operand_shapes = shapes;

  // ---- split into input terms and the optional output term ----
  const size_t arrow = eq.find("->");
  for (size_t i = 0; i < eq.size(); ++i)
    if ((eq[i] == '-' && i != arrow) || (eq[i] == '>' && (arrow == std::string::npos || i != arrow + 1)))
      fail_at(eq, i, fmt::format("unexpected '{}': the output is introduced by one '->'", eq[i]));
  const bool explicit_output = arrow != std::string::npos;
  const size_t lhs_end = explicit_output ? arrow : eq.size();
  std::vector<Term> inputs = read_terms(eq, 0, lhs_end);
  if (inputs.size() != shapes.size()) {
    const size_t pos = inputs.size() > shapes.size() ? inputs[shapes.size()].pos : lhs_end;
    fail_at(eq, pos, fmt::format("the equation has {} input term(s) but {} operand(s) were given", inputs.size(),
                                 shapes.size()));
  }
  Term output;
  if (explicit_output) {
    std::vector<Term> out_terms = read_terms(eq, arrow + 2, eq.size());
    for (size_t t = 1; t < out_terms.size(); ++t) fail_at(eq, out_terms[t].pos - 1, "the output has a single term");
    output = out_terms[0];
  }

  // ---- ellipsis: how many dims each operand's ellipsis covers (right-aligned, numpy style) ----
  size_t ellipsis_rank = 0;
  std::vector<size_t> covered(shapes.size(), 0);
  for (size_t k = 0; k < shapes.size(); ++k) {
    const Term& t = inputs[k];
    const size_t rank = shapes[k].size();
    if (t.has_ellipsis() ? t.named() > rank : t.named() != rank) {
      const size_t pos = t.symbols.empty() ? t.pos : t.symbols.back().pos;
      fail_at(eq, pos, fmt::format("operand {} has rank {} ({}) but its term names {} axes{}", k, rank,
                                   shape_to_string(shapes[k]), t.named(), t.has_ellipsis() ? " plus '...'" : ""));
    }
    if (t.has_ellipsis()) covered[k] = rank - t.named();
    ellipsis_rank = std::max(ellipsis_rank, covered[k]);
  }

  // ---- letters: ids in order of first appearance; ellipsis dims first ----
  std::map<char, int> id_of;
  for (size_t e = 0; e < ellipsis_rank; ++e) {
    spec.letter_name.push_back("." + std::to_string(e));
    spec.letter_size.push_back(1);
  }
  std::vector<int> uses;  // letter id -> count over the inputs
  uses.assign(ellipsis_rank, 1);
  std::vector<std::string> seen_where(ellipsis_rank);
  for (size_t k = 0; k < shapes.size(); ++k) {
    std::vector<int> axes;
    std::vector<size_t> axis_pos;  // where each axis is named in the text
    for (const Symbol& s : inputs[k].symbols) {
      if (s.letter == 0) {
        for (size_t e = ellipsis_rank - covered[k]; e < ellipsis_rank; ++e) {
          axes.push_back(static_cast<int>(e));
          axis_pos.push_back(s.pos);
        }
        continue;
      }
      auto it = id_of.find(s.letter);
      if (it == id_of.end()) {
        it = id_of.emplace(s.letter, static_cast<int>(spec.letter_size.size())).first;
        spec.letter_name.push_back(std::string(1, s.letter));
        spec.letter_size.push_back(1);
        uses.push_back(0);
        seen_where.emplace_back();
      }
      axes.push_back(it->second);
      axis_pos.push_back(s.pos);
      ++uses[it->second];
    }
    // Sizes: a letter takes the largest size; every other occurrence must equal it or be 1.
    for (size_t a = 0; a < axes.size(); ++a) {
      const int id = axes[a];
      const int64_t d = shapes[k][a];
      int64_t& size = spec.letter_size[id];
      const std::string where = fmt::format("operand {} axis {}", k, a);
      // A repeated letter inside one operand reads a diagonal: both dims must be equal.
      for (size_t b = 0; b < a; ++b)
        if (axes[b] == id && shapes[k][b] != d)
          fail_at(eq, axis_pos[a], fmt::format("letter '{}' is repeated in operand {} with sizes {} and {}: a diagonal "
                                               "needs equal sizes", spec.letter_name[id], k, shapes[k][b], d));
      if (d != 1 && size != 1 && d != size)
        fail_at(eq, axis_pos[a], fmt::format("inconsistent sizes for '{}': {} at {} but {} at {}", spec.letter_name[id],
                                             d, where, size, seen_where[id]));
      if (d != 1 || seen_where[id].empty()) {
        if (d != 1) size = d;
        seen_where[id] = where;
      }
    }
    spec.operand_axes.push_back(std::move(axes));
  }

  // ---- output ----
  if (explicit_output) {
    std::vector<bool> used(spec.letter_size.size(), false);
    for (const Symbol& s : output.symbols) {
      if (s.letter == 0) {
        for (size_t e = 0; e < ellipsis_rank; ++e) spec.output_axes.push_back(static_cast<int>(e));
        continue;
      }
      auto it = id_of.find(s.letter);
      if (it == id_of.end()) fail_at(eq, s.pos, fmt::format("output letter '{}' does not appear in any input", s.letter));
      if (used[it->second]) fail_at(eq, s.pos, fmt::format("output letter '{}' appears twice", s.letter));
      used[it->second] = true;
      spec.output_axes.push_back(it->second);
    }
    if (!output.has_ellipsis() && ellipsis_rank > 0)
      fail_at(eq, arrow + 2, fmt::format("the inputs' '...' covers {} dim(s) but the output has no '...'", ellipsis_rank));
  } else {
    for (size_t e = 0; e < ellipsis_rank; ++e) spec.output_axes.push_back(static_cast<int>(e));
    std::vector<std::pair<char, int>> once;  // letters used exactly once, sorted as numpy does (ASCII)
    for (const auto& [c, id] : id_of)
      if (uses[id] == 1) once.emplace_back(c, id);
    for (const auto& [c, id] : once) spec.output_axes.push_back(id);
  }
  for (int id : spec.output_axes) spec.output_shape.push_back(spec.letter_size[id]);
  // The iteration space is the product of every letter's size; the planner multiplies
  // subsets of them (intermediates, strides) unchecked, so the whole product - zero
  // sizes left out, as they do not bound a subset - must fit with room to spare. Past
  // 2^62 the work could never finish anyway (a 52-letter bomb).
  int64_t space = 1;
  for (int64_t size : spec.letter_size)
    if (size > 0 && (__builtin_mul_overflow(space, size, &space) || space > (int64_t{1} << 62)))
      throw Error(ErrorCode::InvalidArgument,
                  fmt::format("einsum equation '{}': its {} letters' sizes [{}] multiply to more than 2^62 elements",
                              eq, spec.letter_size.size(), fmt::join(spec.letter_size, ",")));
  // A letter repeated within one operand (a diagonal) is counted once above but once per
  // axis in that operand's own slot, so each operand's dims must obey the same bound.
  for (size_t k = 0; k < shapes.size(); ++k) {
    int64_t n = 1;
    for (int64_t d : shapes[k])
      if (d > 0 && (__builtin_mul_overflow(n, d, &n) || n > (int64_t{1} << 62)))
        throw Error(ErrorCode::InvalidArgument,
                    fmt::format("einsum equation '{}': operand {}'s shape [{}] has more than 2^62 elements", eq, k,
                                fmt::join(shapes[k], ",")));
  }
  return spec;
}

}  // namespace einsum_impl
}  // namespace onnxmini
