// Recording side of the profiler. The hot path (node / node_done) only copies
// numbers into the run's own vectors, which keep their capacity from one node to
// the next; names and JSON are produced once, when the file is written.
// Each run fills its own RunTrace; end_run hands it over under a mutex, so
// concurrent runs never interleave their events.
#include "profiler/profiler.h"

#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

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
  SessionOptions options;
  const Logger* log = nullptr;  // the session's
  bool enabled = false;
  ThreadPool* pool = nullptr;  // only when it has more than one thread
  std::string pool_name;
  int64_t origin_ns = 0;         // steady clock at ts 0
  int64_t origin_system_ns = 0;  // system clock at ts 0
  int per_node = 3;

  std::atomic<int64_t> runs_started{0};
  std::atomic<bool> cap_reached{false};
  size_t reserve_nodes = 16;  // capacity hint for a new run (last run's node count)

  std::mutex mu;  // guards everything below
  std::vector<SessionRecord> session_events;
  std::vector<RunTracePtr> runs;
  size_t events = 0;
  bool ended = false;
  bool warned = false;
};

Profiler::Profiler(const SessionOptions& options, ThreadPool* pool, const Logger& log) : s_(std::make_unique<State>()) {
  s_->options = options;
  s_->log = &log;
  s_->enabled = options.enable_profiling;
  s_->origin_ns = now_ns();
  s_->origin_system_ns = system_now_ns();
  s_->per_node = events_per_node(options.profile_layout, options.profile_memory_counters);
  if (s_->enabled && pool && pool->num_threads() > 1) {
    s_->pool = pool;
    s_->pool_name = "session-" + std::to_string(++g_pool_sessions) + "-intra-op";
  }
}

Profiler::~Profiler() = default;

int64_t Profiler::now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

int64_t Profiler::start_time_ns() const { return s_->origin_system_ns; }

bool Profiler::enabled() const { return s_->enabled; }

void Profiler::session_event(const char* name, int64_t begin_ns, int64_t end_ns) {
  if (!s_->enabled) return;
  std::lock_guard<std::mutex> lk(s_->mu);
  if (s_->ended) return;
  // Model loading starts before the profiler exists: move ts 0 back to it (no
  // run has been recorded yet, so no event depends on the origin).
  if (s_->runs.empty() && begin_ns < s_->origin_ns) {
    s_->origin_system_ns -= s_->origin_ns - begin_ns;
    s_->origin_ns = begin_ns;
  }
  if (s_->events + 1 > s_->options.profile_max_events) return;
  s_->session_events.push_back({name, os_thread_id(), begin_ns, end_ns});
  ++s_->events;
}

RunTracePtr Profiler::begin_run() {
  if (!s_->enabled) return nullptr;
  const int64_t index = s_->runs_started.fetch_add(1, std::memory_order_relaxed);
  const SessionOptions& o = s_->options;
  if (index < o.profile_skip_runs) return nullptr;
  if (o.profile_max_runs >= 0 && index >= static_cast<int64_t>(o.profile_skip_runs) + o.profile_max_runs) return nullptr;
  if (s_->cap_reached.load(std::memory_order_relaxed)) return nullptr;
  RunTracePtr run(new RunTrace);
  run->tid = os_thread_id();
  run->thread_id = std::this_thread::get_id();
  run->nodes.reserve(s_->reserve_nodes);
  run->tensors.reserve(s_->reserve_nodes * 4);
  run->dims.reserve(s_->reserve_nodes * 16);
  if (s_->pool) {
    s_->pool->read_stats(run->last);
    run->has_pool_stats = true;
  }
  return run;
}

namespace {

int64_t add_tensor(RunTrace& run, const Value* v) {
  if (!v || !v->is_tensor()) return -1;  // absent optional input, sequence, map: not listed
  const Tensor& t = v->tensor();
  TensorRecord rec;
  rec.dtype = t.dtype();
  rec.rank = static_cast<uint32_t>(t.rank());
  rec.dims_offset = static_cast<uint32_t>(run.dims.size());
  for (int64_t d : t.shape()) run.dims.push_back(d);
  run.tensors.push_back(rec);
  return static_cast<int64_t>(t.nbytes());
}

// The pool's work during this node: deltas against the previous snapshot.
void record_thread_stats(RunTrace& run, ThreadPool& pool, NodeRecord& rec) {
  ThreadPool::Stats& last = run.last;
  const int64_t prev_calls = last.block_log_count;
  const int64_t prev_dist = last.distribute_ns, prev_enq = last.enqueue_ns, prev_run = last.run_ns,
                prev_wait = last.wait_ns;
  // Copy the per-thread counters before read_stats overwrites them (no allocation: fixed size).
  const size_t nthreads = last.chunks_per_thread.size();
  const size_t worker_base = run.worker_runs.size();
  for (size_t i = 1; i < nthreads; ++i) run.worker_runs.push_back(last.chunks_per_thread[i]);
  pool.read_stats(last);

  ThreadStatsRecord ts;
  ts.core = sched_getcpu();
  ts.distribute_ns = last.distribute_ns - prev_dist;
  ts.enqueue_ns = last.enqueue_ns - prev_enq;
  ts.run_ns = last.run_ns - prev_run;
  ts.wait_ns = last.wait_ns - prev_wait;
  ts.blocks_offset = static_cast<uint32_t>(run.blocks.size());
  int64_t first = std::max(prev_calls, last.block_log_count - ThreadPool::Stats::kBlockLog);
  for (int64_t c = first; c < last.block_log_count; ++c)
    run.blocks.push_back(last.block_log[c % ThreadPool::Stats::kBlockLog]);
  ts.num_blocks = static_cast<uint32_t>(run.blocks.size() - ts.blocks_offset);
  ts.workers_offset = static_cast<uint32_t>(worker_base);
  for (size_t i = 1; i < nthreads; ++i) {
    run.worker_runs[worker_base + i - 1] = last.chunks_per_thread[i] - run.worker_runs[worker_base + i - 1];
    run.worker_cores.push_back(last.last_core[i]);
  }
  rec.thread_stats = static_cast<int32_t>(run.thread_stats.size());
  run.thread_stats.push_back(ts);
}

}  // namespace

