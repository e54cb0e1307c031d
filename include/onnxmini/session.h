// The public entry point: load a model, inspect it, run it.
//
//   onnxmini::SessionOptions opts;
//   auto session = onnxmini::Session::load("model.onnx", opts);
//   auto outputs = session->run({{"X", onnxmini::Tensor(...)}});
#pragma once
#include "onnxmini/export.h"
#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "onnxmini/kernel_options.h"
#include "onnxmini/tensor.h"
#include "onnxmini/value.h"

ONNXMINI_API_BEGIN
namespace onnxmini {


// onnxruntime's GraphOptimizationLevel, names and values (docs/optimizer.md lists the rules of each):
//   0 none: the model's nodes one for one (profiles line up with the model);
//   1 basic: constant folding, eliminations (Identity, inference Dropout, no-op Cast / Reshape /
//     Transpose pairs, dead nodes, unused initializers), Shape of fixed shapes folded;
//   2 extended: fusions; 3 layout and 99 all: also the load-time blocked channel layout
//     (NCHW16c) for chains of convolutions (docs/optimizer.md `nchwc_layout`; never saved).
enum GraphOptimizationLevel : int {
  ORT_DISABLE_ALL = 0,
  ORT_ENABLE_BASIC = 1,
  ORT_ENABLE_EXTENDED = 2,
  ORT_ENABLE_LAYOUT = 3,
  ORT_ENABLE_ALL = 99,
};

// One rewrite the optimizer made: the rule's name (docs/optimizer.md) and the nodes it
// touched ("Conv 'c1' + Relu 'r1'").
struct GraphRewrite {
  std::string rule;
  std::string nodes;
};

// A rule of the optimizer, for `onnxmini optimize --report` and the docs.
struct GraphRuleInfo {
  std::string name;
  int level = 0;            // the lowest GraphOptimizationLevel that applies it
  bool saved_as_onnx = true;  // false: its result has no ONNX op; a saved model keeps the original nodes
  std::string pattern;      // what it matches and what it makes
};
// Every rule, in the order the optimizer applies them.
std::vector<GraphRuleInfo> graph_optimization_rules();

struct SessionOptions {
  int intra_op_num_threads = 1;  // 0: one per physical core (as onnxruntime)
  // Idle pool threads spin briefly (ThreadPool::kDefaultSpinUs) before sleeping, so
  // back-to-back parallel kernels skip a wake-up; false: sleep at once (as
  // onnxruntime's "session.intra_op.allow_spinning" = "0").
  bool intra_op_allow_spinning = true;
  GemmBackend gemm = GemmBackend::Builtin;
  KernelMode kernels = KernelMode::Fast;
  // A GraphOptimizationLevel (0, 1, 2, 3 or 99; any other value >= 3 means all); the default is
  // onnxruntime's, all. 0 keeps the model's nodes one for one, so a profile lines up with the model.
  int graph_optimization_level = ORT_ENABLE_ALL;
  // Non-empty: the optimized graph is saved there as plain ONNX when the session is created
  // (as onnxruntime's option). Rewrites with no ONNX form are saved as the original nodes.
  std::string optimized_model_filepath;
  // Logging (docs/logging.md): 0 verbose, 1 info, 2 warning, 3 error, 4 fatal; -1: the
  // default logger's level when the session is created (set_default_log_severity; 2 unless changed).
  int log_severity_level = -1;
  // Verbose messages of verbosity v are shown at severity 0 when v <= this level
  // (with log_severity_level -1: the larger of this and the default logger's).
  int log_verbosity_level = 0;
  std::string logid;  // tag of this session's messages; empty: "session-<n>"
  // Plan the buffers once per set of input shapes (onnxruntime's memory pattern):
  // the first run with new shapes records its allocations, later runs with the
  // same shapes take fixed offsets in one arena (runtime/memory_pattern.h).
  bool enable_mem_pattern = true;

