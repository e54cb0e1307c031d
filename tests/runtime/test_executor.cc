// Executor: ordering, buffer reuse, dynamic shapes, feeds validation, io binding,
// intermediates by name, non-tensor values and concurrent runs.
#include <gtest/gtest.h>

#include <new>
#include <stdexcept>
#include <thread>

#include "core/thread_pool.h"
#include "kernels/registry.h"
#include "tests/common/model_builder.h"

using namespace onnxmini;
using namespace onnxmini::test;

namespace {

std::vector<float> iota_floats(int64_t n, float start = 0.f) {
  std::vector<float> v(n);
  for (int64_t i = 0; i < n; ++i) v[i] = start + static_cast<float>(i);
  return v;
}

// Test-only ops carrying non-tensor values: MakeSeq turns each row of a matrix
// into a map {column index -> value}; SeqLen returns the sequence length.
class MakeSeqKernel : public Kernel {
 public:
  explicit MakeSeqKernel(const KernelInfo&) {}
  void prepare(KernelContext&) override {}
  void compute(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    std::vector<Value> items;
    for (int64_t r = 0; r < x.dim(0); ++r) {
      Map m{Tensor(DType::Int64, {x.dim(1)}), Tensor(DType::Float32, {x.dim(1)})};
      for (int64_t c = 0; c < x.dim(1); ++c) {
        m.keys.mutable_data<int64_t>()[c] = c;
        m.values.mutable_data<float>()[c] = x.data<float>()[r * x.dim(1) + c];
      }
      items.push_back(Value::map(std::move(m)));
    }
    ctx.set_output(0, Value::sequence(std::move(items)));
  }
};
class SeqLenKernel : public Kernel {
 public:
  explicit SeqLenKernel(const KernelInfo&) {}
  void prepare(KernelContext& ctx) override { ctx.allocate_output(0, DType::Int64, {}); }
  void compute(KernelContext& ctx) override {
    ctx.output(0).mutable_data<int64_t>()[0] = static_cast<int64_t>(ctx.input_value(0).sequence_items().size());
  }
};
// Throw: runs a parallel_for whose chunks throw `what` (attribute: "bad_alloc" or
// "length_error"), as a kernel whose scratch allocation fails does.
class ThrowKernel : public Kernel {
 public:
  explicit ThrowKernel(const KernelInfo& info) : what_(info.attrs.get_string("what", "bad_alloc")) {}
  void prepare(KernelContext& ctx) override { ctx.allocate_output(0, DType::Float32, {1}); }
  void compute(KernelContext& ctx) override {
    parallel_for(ctx.threads(), 64, 1, [&](int64_t, int64_t) {
      if (what_ == "bad_alloc") throw std::bad_alloc();
      std::vector<float>().reserve(std::vector<float>().max_size() + 1);  // throws std::length_error
    });
  }

 private:
  std::string what_;
};

ONNXMINI_REGISTER_KERNEL("test_executor", "test.onnxmini", "MakeSeq", 1, INT_MAX, make_kernel<MakeSeqKernel>);
ONNXMINI_REGISTER_KERNEL("test_executor", "test.onnxmini", "Throw", 1, INT_MAX, make_kernel<ThrowKernel>);
ONNXMINI_REGISTER_KERNEL("test_executor", "test.onnxmini", "SeqLen", 1, INT_MAX, make_kernel<SeqLenKernel>);

}  // namespace

// A kernel that throws something other than onnxmini::Error (std::bad_alloc from its
// scratch, std::length_error from a vector), on the caller or inside the thread pool's
// chunks: the run fails with a RuntimeError naming the node, the process lives on, and the
// session runs again.
TEST(Executor, AKernelsStdExceptionBecomesTheNodesError) {
  for (const char* what : {"bad_alloc", "length_error"})
    for (int threads : {1, 2}) {
      ModelBuilder mb(13);
      mb.import_domain("test.onnxmini", 1);
      mb.input("X", DType::Float32, {1});
      mb.node("Throw", {"X"}, {"Y"}).domain("test.onnxmini").name("boom").attr("what", std::string(what));
      mb.output("Y");
      auto s = mb.session(options_for(KernelMode::Fast, threads));
      for (int rep = 0; rep < 2; ++rep) {
        try {
          run_single(*s, {{"X", Tensor::from_vector<float>({1}, {1})}});
          ADD_FAILURE() << what << ": no error";
        } catch (const Error& e) {
          EXPECT_EQ(e.code(), ErrorCode::RuntimeError);
          const std::string m = e.what();
          EXPECT_EQ(m.rfind("Throw 'boom': ", 0), 0u) << m;
          EXPECT_NE(m.find(std::string(what) == "bad_alloc" ? "ran out of memory (std::bad_alloc)" : "failed: "),
                    std::string::npos) << m;
        }
      }
    }
}

