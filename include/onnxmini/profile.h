// Trace analysis, the public half of the profiler: read a profile trace
// (onnxmini's or onnxruntime's, fence or kernel-only layout), summarize where the
// time goes, compare two traces side by side, render the result as text, CSV,
// JSON or Markdown. The CLI (`onnxmini profile summary|compare`) and the Python
// package (onnxmini.profiling) both print these tables, with these column names.
// Implemented in profiler/ (trace_reader.cc, table.cc, summary.cc, compare.cc).
#pragma once
#include "onnxmini/export.h"

#include <cstdint>
#include <string>
#include <vector>

ONNXMINI_API_BEGIN
namespace onnxmini {
namespace profile {

// ---- Reading traces --------------------------------------------------------
// Reads a profile trace (onnxmini's or onnxruntime's, fence or kernel-only
// layout) into the kernel events that summaries and comparisons work on.

// One "<node>_kernel_time" event.
struct KernelEvent {
  int run = 0;               // 0-based; a run ends at its top-level "SequentialExecutor::Execute" event
  std::string node;          // event name without "_kernel_time"
  std::string op;            // args.op_name
  std::string provider;      // args.provider
  std::string input_shapes;  // args.input_type_shape as compact JSON, "" when absent
  std::string output_shapes;
  int64_t node_index = -1;
  int64_t dur_us = 0;
  int64_t ts_us = 0;
  // Control flow (If/Loop/Scan): the event's own time, dur_us minus the
  // "SequentialExecutor::Execute" events of the bodies it ran (= dur_us for other nodes),
  // and how deep the node sits: 0 in the main graph, 1 in a body of a main-graph node...
  int64_t self_us = 0;
  int depth = 0;
  // onnxmini's extra args ("" / 0 when absent, e.g. in onnxruntime traces).
  std::string variant;  // args.kernel_variant: the code path that ran
  std::string isa;      // args.isa: portable, avx2 or avx512
  double flops = 0;     // args.flops
  double bytes = 0;     // args.bytes_read + args.bytes_written
};

struct Trace {
  std::string path;
  std::vector<KernelEvent> kernels;  // file order
  int num_runs = 0;                  // number of top-level SequentialExecutor::Execute events
  int subgraph_executions = 0;       // body executions (Execute events inside a kernel event)
  std::vector<int64_t> run_us;       // duration of each model_run
};

// Throws onnxmini::Error (IoError / InvalidArgument) naming the file and what is wrong.
Trace read_trace(const std::string& path);
Trace parse_trace(const std::string& text, const std::string& path = "<string>");

// ---- Tables ----------------------------------------------------------------
// A small result table rendered as aligned text, CSV, JSON or Markdown
// (the --format of `onnxmini profile summary|compare`).

enum class Format { Text, Csv, Json, Markdown };
Format format_from_string(const std::string& s);  // throws InvalidArgument

struct Table {
  std::vector<std::string> columns;
  std::vector<bool> numeric;  // per column: right-aligned, a JSON number (empty cell: null)
  std::vector<std::vector<std::string>> rows;

  void add_column(const std::string& name, bool is_numeric) {
    columns.push_back(name);
    numeric.push_back(is_numeric);
  }
  // `title` lines precede the text and Markdown forms; CSV and JSON carry only the rows.
  std::string render(Format format, const std::vector<std::string>& title = {}) const;
};

// ---- Summaries: `onnxmini profile summary` ---------------------------------
// `onnxmini profile summary`: where the time goes, per op type, per node or per
// (op, input shapes, output shapes) - the seeds' groupby on args_op_name.

enum class GroupBy { Op, Node, Shape, Variant };
GroupBy group_by_from_string(const std::string& s);  // throws InvalidArgument

struct SummaryOptions {
  GroupBy by = GroupBy::Op;
  int skip_runs = 0;  // leading runs left out (warm-up)
  int top = 0;        // rows kept after sorting; 0: all
  // The roofline of --by variant: peak GFLOP/s and GB/s; 0 measures it here
  // (measure_roofs()).
  double peak_gflops = 0, peak_gbs = 0;
};

// ---- Roofline --------------------------------------------------------------
// The two roofs of the roofline model on the machine at hand, measured on one
// core in well under 0.5 s: a hand-written FMA loop (independent accumulators
// in registers of the widest ISA cpu detection allows, ONNXMINI_ISA included)
// and a streaming copy of buffers larger than the last-level cache (GB/s counts
// bytes read + bytes written, as the trace's bytes args do).
struct Roofs {
  double peak_gflops = 0;  // float32 FMA, one core
  double peak_gbs = 0;     // copy bandwidth, one core
  std::string isa;         // the ISA of the FMA loop
};
Roofs measure_roofs();

struct SummaryRow {
  std::string op, node, input_shapes, output_shapes;  // node: only by node; shapes: only by shape
  int64_t count = 0;     // kernel events
  int64_t total_us = 0;  // sum of their own times (KernelEvent::self_us: bodies not included)
  double mean_us = 0;    // total / count
  double per_run_us = 0; // total / runs
  double share_pct = 0;  // total / all kernel time of the kept runs
  // --by variant only: the path, its ISA, the work it reported and where it sits
  // under the roofline (gflop_per_s = flops / time; flop_per_byte = flops / bytes;
  // bound "compute" when flop_per_byte * peak_gbs >= peak_gflops, else "memory";
  // roof_pct = achieved / min(peak_gflops, flop_per_byte * peak_gbs), the memory
  // roof being gbyte_per_s / peak_gbs for rows without flops).
  std::string variant, isa;
  double flops = 0, bytes = 0;
  double gflop_per_s = 0, gbyte_per_s = 0, flop_per_byte = 0, roof_pct = 0;
  std::string bound;
};

struct Summary {
  std::string path;
  GroupBy by = GroupBy::Op;
  int runs = 0, skipped_runs = 0;
  int64_t total_us = 0;  // all kernel time of the kept runs (own times, so nothing is counted twice)
  size_t all_rows = 0;   // rows before --top
  std::vector<SummaryRow> rows;  // by total_us, descending
  Roofs roofs;                   // --by variant: the roofs used
  bool roofs_measured = false;   // true: measured here (measure_roofs), not given
};

// Number of runs a trace holds (runs counted by SequentialExecutor::Execute, plus a
// trailing run without one).
int trace_runs(const Trace& trace);

Summary summarize(const Trace& trace, const SummaryOptions& options);
Table summary_table(const Summary& summary);
std::vector<std::string> summary_title(const Summary& summary);

// ---- Comparisons: `onnxmini profile compare` -------------------------------
// `onnxmini profile compare BASE OTHER`: the seeds' profile merge. Kernel events
// of each trace are keyed by (op, input shapes, output shapes, occurrence index
// of that triple within its run) - or by node name, or by op type - and the two
// sides are put next to each other: mean time per run on each side, their ratio
// (other / base), and a side marker: "=" on both sides, "-" base only, "+" other only.

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
ONNXMINI_API_END
