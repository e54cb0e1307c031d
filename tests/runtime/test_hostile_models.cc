// The hostile-model suite (docs/reliability.md): models and inputs written to
// break the runtime - truncated and bit-flipped files, cycles, absurd and
// wrapping dims, data that does not match its shape, external data escaping the
// model's folder, wrong attribute types, allocation bombs, zero strides and
// groups, out-of-range axes and indices, future opsets. Each must end in one
// onnxmini::Error whose message names the culprit; never a signal, a hang or an
// allocation of the bomb's size. Every case runs in well under a second.
#include <gtest/gtest.h>
#include <unistd.h>

#include <climits>
#include <filesystem>
#include <fstream>
#include <functional>
#include <initializer_list>
#include <string>

#include "tests/common/model_builder.h"

namespace onnxmini {
namespace {

using test::ModelBuilder;
namespace fs = std::filesystem;

// Runs `f`; it must throw onnxmini::Error whose message contains every part.
void expect_refused(const std::function<void()>& f, std::initializer_list<std::string> parts) {
  try {
    f();
    ADD_FAILURE() << "no error; expected one containing '" << *parts.begin() << "'";
  } catch (const Error& e) {
    const std::string msg = e.what();
    for (const auto& p : parts) EXPECT_NE(msg.find(p), std::string::npos) << "missing '" << p << "' in: " << msg;
    EXPECT_EQ(msg.find('\n'), std::string::npos) << "not one line: " << msg;
  }
}

Tensor i64s(const std::vector<int64_t>& v) { return Tensor::from_vector<int64_t>({static_cast<int64_t>(v.size())}, v); }

// Loads and runs `mb` with zero-filled feeds of the given shapes.
void load_and_run(const ModelBuilder& mb, const std::vector<std::pair<std::string, Tensor>>& feeds = {},
                  const SessionOptions& o = {}) {
  auto s = mb.session(o);
  std::vector<std::pair<std::string, Value>> f;
  for (const auto& [n, t] : feeds) f.emplace_back(n, Value(t));
  s->run(f);
}

// A small model every byte of which is worth mutating: Conv -> Relu -> Reshape.
ModelBuilder small_model() {
  ModelBuilder mb(13);
  mb.input("X", DType::Float32, {1, 2, 4, 4});
  mb.initializer("W", Tensor::from_vector<float>({2, 2, 1, 1}, {1, 2, 3, 4}));
  mb.initializer("S", i64s({1, 32}));
  mb.node("Conv", {"X", "W"}, {"C"}).name("conv").attr("group", int64_t{1});
  mb.node("Relu", {"C"}, {"R"}).name("relu");
  mb.node("Reshape", {"R", "S"}, {"Y"}).name("reshape");
  mb.output("Y");
  return mb;
}

// ---- damaged files ----

TEST(HostileModels, TruncatedFilesAreRefused) {
  const std::string bytes = small_model().serialize();
  for (size_t n = 0; n < bytes.size(); ++n) {
    try {
      auto s = Session::load_from_bytes(bytes.data(), n);
      // Some prefixes are well-formed protobuf (fields end on a boundary): they must still run or fail cleanly.
      s->run({{"X", Value(Tensor(DType::Float32, {1, 2, 4, 4}))}});
    } catch (const Error& e) {
      EXPECT_FALSE(std::string(e.what()).empty()) << "prefix of " << n << " bytes";
    }
  }
  expect_refused([&] { Session::load_from_bytes(bytes.data(), 0); }, {"model is empty"});
  expect_refused([&] { Session::load_from_bytes(bytes.data(), bytes.size() / 2); }, {"not a valid ONNX model"});
}

TEST(HostileModels, BitFlippedFilesEndInAnErrorOrARun) {
  // Every byte flipped in turn (each of 3 patterns): only onnxmini::Error may come out.
  const std::string bytes = small_model().serialize();
  int refused = 0;
  for (size_t i = 0; i < bytes.size(); ++i)
    for (unsigned char mask : {0x01, 0x80, 0xff}) {
      std::string m = bytes;
      m[i] = static_cast<char>(m[i] ^ mask);
      try {
        auto s = Session::load_from_bytes(m.data(), m.size());
        s->run({{"X", Value(Tensor(DType::Float32, {1, 2, 4, 4}))}});
      } catch (const Error& e) {
        ++refused;
        EXPECT_FALSE(std::string(e.what()).empty());
      }
    }
  EXPECT_GT(refused, 0);
}

// ---- graph structure ----

TEST(HostileModels, CyclesAreRefused) {
  ModelBuilder mb(13);
  mb.input("X", DType::Float32, {2});
  mb.node("Add", {"X", "B"}, {"A"}).name("first");
  mb.node("Relu", {"A"}, {"B"}).name("second");
  mb.output("B");
  expect_refused([&] { mb.session(); }, {"graph has a cycle", "depends on its own output"});
}

TEST(HostileModels, AbsurdAndWrappingDimsInInitializers) {
  for (const Shape& dims : {Shape{int64_t{1} << 40, int64_t{1} << 40}, Shape{INT64_MAX, 2}, Shape{-1, 4}}) {
    ModelBuilder mb(13);
    auto* init = mb.proto().mutable_graph()->add_initializer();
    init->set_name("W");
    init->set_data_type(static_cast<int>(DType::Float32));
    for (int64_t d : dims) init->add_dims(d);
    init->set_raw_data(std::string(16, '\0'));
    mb.node("Identity", {"W"}, {"Y"}).name("id");
    mb.output("Y");
    expect_refused([&] { mb.session(); }, {"initializer 'W'"});
  }
}

TEST(HostileModels, DataThatDoesNotMatchItsShape) {
  ModelBuilder mb(13);
  auto* init = mb.proto().mutable_graph()->add_initializer();
  init->set_name("W");
  init->set_data_type(static_cast<int>(DType::Float32));
  init->add_dims(2);
  init->add_dims(3);
  init->set_raw_data(std::string(7, '\0'));
  mb.node("Identity", {"W"}, {"Y"}).name("id");
  mb.output("Y");
  expect_refused([&] { mb.session(); }, {"initializer 'W'", "raw_data has 7 bytes", "2x3", "needs 24"});
}

TEST(HostileModels, FeedsOfTheWrongShapeOrType) {
  auto s = small_model().session();
  expect_refused([&] { s->run({{"X", Value(Tensor(DType::Float32, {1, 3, 4, 4}))}}); },
                 {"input 'X'", "dimension 1 must be 2"});
  expect_refused([&] { s->run({{"X", Value(Tensor(DType::Int64, {1, 2, 4, 4}))}}); },
                 {"input 'X'", "expected dtype float"});
}

// ---- external data ----

class HostileExternalData : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("onnxmini_hostile_" + std::to_string(::getpid()));
    fs::remove_all(root_);
    fs::create_directories(root_ / "model");
    std::ofstream(root_ / "secret.bin", std::ios::binary) << std::string(64, 'x');
    std::ofstream(root_ / "model" / "w.bin", std::ios::binary) << std::string(16, '\0');
    fs::create_symlink(root_ / "secret.bin", root_ / "model" / "link.bin");
  }
  void TearDown() override { fs::remove_all(root_); }

