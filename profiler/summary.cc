#include "onnxmini/profile.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <tuple>

#include "onnxmini/error.h"

namespace onnxmini {
namespace profile {

GroupBy group_by_from_string(const std::string& s) {
  if (s == "op") return GroupBy::Op;
  if (s == "node") return GroupBy::Node;
  if (s == "shape") return GroupBy::Shape;
  throw Error(ErrorCode::InvalidArgument, "unknown grouping '" + s + "' (expected op, node or shape)");
}

int trace_runs(const Trace& trace) {
  int runs = trace.num_runs;
  for (const KernelEvent& k : trace.kernels) runs = std::max(runs, k.run + 1);
  return runs;
}

Summary summarize(const Trace& trace, const SummaryOptions& options) {
  if (options.skip_runs < 0) throw Error(ErrorCode::InvalidArgument, "--skip-runs must be >= 0");
  if (options.top < 0) throw Error(ErrorCode::InvalidArgument, "--top must be >= 0");
  Summary s;
  s.path = trace.path;
  s.by = options.by;
  const int runs = trace_runs(trace);
  s.skipped_runs = std::min(options.skip_runs, runs);
  s.runs = runs - s.skipped_runs;
  using Key = std::tuple<std::string, std::string, std::string, std::string>;  // op, node, inputs, outputs
  std::map<Key, SummaryRow> groups;
  for (const KernelEvent& k : trace.kernels) {
    if (k.run < options.skip_runs) continue;
    Key key{k.op, "", "", ""};
    if (options.by == GroupBy::Node) std::get<1>(key) = k.node;
    if (options.by == GroupBy::Shape) key = Key{k.op, "", k.input_shapes, k.output_shapes};
    SummaryRow& row = groups[key];
    std::tie(row.op, row.node, row.input_shapes, row.output_shapes) = key;
    row.count += 1;
    row.total_us += k.self_us;
    s.total_us += k.self_us;
  }
  for (auto& [key, row] : groups) {
    row.mean_us = row.count ? double(row.total_us) / row.count : 0;
    row.per_run_us = s.runs ? double(row.total_us) / s.runs : 0;
    row.share_pct = s.total_us ? 100.0 * row.total_us / s.total_us : 0;
    s.rows.push_back(row);
  }
  std::stable_sort(s.rows.begin(), s.rows.end(),
                   [](const SummaryRow& a, const SummaryRow& b) { return a.total_us > b.total_us; });
  s.all_rows = s.rows.size();
  if (options.top > 0 && s.rows.size() > static_cast<size_t>(options.top)) s.rows.resize(options.top);
  return s;
}

Table summary_table(const Summary& s) {
  Table t;
  if (s.by == GroupBy::Node) t.add_column("node", false);
  t.add_column("op", false);
  if (s.by == GroupBy::Shape) {
    t.add_column("input_type_shape", false);
    t.add_column("output_type_shape", false);
  }
  for (const char* c : {"count", "total_us", "mean_us", "per_run_us", "share_pct"}) t.add_column(c, true);
  for (const SummaryRow& r : s.rows) {
    std::vector<std::string> cells;
    if (s.by == GroupBy::Node) cells.push_back(r.node);
    cells.push_back(r.op);
    if (s.by == GroupBy::Shape) {
      cells.push_back(r.input_shapes);
      cells.push_back(r.output_shapes);
    }
    cells.push_back(std::to_string(r.count));
    cells.push_back(std::to_string(r.total_us));
    cells.push_back(fmt::format("{:.1f}", r.mean_us));
    cells.push_back(fmt::format("{:.1f}", r.per_run_us));
    cells.push_back(fmt::format("{:.2f}", r.share_pct));
    t.rows.push_back(std::move(cells));
  }
  return t;
}

std::vector<std::string> summary_title(const Summary& s) {
  std::vector<std::string> lines;
  lines.push_back(fmt::format("profile: {}", s.path));
  lines.push_back(fmt::format("runs: {} (skipped {}), kernel time: {} us total, {:.1f} us per run", s.runs,
                              s.skipped_runs, s.total_us, s.runs ? double(s.total_us) / s.runs : 0.0));
  if (s.rows.size() < s.all_rows) lines.push_back(fmt::format("top {} of {} rows", s.rows.size(), s.all_rows));
  return lines;
}

}  // namespace profile
}  // namespace onnxmini
