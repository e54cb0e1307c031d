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
  if (s == "variant") return GroupBy::Variant;
  throw Error(ErrorCode::InvalidArgument, "unknown grouping '" + s + "' (expected op, node, shape or variant)");
}

namespace {

// Throughput, intensity and the roof that bounds a --by variant row. The roof
// at intensity I is min(peak_gflops, I * peak_gbs): below the ridge point
// (I < peak_gflops / peak_gbs) memory bandwidth limits the row.
void place_on_roofline(SummaryRow& row, const Roofs& roofs) {
  const double seconds = row.total_us * 1e-6;
  if (seconds <= 0) return;  // too short to time: no rates
  row.gflop_per_s = row.flops / seconds * 1e-9;
  row.gbyte_per_s = row.bytes / seconds * 1e-9;
  row.flop_per_byte = row.bytes > 0 ? row.flops / row.bytes : 0;
  const double memory_roof = row.flop_per_byte * roofs.peak_gbs;  // GFLOP/s the bandwidth allows
  if (row.flops > 0 && memory_roof >= roofs.peak_gflops) {
    row.bound = "compute";
    row.roof_pct = roofs.peak_gflops > 0 ? 100.0 * row.gflop_per_s / roofs.peak_gflops : 0;
  } else {
    row.bound = "memory";
    row.roof_pct = roofs.peak_gbs > 0 ? 100.0 * row.gbyte_per_s / roofs.peak_gbs : 0;
  }
}

}  // namespace

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
  // op, node, inputs, outputs; by variant: op, variant, isa in the first three.
  using Key = std::tuple<std::string, std::string, std::string, std::string>;
  std::map<Key, SummaryRow> groups;
  for (const KernelEvent& k : trace.kernels) {
    if (k.run < options.skip_runs) continue;
    Key key{k.op, "", "", ""};
    if (options.by == GroupBy::Node) std::get<1>(key) = k.node;
    if (options.by == GroupBy::Shape) key = Key{k.op, "", k.input_shapes, k.output_shapes};
    if (options.by == GroupBy::Variant) key = Key{k.op, k.variant, k.isa, ""};
    SummaryRow& row = groups[key];
    if (options.by == GroupBy::Variant) std::tie(row.op, row.variant, row.isa, std::ignore) = key;
    else std::tie(row.op, row.node, row.input_shapes, row.output_shapes) = key;
    row.count += 1;
    row.total_us += k.self_us;
    row.flops += k.flops;
    row.bytes += k.bytes;
    s.total_us += k.self_us;
  }
  if (options.by == GroupBy::Variant) {
    if (options.peak_gflops < 0 || options.peak_gbs < 0)
      throw Error(ErrorCode::InvalidArgument, "--peak-gflops and --peak-gbs must be positive (0: measure here)");
    s.roofs_measured = options.peak_gflops == 0 || options.peak_gbs == 0;
    if (s.roofs_measured) s.roofs = measure_roofs();
    if (options.peak_gflops > 0) s.roofs.peak_gflops = options.peak_gflops;
    if (options.peak_gbs > 0) s.roofs.peak_gbs = options.peak_gbs;
  }
  for (auto& [key, row] : groups) {
    row.mean_us = row.count ? double(row.total_us) / row.count : 0;
    row.per_run_us = s.runs ? double(row.total_us) / s.runs : 0;
    row.share_pct = s.total_us ? 100.0 * row.total_us / s.total_us : 0;
    if (options.by == GroupBy::Variant) place_on_roofline(row, s.roofs);
    s.rows.push_back(row);
  }
  std::stable_sort(s.rows.begin(), s.rows.end(),
                   [](const SummaryRow& a, const SummaryRow& b) { return a.total_us > b.total_us; });
  s.all_rows = s.rows.size();
  if (options.top > 0 && s.rows.size() > static_cast<size_t>(options.top)) s.rows.resize(options.top);
  return s;
}

namespace {

Table variant_table(const Summary& s) {
  Table t;
  for (const char* c : {"op", "kernel_variant", "isa"}) t.add_column(c, false);
  for (const char* c : {"count", "total_us", "mean_us", "share_pct", "gflop_per_s", "gbyte_per_s", "flop_per_byte"})
    t.add_column(c, true);
  t.add_column("bound", false);
  t.add_column("roof_pct", true);
  for (const SummaryRow& r : s.rows) {
    const bool timed = r.total_us > 0;
    t.rows.push_back({r.op, r.variant, r.isa, std::to_string(r.count), std::to_string(r.total_us),
                      fmt::format("{:.1f}", r.mean_us), fmt::format("{:.2f}", r.share_pct),
                      timed && r.flops > 0 ? fmt::format("{:.2f}", r.gflop_per_s) : "",
                      timed ? fmt::format("{:.2f}", r.gbyte_per_s) : "",
                      r.bytes > 0 && r.flops > 0 ? fmt::format("{:.2f}", r.flop_per_byte) : "", r.bound,
                      timed ? fmt::format("{:.1f}", r.roof_pct) : ""});
  }
  return t;
}

}  // namespace

Table summary_table(const Summary& s) {
  Table t;
  if (s.by == GroupBy::Variant) return variant_table(s);
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
  if (s.by == GroupBy::Variant)
    lines.push_back(fmt::format("roofs: {:.1f} GFLOP/s, {:.1f} GB/s (ridge {:.2f} flop/byte){}", s.roofs.peak_gflops,
                                s.roofs.peak_gbs, s.roofs.peak_gbs > 0 ? s.roofs.peak_gflops / s.roofs.peak_gbs : 0.0,
                                s.roofs_measured ? fmt::format(", measured here on 1 core ({} FMA loop, memcpy)",
                                                               s.roofs.isa)
                                                 : ", as given"));
  return lines;
}

}  // namespace profile
}  // namespace onnxmini