  // Profiling (see docs/profiler.md).
  bool enable_profiling = false;
  std::string profile_file_prefix = "onnxruntime_profile_";
  ProfileLayout profile_layout = ProfileLayout::Fences;
  size_t profile_max_events = 1000000;  // a warning is printed once when reached
  int profile_skip_runs = 0;            // runs not recorded at the start (warm-up)
  int profile_max_runs = -1;            // runs recorded after the skipped ones; -1: all
  bool profile_memory_counters = false; // add Chrome counter events ("ph":"C") for live bytes

  // Reliability (docs/reliability.md). A model whose IR version or opset import (per
  // domain) is newer than this build knows is refused; true: try to run it anyway.
  bool allow_unknown_opsets = false;
  // Memory caps, checked before a kernel allocates (the error names the node, the shape
  // and the size): one tensor's bytes, and the bytes of a run's live intermediates.
  // 0: the machine's physical memory (lowered by the environment variable ONNXMINI_MEMORY_LIMIT).
  int64_t max_tensor_bytes = 0;
  int64_t max_intermediate_bytes = 0;
};

// One symbolic or fixed dimension of a declared shape.
struct Dim {
  int64_t value = -1;   // -1 when unknown or symbolic
  std::string param;    // symbolic name ("N", "batch"), empty when fixed or unknown
};

// A graph input or output as declared in the model.
struct ValueInfo {
  std::string name;
  std::string type;          // "tensor(float)", "seq(map(int64,tensor(float)))", ...
  DType dtype = DType::Undefined;  // element type for tensors
  bool has_shape = false;
  std::vector<Dim> shape;
};

struct RunOptions {
  // Outputs written in place (io binding): the kernel producing the value writes
  // into this tensor when dtype and shape match; otherwise run() fails.
  std::vector<std::pair<std::string, Tensor>> bound_outputs;
  // Set from any thread to stop the runs using these options: the executor reads it
  // (relaxed) before every node, If/Loop/Scan bodies included, and throws
  // Error(Terminated, "Exiting due to terminate flag being set to true.") at the next
  // node. A node already computing finishes first. Runs started while set fail at once.
  std::atomic<bool> terminate{false};
  // This run's log line (as onnxruntime's RunOptions): with run_log_severity_level 0 or 1, one
  // info line through the session's logger when the run ends, naming run_tag; -1 (the default)
  // or 2..4: none. The verbosity is kept for onnxruntime parity (a run logs no verbose lines).
  std::string run_tag;
  int run_log_severity_level = -1;
  int run_log_verbosity_level = 0;

