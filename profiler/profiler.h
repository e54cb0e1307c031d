// Records per-node timings of session runs and writes them in onnxruntime's
// trace format (see docs/profiler.md and ../shared/docs/ort-trace-format.md).
// It works on plain records (profiler/node_sample.h) and its own options
// (profiler/profiler_options.h); the runtime converts its values into those
// (runtime/profiler_feed.h). Per run:
//   begin_run                      - null when this run is not recorded
//   node(sample) then node_done    - once per node execution, in that order
//   subgraph_done                  - once per body execution, between its nodes and its parent's node()
//   end_run                        - hands the run over to the file
// giving fence_before = prepared-begin, kernel_time = computed-prepared, fence_after = end-computed.
#pragma once
#include <cstdint>
#include <memory>
#include <string>

#include "core/logging.h"
#include "core/thread_pool.h"
#include "profiler/node_sample.h"
#include "profiler/profiler_options.h"

namespace onnxmini {

// One run's events, filled by the executor's thread and handed back at end_run.
class RunTrace;
struct RunTraceDeleter {
  void operator()(RunTrace* run) const;
};
using RunTracePtr = std::unique_ptr<RunTrace, RunTraceDeleter>;

class Profiler {
 public:
  // Warnings (event cap reached, trace file not written) go to `log`, which must outlive the profiler.
  explicit Profiler(ProfilerOptions options, const Logger& log = default_logger());
  ~Profiler();  // writes the file if end_profiling() was not called

  static int64_t now_ns();  // steady clock
  int64_t start_time_ns() const;  // profiling start (ts 0: model loading began), system clock ns since epoch
  bool enabled() const;

  // Session-level events: "model_loading_uri", "model_loading_array", "session_initialization".
  void session_event(const char* name, int64_t begin_ns, int64_t end_ns);

  // Returns null when this run is not recorded (profiling off, warm-up skipped, window over).
  // `pool_stats`: the intra-op pool's counters now, the base of the first node's deltas
  // (null, or no pool_workers in the options: no thread_scheduling_stats this run).
  RunTracePtr begin_run(const ThreadPool::Stats* pool_stats = nullptr);
  // Right after compute(): the node's tensors and counters (copied; the sample can be
  // reused at once). This bookkeeping falls inside the node's fence_after.
  void node(RunTrace& run, const ProfiledNode& node, const NodeSample& sample);
  // After the node's inputs were released: its four timestamps and the live
  // intermediate bytes at that point. Completes the event opened by node().
  void node_done(RunTrace& run, const NodeTimes& times, size_t live_bytes_after);
  // A subgraph (If branch, Loop iteration, Scan step) finished running its nodes: one
  // "SequentialExecutor::Execute" event, as onnxruntime writes for each body execution.
  // Its nodes were reported before it, the node that ran it is reported after it.
  void subgraph_done(RunTrace& run, int64_t begin_ns, int64_t end_ns);
  // execute_* bracket the node loop ("SequentialExecutor::Execute"); run_* the whole call ("model_run").
  void end_run(RunTracePtr run, int64_t execute_begin_ns, int64_t execute_end_ns, int64_t run_begin_ns,
               int64_t run_end_ns, size_t peak_bytes);

  // Writes the trace; returns its path, "" on a second call.
  std::string end_profiling();

 private:
  struct State;
  std::unique_ptr<State> s_;
};

}  // namespace onnxmini
