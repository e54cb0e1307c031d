// The runtime's side of the profiler: turns SessionOptions into ProfilerOptions
// and a run's Values + KernelStats into the profiler's plain samples, so the
// profiler never sees a Value or a kernel. One ProfiledRun per Session::run:
//   ProfiledRun trace(profiler, pool);      // begin: inactive when not recorded
//   if (trace) trace.node(...);              // after compute(), inputs alive
//   if (trace) trace.node_done(...);         // after the inputs were released
//   trace.end(...);                          // hands the run to the profiler
// Subgraph executors (If/Loop/Scan bodies) report into the same ProfiledRun.
#pragma once
#include <cstdint>
#include <vector>

#include "core/kernel_stats.h"
#include "core/thread_pool.h"
#include "onnxmini/session.h"
#include "onnxmini/value.h"
#include "profiler/profiler.h"

namespace onnxmini {

// The session's profiling options, plus the pool's workers when it has more than one thread.
ProfilerOptions profiler_options(const SessionOptions& options, const ThreadPool* pool);

class ProfiledRun {
 public:
  // `pool`: the session's intra-op pool; its counters go into the samples when it has
  // more than one thread and the profiler is on.
  ProfiledRun(Profiler& profiler, const ThreadPool* pool);
  explicit operator bool() const { return trace_ != nullptr; }  // this run is recorded

  // Right after kernel.compute(): the node's tensors (absent inputs and non-tensor
  // values left out), its counters and the pool's counters. No allocation once the
  // sample's vectors have grown to the widest node. With reference_kernels
  // (KernelMode::Reference) the event says variant "reference", isa "portable".
  void node(const ProfiledNode& node, const std::vector<const Value*>& inputs, const std::vector<Value>& outputs,
            const KernelStats& stats, bool reference_kernels = false);
  // After the node's inputs were released.
  void node_done(const NodeTimes& times, size_t live_bytes_after) { profiler_.node_done(*trace_, times, live_bytes_after); }
  // A body (If branch, Loop iteration, Scan step) ran its nodes between the two times.
  void subgraph_done(int64_t begin_ns, int64_t end_ns) { profiler_.subgraph_done(*trace_, begin_ns, end_ns); }
  // After the node loop and the output collection; does nothing when the run is not recorded.
  void end(int64_t execute_begin_ns, int64_t execute_end_ns, int64_t run_begin_ns, int64_t run_end_ns,
           size_t peak_bytes);

 private:
  Profiler& profiler_;
  const ThreadPool* pool_ = nullptr;  // null: single-threaded or profiling off
  RunTracePtr trace_;
  NodeSample sample_;
  ThreadPool::Stats pool_stats_;
};

}  // namespace onnxmini