  // A model beside w.bin whose initializer W (float [4]) reads external data with these fields.
  std::string load_error(const std::vector<std::pair<std::string, std::string>>& fields) {
    ModelBuilder mb(13);
    auto* init = mb.proto().mutable_graph()->add_initializer();
    init->set_name("W");
    init->set_data_type(static_cast<int>(DType::Float32));
    init->add_dims(4);
    init->set_data_location(onnx::TensorProto::EXTERNAL);
    for (const auto& [k, v] : fields) {
      auto* e = init->add_external_data();
      e->set_key(k);
      e->set_value(v);
    }
    mb.node("Identity", {"W"}, {"Y"}).name("id");
    mb.output("Y");
    const fs::path path = root_ / "model" / "model.onnx";
    std::ofstream(path, std::ios::binary) << mb.serialize();
    return test::error_message([&] { Session::load(path.string()); });
  }
  fs::path root_;
};

TEST_F(HostileExternalData, PathsEscapingTheModelFolderAreRefused) {
  EXPECT_NE(load_error({{"location", "../secret.bin"}}).find("initializer 'W': external data location "
                                                             "'../secret.bin' escapes the model's folder"),
            std::string::npos);
  EXPECT_NE(load_error({{"location", (root_ / "secret.bin").string()}}).find("is absolute"), std::string::npos);
  EXPECT_NE(load_error({{"location", "link.bin"}}).find("'link.bin' escapes the model's folder"), std::string::npos);
  EXPECT_NE(load_error({{"location", "sub/../../secret.bin"}}).find("escapes"), std::string::npos);
}

