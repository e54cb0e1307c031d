// The onnxmini CLI end to end: run, --json, --inputs/--save-outputs, info, and
// one-line errors with a non-zero exit code for bad models and arguments.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <sys/wait.h>

#include <climits>
#include <filesystem>
#include <fstream>

#include "tests/common/cli_runner.h"
#include "tests/common/model_builder.h"

namespace fs = std::filesystem;
using namespace onnxmini;
using namespace onnxmini::test;

namespace {

CliResult cli(const std::string& args) { return run_cli(args); }

int count_lines(const std::string& s) { return static_cast<int>(std::count(s.begin(), s.end(), '\n')); }

fs::path scratch(const std::string& name) {
  fs::path d = fs::temp_directory_path() / ("onnxmini_cli_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

// X [N,4] -> Relu(X + B)
std::string write_model(const fs::path& dir) {
  ModelBuilder mb(13);
  mb.input("X", DType::Float32, {-1, 4});
  mb.initializer("B", Tensor::from_vector<float>({4}, {1, -1, 0.5f, 0}));
  mb.node("Add", {"X", "B"}, {"A"}).name("add");
  mb.node("Relu", {"A"}, {"Y"}).name("relu");
  mb.output("Y", DType::Float32, {-1, 4});
  fs::path p = dir / "model.onnx";
  std::ofstream(p, std::ios::binary) << mb.serialize();
  return p.string();
}

}  // namespace

TEST(Cli, RunPrintsOutputsAndLatency) {
  fs::path dir = scratch("run");
  std::string model = write_model(dir);
  CliResult r = cli("run " + model + " --input X=ones:2x4 --repeat 3");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("output 'Y': float 2x4 [2, 0, 1.5, 1, 2, 0, 1.5, 1]"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("latency over 3 run(s)"), std::string::npos) << r.out;
  fs::remove_all(dir);
}

TEST(Cli, JsonOutputForScripts) {
  fs::path dir = scratch("json");
  std::string model = write_model(dir);
  CliResult r = cli("run " + model + " --dim d0=5 --repeat 4 --warmup-ms 5 --threads 2 --no-spin --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_GT(j["cpu_ms"]["mean"].get<double>(), 0.0);
  EXPECT_EQ(j["threads"], 2);
  for (auto k : {"min", "median", "mean", "max"}) {
    EXPECT_TRUE(j["latency_ms"][k].is_number()) << k;
  }
  EXPECT_LE(j["latency_ms"]["min"].get<double>(), j["latency_ms"]["max"].get<double>());
  ASSERT_EQ(j["outputs"].size(), 1u);
  EXPECT_EQ(j["outputs"][0]["name"], "Y");
  EXPECT_EQ(j["outputs"][0]["dtype"], "float");
  EXPECT_EQ(j["outputs"][0]["shape"], nlohmann::json::array({5, 4}));  // --dim d0=5 sized the generated input
  fs::remove_all(dir);
}

TEST(Cli, MemoryPlanCountsAndSwitch) {
  const std::string model = std::string(ONNXMINI_SOURCE_DIR) + "/models/kmeans.onnx";
  CliResult planned = cli("run " + model + " --repeat 3 --json");
  ASSERT_EQ(planned.exit_code, 0) << planned.err;
  auto j = nlohmann::json::parse(planned.out);
  // Runs after the first with the same shapes take their buffers from the plan; the outputs from the pool.
  EXPECT_GT(j["planned_buffers"].get<int>(), 0);
  EXPECT_GT(j["pooled_buffers"].get<int>(), 0);
  CliResult pooled = cli("run " + model + " --repeat 3 --json --no-mem-pattern");
  ASSERT_EQ(pooled.exit_code, 0) << pooled.err;
  auto k = nlohmann::json::parse(pooled.out);
  EXPECT_EQ(k["planned_buffers"].get<int>(), 0);
  EXPECT_EQ(k["pooled_buffers"].get<int>(), j["planned_buffers"].get<int>() + j["pooled_buffers"].get<int>());
  EXPECT_EQ(k["outputs"], j["outputs"]);
}

TEST(Cli, InputsAndSaveOutputsRoundTrip) {
  fs::path dir = scratch("roundtrip");
  std::string model = write_model(dir);
  fs::create_directories(dir / "in");
  write_tensor_pb((dir / "in" / "input_0.pb").string(), Tensor::from_vector<float>({1, 4}, {1, 2, -3, -4}), "X");
  write_npy((dir / "x.npy").string(), Tensor::from_vector<float>({1, 4}, {0, 0, 0, 0}));
  CliResult r = cli("run " + model + " --inputs " + (dir / "in").string() + " --save-outputs " + (dir / "out").string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::string name;
  Tensor y = read_tensor_pb((dir / "out" / "output_0.pb").string(), &name);
  EXPECT_EQ(name, "Y");
  EXPECT_TRUE(tensors_near(y, Tensor::from_vector<float>({1, 4}, {2, 1, 0, 0}), 0, 0));
  // An explicit --input wins over the folder.
  r = cli("run " + model + " --inputs " + (dir / "in").string() + " --input X=" + (dir / "x.npy").string() +
          " --save-outputs " + (dir / "out").string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(tensors_near(read_tensor_pb((dir / "out" / "output_0.pb").string()),
                           Tensor::from_vector<float>({1, 4}, {1, 0, 0.5f, 0}), 0, 0));
  fs::remove_all(dir);
}

TEST(Cli, RunsAnOnnxBackendTestFolder) {
  fs::path test = "/usr/share/libonnx-testdata/data/node/test_add_bcast";
  if (!fs::exists(test)) GTEST_SKIP() << "libonnx-testdata is not installed";
  fs::path dir = scratch("backend");
  CliResult r = cli("run " + (test / "model.onnx").string() + " --inputs " + (test / "test_data_set_0").string() +
                    " --save-outputs " + dir.string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(tensors_near(read_tensor_pb((dir / "output_0.pb").string()),
                           read_tensor_pb((test / "test_data_set_0" / "output_0.pb").string()), 1e-7, 1e-3));
  fs::remove_all(dir);
}

TEST(Cli, BadModelsGiveOneLineAndNonZeroExit) {
  fs::path dir = scratch("bad");
  std::string model = write_model(dir);
  std::string bytes;
  {
    std::ifstream f(model, std::ios::binary);
    std::stringstream ss;
    ss << f.rdbuf();
    bytes = ss.str();
  }
  { std::ofstream(dir / "empty.onnx"); }
  std::ofstream(dir / "truncated.onnx", std::ios::binary) << bytes.substr(0, bytes.size() / 2);
  for (std::string bad : {"empty.onnx", "truncated.onnx", "missing.onnx"}) {
    for (std::string cmd : {"run", "info"}) {
      CliResult r = cli(cmd + " " + (dir / bad).string());
      EXPECT_NE(r.exit_code, 0) << cmd << " " << bad;
      EXPECT_EQ(count_lines(r.err), 1) << cmd << " " << bad << ": " << r.err;
      EXPECT_EQ(r.err.rfind("onnxmini: error: ", 0), 0u) << r.err;
      EXPECT_EQ(r.out, "") << cmd << " " << bad;
    }
  }
  fs::remove_all(dir);
}

TEST(Cli, BadArgumentsGiveOneLine) {
  fs::path dir = scratch("args");
  std::string model = write_model(dir);
  struct Case {
    std::string args, expect;
  };
  std::vector<Case> cases = {
      {"run " + model + " --input Q=ones:1x4", "unknown input 'Q'"},
      {"run " + model + " --input X=ones:1x5", "input 'X': dimension 1 must be 4"},
      {"run " + model + " --input X=bogus:1x4", "unknown input kind 'bogus'"},
      {"run " + model + " --input X=ones:1xz", "invalid shape '1xz'"},
      {"run " + model + " --input X", "--input expects NAME=VALUE"},
      {"run " + model + " --repeat 0", "--repeat must be at least 1"},
      {"run " + model + " --warmup-ms -5", "--warmup-ms must be in [0, 3600000]"},
      {"run " + model + " --gemm magic", "unknown GEMM backend 'magic'"},
      {"run " + model + " --kernels slow", "unknown kernel mode 'slow'"},
      {"run " + model + " --input X=" + (dir / "nope.npy").string(), "cannot open"},
      {"frobnicate", "frobnicate"},
  };
  for (const auto& c : cases) {
    CliResult r = cli(c.args);
    EXPECT_NE(r.exit_code, 0) << c.args;
    EXPECT_EQ(count_lines(r.err), 1) << c.args << ": " << r.err;
    EXPECT_NE(r.err.find(c.expect), std::string::npos) << c.args << ": " << r.err;
  }
  fs::remove_all(dir);
}

TEST(Cli, InfoShowsTheModel) {
  fs::path dir = scratch("info");
  std::string model = write_model(dir);
  CliResult r = cli("info " + model);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("opsets: ai.onnx=13"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("X: tensor(float) [d0, 4]"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("B: float [4]"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("[0] Add 'add'"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("[1] Relu 'relu'"), std::string::npos) << r.out;
  fs::remove_all(dir);

  fs::path small = fs::path(ONNXMINI_SOURCE_DIR) / ".." / "shared" / "models" / "small.onnx";
  if (!fs::exists(small)) GTEST_SKIP() << "../shared/models/small.onnx not present";
  r = cli("info " + small.string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("nodes (14, execution order)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Conv 'n0'"), std::string::npos);
  EXPECT_NE(r.out.find("kernel_shape = [3, 3]"), std::string::npos);
}

// Reliability (docs/reliability.md): refusals and caps end in one line on stderr and exit code 1.
TEST(Cli, HostileModelsGiveOneLineErrors) {
  const fs::path dir = scratch("hostile");
  auto save = [&](const ModelBuilder& mb, const std::string& name) {
    const fs::path p = dir / name;
    std::ofstream(p, std::ios::binary) << mb.serialize();
    return p.string();
  };
  ModelBuilder future(99);
  future.input("X", DType::Float32, {2});
  future.node("Relu", {"X"}, {"Y"}).name("r");
  future.output("Y");
  const std::string future_path = save(future, "future.onnx");
  CliResult r = cli("run " + future_path);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(count_lines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("opset 99 of domain 'ai.onnx'"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("--allow-unknown-opsets"), std::string::npos) << r.err;
  r = cli("run " + future_path + " --allow-unknown-opsets");
  EXPECT_EQ(r.exit_code, 0) << r.err;

  ModelBuilder bomb(13);
  bomb.initializer("S", Tensor::from_vector<int64_t>({1}, {int64_t{1} << 45}));
  bomb.node("ConstantOfShape", {"S"}, {"Y"}).name("bomb");
  bomb.output("Y");
  r = cli("run " + save(bomb, "bomb.onnx"));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(count_lines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("ConstantOfShape 'bomb': output of shape 35184372088832 (float)"), std::string::npos) << r.err;

  const std::string small = write_model(dir);
  r = cli("run " + small + " --input X=zeros:64x4 --max-tensor-bytes 1000");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(count_lines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("Add 'add': output of shape 64x4 (float) needs 1024 bytes, more than max_tensor_bytes 1000"),
            std::string::npos)
      << r.err;
  r = cli("run " + small + " --input X=zeros:64x4 --max-intermediate-bytes 1500");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("more than max_intermediate_bytes 1500"), std::string::npos) << r.err;
  EXPECT_EQ(cli("run " + small + " --input X=zeros:64x4 --max-tensor-bytes 1024").exit_code, 0);

  const std::string bytes = future.serialize();
  std::ofstream(dir / "truncated.onnx", std::ios::binary) << bytes.substr(0, bytes.size() / 2);
  r = cli("run " + (dir / "truncated.onnx").string());
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(count_lines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("not a valid ONNX model"), std::string::npos) << r.err;
  fs::remove_all(dir);
}

// One model per remaining family of the hostile suite (tests/runtime/test_hostile_models.cc): each
// must end the CLI with exit code 1 and one line on stderr naming the culprit, never a signal.
TEST(Cli, HostileModelFamiliesGiveOneLineErrors) {
  const fs::path dir = scratch("hostile_families");
  auto expect_one_line = [&](const ModelBuilder& mb, const std::string& name, const std::string& flags,
                             const std::string& expected) {
    const fs::path p = dir / name;
    std::ofstream(p, std::ios::binary) << mb.serialize();
    const CliResult r = cli("run " + p.string() + flags);
    EXPECT_EQ(r.exit_code, 1) << name << ": " << r.err;
    EXPECT_EQ(count_lines(r.err), 1) << name << ": " << r.err;
    EXPECT_NE(r.err.find(expected), std::string::npos) << name << ": " << r.err;
  };

  ModelBuilder cycle(13);
  cycle.input("X", DType::Float32, {2});
  cycle.node("Add", {"X", "B"}, {"A"}).name("first");
  cycle.node("Relu", {"A"}, {"B"}).name("second");
  cycle.output("B");
  expect_one_line(cycle, "cycle.onnx", "", "graph has a cycle");

  // External data through a symbolic link that points outside the model's folder.
  std::ofstream(dir / "secret.bin", std::ios::binary) << std::string(16, 'x');
  fs::create_directories(dir / "m");
  fs::create_symlink(dir / "secret.bin", dir / "m" / "link.bin");
  ModelBuilder escape(13);
  auto* init = escape.proto().mutable_graph()->add_initializer();
  init->set_name("W");
  init->set_data_type(static_cast<int>(DType::Float32));
  init->add_dims(4);
  init->set_data_location(onnx::TensorProto::EXTERNAL);
  auto* location = init->add_external_data();
  location->set_key("location");
  location->set_value("link.bin");
  escape.node("Identity", {"W"}, {"Y"}).name("id");
  escape.output("Y");
  expect_one_line(escape, "m/escape.onnx", "", "'link.bin' escapes the model's folder");

  ModelBuilder gather(13);
  gather.initializer("X", Tensor::from_vector<float>({2}, {1, 2}));
  gather.initializer("I", Tensor::from_vector<int64_t>({1}, {INT64_MIN}));
  gather.node("Gather", {"X", "I"}, {"Y"}).name("g");
  gather.output("Y");
  expect_one_line(gather, "gather.onnx", "", "-9223372036854775808");

  // A Loop with trip count INT64_MAX whose body grows a scan output: ends at the intermediate cap.
  ModelBuilder body(13);
  body.input("i", DType::Int64, {});
  body.input("c", DType::Bool, {});
  body.node("Identity", {"c"}, {"c_out"});
  body.node("ConstantOfShape", {"S"}, {"scan"}).name("grow");
  body.output("c_out", DType::Bool, {});
  body.output("scan", DType::Float32, {1024}, true);
  ModelBuilder loop(13);
  loop.initializer("M", Tensor::scalar<int64_t>(INT64_MAX));
  loop.initializer("T", Tensor::scalar<bool>(true));
  loop.initializer("S", Tensor::from_vector<int64_t>({1}, {1024}));
  loop.node("Loop", {"M", "T"}, {"Y"}).name("loop").attr("body", body.graph());
  loop.output("Y");
  expect_one_line(loop, "loop.onnx", " --max-intermediate-bytes 1048576", "Loop 'loop'");

  ModelBuilder unknown(13);
  unknown.import_domain("com.example.evil", 1);
  unknown.input("X", DType::Float32, {2});
  unknown.node("Explode", {"X"}, {"Y"}).name("boom").domain("com.example.evil");
  unknown.output("Y");
  expect_one_line(unknown, "unknown.onnx", " --allow-unknown-opsets", "node 'boom' op 'Explode'");
  fs::remove_all(dir);
}
