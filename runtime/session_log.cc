#include "runtime/session_log.h"

#include "runtime/execution_plan.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>

#include "core/cpu_features.h"
#include "core/thread_pool.h"
#include "onnxmini/error.h"

namespace onnxmini {
namespace {

std::atomic<int> g_session_count{0};

size_t constant_bytes(const Graph& g) {
  size_t bytes = 0;
  for (const auto& [id, t] : g.constants) bytes += t.nbytes();
  return bytes;
}

}  // namespace

std::unique_ptr<Logger> make_session_logger(const SessionOptions& o) {
  if (o.log_severity_level < -1 || o.log_severity_level > 4)
    throw Error(ErrorCode::InvalidArgument,
                fmt::format("SessionOptions::log_severity_level {} is not -1 (the default logger's) or "
                            "0 (verbose) .. 4 (fatal)",
                            o.log_severity_level));
  if (o.log_verbosity_level < 0)
    throw Error(ErrorCode::InvalidArgument,
                fmt::format("SessionOptions::log_verbosity_level {} is negative", o.log_verbosity_level));
  const int n = ++g_session_count;
  std::string tag = o.logid.empty() ? fmt::format("session-{}", n) : o.logid;
  if (o.log_severity_level >= 0) return std::make_unique<Logger>(std::move(tag), o.log_severity_level, o.log_verbosity_level);
  const Logger& d = default_logger();
  return std::make_unique<Logger>(std::move(tag), d.severity(), std::max(d.verbosity(), o.log_verbosity_level));
}

void log_model_loaded(const Logger& log, const Graph& g, double load_ms) {
  if (!log.enabled(LogSeverity::Info)) return;
  std::string opsets;
  for (const auto& [domain, version] : g.opsets)
    opsets += fmt::format("{}{} {}", opsets.empty() ? "" : ", ", domain.empty() ? "ai.onnx" : domain, version);
  const std::string producer =
      g.producer_name.empty() ? "" : fmt::format(", producer {} {}", g.producer_name, g.producer_version);
  log.log(LogSeverity::Info, "model loaded in {:.1f} ms: IR version {}{}, opsets [{}], {} nodes, {} constants ({})",
          load_ms, g.ir_version, producer, opsets, g.nodes.size(), g.constants.size(), human_bytes(constant_bytes(g)));
}

void log_graph_optimized(const Logger& log, const Graph& g, size_t nodes_before) {
  ONNXMINI_LOG(log, Info, "graph optimized: {} nodes (was {}), {} constants ({})", g.nodes.size(), nodes_before,
               g.constants.size(), human_bytes(constant_bytes(g)));
}

void log_execution_setup(const Logger& log, const SessionOptions& o, const ThreadPool& pool, const char* gemm_name) {
  ONNXMINI_LOG(log, Info, "intra-op thread pool: {} thread(s), spinning {}", pool.num_threads(),
               pool.spin_us() > 0 ? fmt::format("{} us before sleeping", pool.spin_us()) : std::string("off"));
  ONNXMINI_LOG(log, Info, "kernels: {}, GEMM backend {}, SIMD {}", to_string(o.kernels), gemm_name,
               cpu::active_isa_name());
}

void log_kernel_choice(const Logger& log, const GraphNode& node, const std::string& kernel) {
  if (!log.verbose_enabled(0)) return;
  // Unnamed nodes as the profiler names them: <OpType>_<node index>.
  const std::string name = node.name.empty() ? fmt::format("{}_{}", node.op_type, node.index) : node.name;
  // What fusions added (attributes "_fused_*"): "activation=Relu", "addends=1"; long values by name only.
  std::string fused;
  for (const auto& [attr, item] : node.attrs.items()) {
    if (attr.rfind("_fused_", 0) != 0) continue;
    const std::string value = Attributes::render(item);
    fused += fmt::format("{}{}{}{}", fused.empty() ? ", fused: " : ", ", attr.substr(7), value.size() <= 16 ? "=" : "",
                         value.size() <= 16 ? value : "");
  }
  log.log(LogSeverity::Verbose, "node '{}' {}{}{} (opset {}{}) -> kernel {}", name, node.domain,
          node.domain.empty() ? "" : ".", node.op_type, node.opset, fused, kernel);
}

std::string human_bytes(size_t bytes) {
  if (bytes < 1024) return fmt::format("{} B", bytes);
  static const char* const kUnits[] = {"KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(bytes) / 1024;
  int u = 0;
  while (v >= 1024 && u < 3) v /= 1024, ++u;
  return fmt::format("{:.1f} {}", v, kUnits[u]);
}

void log_kernel_choices(const Logger& log, const ExecutionPlan& plan) {
  if (!log.verbose_enabled(0)) return;
  for (size_t k = 0; k < plan.graph->nodes.size(); ++k)
    log_kernel_choice(log, plan.graph->nodes[k], plan.registrations[k] ? plan.registrations[k]->kernel : "(none)");
  for (const auto& body : plan.bodies) log_kernel_choices(log, body->plan());
}

}  // namespace onnxmini
