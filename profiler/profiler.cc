// Recording side of the profiler. The hot path (node / node_done) only copies
// numbers into the run's own vectors, which keep their capacity from one node to
// the next; names and JSON are produced once, when the file is written.
// Each run fills its own RunTrace; end_run hands it over under a mutex, so
// concurrent runs never interleave their events.
#include "profiler/profiler.h"

#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <mutex>

#include "profiler/run_trace.h"
#include "core/logging.h"
#include "core/thread_pool.h"

namespace onnxmini {

void RunTraceDeleter::operator()(RunTrace* run) const { delete run; }

namespace {

int64_t os_thread_id() {
  thread_local int64_t tid = static_cast<int64_t>(syscall(SYS_gettid));
  return tid;
}

int64_t system_now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::atomic<int> g_pool_sessions{0};  // numbers "session-<k>-intra-op" like onnxruntime

// PREFIX_YYYY-MM-DD_HH-MM-SS.json; when taken, _<ms>, then _<ms>_<n>. Opened exclusively
// ("wx") so two sessions never write into one file.
std::FILE* open_new_trace_file(const std::string& prefix, int64_t start_system_ns, std::string& path) {
  std::time_t secs = static_cast<std::time_t>(start_system_ns / 1000000000);
  std::tm tm{};
  localtime_r(&secs, &tm);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y-%m-%d_%H-%M-%S", &tm);
  const std::string base = prefix + "_" + stamp;
  const int ms = static_cast<int>((start_system_ns / 1000000) % 1000);
  for (int attempt = 0; attempt < 10000; ++attempt) {
    char suffix[32] = "";
    if (attempt == 1) std::snprintf(suffix, sizeof suffix, "_%03d", ms);
    if (attempt > 1) std::snprintf(suffix, sizeof suffix, "_%03d_%d", ms, attempt - 1);
    path = base + suffix + ".json";
    std::FILE* f = std::fopen(path.c_str(), "wx");
    if (f) return f;
    if (errno != EEXIST) break;
  }
  return nullptr;
}

}  // namespace

struct Profiler::State {
  ProfilerOptions options;
  const Logger* log = nullptr;  // the session's
  std::string pool_name;  // "session-<k>-intra-op" when the options name pool workers
  int64_t origin_ns = 0;         // steady clock at ts 0
  int64_t origin_system_ns = 0;  // system clock at ts 0
  int per_node = 3;

  std::atomic<int64_t> runs_started{0};
  std::atomic<bool> cap_reached{false};
  // Capacity hint for a new run (the largest run's node count): read by begin_run without
  // the lock while another run's end_run raises it, hence atomic (relaxed: only a hint).
  std::atomic<size_t> reserve_nodes{16};

