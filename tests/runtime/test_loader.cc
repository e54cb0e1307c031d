// Model loading: every initializer storage form, external data, and the errors
// for bad models (each checked by its message).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "tests/common/model_builder.h"

namespace fs = std::filesystem;
using namespace onnxmini;
using namespace onnxmini::test;

namespace {

// A model whose single output is the initializer "W" passed through Identity.
std::unique_ptr<Session> identity_of(const onnx::TensorProto& w, const std::string& base_dir = "") {
  ModelBuilder mb(13);
  *mb.proto().mutable_graph()->add_initializer() = w;
  mb.node("Identity", {"W"}, {"Y"});
  mb.output("Y");
  std::string bytes = mb.serialize();
  return Session::load_from_bytes(bytes.data(), bytes.size(), {}, base_dir);
}

Tensor load_initializer(const onnx::TensorProto& w) { return identity_of(w)->run({}).at(0).tensor(); }

onnx::TensorProto proto_header(DType dt, std::vector<int64_t> dims) {
  onnx::TensorProto p;
  p.set_name("W");
  p.set_data_type(static_cast<int32_t>(dt));
  for (auto d : dims) p.add_dims(d);
  return p;
}

fs::path temp_dir(const std::string& name) {
  fs::path d = fs::temp_directory_path() / ("onnxmini_test_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

}  // namespace

TEST(Loader, FloatData) {
  auto p = proto_header(DType::Float32, {2, 2});
  for (float v : {1.5f, -2.f, 3.25f, 0.f}) p.add_float_data(v);
  Tensor t = load_initializer(p);
  EXPECT_TRUE(tensors_near(t, Tensor::from_vector<float>({2, 2}, {1.5f, -2.f, 3.25f, 0.f}), 0, 0));
}

TEST(Loader, Int32DataForSmallTypes) {
  struct Case {
    DType dt;
    std::vector<int32_t> stored;
    std::vector<double> expected;
  };
  // float16 0x3C00 = 1.0, 0xC000 = -2.0; bfloat16 0x3F80 = 1.0, 0x4040 = 3.0
  std::vector<Case> cases = {{DType::Int8, {-128, 127}, {-128, 127}},      {DType::UInt8, {0, 255}, {0, 255}},
                             {DType::Int16, {-30000, 5}, {-30000, 5}},     {DType::UInt16, {65535, 1}, {65535, 1}},
                             {DType::Bool, {1, 0}, {1, 0}},                {DType::Int32, {-7, 1 << 30}, {-7, 1 << 30}},
                             {DType::Float16, {0x3C00, 0xC000}, {1.0, -2.0}}, {DType::BFloat16, {0x3F80, 0x4040}, {1.0, 3.0}}};
  for (const auto& c : cases) {
    auto p = proto_header(c.dt, {2});
    for (int32_t v : c.stored) p.add_int32_data(v);
    Tensor t = load_initializer(p);
    ASSERT_EQ(t.dtype(), c.dt) << dtype_name(c.dt);
    for (int i = 0; i < 2; ++i) EXPECT_EQ(t.get_as_double(i), c.expected[i]) << dtype_name(c.dt) << " [" << i << "]";
  }
}

TEST(Loader, Int64DoubleUint64AndStringData) {
  auto p64 = proto_header(DType::Int64, {3});
  for (int64_t v : {int64_t(-5), int64_t(1) << 40, int64_t(0)}) p64.add_int64_data(v);
  EXPECT_EQ(load_initializer(p64).to_int64_vector(), (std::vector<int64_t>{-5, int64_t(1) << 40, 0}));

  auto pd = proto_header(DType::Float64, {2});
  pd.add_double_data(0.1);
  pd.add_double_data(-1e300);
  Tensor d = load_initializer(pd);
  EXPECT_EQ(d.data<double>()[0], 0.1);
  EXPECT_EQ(d.data<double>()[1], -1e300);

  auto pu64 = proto_header(DType::UInt64, {1});
  pu64.add_uint64_data(18446744073709551615ull);
  EXPECT_EQ(load_initializer(pu64).data<uint64_t>()[0], 18446744073709551615ull);
  auto pu32 = proto_header(DType::UInt32, {1});
  pu32.add_uint64_data(4000000000u);
  EXPECT_EQ(load_initializer(pu32).data<uint32_t>()[0], 4000000000u);

  auto ps = proto_header(DType::String, {2});
  ps.add_string_data("hello");
  ps.add_string_data("");
  Tensor s = load_initializer(ps);
  EXPECT_EQ(s.data<std::string>()[0], "hello");
  EXPECT_EQ(s.data<std::string>()[1], "");
}

TEST(Loader, RawData) {
  std::vector<int16_t> v = {1, -2, 300};
  auto p = proto_header(DType::Int16, {3});
  p.set_raw_data(std::string(reinterpret_cast<const char*>(v.data()), v.size() * 2));
  Tensor t = load_initializer(p);
  EXPECT_EQ(t.data<int16_t>()[2], 300);
  EXPECT_EQ(t.data<int16_t>()[1], -2);
}

TEST(Loader, ExternalData) {
  fs::path dir = temp_dir("ext");
  std::vector<float> data = {9, 9, 1, 2, 3, 4};  // 8 bytes of padding, then the tensor
  {
    std::ofstream f(dir / "weights.bin", std::ios::binary);
    f.write(reinterpret_cast<const char*>(data.data()), data.size() * 4);
  }
  auto p = proto_header(DType::Float32, {2, 2});
  p.set_data_location(onnx::TensorProto::EXTERNAL);
  auto add = [&](const std::string& k, const std::string& v) {
    auto* e = p.add_external_data();
    e->set_key(k);
    e->set_value(v);
  };
  add("location", "weights.bin");
  add("offset", "8");
  add("length", "16");
  Tensor t = identity_of(p, dir.string())->run({}).at(0).tensor();
  EXPECT_TRUE(tensors_near(t, Tensor::from_vector<float>({2, 2}, {1, 2, 3, 4}), 0, 0));

  // Loaded from a file path, the model's folder is the base.
  ModelBuilder mb(13);
  *mb.proto().mutable_graph()->add_initializer() = p;
  mb.node("Identity", {"W"}, {"Y"});
  mb.output("Y");
  {
    std::ofstream f(dir / "model.onnx", std::ios::binary);
    f << mb.serialize();
  }
  EXPECT_TRUE(tensors_near(Session::load((dir / "model.onnx").string())->run({}).at(0).tensor(),
                           Tensor::from_vector<float>({2, 2}, {1, 2, 3, 4}), 0, 0));
  fs::remove_all(dir);
}

TEST(Loader, ExternalDataErrors) {
  fs::path dir = temp_dir("ext_bad");
  fs::create_directories(dir / "model");
  {
    std::ofstream f(dir / "secret.bin", std::ios::binary);
    f << std::string(64, 'x');
    std::ofstream g(dir / "model" / "short.bin", std::ios::binary);
    g << std::string(8, 'x');
  }
  auto with_location = [&](const std::string& loc, const std::string& length = "") {
    auto p = proto_header(DType::Float32, {4});
    p.set_data_location(onnx::TensorProto::EXTERNAL);
    auto* e = p.add_external_data();
    e->set_key("location");
    e->set_value(loc);
    if (!length.empty()) {
      auto* l = p.add_external_data();
      l->set_key("length");
      l->set_value(length);
    }
    return error_message([&] { identity_of(p, (dir / "model").string()); });
  };
  EXPECT_NE(with_location("../secret.bin").find("escapes the model's folder"), std::string::npos);
  EXPECT_NE(with_location((dir / "secret.bin").string()).find("is absolute"), std::string::npos);
  EXPECT_NE(with_location("missing.bin").find("cannot open external data file 'missing.bin'"), std::string::npos);
  EXPECT_NE(with_location("short.bin").find("goes past its end"), std::string::npos);
  EXPECT_NE(with_location("short.bin", "12").find("length 12 does not match the 16 bytes"), std::string::npos);
  fs::remove_all(dir);
}

TEST(Loader, InitializerDataMustMatchShape) {
  auto p = proto_header(DType::Float32, {2, 3});
  p.add_float_data(1.f);
  EXPECT_NE(error_message([&] { identity_of(p); }).find("initializer 'W': holds 1 values, shape 2x3 needs 6"),
            std::string::npos);
  auto raw = proto_header(DType::Float32, {4});
  raw.set_raw_data(std::string(12, '\0'));
  EXPECT_NE(error_message([&] { identity_of(raw); }).find("raw_data has 12 bytes, shape 4 of float needs 16"),
            std::string::npos);
  // A corrupt header claiming 10^12 x 10^12 elements must fail without allocating.
  auto huge = proto_header(DType::Float32, {1000000000000, 1000000000000});
  huge.set_raw_data(std::string(16, '\0'));
  EXPECT_NE(error_message([&] { identity_of(huge); }).find("initializer 'W'"), std::string::npos);
  auto big = proto_header(DType::Float32, {1000000000, 1000});
  big.set_raw_data(std::string(16, '\0'));
  EXPECT_NE(error_message([&] { identity_of(big); }).find("raw_data has 16 bytes"), std::string::npos);
}

TEST(Loader, FileErrors) {
  EXPECT_NE(error_message([] { Session::load("/nonexistent/model.onnx"); }).find("cannot open model file"),
            std::string::npos);
  fs::path dir = temp_dir("files");
  { std::ofstream f(dir / "empty.onnx"); }
  EXPECT_NE(error_message([&] { Session::load((dir / "empty.onnx").string()); }).find("is empty"), std::string::npos);
  {
    std::ofstream f(dir / "text.onnx");
    f << "this is not a model at all";
  }
  EXPECT_NE(error_message([&] { Session::load((dir / "text.onnx").string()); }).find("not a valid ONNX model"),
            std::string::npos);
  ModelBuilder mb(13);
  mb.input("X", DType::Float32, {2});
  mb.initializer("B", Tensor::from_vector<float>({2}, {1, 2}));
  mb.node("Add", {"X", "B"}, {"Y"}).name("add0");
  mb.output("Y");
  std::string bytes = mb.serialize();
  for (size_t cut : {bytes.size() / 2, bytes.size() - 3}) {
    std::string m = error_message([&] { Session::load_from_bytes(bytes.data(), cut); });
    EXPECT_NE(m.find("not a valid ONNX model"), std::string::npos) << "cut at " << cut << ": " << m;
  }
  fs::remove_all(dir);
}

TEST(Loader, UnsupportedOpNamesNodeOpDomainOpset) {
  ModelBuilder mb(13);
  mb.input("X", DType::Float32, {2});
  mb.node("FancyOp", {"X"}, {"Y"}).name("fancy1");
  mb.output("Y");
  std::string m = error_message([&] { mb.session(); });
  EXPECT_NE(m.find("node 'fancy1' op 'FancyOp' domain 'ai.onnx' opset 13"), std::string::npos) << m;

  ModelBuilder custom(13);
  custom.import_domain("com.example", 2);
  custom.input("X", DType::Float32, {2});
  custom.node("Thing", {"X"}, {"Y"}).name("t").domain("com.example");
  custom.output("Y");
  m = error_message([&] { custom.session(); });
  EXPECT_NE(m.find("node 't' op 'Thing' domain 'com.example' opset 2"), std::string::npos) << m;

  // Known op, opset older than any registered version (Gelu exists from opset 20).
  ModelBuilder old(13);
  old.input("X", DType::Float32, {2});
  old.node("Gelu", {"X"}, {"Y"}).name("g");
  old.output("Y");
  m = error_message([&] { old.session(); });
  EXPECT_NE(m.find("op 'Gelu' domain 'ai.onnx' is not implemented for opset 13"), std::string::npos) << m;

  ModelBuilder undeclared(13);
  undeclared.input("X", DType::Float32, {2});
  undeclared.node("Thing", {"X"}, {"Y"}).name("t").domain("com.missing");
  undeclared.output("Y");
  m = error_message([&] { undeclared.session(); });
  EXPECT_NE(m.find("domain 'com.missing' is not imported"), std::string::npos) << m;
}

TEST(Loader, GraphStructureErrors) {
  {
    ModelBuilder mb(13);
    mb.input("X", DType::Float32, {2});
    mb.node("Add", {"X", "ghost"}, {"Y"}).name("adder");
    mb.output("Y");
    std::string m = error_message([&] { mb.session(); });
    EXPECT_NE(m.find("node 'adder' (Add): input 'ghost' is produced by no node, graph input or initializer"),
              std::string::npos) << m;
  }
  {
    ModelBuilder mb(13);
    mb.input("X", DType::Float32, {2});
    mb.node("Add", {"X", "B"}, {"A"}).name("first");
    mb.node("Relu", {"A"}, {"B"}).name("second");
    mb.output("B");
    std::string m = error_message([&] { mb.session(); });
    EXPECT_NE(m.find("graph has a cycle"), std::string::npos) << m;
  }
  {
    ModelBuilder mb(13);
    mb.input("X", DType::Float32, {2});
    mb.node("Relu", {"X"}, {"Y"}).name("r1");
    mb.node("Relu", {"X"}, {"Y"}).name("r2");
    mb.output("Y");
    std::string m = error_message([&] { mb.session(); });
    EXPECT_NE(m.find("node 'r2' (Relu #1): output 'Y' is already produced by node 'r1'"), std::string::npos) << m;
  }
  {
    ModelBuilder mb(13);
    mb.input("X", DType::Float32, {2});
    mb.node("Relu", {"X"}, {"X"}).name("self");
    mb.output("X");
    std::string m = error_message([&] { mb.session(); });
    EXPECT_NE(m.find("output 'X' is already produced by graph input"), std::string::npos) << m;
  }
  {
    ModelBuilder mb(13);
    mb.input("X", DType::Float32, {2});
    mb.node("Relu", {"X"}, {"Y"});
    mb.output("Z");
    std::string m = error_message([&] { mb.session(); });
    EXPECT_NE(m.find("graph output 'Z' is produced by nothing"), std::string::npos) << m;
  }
}

TEST(Loader, ConstantNodeForms) {
  ModelBuilder mb(13);
  mb.node("Constant", {}, {"c_tensor"}).attr("value", Tensor::from_vector<float>({2}, {1.5f, 2.5f}));
  mb.node("Constant", {}, {"c_float"}).attr("value_float", 3.0f);
  mb.node("Constant", {}, {"c_floats"}).attr("value_floats", std::vector<float>{1, 2, 3});
  mb.node("Constant", {}, {"c_int"}).attr("value_int", int64_t(7));
  mb.node("Constant", {}, {"c_ints"}).attr("value_ints", std::vector<int64_t>{4, 5});
  mb.node("Constant", {}, {"c_string"}).attr("value_string", std::string("hi"));
  mb.node("Constant", {}, {"c_strings"}).attr("value_strings", std::vector<std::string>{"a", "b"});
  for (auto n : {"c_tensor", "c_float", "c_floats", "c_int", "c_ints", "c_string", "c_strings"}) mb.output(n);
  auto out = mb.session()->run({});
  EXPECT_EQ(out[0].tensor().data<float>()[1], 2.5f);
  EXPECT_EQ(out[1].tensor().rank(), 0u);
  EXPECT_EQ(out[1].tensor().data<float>()[0], 3.0f);
  EXPECT_EQ(out[2].tensor().shape(), Shape({3}));
  EXPECT_EQ(out[3].tensor().data<int64_t>()[0], 7);
  EXPECT_EQ(out[4].tensor().to_int64_vector(), (std::vector<int64_t>{4, 5}));
  EXPECT_EQ(out[5].tensor().data<std::string>()[0], "hi");
  EXPECT_EQ(out[6].tensor().data<std::string>()[1], "b");
}

TEST(Loader, InitializerThatIsAlsoAnInputCanBeOverridden) {
  ModelBuilder mb(13);
  mb.input("X", DType::Float32, {2});
  mb.input("B", DType::Float32, {2});
  mb.initializer("B", Tensor::from_vector<float>({2}, {10, 20}));
  mb.node("Add", {"X", "B"}, {"Y"});
  mb.output("Y");
  auto s = mb.session();
  ASSERT_EQ(s->inputs().size(), 1u);  // B is optional: not listed as a required input
  Tensor x = Tensor::from_vector<float>({2}, {1, 2});
  EXPECT_TRUE(tensors_near(run_single(*s, {{"X", x}}), Tensor::from_vector<float>({2}, {11, 22}), 0, 0));
  EXPECT_TRUE(tensors_near(run_single(*s, {{"X", x}, {"B", Tensor::from_vector<float>({2}, {0, 1})}}),
                           Tensor::from_vector<float>({2}, {1, 3}), 0, 0));
}

TEST(Loader, SymbolicDimsAndOpsetsAreReported) {
  ModelBuilder mb(15);
  mb.import_domain("ai.onnx.ml", 3);
  mb.input("X", DType::Float32, {-1, 4});
  mb.node("Relu", {"X"}, {"Y"});
  mb.output("Y");
  auto s = mb.session();
  ASSERT_EQ(s->inputs().size(), 1u);
  EXPECT_EQ(s->inputs()[0].shape[0].param, "d0");
  EXPECT_EQ(s->inputs()[0].shape[1].value, 4);
  EXPECT_EQ(s->inputs()[0].type, "tensor(float)");
  auto d = s->describe();
  ASSERT_EQ(d.opsets.size(), 2u);
  EXPECT_EQ(d.opsets[1].first, "ai.onnx.ml");
  EXPECT_EQ(d.opsets[1].second, 3);
}

TEST(Loader, ExecutionOrderFollowsOnnxruntime) {
  // Diamond: a -> (b, c) -> d. onnxruntime walks the highest-index producer first,
  // so c (index 2) runs before b (index 1).
  ModelBuilder mb(13);
  mb.input("X", DType::Float32, {2});
  mb.node("Relu", {"X"}, {"A"}).name("a");
  mb.node("Relu", {"A"}, {"B"}).name("b");
  mb.node("Relu", {"A"}, {"C"}).name("c");
  mb.node("Add", {"B", "C"}, {"D"}).name("d");
  mb.output("D");
  auto d = mb.session()->describe();
  std::vector<std::string> order;
  for (const auto& n : d.nodes) order.push_back(n.name);
  EXPECT_EQ(order, (std::vector<std::string>{"a", "c", "b", "d"}));
}