TEST_F(HostileExternalData, OffsetsAndLengthsOutOfRangeAreRefused) {
  EXPECT_EQ(load_error({{"location", "w.bin"}}), "");  // the good case loads
  EXPECT_NE(load_error({{"location", "w.bin"}, {"offset", "8"}}).find("goes past its end"), std::string::npos);
  EXPECT_NE(load_error({{"location", "w.bin"}, {"offset", "9223372036854775807"}}).find("goes past its end"),
            std::string::npos);
  const std::string huge = load_error({{"location", "w.bin"}, {"offset", "99999999999999999999"}});
  EXPECT_NE(huge.find("initializer 'W': external data field 'offset' is '99999999999999999999', not a non-negative "
                      "integer that fits in 64 bits"),
            std::string::npos)
      << huge;
  EXPECT_NE(load_error({{"location", "w.bin"}, {"length", "-5"}}).find("field 'length' is '-5'"), std::string::npos);
  EXPECT_NE(load_error({{"location", "w.bin"}, {"offset", "12abc"}}).find("field 'offset' is '12abc'"),
            std::string::npos);
  EXPECT_NE(load_error({{"location", "w.bin"}, {"length", "32"}}).find("length 32 does not match the 16 bytes"),
            std::string::npos);
}

// ---- input files ----

TEST(HostileInputs, NpyHeadersThatLieAboutTheirSize) {
  const fs::path path = fs::temp_directory_path() / ("onnxmini_hostile_" + std::to_string(::getpid()) + ".npy");
  auto npy = [&](const std::string& shape, size_t data_bytes) {
    std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (" + shape + "), }";
    header.append((64 - (10 + header.size() + 1) % 64) % 64, ' ');
    header += '\n';
    std::string out = "\x93NUMPY";
    out += '\x01';
    out += '\x00';
    out += static_cast<char>(header.size() & 0xff);
    out += static_cast<char>(header.size() >> 8);
    std::ofstream(path, std::ios::binary) << out << header << std::string(data_bytes, '\0');
    return test::error_message([&] { read_npy(path.string()); });
  };
  EXPECT_EQ(npy("2, 2", 16), "");
  // 40 GB declared, 16 bytes present: refused before allocating.
  EXPECT_NE(npy("100000, 100000", 16).find(".npy holds 16 data bytes, shape 100000x100000 needs 40000000000"),
            std::string::npos);
  EXPECT_NE(npy("4294967296, 4294967296", 16).find("more elements than int64 can count"), std::string::npos);
  EXPECT_NE(npy("99999999999999999999,", 16).find(".npy shape entry '99999999999999999999' is not a dimension"),
            std::string::npos);
  EXPECT_NE(npy("-3,", 16).find("shape entry '-3' is not a dimension"), std::string::npos);
  fs::remove(path);
}

// ---- attributes ----

TEST(HostileModels, WrongAttributeTypes) {
  ModelBuilder mb(13);
  mb.input("X", DType::Float32, {1, 2, 4, 4});
  mb.initializer("W", Tensor(DType::Float32, {2, 2, 1, 1}));
  mb.node("Conv", {"X", "W"}, {"Y"}).name("conv").attr("group", "two");
  mb.output("Y");
  expect_refused([&] { mb.session(); }, {"Conv 'conv'", "group"});
  ModelBuilder mb2(13);
  mb2.input("X", DType::Float32, {2, 3});
  mb2.node("Transpose", {"X"}, {"Y"}).name("t").attr("perm", 1.5f);
  mb2.output("Y");
  expect_refused([&] { mb2.session(); }, {"Transpose 't'", "perm"});
}

