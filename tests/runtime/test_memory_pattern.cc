// Memory plans per input shapes: the layout itself, replay on the second run with
// the same shapes, new shapes recorded anew, outputs that outlive their run, and
// data-dependent allocation sequences (an If) falling back to the pool.
#include <gtest/gtest.h>

#include "runtime/memory_pattern.h"
#include "tests/common/model_builder.h"

using namespace onnxmini;
using namespace onnxmini::test;

TEST(MemoryPatternLayout, ReusesReleasedRangesAndSkipsBlocksThatOutliveTheRun) {
  AllocationTrace t;
  t.allocated(128);  // 0
  t.allocated(64);   // 1
  t.released(0);
  t.allocated(64);   // 2: fits in 0's range
  t.allocated(256);  // 3: outlives the run
  t.allocated(64);   // 4
  t.released(1);
  t.released(2);
  t.released(4);
  const MemoryPattern p = t.layout({false, false, false, true, false});
  ASSERT_EQ(p.blocks.size(), 5u);
  EXPECT_TRUE(p.blocks[0].planned);
  EXPECT_FALSE(p.blocks[3].planned);
  EXPECT_EQ(p.blocks[2].offset, p.blocks[0].offset);
  EXPECT_EQ(p.blocks[2].must_be_free, std::vector<uint32_t>{0});
  EXPECT_TRUE(p.blocks[1].must_be_free.empty());
  // 0 and 1 side by side (192 bytes); 2 and 4 fit in 0's 128 bytes.
  EXPECT_EQ(p.arena_bytes, 192u);
  EXPECT_EQ(p.blocks[4].offset, p.blocks[0].offset + 64);
}

TEST(MemoryPatternLayout, FreedTailIsReusedWhenGrowing) {
  AllocationTrace t;
  t.allocated(64);   // 0
  t.allocated(64);   // 1
  t.released(1);
  t.allocated(128);  // 2: starts where 1 was, grows the arena by 64
  t.released(0);
  t.released(2);
  const MemoryPattern p = t.layout({false, false, false});
  EXPECT_EQ(p.blocks[2].offset, 64u);
  EXPECT_EQ(p.arena_bytes, 192u);
}

TEST(MemoryPatternLayout, EachBlockWaitsForTheLatestOwnersOfItsBytesOnly) {
  // A chain: block i is released once block i+1 exists, so two ranges take turns.
  // Block i must wait for i-2 alone (the last one in its range): i-4, i-6 .. were
  // released before i-2 was handed out. A long chain's check thus stays O(1) per block.
  AllocationTrace t;
  const uint32_t n = 200;
  for (uint32_t i = 0; i < n; ++i) {
    t.allocated(64);
    if (i > 0) t.released(i - 1);
  }
  t.released(n - 1);
  const MemoryPattern p = t.layout(std::vector<bool>(n, false));
  EXPECT_EQ(p.arena_bytes, 128u);
  EXPECT_TRUE(p.blocks[0].must_be_free.empty());
  EXPECT_TRUE(p.blocks[1].must_be_free.empty());
  for (uint32_t i = 2; i < n; ++i) EXPECT_EQ(p.blocks[i].must_be_free, std::vector<uint32_t>{i - 2}) << i;
}

TEST(MemoryPatternLayout, ABlockOverManyEarlierOnesWaitsForEachLatestOwner) {
  AllocationTrace t;
  t.allocated(64);   // 0 at 0
  t.allocated(64);   // 1 at 64
  t.allocated(64);   // 2 at 128
  t.released(0);
  t.allocated(64);   // 3 at 0 (waits for 0)
  t.released(1);
  t.released(2);
  t.released(3);
  t.allocated(192);  // 4 at 0: the latest owners of its bytes are 3, 1 and 2 (not 0)
  t.released(4);
  const MemoryPattern p = t.layout(std::vector<bool>(5, false));
  ASSERT_EQ(p.blocks[3].offset, 0u);
  ASSERT_EQ(p.blocks[4].offset, 0u);
  EXPECT_EQ(p.blocks[3].must_be_free, std::vector<uint32_t>{0});
  EXPECT_EQ(p.blocks[4].must_be_free, (std::vector<uint32_t>{1, 2, 3}));
}

namespace {

// X -> 6 chained Adds (1 MiB intermediates) -> Y; X has a symbolic batch dim.
ModelBuilder chain_model() {
  ModelBuilder mb(13);
  mb.input("X", DType::Float32, {-1, 1024});
  std::string prev = "X";
  for (int i = 0; i < 6; ++i) {
    const std::string out = "t" + std::to_string(i);
    mb.node("Add", {prev, "X"}, {out});
    prev = out;
  }
  mb.node("Reshape", {prev, "shape"}, {"Y"});  // the output is a view of the last intermediate
  mb.initializer("shape", Tensor::from_vector<int64_t>({1}, {-1}));
  mb.output("Y");
  return mb;
}

Tensor filled(int64_t rows, float v) {
  return Tensor::from_vector<float>({rows, 1024}, std::vector<float>(rows * 1024, v));
}

Tensor run_with_stats(Session& s, const Tensor& x, RunStats& stats) {
  return s.run({{"X", x}}, {}, nullptr, &stats).at(0).tensor();
}

}  // namespace

