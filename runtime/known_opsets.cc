#include "runtime/known_opsets.h"

#include <fmt/format.h>

#include "kernels/registry.h"
#include "runtime/graph.h"

namespace onnxmini {

const std::vector<KnownDomain>& known_domains() {
  // onnx 1.23: ai.onnx opset 28, ai.onnx.ml 5, IR version 14. com.microsoft is
  // onnxruntime's contrib domain (version 1), the preview domains are onnx's.
  static const std::vector<KnownDomain> domains = {
      {"", 28}, {"ai.onnx.ml", 5}, {"com.microsoft", 1}, {"ai.onnx.preview.training", 1}, {"ai.onnx.preview", 1}};
  return domains;
}

int64_t newest_ir_version() { return 14; }

namespace {

std::string label(const std::string& domain) { return domain.empty() ? "ai.onnx" : domain; }

const KnownDomain* find_domain(const std::string& domain) {
  for (const auto& d : known_domains())
    if (domain == d.domain) return &d;
  return nullptr;
}

// A domain some kernel is registered in (tests register their own) counts as known.
bool has_kernels(const std::string& domain) {
  for (const auto& r : KernelRegistry::instance().all())
    if (r.domain == domain) return true;
  return false;
}

std::string known_list() {
  std::string s;
  for (const auto& d : known_domains()) s += (s.empty() ? "" : ", ") + label(d.domain);
  return s;
}

void check_nodes(const Graph& g, const std::string& where) {
  for (const auto& n : g.nodes) {
    if (!find_domain(n.domain) && !has_kernels(n.domain))
      throw Error(ErrorCode::NotImplemented,
                  fmt::format("{}unsupported op: node '{}' op '{}' domain '{}' opset {}: the domain is unknown to "
                              "this build (known: {})",
                              where, n.name, n.op_type, label(n.domain), n.opset, known_list()));
    for (const auto& [attr, body] : n.subgraphs)
      check_nodes(*body, fmt::format("{}node '{}' ({}) attribute '{}': ", where, n.name, n.op_type, attr));
  }
}

}  // namespace

void check_known_opsets(const Graph& g, bool allow_unknown_opsets) {
  if (!allow_unknown_opsets) {
    const char* hint = "; set allow_unknown_opsets (CLI --allow-unknown-opsets) to try anyway";
    if (g.ir_version > newest_ir_version())
      throw Error(ErrorCode::InvalidModel, fmt::format("model has IR version {}, newer than the newest this build "
                                                       "knows ({}){}",
                                                       g.ir_version, newest_ir_version(), hint));
    for (const auto& [domain, version] : g.opsets) {
      const KnownDomain* d = find_domain(domain);
      if (d && version > d->newest_opset)
        throw Error(ErrorCode::InvalidModel,
                    fmt::format("model imports opset {} of domain '{}', newer than the newest this build knows ({}){}",
                                version, label(domain), d->newest_opset, hint));
    }
  }
  check_nodes(g, "");
}

}  // namespace onnxmini
