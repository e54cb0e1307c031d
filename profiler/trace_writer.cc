// Formats recorded runs in onnxruntime's exact trace text (docs/profiler.md,
// ../shared/docs/ort-trace-format.md): "[", one event per line with
// onnxruntime's key order and spacing, "]". All formatting happens here, once,
// when the file is written, never while the model runs.
#include <fmt/format.h>

#include <sstream>

#include "profiler/run_trace.h"

namespace onnxmini {

int events_per_node(ProfileLayout layout, bool memory_counters) {
  return (layout == ProfileLayout::Fences ? 3 : 1) + (memory_counters ? 1 : 0);
}

void append_json_escaped(std::string& out, const std::string& s) {
  for (unsigned char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      default:
        if (c < 0x20) out += fmt::format("\\u{:04x}", static_cast<unsigned>(c));
        else out += static_cast<char>(c);
    }
  }
}

namespace {

class Writer {
 public:
  explicit Writer(const TraceData& d) : d_(d) {}

  std::string text() {
    out_ = "[\n";
    for (const SessionRecord& e : d_.session_events) session(e.name.c_str(), e.tid, e.begin_ns, e.end_ns);
    for (const auto& run : *d_.runs) write_run(*run);
    if (!first_) out_ += "\n";
    out_ += "]\n";
    return std::move(out_);
  }

 private:
  int64_t us(int64_t ns) const { return ns > d_.origin_ns ? (ns - d_.origin_ns) / 1000 : 0; }
  static int64_t dur_us(int64_t begin, int64_t end) { return end > begin ? (end - begin) / 1000 : 0; }

  // Everything of an event up to and including `"args" : `.
  void open(const char* cat, int64_t tid, int64_t dur, int64_t ts, const char* ph, const std::string& name,
            const char* suffix) {
    if (!first_) out_ += ",\n";
    first_ = false;
    out_ += fmt::format("{{\"cat\" : \"{}\",\"pid\" :{},\"tid\" :{},\"dur\" :{},\"ts\" :{},\"ph\" : \"{}\",\"name\" :\"",
                        cat, d_.pid, tid, dur, ts, ph);
    append_json_escaped(out_, name);
    out_ += suffix;
    out_ += "\",\"args\" : ";
  }

  void session(const char* name, int64_t tid, int64_t begin, int64_t end) {
    open("Session", tid, dur_us(begin, end), us(begin), "X", name, "");
    out_ += "{}}";
  }

  void arg(const char* key, const std::string& value, bool first = false) {
    if (!first) out_ += ",";
    out_ += fmt::format("\"{}\" : \"", key);
    append_json_escaped(out_, value);
    out_ += "\"";
  }
  void raw_arg(const char* key, const std::string& json) { out_ += fmt::format(",\"{}\" : {}", key, json); }

  void fence(const RunTrace& run, const NodeRecord& n, const char* suffix, int64_t begin, int64_t end) {
    open("Node", run.tid, dur_us(begin, end), us(begin), "X", n.node->event_name, suffix);
    out_ += "{";
    arg("op_name", n.node->op_type, true);
    out_ += "}}";
  }

  std::string type_shapes(const RunTrace& run, uint32_t first, uint32_t count) const {
    std::string s = "[";
    for (uint32_t i = 0; i < count; ++i) {
      const TensorRecord& t = run.tensors[first + i];
      if (i) s += ",";
      s += fmt::format("{{\"{}\":[", dtype_name(t.dtype));
      for (uint32_t k = 0; k < t.rank; ++k) s += fmt::format(k ? ",{}" : "{}", run.dims[t.dims_offset + k]);
      s += "]}";
    }
    return s + "]";
  }

  static std::string thread_id_text(std::thread::id id) {
    std::ostringstream os;
    os << id;
    return os.str();
  }