TEST(MemoryPattern, SecondRunWithTheSameShapesIsPlanned) {
  auto s = chain_model().session();
  RunStats first, second;
  // (Each output is dropped before the next run: a held output counts as live bytes.)
  EXPECT_EQ(run_with_stats(*s, filled(4, 1), first).data<float>()[0], 7.f);
  EXPECT_EQ(run_with_stats(*s, filled(4, 2), second).data<float>()[0], 14.f);
  EXPECT_EQ(first.planned_buffers, 0u);
  EXPECT_EQ(first.pooled_buffers, 6u);
  // Everything but the buffer that leaves the run (the output's) comes from the plan.
  EXPECT_EQ(second.planned_buffers, 5u);
  EXPECT_EQ(second.pooled_buffers, 1u);
  EXPECT_EQ(second.peak_intermediate_bytes, first.peak_intermediate_bytes);
}

TEST(MemoryPattern, EachShapeHasItsOwnPlan) {
  auto s = chain_model().session();
  RunStats st;
  run_with_stats(*s, filled(4, 1), st);
  run_with_stats(*s, filled(8, 1), st);
  EXPECT_EQ(st.planned_buffers, 0u);  // new shapes: recorded
  Tensor y8 = run_with_stats(*s, filled(8, 3), st);
  EXPECT_EQ(st.planned_buffers, 5u);
  Tensor y4 = run_with_stats(*s, filled(4, 3), st);
  EXPECT_EQ(st.planned_buffers, 5u);
  EXPECT_EQ(y8.numel(), 8 * 1024);
  EXPECT_EQ(y4.numel(), 4 * 1024);
  EXPECT_EQ(y8.data<float>()[8 * 1024 - 1], 21.f);
  EXPECT_EQ(y4.data<float>()[0], 21.f);
}

TEST(MemoryPattern, OutputsOutliveLaterRuns) {
  auto s = chain_model().session();
  std::vector<Tensor> kept;
  for (int i = 0; i < 4; ++i) kept.push_back(s->run({{"X", filled(2, float(i))}}).at(0).tensor());
  for (int i = 0; i < 4; ++i)
    for (int64_t k = 0; k < kept[i].numel(); ++k) ASSERT_EQ(kept[i].data<float>()[k], 7.f * i) << "run " << i;
}

TEST(MemoryPattern, IntermediatesAskedForByNameAreNotOverwritten) {
  auto s = chain_model().session();
  for (int i = 0; i < 3; ++i) {
    auto out = s->run({{"X", filled(2, 1)}}, {"t2", "Y"});
    EXPECT_EQ(out[0].tensor().data<float>()[0], 4.f);
    EXPECT_EQ(out[1].tensor().data<float>()[0], 7.f);
  }
}

TEST(MemoryPattern, DataDependentSequencesFallBackToThePool) {
  // then: X * 2 (same size), else: Concat(X, X) (twice the size): the sequence depends on cond.
  ModelBuilder then_b(13), else_b(13);
  then_b.node("Add", {"X", "X"}, {"t"});
  then_b.node("Relu", {"t"}, {"t2"});
  then_b.output("t2", DType::Float32);
  else_b.node("Concat", {"X", "X"}, {"e"}).attr("axis", int64_t{0});
  else_b.node("Neg", {"e"}, {"e2"});
  else_b.output("e2", DType::Float32);
  ModelBuilder mb(13);
  mb.input("X", DType::Float32, {256});
  mb.input("cond", DType::Bool, {});
  mb.node("Abs", {"X"}, {"A"});
  mb.node("If", {"cond"}, {"Z"}).attr("then_branch", then_b.graph()).attr("else_branch", else_b.graph());
  mb.node("ReduceSum", {"Z"}, {"S"}).attr("keepdims", int64_t{0});
  mb.node("Add", {"S", "A"}, {"Y"});
  mb.output("Y");
  auto planned = mb.session();
  SessionOptions off;
  off.enable_mem_pattern = false;
  auto unplanned = mb.session(off);
  std::vector<float> xs(256);
  for (int i = 0; i < 256; ++i) xs[i] = static_cast<float>(i % 7) - 3.f;
  const Tensor x = Tensor::from_vector<float>({256}, xs);
  for (int i = 0; i < 12; ++i) {
    const bool cond = (i % 3) != 0;
    const auto feeds = std::vector<std::pair<std::string, Tensor>>{{"X", x}, {"cond", Tensor::scalar<bool>(cond)}};
    EXPECT_TRUE(tensors_near(run_single(*planned, feeds), run_single(*unplanned, feeds), 0, 0)) << "run " << i;
  }
}

TEST(MemoryPattern, OffMeansNoPlan) {
  SessionOptions o;
  o.enable_mem_pattern = false;
  auto s = chain_model().session(o);
  RunStats st;
  for (int i = 0; i < 3; ++i) run_with_stats(*s, filled(4, 1), st);
  EXPECT_EQ(st.planned_buffers, 0u);
  EXPECT_EQ(st.pooled_buffers, 6u);
}
