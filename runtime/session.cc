// Session: load -> optimize -> plan (kernels created once); run -> bind feeds in
// a frame and let the executor run the plan (runtime/executor.h).
#include "onnxmini/session.h"

#include <fmt/format.h>

#include <filesystem>
#include <mutex>
#include <optional>
#include <unordered_set>

#include "kernels/gemm_engine/gemm.h"
#include "kernels/registry.h"
#include "runtime/buffer_pool.h"
#include "runtime/known_opsets.h"
#include "core/system_memory.h"
#include "runtime/graph.h"
#include "runtime/constant_folding.h"
#include "runtime/executor.h"
#include "runtime/graph_optimizer.h"
#include "runtime/model_writer.h"
#include "runtime/profiler_feed.h"
#include "runtime/explain.h"
#include "runtime/session_log.h"
#include "core/cpu_features.h"
#include "core/thread_pool.h"

namespace onnxmini {

struct Session::Impl {
  SessionOptions options;
  std::unique_ptr<Logger> logger;  // before profiler, which keeps a reference
  Graph graph;
  std::unique_ptr<ExecutionPlan> plan;
  std::unique_ptr<ThreadPool> pool;
  const gemm::GemmEngine* gemm = nullptr;
  std::unique_ptr<Profiler> profiler;
  size_t weight_bytes = 0;
  int64_t max_intermediate_bytes = INT64_MAX;  // options' cap, 0 resolved to the machine's memory
  std::vector<GraphRewrite> rewrites;  // what the optimizer did, in order

  // Memory plans by input shapes (+ requested outputs and bound outputs), at most kMaxPatterns.
  static constexpr size_t kMaxPatterns = 32;
  std::mutex patterns_mu;
  std::unordered_map<std::string, std::shared_ptr<const MemoryPattern>> patterns;

  std::mutex pools_mu;
  std::vector<std::shared_ptr<BufferPool>> idle_pools;  // reused across runs; one per concurrent run

  std::shared_ptr<BufferPool> take_pool() {
    std::lock_guard<std::mutex> lk(pools_mu);
    if (idle_pools.empty()) {
      auto p = std::make_shared<BufferPool>();
      p->set_live_limit(static_cast<size_t>(max_intermediate_bytes));
      return p;
    }
    auto p = idle_pools.back();
    idle_pools.pop_back();
    return p;
  }
  void give_pool(std::shared_ptr<BufferPool> p) {
    std::lock_guard<std::mutex> lk(pools_mu);
    idle_pools.push_back(std::move(p));
  }

