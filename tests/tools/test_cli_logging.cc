// The CLI's global logging options: -v prints the kernel chosen for each node,
// -vv adds the finer detail, --log-level error keeps a clean run silent, and a
// bad level is a one-line error.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "tests/common/cli_runner.h"
#include "tests/common/model_builder.h"

namespace fs = std::filesystem;
using namespace onnxmini;
using namespace onnxmini::test;

namespace {

CliResult cli(const std::string& args) { return run_cli(args); }

// Y = Relu(Gemm(X, Concat(W1, W2))): with --optimize 1 the Concat folds and W1, W2 are dropped.
struct Model {
  fs::path dir, path;
  std::vector<NodeDescription> nodes;
  Model() {
    dir = fs::temp_directory_path() / ("onnxmini_cli_log_" + std::to_string(::getpid()));
    fs::create_directories(dir);
    const ModelBuilder mb = foldable_gemm_model();
    path = dir / "model.onnx";
    std::ofstream(path, std::ios::binary) << mb.serialize();
    nodes = describe_model(path.string()).nodes;
  }
  ~Model() { fs::remove_all(dir); }
};

TEST(CliLogging, VerbosePrintsTheKernelOfEachNode) {
  Model m;
  const CliResult r = cli("-v run --optimize 0 " + m.path.string());  // every node of the model runs
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const auto& n : m.nodes) {
    const std::string line = "node '" + n.name + "' " + n.op_type + " (opset 13) -> kernel " + n.kernel + "\n";
    EXPECT_NE(r.err.find(line), std::string::npos) << line << "\n" << r.err;
  }
  // Every line: time stamp, severity letter and the session's tag.
  const std::regex line(R"(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{6} \[[VI]:session-\d+\] .*)");
  std::istringstream lines(r.err);
  for (std::string l; std::getline(lines, l);) EXPECT_TRUE(std::regex_match(l, line)) << l;
  EXPECT_NE(r.err.find("[I:session-"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("dropped unused constant"), std::string::npos) << "verbosity 1 needs -vv";
}

TEST(CliLogging, RepeatedVRaisesTheVerbosityAndWorksAfterTheCommand) {
  Model m;
  const CliResult r = cli("run " + m.path.string() + " --optimize 1 -vv");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("constant folding: folded Concat 'cat'"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("dropped unused constant 'W1'"), std::string::npos) << r.err;
}

TEST(CliLogging, InfoLevelShowsTheSummaryButNoKernels) {
  Model m;
  const CliResult r = cli("--log-level info run " + m.path.string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("model loaded in"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("intra-op thread pool: 1 thread(s)"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("-> kernel"), std::string::npos) << r.err;
}

TEST(CliLogging, ErrorLevelKeepsACleanRunSilent) {
  Model m;
  for (const char* level : {"error", "3", "warning"}) {
    const CliResult r = cli(std::string("--log-level ") + level + " run " + m.path.string() + " --optimize 1");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.err, "") << level;
    EXPECT_NE(r.out.find("output 'Y'"), std::string::npos) << r.out;
  }
}

TEST(CliLogging, BadLevelIsAOneLineError) {
  Model m;
  const CliResult r = cli("--log-level loud run " + m.path.string());
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "onnxmini: error: log level 'loud': expected verbose, info, warning, error, fatal or 0..4\n");
}

}  // namespace
