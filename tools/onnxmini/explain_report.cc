#include "tools/onnxmini/explain_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>

using namespace onnxmini;

namespace onnxmini_cli {

namespace {

std::string level_name(int level) {
  switch (level) {
    case ORT_DISABLE_ALL: return "0, none: the model's own nodes";
    case ORT_ENABLE_BASIC: return "1, basic";
    case ORT_ENABLE_EXTENDED: return "2, extended";
    case ORT_ENABLE_LAYOUT: return "3, layout";
    default: return fmt::format("{}, all", level);
  }
}

}  // namespace

std::string explain_text(const ExplainHeader& h, const std::vector<KernelExplanation>& rows) {
  std::string out = fmt::format("explain: {}\n", h.model);
  out += fmt::format("graph: optimizer level {}; {} rewrite(s){}\n", level_name(h.optimization_level),
                     h.rewrites.size(),
                     h.optimization_level == ORT_DISABLE_ALL
                         ? ""
                         : ": the nodes below are the optimized graph that runs (--optimize 0 keeps the model's nodes)");
  for (const GraphRewrite& r : h.rewrites) out += fmt::format("  rewrite {}: {}\n", r.rule, r.nodes);
  out += fmt::format("shapes: {}\n", h.shapes_from);
  out += fmt::format("kernels: {}, gemm: {}, intra-op threads: {} (ONNXMINI_ISA=portable|avx2|avx512 caps the ISA)\n\n",
                     h.kernels, h.gemm, h.threads);

  // Columns sized to their longest entry; a body's nodes are indented by depth.
  const std::vector<std::string> head = {"node", "op", "kernel", "variant", "isa", "threads", "blocking / note"};
  std::vector<std::vector<std::string>> table;
  for (const KernelExplanation& e : rows) {
    std::string detail = e.blocking;
    if (!e.note.empty()) detail += (detail.empty() ? "" : "; ") + e.note;
    table.push_back({std::string(2 * e.depth, ' ') + e.node, e.op_type, e.kernel, e.variant,
                     e.isa.empty() ? "-" : e.isa, std::to_string(e.threads), detail});
  }
  std::vector<size_t> width(head.size());
  for (size_t c = 0; c < head.size(); ++c) {
    width[c] = head[c].size();
    for (const auto& row : table) width[c] = std::max(width[c], row[c].size());
  }
  auto line = [&](const std::vector<std::string>& cells) {
    std::string s;
    for (size_t c = 0; c < cells.size(); ++c)
      s += c + 1 == cells.size() ? cells[c] : fmt::format("{:<{}}  ", cells[c], width[c]);
    while (!s.empty() && s.back() == ' ') s.pop_back();
    return s + "\n";
  };
  out += line(head);
  std::string last_body;
  for (size_t r = 0; r < table.size(); ++r) {
    if (!rows[r].body.empty() && rows[r].body != last_body)
      out += fmt::format("{}{}:\n", std::string(2 * rows[r].depth - 2, ' '), rows[r].body);
    last_body = rows[r].body;
    out += line(table[r]);
  }
  return out;
}

std::string explain_json(const ExplainHeader& h, const std::vector<KernelExplanation>& rows) {
  nlohmann::json j;
  j["model"] = h.model;
  j["optimization_level"] = h.optimization_level;
  j["rewrites"] = nlohmann::json::array();
  for (const GraphRewrite& r : h.rewrites) j["rewrites"].push_back({{"rule", r.rule}, {"nodes", r.nodes}});
  j["shapes"] = h.shapes_from;
  j["threads"] = h.threads;
  j["kernels"] = h.kernels;
  j["gemm"] = h.gemm;
  j["nodes"] = nlohmann::json::array();
  for (const KernelExplanation& e : rows)
    j["nodes"].push_back({{"node", e.node}, {"op", e.op_type}, {"kernel", e.kernel}, {"depth", e.depth},
                          {"body", e.body}, {"variant", e.variant}, {"isa", e.isa}, {"blocking", e.blocking},
                          {"threads", e.threads}, {"shapes_known", e.shapes_known}, {"note", e.note}});
  return j.dump();
}

}  // namespace onnxmini_cli