TEST(HostileModels, ZeroStridesAndGroupsAndWrappingConvAttributes) {
  auto conv = [](auto&& set, int64_t kernel = 1) {
    ModelBuilder mb(13);
    mb.input("X", DType::Float32, {1, 2, 4, 4});
    mb.initializer("W", Tensor(DType::Float32, {2, 2, kernel, kernel}));
    set(mb.node("Conv", {"X", "W"}, {"Y"}).name("conv"));
    mb.output("Y");
    return mb;
  };
  const Tensor x(DType::Float32, {1, 2, 4, 4});
  expect_refused([&] { load_and_run(conv([](auto& n) { n.attr("strides", std::vector<int64_t>{0, 1}); }), {{"X", x}}); },
                 {"Conv 'conv'", "strides must be positive, got 0"});
  expect_refused([&] { load_and_run(conv([](auto& n) { n.attr("group", int64_t{0}); }), {{"X", x}}); },
                 {"Conv 'conv'", "group must be positive, got 0"});
  // group 2^62: weight channels x group wrapped (undefined behaviour) before the check was checked.
  expect_refused([&] { load_and_run(conv([](auto& n) { n.attr("group", int64_t{1} << 62); }), {{"X", x}}); },
                 {"Conv 'conv'", "input has 2 channels", "more than int64 holds", "group 4611686018427387904"});
  // pads INT64_MAX: input + pads wrapped.
  expect_refused(
      [&] {
        load_and_run(conv([](auto& n) { n.attr("pads", std::vector<int64_t>{0, INT64_MAX, 0, INT64_MAX}); }),
                     {{"X", x}});
      },
      {"Conv 'conv'", "input + pads on spatial axis 1", "overflows int64"});
  expect_refused(
      [&] {
        load_and_run(conv([](auto& n) { n.attr("dilations", std::vector<int64_t>{1, int64_t{1} << 62}); }, 3),
                     {{"X", x}});
      },
      {"Conv 'conv'", "kernel extent"});
}

TEST(HostileModels, PoolAndPadWithWrappingPads) {
  ModelBuilder mb(13);
  mb.input("X", DType::Float32, {1, 1, 4, 4});
  mb.node("MaxPool", {"X"}, {"Y"}).name("pool").attr("kernel_shape", std::vector<int64_t>{2, 2})
      .attr("pads", std::vector<int64_t>{INT64_MAX, 0, INT64_MAX, 0});
  mb.output("Y");
  expect_refused([&] { load_and_run(mb, {{"X", Tensor(DType::Float32, {1, 1, 4, 4})}}); },
                 {"MaxPool 'pool'", "overflows int64"});
  ModelBuilder pad(13);
  pad.input("X", DType::Float32, {2, 2});
  pad.initializer("P", i64s({INT64_MAX, 0, INT64_MAX, 0}));
  pad.node("Pad", {"X", "P"}, {"Y"}).name("pad");
  pad.output("Y");
  expect_refused([&] { load_and_run(pad, {{"X", Tensor(DType::Float32, {2, 2})}}); },
                 {"Pad 'pad'", "input dim + pads", "overflows int64"});
}

// ---- bombs: refused before allocating, naming the node, the shape and the size ----

// A model of one node whose inputs are initializers (so no feed is needed).
ModelBuilder one_node(const std::string& op, const std::vector<std::pair<std::string, Tensor>>& inits,
                      const std::function<void(test::NodeBuilder&)>& attrs = {}, int64_t opset = 13) {
  ModelBuilder mb(opset);
  std::vector<std::string> names;
  for (const auto& [n, t] : inits) {
    if (!n.empty()) mb.initializer(n, t);
    names.push_back(n);
  }
  auto node = mb.node(op, names, {"Y"}).name("bomb");
  if (attrs) attrs(node);
  mb.output("Y");
  return mb;
}