void Profiler::node(RunTrace& run, const ProfiledNode& node, const std::vector<const Value*>& inputs,
                    const std::vector<Value>& outputs, const KernelStats& stats) {
  // Keep memory bounded: a run that alone exceeds the cap will be dropped at end_run anyway.
  if ((run.nodes.size() + 1) * static_cast<size_t>(s_->per_node) + 2 > s_->options.profile_max_events) return;
  NodeRecord rec;
  rec.node = &node;
  rec.tensors_offset = static_cast<uint32_t>(run.tensors.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    int64_t bytes = add_tensor(run, inputs[i]);
    if (bytes < 0) continue;
    ++rec.num_inputs;
    const bool parameter = i < node.input_is_parameter.size() && node.input_is_parameter[i];
    (parameter ? rec.parameter_size : rec.activation_size) += bytes;
  }
  for (const Value& v : outputs) {
    int64_t bytes = add_tensor(run, &v);
    if (bytes < 0) continue;
    ++rec.num_outputs;
    rec.output_size += bytes;
  }
  rec.flops = stats.flops;
  rec.bytes_read = stats.bytes_read > 0 ? stats.bytes_read : double(rec.activation_size + rec.parameter_size);
  rec.bytes_written = stats.bytes_written > 0 ? stats.bytes_written : double(rec.output_size);
  rec.variant = stats.variant;
  if (run.has_pool_stats) record_thread_stats(run, *s_->pool, rec);
  run.nodes.push_back(rec);
}

void Profiler::node_done(RunTrace& run, const NodeTimes& times, size_t live_bytes_after) {
  if (run.nodes.empty() || run.nodes.back().done) return;  // node() dropped it (cap)
  NodeRecord& rec = run.nodes.back();
  rec.times = times;
  rec.live_after = live_bytes_after;
  rec.done = true;
}

void Profiler::end_run(RunTracePtr run, int64_t execute_begin_ns, int64_t execute_end_ns, int64_t run_begin_ns,
                       int64_t run_end_ns, size_t peak_bytes) {
  if (!run) return;
  run->execute_begin_ns = execute_begin_ns;
  run->execute_end_ns = execute_end_ns;
  run->run_begin_ns = run_begin_ns;
  run->run_end_ns = run_end_ns;
  run->peak_bytes = peak_bytes;
  const size_t run_events = run->nodes.size() * s_->per_node + 2 + (s_->options.profile_memory_counters ? 1 : 0);
  std::lock_guard<std::mutex> lk(s_->mu);
  if (s_->ended) return;
  s_->reserve_nodes = std::max(s_->reserve_nodes, run->nodes.size());
  // Whole runs only: the first run that does not fit, and every later one, is dropped.
  if (s_->cap_reached || s_->events + run_events > s_->options.profile_max_events) {
    s_->cap_reached = true;
    if (!s_->warned) {
      s_->warned = true;
      ONNXMINI_LOG(*s_->log, Warning,
                   "profiling event cap reached ({} events, profile_max_events); later runs are not recorded",
                   s_->options.profile_max_events);
    }
    return;
  }
  s_->events += run_events;
  s_->runs.push_back(std::move(run));
}

std::string Profiler::end_profiling() {
  if (!s_->enabled) return "";
  std::lock_guard<std::mutex> lk(s_->mu);
  if (s_->ended) return "";
  s_->ended = true;
  TraceData data;
  data.layout = s_->options.profile_layout;
  data.memory_counters = s_->options.profile_memory_counters;
  data.pid = static_cast<int64_t>(getpid());
  data.origin_ns = s_->origin_ns;
  data.pool_name = s_->pool_name;
  if (s_->pool) data.worker_ids = s_->pool->worker_ids();
  data.session_events = s_->session_events;
  data.runs = &s_->runs;
  const std::string text = format_trace(data);
  std::string path;
  std::FILE* f = open_new_trace_file(s_->options.profile_file_prefix, s_->origin_system_ns, path);
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