TEST(Executor, NodesListedOutOfOrder) {
  ModelBuilder mb(13);
  mb.input("X", DType::Float32, {3});
  mb.node("Mul", {"B", "B"}, {"Y"}).name("last");
  mb.node("Add", {"A", "X"}, {"B"}).name("middle");
  mb.node("Relu", {"X"}, {"A"}).name("first");
  mb.output("Y");
  Tensor x = Tensor::from_vector<float>({3}, {-1, 2, 3});
  // relu(x) + x = {-1, 4, 6}; squared
  EXPECT_TRUE(tensors_near(run_single(*mb.session(), {{"X", x}}), Tensor::from_vector<float>({3}, {1, 16, 36}), 0, 0));
}

TEST(Executor, BuffersAreReusedAlongAChain) {
  const int64_t n = 1 << 18;  // 1 MiB of float32 per intermediate
  const int steps = 8;
  ModelBuilder mb(13);
  mb.input("X", DType::Float32, {n});
  std::string prev = "X";
  for (int i = 0; i < steps; ++i) {
    std::string out = "t" + std::to_string(i);
    mb.node("Add", {prev, "X"}, {out});
    prev = out;
  }
  mb.output(prev);
  auto s = mb.session();
  Tensor x = Tensor::from_vector<float>({n}, std::vector<float>(n, 1.0f));
  RunStats stats;
  auto out = s->run({{"X", Value(x)}}, {}, nullptr, &stats);
  EXPECT_EQ(out[0].tensor().data<float>()[n - 1], steps + 1.0f);
  const size_t one = n * sizeof(float);
  // Each step needs its input and output alive: two buffers, never all eight.
  EXPECT_GE(stats.peak_intermediate_bytes, 2 * one);
  EXPECT_LE(stats.peak_intermediate_bytes, 2 * one + 1024);
  EXPECT_LT(stats.peak_intermediate_bytes, steps * one);
}

TEST(Executor, DynamicBatch) {
  ModelBuilder mb(13);
  mb.input("X", DType::Float32, {-1, 4});
  mb.initializer("B", Tensor::from_vector<float>({4}, {1, 2, 3, 4}));
  mb.node("Add", {"X", "B"}, {"Y"});
  mb.output("Y");
  auto s = mb.session();
  for (int64_t batch : {1, 7, 64}) {
    Tensor x = Tensor::from_vector<float>({batch, 4}, std::vector<float>(batch * 4, 0.5f));
    Tensor y = run_single(*s, {{"X", x}});
    ASSERT_EQ(y.shape(), Shape({batch, 4}));
    EXPECT_EQ(y.data<float>()[(batch - 1) * 4 + 3], 4.5f);
  }
}

TEST(Executor, FeedErrorsAreClear) {
  ModelBuilder mb(13);
  mb.input("X", DType::Float32, {-1, 4});
  mb.node("Relu", {"X"}, {"Y"});
  mb.output("Y");
  auto s = mb.session();
  auto run = [&](const std::string& name, const Tensor& t) {
    return error_message([&] { s->run({{name, Value(t)}}); });
  };
  Tensor good = Tensor::from_vector<float>({2, 4}, iota_floats(8));
  EXPECT_NE(run("Z", good).find("unknown input 'Z' (model inputs: X)"), std::string::npos);
  EXPECT_NE(run("X", Tensor::from_vector<int64_t>({2, 4}, std::vector<int64_t>(8, 1)))
                .find("input 'X': expected dtype float, got int64"),
            std::string::npos);
  EXPECT_NE(run("X", Tensor::from_vector<float>({8}, iota_floats(8))).find("input 'X': expected rank 2 [d0,4], got rank 1"),
            std::string::npos);
  EXPECT_NE(run("X", Tensor::from_vector<float>({2, 3}, iota_floats(6))).find("input 'X': dimension 1 must be 4"),
            std::string::npos);
  EXPECT_NE(error_message([&] { s->run({}); }).find("missing input 'X'"), std::string::npos);
  EXPECT_NE(error_message([&] { s->run({{"X", Value(good)}}, {"nope"}); }).find("unknown output 'nope'"),
            std::string::npos);
}

TEST(Executor, IntermediatesCanBeRequestedByName) {
  ModelBuilder mb(13);
  mb.input("X", DType::Float32, {3});
  mb.node("Relu", {"X"}, {"A"});
  mb.node("Add", {"A", "A"}, {"Y"});
  mb.output("Y");
  auto s = mb.session();
  Tensor x = Tensor::from_vector<float>({3}, {-1, 0, 2});
  auto out = s->run({{"X", Value(x)}}, {"A", "Y"});
  EXPECT_TRUE(tensors_near(out[0].tensor(), Tensor::from_vector<float>({3}, {0, 0, 2}), 0, 0));
  EXPECT_TRUE(tensors_near(out[1].tensor(), Tensor::from_vector<float>({3}, {0, 0, 4}), 0, 0));
}