  void build(int64_t t_load_begin, int64_t t_load_end, bool from_path);
  void check_feed(const ValueInfo& decl, const Value& v) const;
};

namespace {

std::string known_dtypes_note(const ValueInfo& decl) {
  std::string s = "[";
  for (size_t i = 0; i < decl.shape.size(); ++i) {
    if (i) s += ",";
    s += decl.shape[i].value >= 0 ? std::to_string(decl.shape[i].value)
                                  : (decl.shape[i].param.empty() ? "?" : decl.shape[i].param);
  }
  return s + "]";
}

// What a memory plan depends on besides the graph: the feeds' shapes, the outputs
// asked for by name and the bound outputs (they change which buffers outlive the run).
std::string memory_pattern_key(const std::vector<std::pair<std::string, Value>>& feeds,
                               const std::vector<std::string>& output_names, const RunOptions* run_options) {
  std::string key;
  for (const auto& [name, v] : feeds) {
    key += name;
    key += v.is_tensor() ? ":" + shape_to_string(v.tensor().shape()) + "/" + dtype_name(v.tensor().dtype()) : ":value";
    key += ';';
  }
  key += '|';
  for (const auto& name : output_names) key += name + ";";
  key += '|';
  if (run_options)
    for (const auto& [name, t] : run_options->bound_outputs) key += name + ";";
  return key;
}

}  // namespace

void Session::Impl::build(int64_t t_load_begin, int64_t t_load_end, bool from_path) {
  const int64_t t_init = Profiler::now_ns();
  logger = make_session_logger(options);
  const Logger& log = *logger;
  log_model_loaded(log, graph, (t_load_end - t_load_begin) / 1e6);
  if (options.graph_optimization_level < 0)
    throw Error(ErrorCode::InvalidArgument,
                fmt::format("graph_optimization_level {} is not 0 (disable), 1 (basic), 2 (extended), 3 (layout) "
                            "or 99 (all)",
                            options.graph_optimization_level));
  const bool save = !options.optimized_model_filepath.empty();
  if (options.graph_optimization_level > 0) {
    const size_t nodes_before = graph.nodes.size();
    Graph saved;
    rewrites = optimize_graph(graph, options, log, save ? &saved : nullptr);
    log_graph_optimized(log, graph, nodes_before);
    if (save) save_model(saved, options.optimized_model_filepath);
  } else if (save) {
    save_model(graph, options.optimized_model_filepath);  // level 0: the model as loaded
  }
  if (options.max_tensor_bytes < 0 || options.max_intermediate_bytes < 0)
    throw Error(ErrorCode::InvalidArgument,
                fmt::format("SessionOptions: max_tensor_bytes {} / max_intermediate_bytes {}: a cap must be positive "
                            "(0: the machine's memory)",
                            options.max_tensor_bytes, options.max_intermediate_bytes));
  max_intermediate_bytes = options.max_intermediate_bytes > 0 ? options.max_intermediate_bytes : memory_limit_bytes();
  int threads = options.intra_op_num_threads;
  if (threads <= 0) threads = cpu::physical_cores();  // onnxruntime's rule for 0
  if (threads > 1024) throw Error(ErrorCode::InvalidArgument, fmt::format("intra_op_num_threads {} is absurd", threads));
  pool = std::make_unique<ThreadPool>(threads, options.intra_op_allow_spinning ? ThreadPool::kDefaultSpinUs : 0);
  gemm = &gemm::engine(options.gemm, options.kernels);
  log_execution_setup(log, options, *pool, gemm->name());
  profiler = std::make_unique<Profiler>(profiler_options(options, pool.get()), log);

  for (const auto& [id, t] : graph.constants) weight_bytes += t.nbytes();
  plan = build_plan(graph, options);
  log_kernel_choices(log, *plan);
  profiler->session_event(from_path ? "model_loading_uri" : "model_loading_array", t_load_begin, t_load_end);
  profiler->session_event("session_initialization", t_init, Profiler::now_ns());
}

void Session::Impl::check_feed(const ValueInfo& decl, const Value& v) const {
  if (decl.type.rfind("tensor(", 0) != 0) return;  // non-tensor inputs: checked by the kernel
  if (!v.is_tensor()) throw Error(ErrorCode::InvalidArgument, fmt::format("input '{}': expected {}, got {}", decl.name, decl.type, v.type_string()));
  const Tensor& t = v.tensor();
  if (decl.dtype != DType::Undefined && t.dtype() != decl.dtype)
    throw Error(ErrorCode::InvalidArgument, fmt::format("input '{}': expected dtype {}, got {}", decl.name,
                                                        dtype_name(decl.dtype), dtype_name(t.dtype())));
  if (!decl.has_shape) return;
  if (t.rank() != decl.shape.size())
    throw Error(ErrorCode::InvalidArgument, fmt::format("input '{}': expected rank {} {}, got rank {} ({})", decl.name,
                                                        decl.shape.size(), known_dtypes_note(decl), t.rank(),
                                                        shape_to_string(t.shape())));
  for (size_t i = 0; i < t.rank(); ++i)
    if (decl.shape[i].value >= 0 && decl.shape[i].value != t.dim(i))
      throw Error(ErrorCode::InvalidArgument, fmt::format("input '{}': dimension {} must be {} {}, got {}", decl.name, i,
                                                          decl.shape[i].value, known_dtypes_note(decl), t.dim(i)));
}

Session::Session(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Session::~Session() {
  if (impl_ && impl_->profiler) impl_->profiler->end_profiling();
}

std::unique_ptr<Session> Session::load(const std::string& path, const SessionOptions& options) {
  int64_t t0 = Profiler::now_ns();
  std::string bytes = read_model_file(path);
  auto impl = std::make_unique<Impl>();
  impl->options = options;
  std::string dir = std::filesystem::absolute(path).parent_path().string();
  impl->graph = load_graph(bytes.data(), bytes.size(), dir);
  check_known_opsets(impl->graph, options.allow_unknown_opsets);
  impl->build(t0, Profiler::now_ns(), true);
  return std::unique_ptr<Session>(new Session(std::move(impl)));
}

std::unique_ptr<Session> Session::load_from_bytes(const void* data, size_t size, const SessionOptions& options,
                                                  const std::string& base_dir) {
  int64_t t0 = Profiler::now_ns();
  auto impl = std::make_unique<Impl>();
  impl->options = options;
  impl->graph = load_graph(data, size, base_dir);
  check_known_opsets(impl->graph, options.allow_unknown_opsets);
  impl->build(t0, Profiler::now_ns(), false);
  return std::unique_ptr<Session>(new Session(std::move(impl)));
}

const std::vector<ValueInfo>& Session::inputs() const { return impl_->graph.inputs; }
const std::vector<ValueInfo>& Session::outputs() const { return impl_->graph.outputs; }
std::vector<ValueInfo> Session::overridable_initializers() const {
  std::vector<ValueInfo> out;
  for (const auto& [id, info] : impl_->graph.overridable) out.push_back(info);  // in value-id (model) order
  return out;
}
const SessionOptions& Session::options() const { return impl_->options; }
size_t Session::weight_bytes() const { return impl_->weight_bytes; }

std::vector<KernelExplanation> Session::explain(
    const std::map<std::string, std::vector<ExplainInput>>& observed) const {
  return explain_plan(*impl_->plan, impl_->options, impl_->pool ? impl_->pool->num_threads() : 1, observed);
}
const std::vector<GraphRewrite>& Session::graph_rewrites() const { return impl_->rewrites; }
std::string Session::end_profiling() { return impl_->profiler->end_profiling(); }
int64_t Session::profiling_start_time_ns() const { return impl_->profiler->start_time_ns(); }

namespace {
ModelDescription describe_graph(const Graph& g, size_t weight_bytes) {
  ModelDescription d;
  d.ir_version = g.ir_version;
  d.producer_name = g.producer_name;
  d.producer_version = g.producer_version;
  d.graph_name = g.graph_name;
  d.doc_string = g.doc_string;
  d.domain = g.domain;
  d.model_version = g.model_version;
  d.graph_doc_string = g.graph_doc_string;
  d.metadata_props = g.metadata_props;
  d.opsets = g.opsets;
  d.inputs = g.inputs;
  d.outputs = g.outputs;
  d.weight_bytes = weight_bytes;
  for (const auto& [id, t] : g.constants) d.initializers.push_back({g.value_names[id], t.dtype(), t.shape()});
  const auto& registry = KernelRegistry::instance();
  for (const GraphNode& n : g.nodes) {
    NodeDescription nd;
    nd.name = n.name;
    nd.op_type = n.op_type;
    nd.domain = n.domain;
    nd.opset = n.opset;
    for (int id : n.inputs) nd.inputs.push_back(id >= 0 ? g.value_names[id] : "");
    for (int id : n.outputs) nd.outputs.push_back(id >= 0 ? g.value_names[id] : "");
    for (const auto& [name, item] : n.attrs.items()) nd.attributes.emplace_back(name, Attributes::render(item));
    const KernelRegistration* reg = registry.find(n.domain, n.op_type, n.opset);
    nd.kernel = reg ? reg->kernel : "(unsupported)";
    d.nodes.push_back(std::move(nd));
  }
  return d;
}
}  // namespace

ModelDescription Session::describe() const { return describe_graph(impl_->graph, impl_->weight_bytes); }

ModelDescription describe_model(const std::string& path) {
  std::string bytes = read_model_file(path);
  Graph g = load_graph(bytes.data(), bytes.size(), std::filesystem::absolute(path).parent_path().string());
  size_t weights = 0;
  for (const auto& [id, t] : g.constants) weights += t.nbytes();
  return describe_graph(g, weights);
}

std::vector<Value> Session::run(const std::vector<std::pair<std::string, Value>>& feeds,
                                const std::vector<std::string>& output_names, const RunOptions* run_options,
                                RunStats* stats) {
  Impl& s = *impl_;
  const Graph& g = s.graph;
  const ExecutionPlan& plan = *s.plan;
  const int64_t t_run = Profiler::now_ns();

  if (run_options && (run_options->run_log_severity_level < -1 || run_options->run_log_severity_level > 4))
    throw Error(ErrorCode::InvalidArgument,
                fmt::format("RunOptions::run_log_severity_level {} is not -1 (the session's) or 0 (verbose) .. 4 (fatal)",
                            run_options->run_log_severity_level));

  // Feeds (which may replace overridable initializers, whose defaults go in first).
  std::vector<std::pair<int, const Value*>> fed_values;
  std::vector<bool> fed(g.value_names.size(), false);
  for (const auto& [name, v] : feeds) {
    int id = g.value_id(name);
    const ValueInfo* decl = nullptr;
    for (size_t i = 0; i < g.inputs.size(); ++i)
      if (g.input_ids[i] == id) decl = &g.inputs[i];
    if (!decl && id >= 0 && g.overridable.count(id)) decl = &g.overridable.at(id);
    if (!decl) {
      std::string names;
      for (const auto& in : g.inputs) names += (names.empty() ? "" : ", ") + in.name;
      throw Error(ErrorCode::InvalidArgument, fmt::format("unknown input '{}' (model inputs: {})", name, names));
    }
    if (fed[id]) throw Error(ErrorCode::InvalidArgument, fmt::format("input '{}' is fed twice", name));
    s.check_feed(*decl, v);
    fed_values.emplace_back(id, &v);
    fed[id] = true;
  }
  for (size_t i = 0; i < g.inputs.size(); ++i)
    if (!fed[g.input_ids[i]])
      throw Error(ErrorCode::InvalidArgument, fmt::format("missing input '{}' ({})", g.inputs[i].name, g.inputs[i].type));

  // What to return; intermediates asked for by name are kept alive to the end.
  std::vector<int> want;
  if (output_names.empty()) want = g.output_ids;
  std::vector<bool> keep;
  for (const auto& name : output_names) {
    int id = g.value_id(name);
    if (id < 0) throw Error(ErrorCode::InvalidArgument, fmt::format("unknown output '{}'", name));
    want.push_back(id);
    if (keep.empty()) keep.assign(g.value_names.size(), false);
    keep[id] = true;
  }

  // Io binding: value id -> user tensor.
  std::unordered_map<int, Tensor> bound;
  if (run_options)
    for (const auto& [name, t] : run_options->bound_outputs) {
      int id = g.value_id(name);
      if (id < 0) throw Error(ErrorCode::InvalidArgument, fmt::format("bound output '{}' is not a value of the model", name));
      bound[id] = t;
    }

  // The memory plan of these shapes, or a recording of this run to make one.
  std::string pattern_key;
  std::shared_ptr<const MemoryPattern> pattern;
  bool record = false;
  if (s.options.enable_mem_pattern) {
    pattern_key = memory_pattern_key(feeds, output_names, run_options);
    std::lock_guard<std::mutex> lk(s.patterns_mu);
    auto it = s.patterns.find(pattern_key);
    if (it != s.patterns.end()) pattern = it->second;
    else record = s.patterns.size() < Impl::kMaxPatterns;
  }

  std::shared_ptr<BufferPool> pool = s.take_pool();
  pool->reset_peak();
  pool->start_run(std::move(pattern), record);
  struct PoolReturn {
    Impl& s;
    std::shared_ptr<BufferPool>& p;
    ~PoolReturn() { s.give_pool(std::move(p)); }
  } pool_return{s, pool};
  const KernelContext::Allocator allocator = [&pool](DType dt, const Shape& shape) { return pool->allocate(dt, shape); };

  ProfiledRun trace(*s.profiler, s.pool.get());
  RunState state;
  state.allocator = &allocator;
  state.threads = s.pool.get();
  state.gemm = s.gemm;
  state.trace = trace ? &trace : nullptr;
  state.pool = pool.get();
  state.bound = bound.empty() ? nullptr : &bound;
  state.keep = keep.empty() ? nullptr : &keep;
  if (run_options) state.terminate = &run_options->terminate;

  std::optional<ExecutionScope> frame(std::in_place, plan, state);
  for (const auto& [id, t] : g.overridable) frame->set(id, Value(g.constants.at(id)));
  for (const auto& [id, v] : fed_values) frame->set(id, *v);
  const int64_t t_exec = Profiler::now_ns();
  frame->run_all();
  const int64_t t_exec_end = Profiler::now_ns();
  std::vector<Value> result;
  result.reserve(want.size());
  for (int id : want) {
    if (frame->value(id).is_none())
      throw Error(ErrorCode::RuntimeError, fmt::format("output '{}' was not computed", g.value_names[id]));
    result.push_back(frame->value(id));
  }
  const size_t peak = pool->peak_bytes();
  frame.reset();  // the run's intermediates go before model_run ends
  if (auto recorded = pool->finish_run()) {
    std::lock_guard<std::mutex> lk(s.patterns_mu);
    s.patterns.emplace(pattern_key, std::move(recorded));
  }
  const int64_t t_end = Profiler::now_ns();
  trace.end(t_exec, t_exec_end, t_run, t_end, peak);
  // RunOptions' log level asks for this run's summary (Info), tagged with its run_tag.
  if (run_options && run_options->run_log_severity_level >= 0 &&
      run_options->run_log_severity_level <= static_cast<int>(LogSeverity::Info))
    s.logger->log(LogSeverity::Info, "run{}: {:.3f} ms, {} outputs, peak intermediates {}",
                  run_options->run_tag.empty() ? "" : " '" + run_options->run_tag + "'", (t_end - t_run) / 1e6,
                  result.size(), human_bytes(peak));
  if (stats) {
    stats->peak_intermediate_bytes = peak;
    stats->elapsed_ms = (t_end - t_run) / 1e6;
    stats->planned_buffers = pool->planned_requests();
    stats->pooled_buffers = pool->pooled_requests();
  }
  return result;
}

}  // namespace onnxmini
