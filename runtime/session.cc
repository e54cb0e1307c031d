// Session: load -> validate -> create kernels once; run -> execute nodes in the
// fixed order, releasing each intermediate after its last consumer.
#include "onnxmini/session.h"

#include <fmt/format.h>

#include <filesystem>
#include <mutex>
#include <unordered_set>

#include "kernels/gemm_engine/gemm.h"
#include "kernels/registry.h"
#include "profiler/profiler.h"
#include "runtime/buffer_pool.h"
#include "runtime/graph.h"
#include "runtime/constant_folding.h"
#include "runtime/graph_fusion.h"
#include "runtime/node_kernel.h"
#include "runtime/session_log.h"
#include "core/logging.h"
#include "core/thread_pool.h"

namespace onnxmini {

struct Session::Impl {
  SessionOptions options;
  std::unique_ptr<Logger> logger;  // before profiler, which keeps a reference
  Graph graph;
  std::vector<KernelInfo> infos;                 // per node, execution order
  std::vector<std::unique_ptr<Kernel>> kernels;  // per node
  std::vector<ProfiledNode> profiled;            // per node
  std::vector<int> consumer_count;               // per value id: uses as a node input
  std::vector<bool> is_constant;                 // per value id
  std::unique_ptr<ThreadPool> pool;
  const gemm::GemmEngine* gemm = nullptr;
  std::unique_ptr<Profiler> profiler;
  size_t weight_bytes = 0;

  std::mutex pools_mu;
  std::vector<std::shared_ptr<BufferPool>> idle_pools;  // reused across runs; one per concurrent run

  std::shared_ptr<BufferPool> take_pool() {
    std::lock_guard<std::mutex> lk(pools_mu);
    if (idle_pools.empty()) return std::make_shared<BufferPool>();
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

}  // namespace

void Session::Impl::build(int64_t t_load_begin, int64_t t_load_end, bool from_path) {
  const int64_t t_init = Profiler::now_ns();
  logger = make_session_logger(options);
  const Logger& log = *logger;
  log_model_loaded(log, graph, (t_load_end - t_load_begin) / 1e6);
  if (options.graph_optimization_level > 0) {
    const size_t nodes_before = graph.nodes.size();
    fold_constants(graph, options, log);  // first, so fusions and prepacking see the folded weights
    fuse_graph(graph, options.graph_optimization_level, log);
    drop_unused_constants(graph, log);  // the inputs of folded nodes, weights replaced by fused ones
    log_graph_optimized(log, graph, nodes_before);
  }
  int threads = options.intra_op_num_threads;
  if (threads <= 0) threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  if (threads > 1024) throw Error(ErrorCode::InvalidArgument, fmt::format("intra_op_num_threads {} is absurd", threads));
  pool = std::make_unique<ThreadPool>(threads, options.intra_op_allow_spinning ? ThreadPool::kDefaultSpinUs : 0);
  gemm = &gemm::engine(options.gemm, options.kernels);
  log_execution_setup(log, options, *pool, gemm->name());
  profiler = std::make_unique<Profiler>(options, pool.get(), log);

  const size_t nvalues = graph.value_names.size();
  is_constant.assign(nvalues, false);
  for (const auto& [id, t] : graph.constants) {
    if (!graph.overridable.count(id)) is_constant[id] = true;
    weight_bytes += t.nbytes();
  }
  consumer_count.assign(nvalues, 0);

  std::vector<const KernelRegistration*> regs;
  for (const GraphNode& node : graph.nodes) {
    regs.push_back(&find_kernel(node));  // unsupported ops fail here, before any kernel is created
    infos.push_back(make_kernel_info(graph, node, options));
    for (int id : node.inputs)
      if (id >= 0) ++consumer_count[id];
  }
  // Kernels are created after `infos` stops growing: they may keep references to their KernelInfo.
  for (size_t k = 0; k < graph.nodes.size(); ++k) {
    const GraphNode& node = graph.nodes[k];
    const KernelRegistration* reg = regs[k];
    kernels.push_back(create_kernel(*reg, infos[k]));
    ProfiledNode pn;
    pn.event_name = node.name.empty() ? fmt::format("{}_{}", node.op_type, node.index) : node.name;
    pn.op_type = node.op_type;
    pn.node_index = node.index;
    for (int id : node.inputs) pn.input_is_parameter.push_back(id >= 0 && is_constant[id]);
    pn.kernel_name = reg->kernel;
    profiled.push_back(std::move(pn));
    log_kernel_choice(log, node, reg->kernel);
  }
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
  impl->build(t0, Profiler::now_ns(), true);
  return std::unique_ptr<Session>(new Session(std::move(impl)));
}

std::unique_ptr<Session> Session::load_from_bytes(const void* data, size_t size, const SessionOptions& options,
                                                  const std::string& base_dir) {
  int64_t t0 = Profiler::now_ns();
  auto impl = std::make_unique<Impl>();
  impl->options = options;
  impl->graph = load_graph(data, size, base_dir);
  impl->build(t0, Profiler::now_ns(), false);
  return std::unique_ptr<Session>(new Session(std::move(impl)));
}

const std::vector<ValueInfo>& Session::inputs() const { return impl_->graph.inputs; }
const std::vector<ValueInfo>& Session::outputs() const { return impl_->graph.outputs; }
const SessionOptions& Session::options() const { return impl_->options; }
size_t Session::weight_bytes() const { return impl_->weight_bytes; }
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
  const int64_t t_run = Profiler::now_ns();
  std::vector<Value> values(g.value_names.size());