TEST(Executor, BoundOutputIsWrittenInPlace) {
  ModelBuilder mb(13);
  mb.input("X", DType::Float32, {4});
  mb.node("Add", {"X", "X"}, {"A"});
  mb.node("Reshape", {"A", "shape"}, {"Y"});
  mb.initializer("shape", Tensor::from_vector<int64_t>({2}, {2, 2}));
  mb.output("Y");
  auto s = mb.session();
  Tensor x = Tensor::from_vector<float>({4}, {1, 2, 3, 4});
  std::vector<float> user(4, -1.f);
  RunOptions ro;
  ro.bound_outputs.emplace_back("Y", Tensor::wrap(DType::Float32, {2, 2}, user.data()));
  auto out = s->run({{"X", Value(x)}}, {}, &ro);
  EXPECT_EQ(user, (std::vector<float>{2, 4, 6, 8}));
  EXPECT_EQ(out[0].tensor().raw(), user.data());
  // A bound buffer of the wrong shape is an error, not a silent reallocation.
  RunOptions bad;
  bad.bound_outputs.emplace_back("Y", Tensor::wrap(DType::Float32, {4}, user.data()));
  EXPECT_NE(error_message([&] { s->run({{"X", Value(x)}}, {}, &bad); }).find("bound output 'Y'"), std::string::npos);
}

TEST(Executor, ReshapeIsAView) {
  ModelBuilder mb(13);
  mb.input("X", DType::Float32, {2, 3});
  mb.initializer("shape", Tensor::from_vector<int64_t>({2}, {3, -1}));
  mb.node("Reshape", {"X", "shape"}, {"Y"});
  mb.output("Y");
  Tensor x = Tensor::from_vector<float>({2, 3}, iota_floats(6));
  Tensor y = run_single(*mb.session(), {{"X", x}});
  EXPECT_EQ(y.shape(), Shape({3, 2}));
  EXPECT_EQ(y.raw(), x.raw());  // same memory
}

TEST(Executor, CarriesSequencesAndMaps) {
  ModelBuilder mb(13);
  mb.import_domain("test.onnxmini", 1);
  mb.input("X", DType::Float32, {3, 2});
  mb.node("MakeSeq", {"X"}, {"S"}).domain("test.onnxmini");
  mb.node("SeqLen", {"S"}, {"N"}).domain("test.onnxmini");
  mb.output("S");
  mb.output("N");
  Tensor x = Tensor::from_vector<float>({3, 2}, iota_floats(6));
  auto out = mb.session()->run({{"X", Value(x)}});
  ASSERT_TRUE(out[0].is_sequence());
  ASSERT_EQ(out[0].sequence_items().size(), 3u);
  const Map& row2 = out[0].sequence_items()[2].map_value();
  EXPECT_EQ(row2.keys.data<int64_t>()[1], 1);
  EXPECT_EQ(row2.values.data<float>()[1], 5.f);
  EXPECT_EQ(out[0].type_string(), "seq(map(int64,tensor(float)))");
  EXPECT_EQ(out[1].tensor().data<int64_t>()[0], 3);
}

TEST(Executor, ConcurrentRunsMatchSerialRuns) {
  ModelBuilder mb(13);
  mb.input("X", DType::Float32, {-1, 64});
  mb.initializer("B", Tensor::from_vector<float>({64}, iota_floats(64, -32)));
  mb.node("Add", {"X", "B"}, {"A"});
  mb.node("Relu", {"A"}, {"R"});
  mb.node("Mul", {"R", "X"}, {"Y"});
  mb.output("Y");
  SessionOptions opts;
  opts.intra_op_num_threads = 2;
  auto s = mb.session(opts);
  const int kThreads = 4, kRuns = 25;
  std::vector<Tensor> inputs, expected;
  for (int t = 0; t < kThreads; ++t) {
    inputs.push_back(random_tensor(DType::Float32, {16 + t, 64}, 100 + t));
    expected.push_back(run_single(*s, {{"X", inputs.back()}}));
  }
  std::vector<int> failures(kThreads, 0);
  std::vector<std::thread> pool;
  for (int t = 0; t < kThreads; ++t)
    pool.emplace_back([&, t] {
      for (int r = 0; r < kRuns; ++r) {
        Tensor y = run_single(*s, {{"X", inputs[t]}});
        if (!tensors_near(y, expected[t], 0, 0)) ++failures[t];
      }
    });
  for (auto& th : pool) th.join();
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(failures[t], 0) << "thread " << t;
}

TEST(Executor, KernelErrorsNameTheNode) {
  ModelBuilder mb(13);
  mb.input("A", DType::Float32, {2, 3});
  mb.input("B", DType::Float32, {4, 3});
  mb.node("Add", {"A", "B"}, {"Y"}).name("add7");
  mb.output("Y");
  auto s = mb.session();
  std::string m = error_message([&] {
    run_single(*s, {{"A", random_tensor(DType::Float32, {2, 3}, 1)}, {"B", random_tensor(DType::Float32, {4, 3}, 2)}});
  });
  EXPECT_NE(m.find("Add 'add7': "), std::string::npos) << m;
  EXPECT_NE(m.find("cannot broadcast"), std::string::npos) << m;
}
