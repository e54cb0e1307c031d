#include "runtime/profiler_feed.h"

#include <utility>

namespace onnxmini {

ProfilerOptions profiler_options(const SessionOptions& options, const ThreadPool* pool) {
  ProfilerOptions p;
  p.enabled = options.enable_profiling;
  p.file_prefix = options.profile_file_prefix;
  p.layout = options.profile_layout;
  p.max_events = options.profile_max_events;
  p.skip_runs = options.profile_skip_runs;
  p.max_runs = options.profile_max_runs;
  p.memory_counters = options.profile_memory_counters;
  if (pool && pool->num_threads() > 1) p.pool_workers = pool->worker_ids();
  return p;
}

ProfiledRun::ProfiledRun(Profiler& profiler, const ThreadPool* pool) : profiler_(profiler) {
  if (!profiler.enabled()) return;
  if (pool && pool->num_threads() > 1) {
    pool_ = pool;
    pool_->read_stats(pool_stats_);
  }
  trace_ = profiler.begin_run(pool_ ? &pool_stats_ : nullptr);
  if (trace_) {  // allocate here rather than in the first node; wider nodes grow them once
    sample_.inputs.reserve(8);
    sample_.outputs.reserve(8);
  }
}

namespace {

// Appends `v` when it is a tensor (absent optional inputs, sequences and maps are not listed).
void add_tensor(std::vector<TensorSample>& out, const Value* v, int input_slot) {
  if (!v || !v->is_tensor()) return;
  const Tensor& t = v->tensor();
  TensorSample s;
  s.dtype = t.dtype();
  s.dims = t.shape().data();
  s.rank = static_cast<uint32_t>(t.rank());
  s.bytes = static_cast<int64_t>(t.nbytes());
  s.input_slot = input_slot;
  out.push_back(s);
}

}  // namespace

void ProfiledRun::node(const ProfiledNode& node, const std::vector<const Value*>& inputs,
                       const std::vector<Value>& outputs, const KernelStats& stats, bool reference_kernels) {
  sample_.clear();
  for (size_t i = 0; i < inputs.size(); ++i) add_tensor(sample_.inputs, inputs[i], static_cast<int>(i));
  for (const Value& v : outputs) add_tensor(sample_.outputs, &v, -1);
  sample_.counters = stats;
  if (reference_kernels) {  // --kernels reference: the plain loops, whatever a kernel calls its loop
    sample_.counters.variant = "reference";
    sample_.counters.isa = "portable";
  }
  if (pool_) {
    pool_->read_stats(pool_stats_);
    sample_.pool_stats = &pool_stats_;
  }
  profiler_.node(*trace_, node, sample_);
}

void ProfiledRun::end(int64_t execute_begin_ns, int64_t execute_end_ns, int64_t run_begin_ns, int64_t run_end_ns,
                      size_t peak_bytes) {
  if (trace_) profiler_.end_run(std::move(trace_), execute_begin_ns, execute_end_ns, run_begin_ns, run_end_ns, peak_bytes);
}

}  // namespace onnxmini
