// `onnxmini run MODEL --explain` and `onnxmini info MODEL --kernels`: the plan
// printed per node must be the path a profiled run of the same command line then
// reports (kernel_variant / isa of its trace), bodies indented under their node,
// and the optimizer's rewrites named in the header.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "onnxmini/profile.h"
#include "tests/common/cli_runner.h"
#include "tests/common/model_builder.h"
#include "tests/common/variety_model.h"

namespace fs = std::filesystem;
using namespace onnxmini;
using namespace onnxmini::test;

namespace {

fs::path scratch(const std::string& name) {
  fs::path d = fs::temp_directory_path() / ("onnxmini_cli_explain_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

std::string save(const ModelBuilder& mb, const fs::path& dir) {
  const fs::path p = dir / "model.onnx";
  std::ofstream(p, std::ios::binary) << mb.serialize();
  return p.string();
}

// node -> (kernel_variant, isa) of one profiled `onnxmini run` with `options`.
std::map<std::string, std::pair<std::string, std::string>> profiled_paths(const std::string& model,
                                                                          const fs::path& dir,
                                                                          const std::string& options) {
  CliResult r = run_cli("run " + model + " " + options + " --profile " + (dir / "trace").string() + " --json");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  const std::string path = nlohmann::json::parse(r.out)["profile_file"];
  std::map<std::string, std::pair<std::string, std::string>> out;
  for (const profile::KernelEvent& k : profile::read_trace(path).kernels) out[k.node] = {k.variant, k.isa};
  return out;
}

TEST(CliExplain, RunExplainAnnouncesWhatAProfiledRunReports) {
  const fs::path dir = scratch("json");
  const std::string model = save(variety_model(), dir);
  for (const std::string options : {"--optimize 0", "", "--threads 2"}) {
    CliResult r = run_cli("run " + model + " --explain --json " + options);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const nlohmann::json j = nlohmann::json::parse(r.out);
    const auto ran = profiled_paths(model, dir, options);
    ASSERT_EQ(j["nodes"].size(), ran.size()) << options;
    for (const auto& n : j["nodes"]) {
      const std::string node = n["node"];
      ASSERT_EQ(ran.count(node), 1u) << node;
      EXPECT_EQ(n["variant"], ran.at(node).first) << node << " " << options;
      EXPECT_EQ(n["isa"], ran.at(node).second) << node << " " << options;
      EXPECT_EQ(n["threads"], options == "--threads 2" ? 2 : 1) << node;
      // No correction from the run's own record: every kernel's describe() agreed.
      EXPECT_EQ(n["note"], "") << node << " " << options;
    }
    // The default level fuses: the header lists the rewrites, the rows the fused nodes.
    if (options.empty()) {
      EXPECT_EQ(j["optimization_level"], 99);
      EXPECT_FALSE(j["rewrites"].empty());
      EXPECT_EQ(ran.count("relu"), 0u);
    }
  }
  fs::remove_all(dir);
}

TEST(CliExplain, TextTableIndentsBodiesAndNamesBlocking) {
  const fs::path dir = scratch("text");
  ModelBuilder then_b(13), else_b(13);
  then_b.node("MatMul", {"X", "X"}, {"t_out"}).name("then_matmul");
  then_b.output("t_out", DType::Float32);
  else_b.node("Sigmoid", {"X"}, {"e_out"}).name("else_sigmoid");
  else_b.output("e_out", DType::Float32);
  ModelBuilder mb(13);
  mb.input("X", DType::Float32, {64, 64});
  mb.input("cond", DType::Bool, {});
  mb.node("If", {"cond"}, {"Z"}).name("branch").attr("then_branch", then_b.graph()).attr("else_branch", else_b.graph());
  mb.output("Z", DType::Float32);
  const std::string model = save(mb, dir);
  CliResult r = run_cli("run " + model + " --explain --input cond=ones:scalar");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("explain: " + model), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("graph: optimizer level 99, all"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("shapes: observed in one untimed run with inputs"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("cond bool scalar"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\nbranch.then_branch:\n"), std::string::npos) << r.out;
  // The body's MatMul, indented one level, with the GEMM engine's blocking.
  const size_t row = r.out.find("\n  then_matmul ");
  ASSERT_NE(row, std::string::npos) << r.out;
  const std::string line = r.out.substr(row + 1, r.out.find('\n', row + 1) - row - 1);
  EXPECT_NE(line.find("MatMul"), std::string::npos) << line;
  EXPECT_NE(line.find("micro-tile"), std::string::npos) << line;
  EXPECT_NE(line.find("KC"), std::string::npos) << line;
  fs::remove_all(dir);
}

TEST(CliExplain, InfoKernelsRunsNothingAndSaysWhatWaitsForShapes) {
  const fs::path dir = scratch("info");
  const std::string model = save(variety_model(), dir);
  CliResult r = run_cli("info " + model + " --kernels --optimize 0 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_NE(j["shapes"].get<std::string>().find("nothing ran"), std::string::npos);
  std::map<std::string, nlohmann::json> rows;
  for (const auto& n : j["nodes"]) rows[n["node"]] = n;
  ASSERT_EQ(rows.size(), kVarietyNodes);
  // Conv: declared input and constant weight, so planned; Transpose waits for the Relu's output.
  const auto ran = profiled_paths(model, dir, "--optimize 0");
  EXPECT_EQ(rows.at("conv")["variant"], ran.at("conv").first);
  EXPECT_EQ(rows.at("transpose")["variant"], "chosen at run time");
  EXPECT_EQ(rows.at("transpose")["note"], "input shapes unknown before a run");
  // Text form: one line per node under the column header.
  CliResult text = run_cli("info " + model + " --kernels");
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("node"), std::string::npos);
  EXPECT_NE(text.out.find("blocking / note"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("rewrite "), std::string::npos) << text.out;  // level 99 by default
  fs::remove_all(dir);
}

TEST(CliExplain, ExplainWithProfileIsRefused) {
  const fs::path dir = scratch("refused");
  const std::string model = save(variety_model(), dir);
  CliResult r = run_cli("run " + model + " --explain --profile");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("--explain and --profile cannot be combined"), std::string::npos) << r.err;
  fs::remove_all(dir);
}

// A run that fails (here a 5x5 Conv on the 1x1 image that symbolic dims of 1 give) ends explain
// with the error's one line: the session, whose profiler writes its trace when destroyed, went
// after the trace's temporary folder, which added a "cannot create profile file" warning.
TEST(CliExplain, FailingRunGivesOneLine) {
  const fs::path dir = scratch("failing");
  ModelBuilder mb(17);
  mb.input("X", DType::Float32, {1, 1, -1, -1});
  mb.initializer("W", random_tensor(DType::Float32, {1, 1, 5, 5}, 3));
  mb.node("Conv", {"X", "W"}, {"Y"}).name("too_wide");
  mb.output("Y");
  const std::string model = save(mb, dir);
  CliResult r = run_cli("run " + model + " --explain");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_NE(r.err.find("too_wide"), std::string::npos) << r.err;
  EXPECT_EQ(r.out, "");
  fs::remove_all(dir);
}

}  // namespace

// ONNXMINI_NCHWC (read once per process, so through the CLI): a lone light Conv (16 -> 32 3x3
// stride 2, 96 flops per reordered element) stays NCHW under the cost rule and is blocked with
// `all` (the cost rule off); a lone heavy one (64 -> 64 3x3, 576) is blocked under the rule and
// stays NCHW with 0 (the layout off).
TEST(CliExplain, NchwcEnvironmentSwitchesTheLayoutAndItsCostRule) {
  auto lone_conv = [](const fs::path& dir, int64_t C, int64_t M, int64_t stride) {
    ModelBuilder mb(17);
    mb.input("X", DType::Float32, {1, C, 20, 20});
    mb.initializer("W", random_tensor(DType::Float32, {M, C, 3, 3}, 5));
    mb.node("Conv", {"X", "W"}, {"Y"}).name("c").attr("strides", std::vector<int64_t>{stride, stride})
        .attr("pads", std::vector<int64_t>{1, 1, 1, 1});
    mb.output("Y");
    return save(mb, dir);
  };
  const fs::path light_dir = scratch("nchwc_env_light"), heavy_dir = scratch("nchwc_env_heavy");
  const std::string light = lone_conv(light_dir, 16, 32, 2), heavy = lone_conv(heavy_dir, 64, 64, 1);
  auto ops = [&](const std::string& model, const std::string& env) {
    CliResult r = run_cli("run " + model + " --explain --json", env);
    EXPECT_EQ(r.exit_code, 0) << env << ": " << r.err;
    const nlohmann::json j = nlohmann::json::parse(r.out);
    std::vector<std::string> out;
    for (const auto& n : j["nodes"]) out.push_back(n["op"]);
    return out;
  };
  const std::vector<std::string> nchw{"Conv"}, blocked{"ReorderToBlocked", "NchwcConv", "ReorderFromBlocked"};
  EXPECT_EQ(ops(light, ""), nchw);
  EXPECT_EQ(ops(light, "ONNXMINI_NCHWC=1"), nchw);
  EXPECT_EQ(ops(light, "ONNXMINI_NCHWC=all"), blocked);
  EXPECT_EQ(ops(light, "ONNXMINI_NCHWC=0"), nchw);
  EXPECT_EQ(ops(heavy, ""), blocked);
  EXPECT_EQ(ops(heavy, "ONNXMINI_NCHWC=all"), blocked);
  EXPECT_EQ(ops(heavy, "ONNXMINI_NCHWC=0"), nchw);
  fs::remove_all(light_dir);
  fs::remove_all(heavy_dir);
}
