// `onnxmini profile compare BASE OTHER`: the seeds' profile merge. Kernel events
// of each trace are keyed by (op, input shapes, output shapes, occurrence index
// of that triple within its run) - or by node name, or by op type - and the two
// sides are put next to each other: mean time per run on each side, their ratio
// (other / base), and a side marker: "=" on both sides, "-" base only, "+" other only.
#pragma once
#include <string>
#include <vector>

#include "profiler/summary.h"

namespace onnxmini {
namespace profile {

struct CompareOptions {
  GroupBy by = GroupBy::Shape;
  int skip_runs = 0;  // leading runs left out of both traces
};

struct CompareRow {
  std::string side;  // "=", "-", "+"
  std::string op, node, input_shapes, output_shapes;
  int64_t idx = -1;  // occurrence index (by shape only)
  int64_t base_count = 0, other_count = 0;  // kernel events over the kept runs
  double base_us = 0, other_us = 0;         // time per run (sum over kept runs / kept runs)
  bool has_base = false, has_other = false;
  double ratio() const { return has_base && has_other && base_us > 0 ? other_us / base_us : 0; }
};

struct Comparison {
  std::string base_path, other_path;
  GroupBy by = GroupBy::Shape;
  int base_runs = 0, other_runs = 0;
  double base_total_us = 0, other_total_us = 0;  // kernel time per run
  std::vector<CompareRow> rows;  // base order of first appearance, then rows only in other
};

Comparison compare(const Trace& base, const Trace& other, const CompareOptions& options);
Table comparison_table(const Comparison& c);
std::vector<std::string> comparison_title(const Comparison& c);

}  // namespace profile
}  // namespace onnxmini