TEST(HostileModels, ConstantOfShapeExpandTileRangeBombs) {
  // Default caps (the machine's memory): a 2^45-element float tensor (128 TiB) exceeds any.
  expect_refused([&] { load_and_run(one_node("ConstantOfShape", {{"S", i64s({int64_t{1} << 45})}})); },
                 {"ConstantOfShape 'bomb'", "output of shape 35184372088832 (float)", "more than max_tensor_bytes"});
  // Dims whose product wraps int64.
  expect_refused([&] { load_and_run(one_node("ConstantOfShape", {{"S", i64s({int64_t{1} << 32, int64_t{1} << 32})}})); },
                 {"ConstantOfShape 'bomb'", "4294967296x4294967296", "more elements than int64"});
  expect_refused(
      [&] { load_and_run(one_node("Expand", {{"X", Tensor(DType::Float32, {1})}, {"S", i64s({1 << 20, 1 << 20, 1 << 10})}})); },
      {"Expand 'bomb'", "1048576x1048576x1024", "more than max_tensor_bytes"});
  expect_refused(
      [&] { load_and_run(one_node("Tile", {{"X", Tensor(DType::Float32, {2})}, {"R", i64s({INT64_MAX})}})); },
      {"Tile 'bomb'", "axis 0 size x repeats", "overflows int64"});
  expect_refused(
      [&] { load_and_run(one_node("Tile", {{"X", Tensor(DType::Float32, {2})}, {"R", i64s({int64_t{1} << 50})}})); },
      {"Tile 'bomb'", "more than max_tensor_bytes"});
  auto range = [](int64_t s, int64_t l, int64_t d) {
    return one_node("Range", {{"s", Tensor::scalar<int64_t>(s)}, {"l", Tensor::scalar<int64_t>(l)},
                              {"d", Tensor::scalar<int64_t>(d)}});
  };
  expect_refused([&] { load_and_run(range(0, int64_t{1} << 50, 1)); },
                 {"Range 'bomb'", "output of 1125899906842624 int64 elements", "more than max_tensor_bytes"});
  expect_refused([&] { load_and_run(range(INT64_MIN, INT64_MAX, 1)); }, {"Range 'bomb'", "more than int64 counts"});
  expect_refused(
      [&] {
        load_and_run(one_node("Range", {{"s", Tensor::scalar<float>(0)}, {"l", Tensor::scalar<float>(1e30f)},
                                        {"d", Tensor::scalar<float>(1e-30f)}}));
      },
      {"Range 'bomb'", "more than int64 counts"});
}

TEST(HostileModels, ResizeAndEinsumBombs) {
  expect_refused(
      [&] {
        load_and_run(one_node("Resize", {{"X", Tensor(DType::Float32, {1, 1, 2, 2})}, {"", Tensor()}, {"", Tensor()},
                                         {"sizes", i64s({1, 1, int64_t{1} << 30, int64_t{1} << 30})}}));
      },
      {"Resize 'bomb'", "output of shape 1x1x1073741824x1073741824", "more than max_tensor_bytes"});
  expect_refused(
      [&] {
        load_and_run(one_node("Resize", {{"X", Tensor(DType::Float32, {1, 1, 2, 2})}, {"", Tensor()},
                                         {"scales", Tensor::from_vector<float>({4}, {1, 1, 1e30f, 1e30f})}}));
      },
      {"Resize 'bomb'", "does not fit in int64"});
  // The 52-letter bomb: letters of size 2 over 4 operands of 8192 elements, all kept in
  // the output: 2^52 floats (16 PiB), refused before the output or any intermediate exists.
  const std::string letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
  auto einsum_bomb = [&](int operands, int letters_each, int64_t size) {
    std::string eq;
    std::vector<std::pair<std::string, Tensor>> ops;
    for (int k = 0; k < operands; ++k) {
      eq += (k ? "," : "") + letters.substr(letters_each * k, letters_each);
      ops.emplace_back("E" + std::to_string(k), Tensor(DType::Float32, Shape(letters_each, size)));
    }
    eq += "->" + letters.substr(0, operands * letters_each);
    return one_node("Einsum", ops, [eq](auto& n) { n.attr("equation", eq); });
  };
  expect_refused([&] { load_and_run(einsum_bomb(4, 13, 2)); },
                 {"Einsum 'bomb'", "output of shape 2x2x2", "more than max_tensor_bytes"});
  // 32 letters of size 4 over 8 operands of 256 elements: 2^64, past what the planner may multiply.
  expect_refused([&] { load_and_run(einsum_bomb(8, 4, 4)); }, {"Einsum 'bomb'", "multiply to more than 2^62"});
}

TEST(HostileModels, LoopWithAnAbsurdTripCountIsBoundedByTheIntermediateCap) {
  ModelBuilder body(13);
  body.input("i", DType::Int64, {});
  body.input("c", DType::Bool, {});
  body.node("Identity", {"c"}, {"c_out"});
  body.node("ConstantOfShape", {"S"}, {"scan"}).name("grow");
  body.output("c_out", DType::Bool, {});
  body.output("scan", DType::Float32, {1024}, true);
  ModelBuilder mb(13);
  mb.initializer("M", Tensor::scalar<int64_t>(INT64_MAX));
  mb.initializer("T", Tensor::scalar<bool>(true));
  mb.initializer("S", i64s({1024}));
  mb.node("Loop", {"M", "T"}, {"Y"}).name("loop").attr("body", body.graph());
  mb.output("Y");
  SessionOptions o;
  o.max_intermediate_bytes = 1 << 20;  // 256 iterations of 4 KiB
  // The Loop's own check (scan slices held + their stacked copy) or the run's pool, whichever
  // sees the cap first; here the Loop, naming itself and the iteration.
  expect_refused([&] { load_and_run(mb, {}, o); }, {"Loop 'loop'", "iterations", "1048576 bytes of max_intermediate_bytes"});
}

