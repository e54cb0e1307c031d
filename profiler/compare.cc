#include "onnxmini/profile.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <tuple>

#include "onnxmini/error.h"

namespace onnxmini {
namespace profile {

namespace {

using Key = std::tuple<std::string, std::string, std::string, std::string, int64_t>;  // op, node, in, out, idx

struct Side {
  std::map<Key, std::pair<int64_t, int64_t>> sums;  // key -> (total us, count)
  std::vector<Key> order;                           // first appearance
  int runs = 0;
  int64_t total_us = 0;
};

Side collect(const Trace& t, const CompareOptions& o) {
  Side side;
  side.runs = std::max(0, trace_runs(t) - o.skip_runs);
  std::map<std::tuple<std::string, std::string, std::string>, int64_t> seen;  // occurrences in the current run
  int current_run = -1;
  for (const KernelEvent& k : t.kernels) {
    if (k.run != current_run) {
      seen.clear();
      current_run = k.run;
    }
    Key key;
    switch (o.by) {
      case GroupBy::Op: key = Key{k.op, "", "", "", -1}; break;
      case GroupBy::Node: key = Key{k.op, k.node, "", "", -1}; break;
      case GroupBy::Variant:
        throw Error(ErrorCode::InvalidArgument, "profile compare has no --by variant (use op, node or shape)");
      case GroupBy::Shape: {
        const int64_t idx = seen[{k.op, k.input_shapes, k.output_shapes}]++;
        key = Key{k.op, "", k.input_shapes, k.output_shapes, idx};
        break;
      }
    }
    if (k.run < o.skip_runs) continue;
    auto [it, inserted] = side.sums.emplace(key, std::make_pair(int64_t(0), int64_t(0)));
    if (inserted) side.order.push_back(key);
    it->second.first += k.self_us;
    it->second.second += 1;
    side.total_us += k.self_us;
  }
  return side;
}

}  // namespace

Comparison compare(const Trace& base, const Trace& other, const CompareOptions& options) {
  if (options.skip_runs < 0) throw Error(ErrorCode::InvalidArgument, "--skip-runs must be >= 0");
  const Side b = collect(base, options), o = collect(other, options);
  Comparison c;
  c.base_path = base.path;
  c.other_path = other.path;
  c.by = options.by;
  c.base_runs = b.runs;
  c.other_runs = o.runs;
  c.base_total_us = b.runs ? double(b.total_us) / b.runs : 0;
  c.other_total_us = o.runs ? double(o.total_us) / o.runs : 0;
  auto make_row = [&](const Key& key) {
    CompareRow r;
    std::tie(r.op, r.node, r.input_shapes, r.output_shapes, r.idx) = key;
    if (auto it = b.sums.find(key); it != b.sums.end()) {
      r.has_base = true;
      r.base_us = double(it->second.first) / std::max(1, b.runs);
      r.base_count = it->second.second;
    }
    if (auto it = o.sums.find(key); it != o.sums.end()) {
      r.has_other = true;
      r.other_us = double(it->second.first) / std::max(1, o.runs);
      r.other_count = it->second.second;
    }
    r.side = r.has_base && r.has_other ? "=" : (r.has_base ? "-" : "+");
    return r;
  };
  for (const Key& k : b.order) c.rows.push_back(make_row(k));
  for (const Key& k : o.order)
    if (!b.sums.count(k)) c.rows.push_back(make_row(k));
  if (options.by == GroupBy::Op)
    std::stable_sort(c.rows.begin(), c.rows.end(), [](const CompareRow& x, const CompareRow& y) {
      return std::max(x.base_us, x.other_us) > std::max(y.base_us, y.other_us);
    });
  return c;
}

Table comparison_table(const Comparison& c) {
  Table t;
  t.add_column("side", false);
  if (c.by == GroupBy::Node) t.add_column("node", false);
  t.add_column("op", false);
  if (c.by == GroupBy::Shape) {
    t.add_column("input_type_shape", false);
    t.add_column("output_type_shape", false);
    t.add_column("idx", true);
  }
  for (const char* col : {"base_us", "other_us", "ratio", "base_count", "other_count"}) t.add_column(col, true);
  for (const CompareRow& r : c.rows) {
    std::vector<std::string> cells{r.side};
    if (c.by == GroupBy::Node) cells.push_back(r.node);
    cells.push_back(r.op);
    if (c.by == GroupBy::Shape) {
      cells.push_back(r.input_shapes);
      cells.push_back(r.output_shapes);
      cells.push_back(std::to_string(r.idx));
    }
    cells.push_back(r.has_base ? fmt::format("{:.1f}", r.base_us) : "");
    cells.push_back(r.has_other ? fmt::format("{:.1f}", r.other_us) : "");
    cells.push_back(r.has_base && r.has_other && r.base_us > 0 ? fmt::format("{:.3f}", r.ratio()) : "");
    cells.push_back(std::to_string(r.base_count));
    cells.push_back(std::to_string(r.other_count));
    t.rows.push_back(std::move(cells));
  }
  return t;
}

std::vector<std::string> comparison_title(const Comparison& c) {
  return {fmt::format("base:  {} ({} runs), kernel time {:.1f} us per run", c.base_path, c.base_runs, c.base_total_us),
          fmt::format("other: {} ({} runs), kernel time {:.1f} us per run, ratio {:.3f}", c.other_path, c.other_runs,
                      c.other_total_us, c.base_total_us > 0 ? c.other_total_us / c.base_total_us : 0.0),
          "times are microseconds per run; ratio = other / base; side: = both, - base only, + other only"};
}

}  // namespace profile
}  // namespace onnxmini