  std::string thread_stats(const RunTrace& run, const NodeRecord& n) const {
    const ThreadStatsRecord& t = run.thread_stats[n.thread_stats];
    std::string blocks;
    for (uint32_t i = 0; i < t.num_blocks; ++i) blocks += fmt::format(i ? ", {}" : "{}", run.blocks[t.blocks_offset + i]);
    std::string s = fmt::format(
        "{{\"main_thread\": {{\"thread_pool_name\": \"{}\", \"thread_id\": \"{}\", \"block_size\": [{}], \"core\": {}, "
        "\"Distribution\": {}, \"DistributionEnqueue\": {}, \"Run\": {}, \"Wait\": {}, \"WaitRevoke\": 0}}, "
        "\"sub_threads\": {{",
        d_.pool_name, thread_id_text(run.thread_id), blocks, t.core, t.distribute_ns / 1000, t.enqueue_ns / 1000,
        t.run_ns / 1000, t.wait_ns / 1000);
    for (size_t w = 0; w < d_.worker_ids.size(); ++w)
      s += fmt::format("{}\"{}\": {{\"num_run\": {}, \"core\": {}}}", w ? ", " : "", thread_id_text(d_.worker_ids[w]),
                       run.worker_runs[t.workers_offset + w], run.worker_cores[t.workers_offset + w]);
    return s + "}}";
  }

  void kernel(const RunTrace& run, const NodeRecord& n) {
    const NodeTimes& t = n.times;
    open("Node", run.tid, dur_us(t.prepared_ns, t.computed_ns), us(t.prepared_ns), "X", n.node->event_name,
         "_kernel_time");
    // onnxruntime's key order (its args map), then onnxmini's extra keys.
    out_ += "{\"thread_scheduling_stats\" : ";
    out_ += n.thread_stats >= 0 ? thread_stats(run, n) : "\"\"";
    raw_arg("output_type_shape", type_shapes(run, n.tensors_offset + n.num_inputs, n.num_outputs));
    arg("output_size", std::to_string(n.output_size));
    arg("parameter_size", std::to_string(n.parameter_size));
    arg("activation_size", std::to_string(n.activation_size));
    arg("node_index", std::to_string(n.node->node_index));
    raw_arg("input_type_shape", type_shapes(run, n.tensors_offset, n.num_inputs));
    arg("provider", "CPUExecutionProvider");
    arg("op_name", n.node->op_type);
    arg("kernel", n.node->kernel_name);
    if (n.variant && *n.variant) arg("kernel_variant", n.variant);
    if (n.isa) arg("isa", n.isa);
    const double seconds = double(t.computed_ns - t.prepared_ns) * 1e-9;
    if (n.flops > 0) arg("flops", fmt::format("{:.0f}", n.flops));
    arg("bytes_read", fmt::format("{:.0f}", n.bytes_read));
    arg("bytes_written", fmt::format("{:.0f}", n.bytes_written));
    if (seconds > 0) {
      if (n.flops > 0) arg("gflop_per_s", fmt::format("{:.3f}", n.flops / seconds * 1e-9));
      arg("gbyte_per_s", fmt::format("{:.3f}", (n.bytes_read + n.bytes_written) / seconds * 1e-9));
    }
    arg("live_intermediate_bytes", std::to_string(n.live_after));
    out_ += "}}";
  }

  // Chrome counter event: a "Memory" track viewers draw as a graph.
  void counter(const RunTrace& run, const char* name, int64_t at_ns, size_t bytes) {
    open("Memory", run.tid, 0, us(at_ns), "C", name, "");
    out_ += fmt::format("{{\"bytes\" : {}}}}}", bytes);
  }

  void write_run(const RunTrace& run) {
    for (const NodeRecord& n : run.nodes) {
      if (!n.done) continue;
      const NodeTimes& t = n.times;
      if (!n.node) {  // a body execution, after its nodes
        session("SequentialExecutor::Execute", run.tid, t.begin_ns, t.end_ns);
        continue;
      }
      if (d_.layout == ProfileLayout::Fences) fence(run, n, "_fence_before", t.begin_ns, t.prepared_ns);
      kernel(run, n);
      if (d_.layout == ProfileLayout::Fences) fence(run, n, "_fence_after", t.computed_ns, t.end_ns);
      if (d_.memory_counters) counter(run, "live_intermediate_bytes", t.end_ns, n.live_after);
    }
    if (d_.memory_counters) counter(run, "peak_intermediate_bytes", run.execute_end_ns, run.peak_bytes);
    session("SequentialExecutor::Execute", run.tid, run.execute_begin_ns, run.execute_end_ns);
    session("model_run", run.tid, run.run_begin_ns, run.run_end_ns);
  }

  const TraceData& d_;
  std::string out_;
  bool first_ = true;
};

}  // namespace

std::string format_trace(const TraceData& data) { return Writer(data).text(); }

}  // namespace onnxmini