TEST(HostileModels, SessionCapsAreCheckedBeforeAllocating) {
  SessionOptions o;
  o.max_tensor_bytes = 1000;
  ModelBuilder mb(13);
  mb.input("X", DType::Float32, {16, 16});
  mb.node("Relu", {"X"}, {"Y"}).name("relu");
  mb.output("Y");
  expect_refused([&] { load_and_run(mb, {{"X", Tensor(DType::Float32, {16, 16})}}, o); },
                 {"Relu 'relu'", "output of shape 16x16 (float) needs 1024 bytes, more than max_tensor_bytes 1000"});
  o.max_tensor_bytes = 0;
  o.max_intermediate_bytes = 2000;
  ModelBuilder two(13);
  two.input("X", DType::Float32, {16, 16});
  two.node("Relu", {"X"}, {"A"}).name("a");
  two.node("Neg", {"A"}, {"B"}).name("b");
  two.node("Add", {"A", "B"}, {"Y"}).name("sum");
  two.output("Y");
  expect_refused([&] { load_and_run(two, {{"X", Tensor(DType::Float32, {16, 16})}}, o); },
                 {"Neg 'b'", "would bring the run's live intermediates to 2048 bytes, more than max_intermediate_bytes 2000"});
  o.max_intermediate_bytes = -1;
  expect_refused([&] { two.session(o); }, {"max_intermediate_bytes -1", "must be positive"});
}

// ---- axes, perms, indices ----

TEST(HostileModels, OutOfRangeAxesPermsAndIndices) {
  const Tensor x(DType::Float32, {2, 3});
  expect_refused([&] { load_and_run(one_node("Softmax", {{"X", x}}, [](auto& n) { n.attr("axis", int64_t{INT64_MIN}); })); },
                 {"Softmax 'bomb'", "axis"});
  expect_refused(
      [&] { load_and_run(one_node("Transpose", {{"X", x}}, [](auto& n) { n.attr("perm", std::vector<int64_t>{0, 5}); })); },
      {"Transpose 'bomb'", "perm"});
  expect_refused(
      [&] {
        load_and_run(one_node("Transpose", {{"X", x}}, [](auto& n) { n.attr("perm", std::vector<int64_t>{INT64_MIN, 0}); }));
      },
      {"Transpose 'bomb'", "perm"});
  expect_refused([&] { load_and_run(one_node("Gather", {{"X", x}, {"I", i64s({INT64_MIN})}})); },
                 {"Gather 'bomb'", "-9223372036854775808"});
  expect_refused(
      [&] { load_and_run(one_node("Concat", {{"A", x}, {"B", x}}, [](auto& n) { n.attr("axis", int64_t{INT64_MIN}); })); },
      {"Concat 'bomb'", "axis"});
  expect_refused(
      [&] {
        load_and_run(one_node("Slice", {{"X", x}, {"st", i64s({0})}, {"en", i64s({1})}, {"ax", i64s({INT64_MIN})}}));
      },
      {"Slice 'bomb'", "axis -9223372036854775808 is out of range"});
}

