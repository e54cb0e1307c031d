// Reads a profile trace (onnxmini's or onnxruntime's, fence or kernel-only
// layout) into the kernel events that summaries and comparisons work on.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace onnxmini {
namespace profile {

// One "<node>_kernel_time" event.
struct KernelEvent {
  int run = 0;               // 0-based; a run ends at its "SequentialExecutor::Execute" event
  std::string node;          // event name without "_kernel_time"
  std::string op;            // args.op_name
  std::string provider;      // args.provider
  std::string input_shapes;  // args.input_type_shape as compact JSON, "" when absent
  std::string output_shapes;
  int64_t node_index = -1;
  int64_t dur_us = 0;
  int64_t ts_us = 0;
};

struct Trace {
  std::string path;
  std::vector<KernelEvent> kernels;  // file order
  int num_runs = 0;                  // number of SequentialExecutor::Execute events
  std::vector<int64_t> run_us;       // duration of each model_run
};

// Throws onnxmini::Error (IoError / InvalidArgument) naming the file and what is wrong.
Trace read_trace(const std::string& path);
Trace parse_trace(const std::string& text, const std::string& path = "<string>");

}  // namespace profile
}  // namespace onnxmini
