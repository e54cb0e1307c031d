// Placeholder: records nothing yet (the trace writer is being written).
#include "profiler/profiler.h"

#include <chrono>

namespace onnxmini {

class RunTrace {};
void RunTraceDeleter::operator()(RunTrace* run) const { delete run; }
struct Profiler::State {
  bool enabled = false;
  int64_t start_ns = 0;
};

Profiler::Profiler(const SessionOptions& options, ThreadPool*) : s_(std::make_unique<State>()) {
  s_->enabled = options.enable_profiling;
  s_->start_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                     std::chrono::system_clock::now().time_since_epoch()).count();
}
Profiler::~Profiler() = default;
int64_t Profiler::now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}
int64_t Profiler::start_time_ns() const { return s_->start_ns; }
void Profiler::session_event(const char*, int64_t, int64_t) {}
RunTracePtr Profiler::begin_run() { return nullptr; }
void Profiler::node(RunTrace&, const ProfiledNode&, const std::vector<const Value*>&, const std::vector<Value>&,
                    const KernelStats&) {}
void Profiler::node_done(RunTrace&, const NodeTimes&, size_t) {}
void Profiler::end_run(RunTracePtr, int64_t, int64_t, int64_t, int64_t, size_t) {}
std::string Profiler::end_profiling() { return ""; }

}  // namespace onnxmini