TEST(HostileModels, WrappingStepsShapesAndBlockSizes) {
  const Tensor x = Tensor::from_vector<float>({4}, {0, 1, 2, 3});
  // Slice steps INT64_MIN / INT64_MAX: |step| and end - start + step used to wrap; one element each.
  for (int64_t step : {INT64_MIN, INT64_MAX}) {
    auto mb = one_node("Slice", {{"X", x}, {"st", i64s({step > 0 ? 0 : -1})}, {"en", i64s({step > 0 ? INT64_MAX : INT64_MIN})},
                                 {"ax", i64s({0})}, {"sp", i64s({step})}});
    const Tensor y = test::run_single(*mb.session(), {});
    ASSERT_EQ(y.numel(), 1) << step;
    EXPECT_EQ(y.data<float>()[0], step > 0 ? 0.f : 3.f);
  }
  expect_refused(
      [&] { load_and_run(one_node("Reshape", {{"X", x}, {"S", i64s({int64_t{1} << 32, int64_t{1} << 32, -1})}})); },
      {"Reshape 'bomb'", "shape [4294967296,4294967296,-1]", "overflows int64"});
  expect_refused(
      [&] {
        load_and_run(one_node("DepthToSpace", {{"X", Tensor(DType::Float32, {1, 4, 1, 1})}},
                              [](auto& n) { n.attr("blocksize", int64_t{1} << 32); }));
      },
      {"DepthToSpace 'bomb'", "blocksize", "overflows int64"});
  expect_refused(
      [&] {
        load_and_run(one_node("Col2Im", {{"X", Tensor(DType::Float32, {1, 4, 1})}, {"I", i64s({2, INT64_MAX})},
                                         {"B", i64s({2, 2})}},
                              [](auto& n) { n.attr("pads", std::vector<int64_t>{0, 0, 0, 1}); }, 18));
      },
      {"Col2Im 'bomb'", "axis 1 block / image geometry", "overflows int64"});
  // Empty inputs may carry huge dims: Concat's axis sum, MaxUnpool's (in - 1) x stride.
  const Tensor empty_wide(DType::Float32, {0, int64_t{1} << 62});
  expect_refused(
      [&] { load_and_run(one_node("Concat", {{"A", empty_wide}, {"B", empty_wide}}, [](auto& n) { n.attr("axis", int64_t{1}); })); },
      {"Concat 'bomb'", "concat axis size", "overflows int64"});
  expect_refused(
      [&] {
        load_and_run(one_node("MaxUnpool", {{"X", Tensor(DType::Float32, {1, 1, 2})}, {"I", Tensor(DType::Int64, {1, 1, 2})}},
                              [](auto& n) {
                                n.attr("kernel_shape", std::vector<int64_t>{2});
                                n.attr("strides", std::vector<int64_t>{INT64_MAX});
                              }));
      },
      {"MaxUnpool 'bomb'", "unpooled size", "overflows int64"});
}

// ---- opsets, domains, IR versions ----

TEST(HostileModels, FutureOpsetsAndIrVersionsAreRefusedUnlessAllowed) {
  auto relu = [](int64_t opset, int64_t ir) {
    ModelBuilder mb(opset, ir);
    mb.input("X", DType::Float32, {2});
    mb.node("Relu", {"X"}, {"Y"}).name("r");
    mb.output("Y");
    return mb;
  };
  expect_refused([&] { relu(99, 8).session(); },
                 {"model imports opset 99 of domain 'ai.onnx', newer than the newest this build knows (28)",
                  "allow_unknown_opsets", "--allow-unknown-opsets"});
  expect_refused([&] { relu(13, 99).session(); }, {"IR version 99", "newer than the newest this build knows (14)"});
  ModelBuilder ml = relu(13, 8);
  ml.import_domain("ai.onnx.ml", 99);
  expect_refused([&] { ml.session(); }, {"opset 99 of domain 'ai.onnx.ml'"});
  // Asked to try anyway: Relu has one meaning from opset 14 on, so it runs.
  SessionOptions allow;
  allow.allow_unknown_opsets = true;
  const Tensor x = Tensor::from_vector<float>({2}, {-1, 2});
  EXPECT_EQ(test::run_single(*relu(99, 99).session(allow), {{"X", x}}).data<float>()[1], 2.f);
  // The newest known ones load.
  EXPECT_NO_THROW(relu(28, 14).session());
}

TEST(HostileModels, NodesOfUnknownDomainsAreRefusedByName) {
  ModelBuilder mb(13);
  mb.import_domain("com.example.evil", 1);
  mb.input("X", DType::Float32, {2});
  mb.node("Explode", {"X"}, {"Y"}).name("boom").domain("com.example.evil");
  mb.output("Y");
  SessionOptions allow;
  allow.allow_unknown_opsets = true;  // does not help: no kernel could run it
  expect_refused([&] { mb.session(allow); },
                 {"node 'boom' op 'Explode' domain 'com.example.evil'", "the domain is unknown to this build"});
  // An imported but unused unknown domain is harmless.
  ModelBuilder unused(13);
  unused.import_domain("com.example.unused", 7);
  unused.input("X", DType::Float32, {2});
  unused.node("Relu", {"X"}, {"Y"});
  unused.output("Y");
  EXPECT_NO_THROW(unused.session());
}

}  // namespace
}  // namespace onnxmini
