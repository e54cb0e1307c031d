// onnxmini run MODEL [--input NAME=SPEC]... [--inputs DIR] [--save-outputs DIR]
//                    [--repeat N] [--warmup N] [--threads N] [--json] [--explain] ...
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <memory>
#include <numeric>
#include <unistd.h>

#include "onnxmini/explain.h"
#include "onnxmini/onnxmini.h"
#include "onnxmini/profile.h"
#include "tools/onnxmini/commands.h"
#include "tools/onnxmini/explain_report.h"
#include "tools/onnxmini/inputs.h"

namespace fs = std::filesystem;
using namespace onnxmini;

namespace onnxmini_cli {
namespace {

struct RunArgs {
  std::string model;
  std::vector<std::string> inputs, dims;
  std::string inputs_dir, save_dir;
  int repeat = 1, warmup = 0, threads = 1;
  double warmup_ms = 0;  // untimed runs continue until this much time has passed too
  int optimize = onnxmini::ORT_ENABLE_ALL;  // SessionOptions::graph_optimization_level
  bool json = false;
  bool no_spin = false;
  bool no_mem_pattern = false;
  std::string gemm = "builtin", kernels = "fast";
  unsigned seed = 0;
  std::string profile_prefix;
  bool profile = false;
  std::string profile_layout = "fences";
  int profile_skip = 0;
  int profile_max_runs = -1;
  size_t profile_max_events = 1000000;
  bool memory = false;
  bool explain = false;
  bool allow_unknown_opsets = false;
  int64_t max_tensor_bytes = 0, max_intermediate_bytes = 0;  // 0: the machine's memory
};

std::string head_values(const Tensor& t, int count) {
  std::vector<std::string> parts;
  int64_t n = std::min<int64_t>(t.numel(), count);
  for (int64_t i = 0; i < n; ++i) {
    if (t.dtype() == DType::String) parts.push_back("'" + t.data<std::string>()[i] + "'");
    else if (t.dtype() == DType::Float32 || t.dtype() == DType::Float64 || t.dtype() == DType::Float16)
      parts.push_back(fmt::format("{:.6g}", t.get_as_double(i)));
    else parts.push_back(fmt::format("{}", static_cast<int64_t>(t.get_as_double(i))));
  }
  return fmt::format("[{}{}]", fmt::join(parts, ", "), t.numel() > count ? ", ..." : "");
}

// True when `v` is a map or contains one (a sequence of maps, an optional map): no .pb writer for those.
bool holds_map(const Value& v) {
  if (v.is_map()) return true;
  if (v.is_optional()) return v.has_element() && holds_map(v.optional_element());
  if (v.is_sequence())
    for (const Value& item : v.sequence_items())
      if (holds_map(item)) return true;
  return false;
}

std::string describe_value(const Value& v) {
  if (v.is_tensor())
    return fmt::format("{} {} {}", dtype_name(v.tensor().dtype()), shape_to_string(v.tensor().shape()), head_values(v.tensor(), 8));
  if (v.is_sequence()) {
    const auto& items = v.sequence_items();
    std::string first = items.empty() ? "" : " first: " + describe_value(items.front());
    return fmt::format("{} of {} items{}", v.type_string(), items.size(), first);
  }
  if (v.is_map()) {
    const Map& m = v.map_value();
    std::vector<std::string> parts;
    for (int64_t i = 0; i < std::min<int64_t>(m.keys.numel(), 8); ++i) {
      std::string key = m.keys.dtype() == DType::String ? "'" + m.keys.data<std::string>()[i] + "'"
                                                        : fmt::format("{}", static_cast<int64_t>(m.keys.get_as_double(i)));
      parts.push_back(fmt::format("{}: {:.6g}", key, m.values.get_as_double(i)));
    }
    return fmt::format("{{{}}}", fmt::join(parts, ", "));
  }
  if (v.is_optional()) return v.has_element() ? "optional: " + describe_value(v.optional_element()) : "empty optional";
  return "none";
}

double percentile_median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

long peak_rss_kb() {
  std::ifstream f("/proc/self/status");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind("VmHWM:", 0) == 0) return std::stol(line.substr(6));
  return -1;
}

// --explain: one untimed, profiled run with the given (or generated) inputs shows
// every node's input shapes; each kernel then says, through Kernel::describe, the
// path it takes for them. The trace is a temporary file, removed afterwards.
int explain_command(const RunArgs& a, SessionOptions opts, const std::map<std::string, int64_t>& dims) {
  const fs::path dir = fs::temp_directory_path() / fmt::format("onnxmini_explain_{}", ::getpid());
  fs::create_directories(dir);
  opts.enable_profiling = true;
  opts.profile_file_prefix = (dir / "trace").string();
  opts.profile_layout = ProfileLayout::KernelOnly;
  std::map<std::string, std::vector<ExplainInput>> observed;
  std::map<std::string, std::pair<std::string, std::string>> ran;  // node -> variant, isa in the run
  std::unique_ptr<Session> session;
  std::string shapes;
  try {
    session = Session::load(a.model, opts);
    auto feeds = build_feeds(*session, a.inputs, a.inputs_dir, dims, a.seed);
    std::vector<std::string> described;
    for (const auto& [name, value] : feeds)
      if (value.is_tensor())
        described.push_back(fmt::format("{} {} {}", name, dtype_name(value.tensor().dtype()),
                                        shape_to_string(value.tensor().shape())));
    session->run(feeds);
    const std::string trace_path = session->end_profiling();
    observed = observed_inputs(trace_path);
    for (const profile::KernelEvent& k : profile::read_trace(trace_path).kernels)
      ran.emplace(k.node, std::make_pair(k.variant, k.isa));  // a body node's first execution
    shapes = fmt::format("observed in one untimed run with inputs {}{}", fmt::join(described, ", "),
                         a.inputs.empty() && a.inputs_dir.empty()
                             ? " (generated from the declared shapes, symbolic dimensions 1 unless --dim)"
                             : "");
  } catch (...) {
    session.reset();  // its profiler writes the trace on destruction: before the folder goes
    fs::remove_all(dir);
    throw;
  }
  fs::remove_all(dir);
  ExplainHeader h;
  h.model = a.model;
  h.optimization_level = a.optimize;
  h.rewrites = session->graph_rewrites();
  h.shapes_from = shapes;
  h.kernels = a.kernels;
  h.gemm = a.gemm;
  std::vector<KernelExplanation> rows = session->explain(observed);
  // A kernel that reports paths but has no describe() for them (or one out of step
  // with compute()) would be explained wrongly: the run's own record is shown instead.
  for (KernelExplanation& e : rows) {
    auto it = ran.find(e.node);
    if (it == ran.end() || it->second.first.empty() || (it->second.first == e.variant && it->second.second == e.isa))
      continue;
    e.note = fmt::format("the run took this path; describe() said {} ({})", e.variant, e.isa.empty() ? "-" : e.isa);
    e.variant = it->second.first;
    e.isa = it->second.second;
  }
  h.threads = rows.empty() ? a.threads : rows.front().threads;
  std::cout << (a.json ? explain_json(h, rows) + "\n" : explain_text(h, rows));
  return 0;
}

int run_command(const RunArgs& a) {
  if (a.repeat < 1) throw Error(ErrorCode::InvalidArgument, fmt::format("--repeat must be at least 1, got {}", a.repeat));
  if (a.warmup < 0) throw Error(ErrorCode::InvalidArgument, fmt::format("--warmup must be >= 0, got {}", a.warmup));
  if (!(a.warmup_ms >= 0 && a.warmup_ms <= 3.6e6))
    throw Error(ErrorCode::InvalidArgument, fmt::format("--warmup-ms must be in [0, 3600000], got {}", a.warmup_ms));
  if (a.threads < 0 || a.threads > 1024) throw Error(ErrorCode::InvalidArgument, fmt::format("--threads {} is out of range", a.threads));
  SessionOptions opts;
  opts.intra_op_num_threads = a.threads;
  opts.intra_op_allow_spinning = !a.no_spin;
  opts.enable_mem_pattern = !a.no_mem_pattern;
  opts.allow_unknown_opsets = a.allow_unknown_opsets;
  opts.max_tensor_bytes = a.max_tensor_bytes;
  opts.max_intermediate_bytes = a.max_intermediate_bytes;
  opts.graph_optimization_level = a.optimize;
  opts.gemm = gemm_backend_from_string(a.gemm);
  opts.kernels = kernel_mode_from_string(a.kernels);
  if (a.profile) {
    opts.enable_profiling = true;
    if (!a.profile_prefix.empty()) opts.profile_file_prefix = a.profile_prefix;
    if (a.profile_layout == "kernel") opts.profile_layout = ProfileLayout::KernelOnly;
    else if (a.profile_layout != "fences")
      throw Error(ErrorCode::InvalidArgument, "--profile-layout must be fences or kernel, got '" + a.profile_layout + "'");
    opts.profile_skip_runs = a.profile_skip;
    opts.profile_max_runs = a.profile_max_runs;
    opts.profile_max_events = a.profile_max_events;
    opts.profile_memory_counters = a.memory;
  }
  std::map<std::string, int64_t> dims;
  for (const auto& d : a.dims) {
    auto [name, value] = split_assignment(d, "--dim");
    if (value.empty() || value.find_first_not_of("0123456789") != std::string::npos || value.size() > 12)
      throw Error(ErrorCode::InvalidArgument, fmt::format("--dim {}: '{}' is not a dimension", name, value));
    dims[name] = std::stoll(value);
  }
  if (a.explain) {
    if (a.profile) throw Error(ErrorCode::InvalidArgument, "--explain and --profile cannot be combined (--explain profiles its own run)");
    return explain_command(a, opts, dims);
  }
  auto session = Session::load(a.model, opts);

  auto feeds = build_feeds(*session, a.inputs, a.inputs_dir, dims, a.seed);

  // Warm-up: at least --warmup runs and --warmup-ms milliseconds. Time matters for
  // threads: the OS may start the pool's threads on one core and take tens of
  // milliseconds to spread them (docs/performance.md).
  const auto warm_start = std::chrono::steady_clock::now();
  for (int i = 0; i < a.warmup || std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - warm_start).count() < a.warmup_ms; ++i)
    session->run(feeds);
  // Wall clock per run; process CPU time (all threads) over all timed runs, read once
  // around the whole loop (per-run readings of a sub-millisecond run are mostly noise).
  std::vector<double> ms;
  std::vector<Value> outputs;
  RunStats stats;
  auto cpu_now_ms = [] {
    timespec ts{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
  };
  const double cpu_begin = cpu_now_ms();
  for (int i = 0; i < a.repeat; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    outputs = session->run(feeds, {}, nullptr, &stats);
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  const double cpu_per_run = a.repeat > 0 ? (cpu_now_ms() - cpu_begin) / a.repeat : 0.0;
  std::string profile_file = a.profile ? session->end_profiling() : "";

  if (!a.save_dir.empty()) {
    fs::create_directories(a.save_dir);
    for (size_t i = 0; i < outputs.size(); ++i) {
      // Tensors as TensorProto, sequences as SequenceProto, optionals as OptionalProto; maps
      // (ZipMap's sequence of maps) have no writer and are skipped.
      if (holds_map(outputs[i])) {
        std::cerr << fmt::format("onnxmini: warning: output '{}' is a {}, not saved\n", session->outputs()[i].name,
                                 outputs[i].type_string());
        continue;
      }
      write_value_pb((fs::path(a.save_dir) / fmt::format("output_{}.pb", i)).string(), outputs[i],
                     session->outputs()[i].name);
    }
  }

  const double mn = *std::min_element(ms.begin(), ms.end()), mx = *std::max_element(ms.begin(), ms.end());
  const double mean = std::accumulate(ms.begin(), ms.end(), 0.0) / ms.size(), med = percentile_median(ms);
  if (a.json) {
    nlohmann::json j;
    j["model"] = a.model;
    j["threads"] = a.threads;
    j["repeat"] = a.repeat;
    j["latency_ms"] = {{"min", mn}, {"median", med}, {"mean", mean}, {"max", mx}};
    // CPU time is robust on a shared machine (time spent descheduled is not counted);
    // with one thread it is the latency a quiet machine would show.
    j["cpu_ms"] = {{"mean", cpu_per_run}};
    j["peak_intermediate_bytes"] = stats.peak_intermediate_bytes;
    j["planned_buffers"] = stats.planned_buffers;  // of the last run: from the memory plan
    j["pooled_buffers"] = stats.pooled_buffers;
    j["weight_bytes"] = session->weight_bytes();
    if (a.memory) j["peak_rss_bytes"] = peak_rss_kb() * 1024;
    if (!profile_file.empty()) j["profile_file"] = profile_file;
    j["outputs"] = nlohmann::json::array();
    for (size_t i = 0; i < outputs.size(); ++i) {
      nlohmann::json o;
      o["name"] = session->outputs()[i].name;
      if (outputs[i].is_tensor()) {
        const Tensor& t = outputs[i].tensor();
        o["dtype"] = dtype_name(t.dtype());
        o["shape"] = t.shape();
        std::vector<double> head;
        for (int64_t k = 0; k < std::min<int64_t>(t.numel(), 8) && t.dtype() != DType::String; ++k) head.push_back(t.get_as_double(k));
        o["head"] = head;
      } else {
        o["dtype"] = outputs[i].type_string();
        o["shape"] = nlohmann::json::array();
        if (outputs[i].is_sequence()) o["length"] = outputs[i].sequence_items().size();
      }
      j["outputs"].push_back(o);
    }
    std::cout << j.dump() << std::endl;
    return 0;
  }
  std::cout << fmt::format("model: {}\n", a.model);
  for (size_t i = 0; i < outputs.size(); ++i)
    std::cout << fmt::format("output '{}': {}\n", session->outputs()[i].name, describe_value(outputs[i]));
  std::cout << fmt::format("latency over {} run(s), {} thread(s): min {:.3f} ms, median {:.3f} ms, mean {:.3f} ms, max {:.3f} ms\n",
                           a.repeat, a.threads, mn, med, mean, mx);
  if (a.memory)
    std::cout << fmt::format(
        "memory: peak intermediates {} bytes, weights {} bytes, peak RSS {} bytes; last run's buffers: {} planned, "
        "{} from the pool\n",
        stats.peak_intermediate_bytes, session->weight_bytes(), peak_rss_kb() * 1024, stats.planned_buffers,
        stats.pooled_buffers);
  if (!profile_file.empty()) std::cout << "profile: " << profile_file << "\n";
  return 0;
}

CommandRegistrar reg("run", [](CLI::App& app) -> std::function<int()> {
  auto args = std::make_shared<RunArgs>();
  CLI::App* sub = app.add_subcommand("run", "Run a model and print its outputs and latency");
  sub->add_option("model", args->model, "ONNX model file")->required();
  sub->add_option("--input", args->inputs, "NAME=SPEC: random:1x3x112x112, zeros:SHAPE, ones:SHAPE, FILE.npy, FILE.pb");
  sub->add_option("--inputs", args->inputs_dir, "folder with input_0.pb, input_1.pb, ... (ONNX backend test layout)");
  sub->add_option("--save-outputs", args->save_dir, "write output_0.pb, ... in graph output order");
  sub->add_option("--dim", args->dims, "NAME=VALUE for a symbolic dimension of generated inputs (default 1)");
  sub->add_option("--repeat", args->repeat, "timed runs (default 1)");
  sub->add_option("--warmup", args->warmup, "untimed runs before (default 0)");
  sub->add_option("--warmup-ms", args->warmup_ms, "keep warming up until this many milliseconds have passed (default 0)");
  sub->add_option("--threads", args->threads, "intra-op threads (default 1; 0 = all cores)");
  sub->add_flag("--no-spin", args->no_spin, "idle pool threads sleep at once instead of spinning briefly");
  sub->add_flag("--no-mem-pattern", args->no_mem_pattern,
                "do not plan buffers per input shapes (every buffer from the pool, as on a first run)");
  sub->add_flag("--allow-unknown-opsets", args->allow_unknown_opsets,
                "try a model whose IR version or opset is newer than this build knows (refused by default)");
  sub->add_option("--max-tensor-bytes", args->max_tensor_bytes,
                  "cap on one tensor's bytes, checked before allocating (default: physical memory)");
  sub->add_option("--max-intermediate-bytes", args->max_intermediate_bytes,
                  "cap on a run's live intermediate bytes (default: physical memory)");
  sub->add_option("--optimize,--graph-optimization-level", args->optimize,
                  "0 none (nodes line up with the model: use it to profile node for node), 1 basic, 2 extended, "
                  "3 layout, 99 all (default, as onnxruntime); docs/optimizer.md");
  sub->add_option("--seed", args->seed, "seed for generated inputs (default 0)");
  sub->add_option("--gemm", args->gemm, "GEMM backend: builtin, openblas, eigen");
  sub->add_option("--kernels", args->kernels, "kernel set: fast or reference");
  sub->add_flag("--json", args->json, "print one JSON object instead of text");
  auto* prof = sub->add_option("--profile", args->profile_prefix, "write an onnxruntime-format trace (optional PREFIX)")
                   ->expected(0, 1);
  sub->add_option("--profile-layout", args->profile_layout, "fences (default, onnxruntime <= 1.20) or kernel (>= 1.21)");
  sub->add_option("--profile-skip-runs", args->profile_skip, "runs (warm-up included) not recorded in the trace");
  sub->add_option("--profile-max-runs", args->profile_max_runs, "runs recorded after the skipped ones (default: all)");
  sub->add_option("--profile-max-events", args->profile_max_events, "event cap; a warning is printed when reached");
  sub->add_flag("--memory", args->memory, "report peak intermediates, weights and peak RSS");
  sub->add_flag("--explain", args->explain,
                "print per node the kernel, the variant and ISA it takes, its blocking and threads "
                "(one untimed run observes the shapes; nothing is timed)");
  return [args, prof]() {
    args->profile = prof->count() > 0;
    return run_command(*args);
  };
});

}  // namespace
}  // namespace onnxmini_cli
