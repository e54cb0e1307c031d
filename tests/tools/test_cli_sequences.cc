// The CLI with sequence and optional values: `run --inputs` reads a
// SequenceProto input_0.pb and `--save-outputs` writes SequenceProto and
// OptionalProto output_K.pb files, which read back to the expected values.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "tests/common/cli_runner.h"
#include "tests/kernels/sequence/sequence_test_util.h"

namespace fs = std::filesystem;
using namespace onnxmini;
using namespace onnxmini::test;

namespace {

// Runs the CLI; its exit code, stderr in `err`.
int cli(const std::string& args, std::string& err) {
  const CliResult r = run_cli(args);
  err = r.err;
  return r.exit_code;
}

}  // namespace

TEST(CliSequences, SequenceInputAndSequenceAndOptionalOutputsRoundTrip) {
  const fs::path dir = fs::temp_directory_path() / ("onnxmini_cli_seq_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir / "in");
  // S -> (S with X appended, Optional(S))
  ModelBuilder mb(15);
  sequence_input(mb, "S", DType::Float32);
  mb.input("X", DType::Float32, {1});
  mb.node("SequenceInsert", {"S", "X"}, {"Longer"});
  mb.node("Optional", {"S"}, {"Wrapped"});
  mb.output("Longer");
  mb.output("Wrapped");
  std::ofstream(dir / "model.onnx", std::ios::binary) << mb.serialize();

  write_value_pb((dir / "in" / "input_0.pb").string(), float_sequence({{1, 2}, {3}}), "S");
  write_value_pb((dir / "in" / "input_1.pb").string(), Tensor::from_vector<float>({1}, {9}), "X");
  std::string err;
  ASSERT_EQ(cli("run " + (dir / "model.onnx").string() + " --inputs " + (dir / "in").string() + " --save-outputs " +
                    (dir / "out").string(),
                err),
            0)
      << err;

  std::string name;
  const Value longer = read_value_pb((dir / "out" / "output_0.pb").string(), "seq(tensor(float))", &name);
  EXPECT_EQ(name, "Longer");
  ASSERT_EQ(longer.sequence_items().size(), 3u);
  EXPECT_TRUE(tensors_near(longer.sequence_items()[0].tensor(), Tensor::from_vector<float>({2}, {1, 2}), 0, 0));
  EXPECT_TRUE(tensors_near(longer.sequence_items()[2].tensor(), Tensor::from_vector<float>({1}, {9}), 0, 0));

  const Value wrapped = read_value_pb((dir / "out" / "output_1.pb").string(), "optional(seq(tensor(float)))");
  ASSERT_TRUE(wrapped.has_element());
  EXPECT_EQ(wrapped.optional_element().sequence_items().size(), 2u);

  // --input NAME=FILE.pb reads the file as the input's declared type too.
  write_value_pb((dir / "s.pb").string(), float_sequence({{7}}));
  ASSERT_EQ(cli("run " + (dir / "model.onnx").string() + " --input S=" + (dir / "s.pb").string() + " --input X=" +
                    (dir / "in" / "input_1.pb").string() + " --save-outputs " + (dir / "out").string(),
                err),
            0)
      << err;
  EXPECT_EQ(read_value_pb((dir / "out" / "output_0.pb").string(), "seq(tensor(float))").sequence_items().size(), 2u);
  fs::remove_all(dir);
}
