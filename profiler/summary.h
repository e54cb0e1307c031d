// `onnxmini profile summary`: where the time goes, per op type, per node or per
// (op, input shapes, output shapes) - the seeds' groupby on args_op_name.
#pragma once
#include <string>
#include <vector>

#include "profiler/table.h"
#include "profiler/trace_reader.h"

namespace onnxmini {
namespace profile {

enum class GroupBy { Op, Node, Shape };
GroupBy group_by_from_string(const std::string& s);  // throws InvalidArgument

struct SummaryOptions {
  GroupBy by = GroupBy::Op;
  int skip_runs = 0;  // leading runs left out (warm-up)
  int top = 0;        // rows kept after sorting; 0: all
};

struct SummaryRow {
  std::string op, node, input_shapes, output_shapes;  // node: only by node; shapes: only by shape
  int64_t count = 0;     // kernel events
  int64_t total_us = 0;  // sum of their durations
  double mean_us = 0;    // total / count
  double per_run_us = 0; // total / runs
  double share_pct = 0;  // total / all kernel time of the kept runs
};

struct Summary {
  std::string path;
  GroupBy by = GroupBy::Op;
  int runs = 0, skipped_runs = 0;
  int64_t total_us = 0;  // all kernel time of the kept runs
  size_t all_rows = 0;   // rows before --top
  std::vector<SummaryRow> rows;  // by total_us, descending
};

// Number of runs a trace holds (runs counted by SequentialExecutor::Execute, plus a
// trailing run without one).
int trace_runs(const Trace& trace);

Summary summarize(const Trace& trace, const SummaryOptions& options);
Table summary_table(const Summary& summary);
std::vector<std::string> summary_title(const Summary& summary);

}  // namespace profile
}  // namespace onnxmini