  RunOptions() = default;
  // A copy takes the flag's current value (std::atomic is not copyable); it does not share it.
  RunOptions(const RunOptions& o)
      : bound_outputs(o.bound_outputs), terminate(o.terminate.load()), run_tag(o.run_tag),
        run_log_severity_level(o.run_log_severity_level), run_log_verbosity_level(o.run_log_verbosity_level) {}
  RunOptions& operator=(const RunOptions& o) {
    bound_outputs = o.bound_outputs;
    terminate = o.terminate.load();
    run_tag = o.run_tag;
    run_log_severity_level = o.run_log_severity_level;
    run_log_verbosity_level = o.run_log_verbosity_level;
    return *this;
  }
};

struct RunStats {
  size_t peak_intermediate_bytes = 0;  // peak bytes of live intermediates during the run
  double elapsed_ms = 0;
  // Buffer requests served from the memory plan of these input shapes / from the pool.
  size_t planned_buffers = 0, pooled_buffers = 0;
};

// What `onnxmini info` prints.
struct NodeDescription {
  std::string name, op_type, domain;
  int opset = 0;
  std::vector<std::string> inputs, outputs;
  std::vector<std::pair<std::string, std::string>> attributes;  // name, rendered value
  std::string kernel;  // the kernel that will run it
};
struct InitializerDescription {
  std::string name;
  DType dtype = DType::Undefined;
  Shape shape;
};
struct ModelDescription {
  int64_t ir_version = 0;
  std::string producer_name, producer_version, graph_name, doc_string;
  std::string domain, graph_doc_string;  // the model's domain; the main graph's doc_string
  int64_t model_version = 0;
  std::vector<std::pair<std::string, std::string>> metadata_props;  // key, value as in the model
  std::vector<std::pair<std::string, int64_t>> opsets;  // domain ("" = ai.onnx), version
  std::vector<ValueInfo> inputs, outputs;
  std::vector<InitializerDescription> initializers;
  std::vector<NodeDescription> nodes;  // execution order
  size_t weight_bytes = 0;
};

// `onnxmini run --explain`: what each node's kernel will do, asked of the kernel
// (Kernel::describe) without running it.
// A node input as known before a run: its element type and shape (has_shape false: unknown).
struct ExplainInput {
  DType dtype = DType::Undefined;
  bool has_shape = false;
  Shape shape;
};
struct KernelExplanation {
  std::string node;     // the node's event name in traces (its name, or "<OpType>_<index>")
  std::string op_type;
  std::string kernel;   // registered kernel name
  int depth = 0;        // 0: main graph; 1: in a body (If/Loop/Scan) of a main-graph node; ...
  std::string body;     // depth > 0: "<parent node>.<attribute>" (e.g. "loop_1.body")
  std::string variant;  // the path it will take, or "chosen at run time"
  std::string isa;      // portable, avx2 or avx512 ("" when chosen at run time)
  std::string blocking; // tile sizes / cache blocks, "" when the kernel has none
  int threads = 1;      // the session's intra-op threads the kernel may use
  bool shapes_known = false;  // every present input had a known shape
  std::string note;     // why it is chosen at run time (e.g. a describe error), or ""
};

// One row of the kernel table: `op_type` of `domain` for opsets [since, until].
struct OpSupport {
  std::string domain;  // "" for ai.onnx
  std::string op_type;
  int since_version = 0;
  int until_version = 0;  // INT_MAX: open-ended
  std::string kernel;     // the kernel's name ("conv"), as traces show it
  std::string source;     // the file registering it ("kernels/nn/conv.cc")
};
// Every registered kernel, sorted by domain, op type and version.
std::vector<OpSupport> supported_ops();

// Describes a model without creating kernels, so models with unsupported ops
// can still be inspected (their nodes show kernel "(unsupported)").
ModelDescription describe_model(const std::string& path);

class Session {
 public:
  // Loads and validates a model; all errors are onnxmini::Error with a message naming the culprit.
  static std::unique_ptr<Session> load(const std::string& path, const SessionOptions& options = {});
  // From serialized bytes; external data is resolved relative to `base_dir` (none if empty).
  static std::unique_ptr<Session> load_from_bytes(const void* data, size_t size, const SessionOptions& options = {},
                                                  const std::string& base_dir = "");
  ~Session();

  const std::vector<ValueInfo>& inputs() const;
  const std::vector<ValueInfo>& outputs() const;
  // Initializers the model also lists as graph inputs (onnxruntime's overridable
  // initializers): a feed of that name replaces the stored value for one run.
  std::vector<ValueInfo> overridable_initializers() const;
  const SessionOptions& options() const;
  ModelDescription describe() const;

  // Runs the graph. `output_names` may name graph outputs or any intermediate
  // value; empty means all graph outputs in declaration order. Thread-safe.
  std::vector<Value> run(const std::vector<std::pair<std::string, Value>>& feeds,
                         const std::vector<std::string>& output_names = {}, const RunOptions* run_options = nullptr,
                         RunStats* stats = nullptr);

  // Profiling: writes the trace and returns its file name ("" when profiling is off).
  std::string end_profiling();
  int64_t profiling_start_time_ns() const;

  // Bytes held by initializers and constants.
  size_t weight_bytes() const;

  // Per node (bodies of If/Loop/Scan right after their node, deeper depth), the
  // kernel's plan for the known input shapes: constants, declared graph inputs
  // with static shapes, and `observed` (node event name -> its present tensor inputs in order, e.g.
  // read from a profile of one run). Runs nothing.
  std::vector<KernelExplanation> explain(
      const std::map<std::string, std::vector<ExplainInput>>& observed = {}) const;

  // The rewrites the optimizer made when the session was created, in order.
  const std::vector<GraphRewrite>& graph_rewrites() const;

  struct Impl;

 private:
  explicit Session(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace onnxmini
ONNXMINI_API_END