  // Constants, then feeds (which may replace overridable initializers).
  for (const auto& [id, t] : g.constants) values[id] = Value(t);
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
    values[id] = v;
    fed[id] = true;
  }
  for (size_t i = 0; i < g.inputs.size(); ++i)
    if (!fed[g.input_ids[i]])
      throw Error(ErrorCode::InvalidArgument, fmt::format("missing input '{}' ({})", g.inputs[i].name, g.inputs[i].type));

  // What to return; those values are kept alive to the end.
  std::vector<int> want;
  if (output_names.empty()) want = g.output_ids;
  for (const auto& name : output_names) {
    int id = g.value_id(name);
    if (id < 0) throw Error(ErrorCode::InvalidArgument, fmt::format("unknown output '{}'", name));
    want.push_back(id);
  }
  std::vector<int> remaining = s.consumer_count;
  std::vector<bool> keep(g.value_names.size(), false);
  for (int id : want) keep[id] = true;

  // Io binding: value id -> user tensor.
  std::unordered_map<int, Tensor> bound;
  if (run_options)
    for (const auto& [name, t] : run_options->bound_outputs) {
      int id = g.value_id(name);
      if (id < 0) throw Error(ErrorCode::InvalidArgument, fmt::format("bound output '{}' is not a value of the model", name));
      bound[id] = t;
    }

  std::shared_ptr<BufferPool> pool = s.take_pool();
  pool->reset_peak();
  struct PoolReturn {
    Impl& s;
    std::shared_ptr<BufferPool>& p;
    ~PoolReturn() { s.give_pool(std::move(p)); }
  } pool_return{s, pool};
  const KernelContext::Allocator allocator = [&pool](DType dt, const Shape& shape) { return pool->allocate(dt, shape); };

  RunTracePtr trace = s.profiler->begin_run();
  const int64_t t_exec = Profiler::now_ns();
  std::vector<const Value*> inputs;
  std::vector<Value> outs;
  for (size_t k = 0; k < g.nodes.size(); ++k) {
    const GraphNode& node = g.nodes[k];
    NodeTimes times;
    times.begin_ns = trace ? Profiler::now_ns() : 0;
    inputs.clear();
    for (int id : node.inputs) inputs.push_back(id >= 0 ? &values[id] : nullptr);
    outs.assign(node.outputs.size(), Value());
    KernelContext::BoundOutput bind;
    if (!bound.empty())
      bind = [&](size_t i, DType dt, const Shape& shape) -> Tensor {
        auto it = bound.find(node.outputs[i]);
        if (it == bound.end()) return Tensor();
        const Tensor& t = it->second;
        if (t.dtype() != dt || t.shape() != shape)
          throw Error(ErrorCode::InvalidArgument,
                      fmt::format("bound output '{}' is {} {}, the model produces {} {}", g.value_names[node.outputs[i]],
                                  dtype_name(t.dtype()), shape_to_string(t.shape()), dtype_name(dt), shape_to_string(shape)));
        return t;
      };
    KernelContext ctx(s.infos[k], inputs, outs, allocator, s.pool.get(), s.gemm, bind);
    Kernel& kernel = *s.kernels[k];
    kernel.prepare(ctx);
    if (trace) times.prepared_ns = Profiler::now_ns();
    kernel.compute(ctx);
    if (trace) {
      times.computed_ns = Profiler::now_ns();
      s.profiler->node(*trace, s.profiled[k], inputs, outs, ctx.stats());
    }

    for (size_t i = 0; i < node.outputs.size(); ++i) {
      int id = node.outputs[i];
      if (id < 0) continue;
      if (outs[i].is_none())
        ctx.fail("produced no value for output {} '{}'", i, g.value_names[id]);
      auto b = bound.find(id);
      if (b != bound.end() && outs[i].tensor().raw() != b->second.raw()) {
        // A view (Reshape, Identity...) of another buffer: copy into the bound one.
        const Tensor& src = outs[i].tensor();
        if (src.dtype() != b->second.dtype() || src.shape() != b->second.shape())
          ctx.fail("bound output '{}' is {}, the model produces {}", g.value_names[id],
                   shape_to_string(b->second.shape()), shape_to_string(src.shape()));
        std::memcpy(b->second.raw_mut(), src.raw(), src.nbytes());
        outs[i] = Value(b->second);
      }
      values[id] = std::move(outs[i]);
    }
    // Release inputs after their last consumer, and outputs nobody reads.
    for (int id : node.inputs)
      if (id >= 0 && --remaining[id] == 0 && !keep[id]) values[id] = Value();
    for (int id : node.outputs)
      if (id >= 0 && s.consumer_count[id] == 0 && !keep[id]) values[id] = Value();
    if (trace) {
      times.end_ns = Profiler::now_ns();
      s.profiler->node_done(*trace, times, pool->live_bytes());
    }
  }
  const int64_t t_exec_end = Profiler::now_ns();

  std::vector<Value> result;
  result.reserve(want.size());
  for (int id : want) {
    if (values[id].is_none())
      throw Error(ErrorCode::RuntimeError, fmt::format("output '{}' was not computed", g.value_names[id]));
    result.push_back(values[id]);
  }
  const size_t peak = pool->peak_bytes();
  values.clear();
  const int64_t t_end = Profiler::now_ns();
  if (trace) s.profiler->end_run(std::move(trace), t_exec, t_exec_end, t_run, t_end, peak);
  if (stats) {
    stats->peak_intermediate_bytes = peak;
    stats->elapsed_ms = (t_end - t_run) / 1e6;
  }
  return result;
}

}  // namespace onnxmini
