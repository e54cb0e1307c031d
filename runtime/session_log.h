// What a session says about itself while it is created (docs/logging.md):
// its logger, the model it loaded, the kernel chosen for each node. Kept out of
// session.cc so the session only calls one line per message.
#pragma once
#include <cstdint>
#include <memory>
#include <string>

#include "core/logging.h"
#include "onnxmini/session.h"
#include "runtime/graph.h"

namespace onnxmini {

class ThreadPool;
struct ExecutionPlan;

// The session's logger: tagged with options.logid (or "session-<n>"), at the
// options' levels, or the default logger's when log_severity_level is -1.
// Throws InvalidArgument naming the option for levels out of range.
std::unique_ptr<Logger> make_session_logger(const SessionOptions& options);

// Info: load time, IR version, producer, opset imports, node and constant counts and bytes.
void log_model_loaded(const Logger& log, const Graph& g, double load_ms);
// Info, after folding and fusions: nodes and constants left.
void log_graph_optimized(const Logger& log, const Graph& g, size_t nodes_before);

// Info: thread pool size and spinning, GEMM backend, kernel set, SIMD level.
void log_execution_setup(const Logger& log, const SessionOptions& options, const ThreadPool& pool,
                         const char* gemm_name);

// Verbose: "node 'conv1' Conv (opset 13) -> kernel conv".
void log_kernel_choice(const Logger& log, const GraphNode& node, const std::string& kernel);
// log_kernel_choice for every node of a plan, its If/Loop/Scan bodies included.
void log_kernel_choices(const Logger& log, const ExecutionPlan& plan);

// "12 B", "3.4 KiB", "5.6 MiB", "1.2 GiB".
std::string human_bytes(size_t bytes);

}  // namespace onnxmini