  std::mutex mu;  // guards everything below
  std::vector<SessionRecord> session_events;
  std::vector<RunTracePtr> runs;
  size_t events = 0;
  bool ended = false;
  bool warned = false;
};

Profiler::Profiler(ProfilerOptions options, const Logger& log) : s_(std::make_unique<State>()) {
  s_->options = std::move(options);
  s_->log = &log;
  s_->origin_ns = now_ns();
  s_->origin_system_ns = system_now_ns();
  s_->per_node = events_per_node(s_->options.layout, s_->options.memory_counters);
  if (s_->options.enabled && !s_->options.pool_workers.empty())
    s_->pool_name = "session-" + std::to_string(++g_pool_sessions) + "-intra-op";
}

Profiler::~Profiler() = default;

int64_t Profiler::now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

int64_t Profiler::start_time_ns() const { return s_->origin_system_ns; }

bool Profiler::enabled() const { return s_->options.enabled; }

void Profiler::session_event(const char* name, int64_t begin_ns, int64_t end_ns) {
  if (!s_->options.enabled) return;
  std::lock_guard<std::mutex> lk(s_->mu);
  if (s_->ended) return;
  // Model loading starts before the profiler exists: move ts 0 back to it (no
  // run has been recorded yet, so no event depends on the origin).
  if (s_->runs.empty() && begin_ns < s_->origin_ns) {
    s_->origin_system_ns -= s_->origin_ns - begin_ns;
    s_->origin_ns = begin_ns;
  }
  if (s_->events + 1 > s_->options.max_events) return;
  s_->session_events.push_back({name, os_thread_id(), begin_ns, end_ns});
  ++s_->events;
}

RunTracePtr Profiler::begin_run(const ThreadPool::Stats* pool_stats) {
  if (!s_->options.enabled) return nullptr;
  const int64_t index = s_->runs_started.fetch_add(1, std::memory_order_relaxed);
  const ProfilerOptions& o = s_->options;
  if (index < o.skip_runs) return nullptr;
  if (o.max_runs >= 0 && index >= static_cast<int64_t>(o.skip_runs) + o.max_runs) return nullptr;
  if (s_->cap_reached.load(std::memory_order_relaxed)) return nullptr;
  RunTracePtr run(new RunTrace);
  run->tid = os_thread_id();
  run->thread_id = std::this_thread::get_id();
  const size_t reserve = s_->reserve_nodes.load(std::memory_order_relaxed);
  run->nodes.reserve(reserve);
  run->tensors.reserve(reserve * 4);
  run->dims.reserve(reserve * 16);
  if (pool_stats && !o.pool_workers.empty()) {
    run->last = *pool_stats;
    run->has_pool_stats = true;
  }
  return run;
}

namespace {

// Copies one tensor's dtype and dims into the run; returns its bytes.
int64_t add_tensor(RunTrace& run, const TensorSample& t) {
  TensorRecord rec;
  rec.dtype = t.dtype;
  rec.rank = t.rank;
  rec.dims_offset = static_cast<uint32_t>(run.dims.size());
  run.dims.insert(run.dims.end(), t.dims, t.dims + t.rank);
  run.tensors.push_back(rec);
  return t.bytes;
}

// A snapshot the run's previous one can be subtracted from: as many threads as
// the options name workers, plus the calling thread.
bool matches_pool(const ThreadPool::Stats& s, size_t workers) {
  return s.chunks_per_thread.size() == workers + 1 && s.last_core.size() == workers + 1;
}

// The pool's work during this node: `now` minus the run's previous snapshot,
// which then becomes `now` (same sizes, so the copy does not allocate).
void record_thread_stats(RunTrace& run, const ThreadPool::Stats& now, NodeRecord& rec) {
  ThreadPool::Stats& last = run.last;
  ThreadStatsRecord ts;
  ts.core = sched_getcpu();
  ts.distribute_ns = now.distribute_ns - last.distribute_ns;
  ts.enqueue_ns = now.enqueue_ns - last.enqueue_ns;
  ts.run_ns = now.run_ns - last.run_ns;
  ts.wait_ns = now.wait_ns - last.wait_ns;
  ts.blocks_offset = static_cast<uint32_t>(run.blocks.size());
  const int64_t first = std::max(last.block_log_count, now.block_log_count - ThreadPool::Stats::kBlockLog);
  for (int64_t c = first; c < now.block_log_count; ++c)
    run.blocks.push_back(now.block_log[c % ThreadPool::Stats::kBlockLog]);
  ts.num_blocks = static_cast<uint32_t>(run.blocks.size() - ts.blocks_offset);
  ts.workers_offset = static_cast<uint32_t>(run.worker_runs.size());
  for (size_t i = 1; i < now.chunks_per_thread.size(); ++i) {
    run.worker_runs.push_back(now.chunks_per_thread[i] - last.chunks_per_thread[i]);
    run.worker_cores.push_back(now.last_core[i]);
  }
  rec.thread_stats = static_cast<int32_t>(run.thread_stats.size());
  run.thread_stats.push_back(ts);
  last = now;
}

}  // namespace

void Profiler::node(RunTrace& run, const ProfiledNode& node, const NodeSample& sample) {
  // Keep memory bounded: a run that alone exceeds the cap will be dropped at end_run anyway.
  if ((run.nodes.size() + 1) * static_cast<size_t>(s_->per_node) + 2 > s_->options.max_events) return;
  NodeRecord rec;
  rec.node = &node;
  rec.tensors_offset = static_cast<uint32_t>(run.tensors.size());
  for (const TensorSample& t : sample.inputs) {
    const int64_t bytes = add_tensor(run, t);
    ++rec.num_inputs;
    const size_t slot = static_cast<size_t>(t.input_slot);
    const bool parameter = t.input_slot >= 0 && slot < node.input_is_parameter.size() && node.input_is_parameter[slot];
    (parameter ? rec.parameter_size : rec.activation_size) += bytes;
  }
  for (const TensorSample& t : sample.outputs) {
    rec.output_size += add_tensor(run, t);
    ++rec.num_outputs;
  }
  const KernelStats& stats = sample.counters;
  rec.flops = stats.flops;
  rec.bytes_read = stats.bytes_read > 0 ? stats.bytes_read : double(rec.activation_size + rec.parameter_size);
  rec.bytes_written = stats.bytes_written > 0 ? stats.bytes_written : double(rec.output_size);
  // Every kernel_time event names its path and ISA: a kernel with one path and no
  // SIMD code reports neither, and is its kernel name on the portable ISA.
  rec.variant = stats.variant ? stats.variant : node.kernel_name.c_str();
  rec.isa = stats.isa ? stats.isa : "portable";
  const size_t workers = s_->options.pool_workers.size();
  if (run.has_pool_stats && sample.pool_stats && matches_pool(*sample.pool_stats, workers) &&
      matches_pool(run.last, workers))
    record_thread_stats(run, *sample.pool_stats, rec);
  run.nodes.push_back(rec);
}

void Profiler::node_done(RunTrace& run, const NodeTimes& times, size_t live_bytes_after) {
  if (run.nodes.empty() || run.nodes.back().done) return;  // node() dropped it (cap)
  NodeRecord& rec = run.nodes.back();
  rec.times = times;
  rec.live_after = live_bytes_after;
  rec.done = true;
}

void Profiler::subgraph_done(RunTrace& run, int64_t begin_ns, int64_t end_ns) {
  if ((run.nodes.size() + 1) * static_cast<size_t>(s_->per_node) + 2 > s_->options.max_events) return;
  NodeRecord rec;
  rec.times.begin_ns = begin_ns;
  rec.times.end_ns = end_ns;
  rec.done = true;
  run.nodes.push_back(rec);
  ++run.subgraph_executions;
}

void Profiler::end_run(RunTracePtr run, int64_t execute_begin_ns, int64_t execute_end_ns, int64_t run_begin_ns,
                       int64_t run_end_ns, size_t peak_bytes) {
  if (!run) return;
  run->execute_begin_ns = execute_begin_ns;
  run->execute_end_ns = execute_end_ns;
  run->run_begin_ns = run_begin_ns;
  run->run_end_ns = run_end_ns;
  run->peak_bytes = peak_bytes;
  const size_t run_events = (run->nodes.size() - run->subgraph_executions) * s_->per_node +
                            run->subgraph_executions + 2 + (s_->options.memory_counters ? 1 : 0);
  std::lock_guard<std::mutex> lk(s_->mu);
  if (s_->ended) return;
  if (run->nodes.size() > s_->reserve_nodes.load(std::memory_order_relaxed))  // writers hold mu
    s_->reserve_nodes.store(run->nodes.size(), std::memory_order_relaxed);
  // Whole runs only: the first run that does not fit, and every later one, is dropped.
  if (s_->cap_reached || s_->events + run_events > s_->options.max_events) {
    s_->cap_reached = true;
    if (!s_->warned) {
      s_->warned = true;
      ONNXMINI_LOG(*s_->log, Warning,
                   "profiling event cap reached ({} events, profile_max_events); later runs are not recorded",
                   s_->options.max_events);
    }
    return;
  }
  s_->events += run_events;
  s_->runs.push_back(std::move(run));
}

std::string Profiler::end_profiling() {
  if (!s_->options.enabled) return "";
  std::lock_guard<std::mutex> lk(s_->mu);
  if (s_->ended) return "";
  s_->ended = true;
  TraceData data;
  data.layout = s_->options.layout;
  data.memory_counters = s_->options.memory_counters;
  data.pid = static_cast<int64_t>(getpid());
  data.origin_ns = s_->origin_ns;
  data.pool_name = s_->pool_name;
  if (!s_->pool_name.empty()) data.worker_ids = s_->options.pool_workers;
  data.session_events = s_->session_events;
  data.runs = &s_->runs;
  const std::string text = format_trace(data);
  std::string path;
  std::FILE* f = open_new_trace_file(s_->options.file_prefix, s_->origin_system_ns, path);
  if (!f) {
    ONNXMINI_LOG(*s_->log, Warning, "cannot create profile file '{}': {}", path, std::strerror(errno));
    return "";
  }
  const bool ok = std::fwrite(text.data(), 1, text.size(), f) == text.size();
  if (std::fclose(f) != 0 || !ok) {
    ONNXMINI_LOG(*s_->log, Warning, "error writing profile '{}': {}", path, std::strerror(errno));
  } else {
    ONNXMINI_LOG(*s_->log, Info, "profile written to '{}' ({} runs, {} events)", path, s_->runs.size(), s_->events);
  }
  s_->runs.clear();
  return path;
}

}  // namespace onnxmini
