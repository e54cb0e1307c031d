// The model writer (runtime/model_writer.h) through SessionOptions::optimized_model_filepath:
// a model saved at level 0 loads back with the same nodes, initializers, opsets,
// metadata, declared types and subgraphs, and the same outputs; a model saved after
// fusions loads back and runs like the optimized session (Conv + Relu / Sigmoid / Clip as
// com.microsoft FusedConv, the onnxmini-only fusions as their original nodes); a path
// that cannot be written is an error naming it.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>

#include <unistd.h>

#include "tests/common/fusion_test_util.h"

namespace onnxmini {
namespace test {
namespace {

std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("onnxmini_writer_" + std::to_string(::getpid()) + "_" + name))
      .string();
}

// Saves `mb` at `level`, returns the saved model's path.
std::string save(const ModelBuilder& mb, int level, const std::string& name) {
  SessionOptions o = opts(level);
  o.optimized_model_filepath = temp_path(name);
  mb.session(o);
  return o.optimized_model_filepath;
}

void expect_same_outputs(Session& a, Session& b, const std::vector<std::pair<std::string, Tensor>>& feeds,
                         double atol = 0) {
  const auto x = run_all(a, feeds), y = run_all(b, feeds);
  ASSERT_EQ(x.size(), y.size());
  for (size_t i = 0; i < x.size(); ++i) EXPECT_TRUE(tensors_near(y[i], x[i], atol, atol)) << "output " << i;
}

// Main graph with metadata, value_info, an overridable initializer and an If whose branches
// read outer values (one branch with its own initializer).
ModelBuilder rich_model() {
  ModelBuilder then_b(13), else_b(13);
  then_b.node("Add", {"Y", "X"}, {"t_out"}).name("then_add");
  then_b.output("t_out", DType::Float32);
  else_b.initializer("C", Tensor::from_vector<float>({3}, {10, 20, 30}));
  else_b.node("Mul", {"Y", "C"}, {"e_out"}).name("else_mul");
  else_b.output("e_out", DType::Float32);
  ModelBuilder mb(13);
  mb.input("X", DType::Float32, {3});
  mb.input("cond", DType::Bool, {});
  mb.initializer("S", Tensor::from_vector<float>({3}, {1, 2, 3}));
  mb.input("S", DType::Float32, {3});  // overridable
  mb.node("Mul", {"X", "S"}, {"XS"}).name("scale");
  mb.node("Relu", {"XS"}, {"Y"}).name("relu");
  mb.node("If", {"cond"}, {"Z"}).name("if").attr("then_branch", then_b.graph()).attr("else_branch", else_b.graph());
  mb.output("Z", DType::Float32, {3}, true);
  auto& p = mb.proto();
  auto* vi = p.mutable_graph()->add_value_info();
  vi->set_name("Y");
  vi->mutable_type()->mutable_tensor_type()->set_elem_type(static_cast<int>(DType::Float32));
  auto* kv = p.add_metadata_props();
  kv->set_key("author"), kv->set_value("tests");
  p.set_doc_string("a model doc");
  p.set_model_version(7);
  return mb;
}

TEST(ModelWriter, RoundTripAtLevelZero) {
  ModelBuilder mb = rich_model();
  const std::string path = save(mb, ORT_DISABLE_ALL, "rich.onnx");
  auto original = mb.session(opts(ORT_DISABLE_ALL));
  auto reloaded = Session::load(path, opts(ORT_DISABLE_ALL));
  const ModelDescription a = original->describe(), b = reloaded->describe();
  EXPECT_EQ(b.model_version, 7);
  EXPECT_EQ(b.doc_string, "a model doc");
  EXPECT_EQ(b.metadata_props, a.metadata_props);
  EXPECT_EQ(b.opsets, a.opsets);
  ASSERT_EQ(b.nodes.size(), a.nodes.size());
  for (size_t i = 0; i < a.nodes.size(); ++i) {
    EXPECT_EQ(b.nodes[i].op_type, a.nodes[i].op_type);
    EXPECT_EQ(b.nodes[i].name, a.nodes[i].name);
    EXPECT_EQ(b.nodes[i].inputs, a.nodes[i].inputs);
    EXPECT_EQ(b.nodes[i].outputs, a.nodes[i].outputs);
    EXPECT_EQ(b.nodes[i].attributes, a.nodes[i].attributes);
  }
  ASSERT_EQ(b.outputs.size(), 1u);
  EXPECT_EQ(b.outputs[0].type, "tensor(float)");
  ASSERT_EQ(b.outputs[0].shape.size(), 1u);
  EXPECT_EQ(b.outputs[0].shape[0].value, 3);
  ASSERT_EQ(reloaded->overridable_initializers().size(), 1u);
  EXPECT_EQ(reloaded->overridable_initializers()[0].name, "S");
  const Tensor x = Tensor::from_vector<float>({3}, {-1, 2, 3});
  for (bool c : {true, false})
    expect_same_outputs(*original, *reloaded, {{"X", x}, {"cond", Tensor::scalar<bool>(c)}});
  // The overridable initializer can still be fed.
  expect_same_outputs(*original, *reloaded,
                      {{"X", x}, {"cond", Tensor::scalar<bool>(false)}, {"S", Tensor::from_vector<float>({3}, {4, 5, 6})}});
  std::remove(path.c_str());
}

// Conv -> BN -> Relu, then BN -> Conv -> PRelu: conv_bn folds weights (plain ONNX), Relu becomes
// FusedConv, BN before the second Conv and the PRelu stay as nodes in the saved file.
ModelBuilder conv_stack() {
  ModelBuilder mb(13);
  mb.input("X", DType::Float32, {1, 3, 10, 12});
  mb.initializer("W", random_tensor(DType::Float32, {4, 3, 3, 3}, 1));
  mb.initializer("B", random_tensor(DType::Float32, {4}, 2));
  mb.initializer("W2", random_tensor(DType::Float32, {5, 4, 3, 3}, 3));
  mb.initializer("g", random_tensor(DType::Float32, {4}, 4, 0.5, 1.5));
  mb.initializer("b", random_tensor(DType::Float32, {4}, 5));
  mb.initializer("m", random_tensor(DType::Float32, {4}, 6));
  mb.initializer("v", random_tensor(DType::Float32, {4}, 7, 0.5, 2.0));
  mb.initializer("slope", random_tensor(DType::Float32, {5, 1, 1}, 8, 0.0, 0.5));
  mb.node("Conv", {"X", "W", "B"}, {"C"}).name("conv1").attr("pads", std::vector<int64_t>{1, 1, 1, 1});
  mb.node("BatchNormalization", {"C", "g", "b", "m", "v"}, {"N"}).name("bn1");
  mb.node("Relu", {"N"}, {"R"}).name("relu");
  mb.node("BatchNormalization", {"R", "g", "b", "m", "v"}, {"N2"}).name("bn2");
  mb.node("Conv", {"N2", "W2"}, {"C2"}).name("conv2").attr("pads", std::vector<int64_t>{1, 1, 1, 1});
  mb.node("PRelu", {"C2", "slope"}, {"Y"}).name("prelu");
  mb.output("Y");
  return mb;
}

TEST(ModelWriter, FusionsWithoutOnnxFormAreSavedUnfused) {
  ModelBuilder mb = conv_stack();
  const std::string path = save(mb, ORT_ENABLE_ALL, "convs.onnx");
  auto optimized = mb.session(opts(ORT_ENABLE_ALL));
  auto reloaded_plain = Session::load(path, opts(ORT_DISABLE_ALL));
  const ModelDescription d = reloaded_plain->describe();
  std::vector<std::string> ops;
  for (const auto& n : d.nodes) ops.push_back(n.op_type);
  // conv1 + bn1 + relu -> one Conv (FusedConv in the file, Conv with the fused Relu once loaded).
  EXPECT_EQ(ops, (std::vector<std::string>{"Conv", "BatchNormalization", "Conv", "PRelu"}));
  EXPECT_NE(d.nodes[0].kernel, "(unsupported)");
  bool contrib = false;
  for (const auto& [domain, version] : d.opsets) contrib = contrib || domain == "com.microsoft";
  EXPECT_TRUE(contrib);
  // Reloaded and optimized again, it runs as the first optimized session.
  auto reloaded = Session::load(path, opts(ORT_ENABLE_ALL));
  EXPECT_EQ(reloaded->describe().nodes.size(), optimized->describe().nodes.size());
  const Tensor x = random_tensor(DType::Float32, {1, 3, 10, 12}, 9);
  expect_same_outputs(*optimized, *reloaded, {{"X", x}}, 1e-5);
  std::remove(path.c_str());
}

TEST(ModelWriter, UnwritablePathNamed) {
  SessionOptions o = opts(ORT_ENABLE_ALL);
  o.optimized_model_filepath = "/nonexistent_dir_onnxmini/out.onnx";
  try {
    conv_stack().session(o);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::IoError);
    EXPECT_NE(std::string(e.what()).find("/nonexistent_dir_onnxmini/out.onnx"), std::string::npos) << e.what();
  }
}

TEST(ModelWriter, FusedConvWithUnsupportedActivationRejected) {
  ModelBuilder mb(13);
  mb.import_domain("com.microsoft", 1);
  mb.input("X", DType::Float32, {1, 3, 5, 5});
  mb.initializer("W", random_tensor(DType::Float32, {2, 3, 1, 1}, 1));
  mb.node("FusedConv", {"X", "W"}, {"Y"}).name("fc").domain("com.microsoft").attr("activation", "Tanh");
  mb.output("Y");
  try {
    mb.session();
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::NotImplemented);
    EXPECT_NE(std::string(e.what()).find("'Tanh'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("fc"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace test
}  // namespace onnxmini
