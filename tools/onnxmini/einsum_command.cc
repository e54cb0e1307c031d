// onnxmini einsum EQUATION --shapes 20x20x20x20,20x20x20x20 [--optimize none|cost|time]
//                 [--export FILE.onnx] [--opset N] [--bench] [--input FILE.npy]... [--output FILE.npy]
// Prints the plan (steps, shapes, bytes copied, flops); --bench times the direct
// kernel, a one-node Einsum model and the exported graph on onnxmini.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <random>

#include "onnxmini/einsum.h"
#include "onnxmini/onnxmini.h"
#include "tools/onnxmini/commands.h"

using namespace onnxmini;

namespace onnxmini_cli {
namespace {

struct EinsumArgs {
  std::string equation, shapes, optimize = "cost", export_path, output_path, dtype = "float32", kernels = "fast";
  std::vector<std::string> inputs;
  int opset = 13, threads = 1, repeat = 0, candidates = 24;
  unsigned seed = 0;
  bool bench = false, json = false, quiet = false;
};

std::vector<Shape> parse_shapes(const std::string& text) {
  std::vector<Shape> shapes;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find(',', start);
    if (end == std::string::npos) end = text.size();
    const std::string item = text.substr(start, end - start);
    Shape s;
    if (item != "scalar") {
      size_t p = 0;
      while (p <= item.size()) {
        size_t q = item.find('x', p);
        if (q == std::string::npos) q = item.size();
        const std::string d = item.substr(p, q - p);
        if (d.empty() || d.size() > 12 || d.find_first_not_of("0123456789") != std::string::npos)
          throw Error(ErrorCode::InvalidArgument, fmt::format("--shapes: '{}' is not a shape like 2x3x4 (or 'scalar')", item));
        s.push_back(std::stoll(d));
        p = q + 1;
      }
    }
    shapes.push_back(s);
    start = end + 1;
  }
  return shapes;
}

Tensor random_tensor(DType dt, const Shape& shape, std::mt19937& rng) {
  Tensor t(dt, shape);
  std::uniform_real_distribution<double> dist(-1, 1);
  for (int64_t i = 0; i < t.numel(); ++i) {
    if (dt == DType::Float32) t.mutable_data<float>()[i] = static_cast<float>(dist(rng));
    else if (dt == DType::Float64) t.mutable_data<double>()[i] = dist(rng);
    else if (dt == DType::Int32) t.mutable_data<int32_t>()[i] = static_cast<int32_t>(dist(rng) * 4);
    else t.mutable_data<int64_t>()[i] = static_cast<int64_t>(dist(rng) * 4);
  }
  return t;
}

// Median and minimum microseconds of `fn` over `repeat` runs after one warm-up.
template <typename Fn>
std::pair<double, double> time_us(Fn&& fn, int repeat) {
  fn();
  std::vector<double> us;
  for (int i = 0; i < repeat; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    fn();
    us.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(us.begin(), us.end());
  return {us[us.size() / 2], us.front()};
}

// optimize=time: "einsum: timing plans [#####.....] 5/24" redrawn in place on stderr.
void draw_progress_bar(size_t timed, size_t total) {
  const size_t width = 30, done = total ? width * timed / total : width;
  std::fprintf(stderr, "\reinsum: timing plans [%s%s] %zu/%zu%s", std::string(done, '#').c_str(),
               std::string(width - done, '.').c_str(), timed, total, timed == total ? "\n" : "");
  std::fflush(stderr);
}

int einsum_command(const EinsumArgs& a) {
  const DType dt = dtype_from_name(a.dtype);
  if (!(dt == DType::Float32 || dt == DType::Float64 || dt == DType::Int32 || dt == DType::Int64))
    throw Error(ErrorCode::InvalidArgument, "--dtype must be float32, float64, int32 or int64, got '" + a.dtype + "'");
  std::vector<Tensor> operands;
  for (const auto& path : a.inputs) operands.push_back(read_npy(path));
  std::vector<Shape> shapes;
  if (!operands.empty()) {
    for (const auto& t : operands) shapes.push_back(t.shape());
  } else {
    if (a.shapes.empty()) throw Error(ErrorCode::InvalidArgument, "einsum: give --shapes (or --input files)");
    shapes = parse_shapes(a.shapes);
  }
  EinsumOptions opts;
  opts.optimize = einsum_optimize_from_string(a.optimize);
  opts.threads = a.threads;
  opts.kernels = kernel_mode_from_string(a.kernels);
  // At info level and below each timed plan is logged, which the bar would garble.
  if (!a.quiet && !a.json && default_log_severity() > static_cast<int>(LogSeverity::Info))
    opts.progress = draw_progress_bar;
  opts.time_candidates = a.candidates;
  const EinsumPlanInfo plan = einsum_plan(a.equation, shapes, opts);
  nlohmann::json j;
  if (a.json) {
    j["equation"] = plan.equation;
    j["canonical"] = plan.canonical;
    j["letter_order"] = plan.letter_order;
    j["optimizer"] = plan.optimizer;
    j["summary"] = plan.summary;
    j["flops"] = plan.flops;
    j["bytes_copied"] = plan.bytes_copied;
    j["estimated_us"] = plan.estimated_us;
    j["steps"] = nlohmann::json::array();
    for (const auto& s : plan.steps) j["steps"].push_back({{"kind", s.kind}, {"text", s.text}, {"flops", s.flops}});
  } else if (!a.quiet) {
    std::cout << plan.text;
    if (!plan.candidates.empty()) {
      std::cout << "timed candidates (fastest first):\n";
      for (const auto& c : plan.candidates)
        std::cout << fmt::format("  {:9.2f} us measured  {:9.2f} us estimated  {}\n", c.measured_us, c.estimated_us,
                                 c.summary);
    }
  }
  if (!a.export_path.empty()) {
    std::ofstream f(a.export_path, std::ios::binary);
    if (!f) throw Error(ErrorCode::IoError, "cannot write " + a.export_path);
    f << einsum_decompose(a.equation, shapes, opts.optimize, a.opset, dt);
    if (!a.quiet && !a.json) std::cout << "exported: " << a.export_path << " (opset " << a.opset << ")\n";
  }
  std::mt19937 rng(a.seed);
  if (operands.empty() && (a.bench || !a.output_path.empty()))
    for (const auto& s : shapes) operands.push_back(random_tensor(dt, s, rng));
  if (!a.output_path.empty()) write_npy(a.output_path, einsum(a.equation, operands, opts));
  if (a.bench) {
    const int repeat = a.repeat > 0 ? a.repeat : 50;
    SessionOptions so;
    so.intra_op_num_threads = a.threads;
    so.kernels = opts.kernels;
    std::vector<std::pair<std::string, Value>> feeds;
    for (size_t i = 0; i < operands.size(); ++i) feeds.emplace_back(fmt::format("in{}", i), Value(operands[i]));
    const auto direct = time_us([&] { einsum(a.equation, operands, opts); }, repeat);
    const std::string node_model = einsum_model(a.equation, shapes, std::max(12, a.opset), dt);
    auto s1 = Session::load_from_bytes(node_model.data(), node_model.size(), so);
    const auto node = time_us([&] { s1->run(feeds); }, repeat);
    std::string graph_error;
    std::pair<double, double> graph{-1, -1};
    try {
      const std::string g = einsum_decompose(a.equation, shapes, opts.optimize, a.opset, dt);
      auto s2 = Session::load_from_bytes(g.data(), g.size(), so);
      graph = time_us([&] { s2->run(feeds); }, repeat);
    } catch (const Error& e) {
      graph_error = e.what();
    }
    if (a.json) {
      j["bench"] = {{"repeat", repeat},           {"threads", a.threads},          {"direct_median_us", direct.first},
                    {"direct_min_us", direct.second}, {"node_median_us", node.first}, {"node_min_us", node.second},
                    {"graph_median_us", graph.first}, {"graph_min_us", graph.second}, {"graph_error", graph_error}};
    } else {
      std::cout << fmt::format("bench ({} runs, {} thread(s), {}):\n", repeat, a.threads, a.dtype);
      std::cout << fmt::format("  einsum() direct        median {:9.2f} us  min {:9.2f} us\n", direct.first, direct.second);
      std::cout << fmt::format("  Einsum node (session)  median {:9.2f} us  min {:9.2f} us\n", node.first, node.second);
      if (graph_error.empty())
        std::cout << fmt::format("  exported graph         median {:9.2f} us  min {:9.2f} us\n", graph.first, graph.second);
      else
        std::cout << "  exported graph         not run: " << graph_error << "\n";
    }
  }
  if (a.json) std::cout << j.dump() << std::endl;
  return 0;
}

CommandRegistrar reg("einsum", [](CLI::App& app) -> std::function<int()> {
  auto args = std::make_shared<EinsumArgs>();
  CLI::App* sub = app.add_subcommand("einsum", "Plan, explain, export and time an einsum equation");
  sub->add_option("equation", args->equation, "einsum equation, e.g. bsnh,btnh->bnts")->required();
  sub->add_option("--shapes", args->shapes, "operand shapes: 20x20x20x20,20x20x20x20 ('scalar' for rank 0)");
  sub->add_option("--optimize", args->optimize, "none, cost (default) or time");
  sub->add_option("--candidates", args->candidates, "optimize=time: plans to time (default 24)");
  sub->add_option("--export", args->export_path, "write the plan as an ONNX graph of simple ops");
  sub->add_option("--opset", args->opset, "opset of the exported graph (default 13)");
  sub->add_flag("--bench", args->bench, "time einsum(), a one-node Einsum model and the exported graph");
  sub->add_option("--repeat", args->repeat, "timed runs for --bench (default 50)");
  sub->add_option("--threads", args->threads, "intra-op threads (default 1)");
  sub->add_option("--dtype", args->dtype, "float32 (default), float64, int32, int64");
  sub->add_option("--kernels", args->kernels, "fast (default) or reference (plain loops)");
  sub->add_option("--input", args->inputs, "operand from a .npy file (repeat; replaces --shapes)");
  sub->add_option("--output", args->output_path, "evaluate and write the result to a .npy file");
  sub->add_option("--seed", args->seed, "seed of the random operands (default 0)");
  sub->add_flag("--json", args->json, "print one JSON object");
  sub->add_flag("--quiet", args->quiet, "do not print the plan");
  return [args]() { return einsum_command(*args); };
});

}  // namespace
}  // namespace onnxmini_cli
