// The run's buffer pool: blocks handed back are reused best-fit (no more than twice the
// request), live bytes are counted per block, and a tensor that outlives its pool stays
// valid and frees its block itself. Replayed (planned) blocks are covered through sessions
// in test_memory_pattern.cc; here, one planned run driven by hand.
#include <gtest/gtest.h>

#include <cstring>
#include <memory>

#include "runtime/buffer_pool.h"
#include "runtime/memory_pattern.h"

using namespace onnxmini;

TEST(BufferPool, ReleasedBlockIsReusedForTheSameSize) {
  auto pool = std::make_shared<BufferPool>();
  const void* first;
  {
    Tensor a = pool->allocate(DType::Float32, {4, 100});
    first = a.raw();
    EXPECT_EQ(pool->live_bytes(), 1600u);
  }
  EXPECT_EQ(pool->live_bytes(), 0u);
  EXPECT_EQ(pool->cached_bytes(), 1600u);
  Tensor b = pool->allocate(DType::Float32, {400});
  EXPECT_EQ(b.raw(), first);
  EXPECT_EQ(pool->cached_bytes(), 0u);
}

TEST(BufferPool, BestFitWithinTwiceTheRequest) {
  auto pool = std::make_shared<BufferPool>();
  const void* small;
  const void* large;
  {
    // Handed back in the order large, small, medium: the free list stays sorted by size.
    Tensor s = pool->allocate(DType::Float32, {64});     // 256 bytes
    Tensor m = pool->allocate(DType::Float32, {512});    // 2048 bytes
    Tensor l = pool->allocate(DType::Float32, {1024});   // 4096 bytes
    small = s.raw();
    large = l.raw();
    l = Tensor();
    s = Tensor();
  }
  EXPECT_EQ(pool->cached_bytes(), 256u + 2048u + 4096u);
  Tensor a = pool->allocate(DType::Float32, {50});  // 200 -> 256 bytes: the 256-byte block
  EXPECT_EQ(a.raw(), small);
  Tensor b = pool->allocate(DType::Float32, {700});  // 2800 -> 2816: not 2048, 4096 <= 2 x 2816
  EXPECT_EQ(b.raw(), large);
  EXPECT_EQ(pool->live_bytes(), 256u + 4096u);
  Tensor c = pool->allocate(DType::Float32, {2048});  // 8192: nothing cached fits
  EXPECT_NE(c.raw(), small);
  EXPECT_NE(c.raw(), large);
  EXPECT_EQ(pool->cached_bytes(), 2048u);
}

TEST(BufferPool, TensorOutlivesItsPool) {
  Tensor t;
  {
    auto pool = std::make_shared<BufferPool>();
    t = pool->allocate(DType::Float32, {1000});
    Tensor cached = pool->allocate(DType::Float32, {10});  // goes back to the pool's list
  }
  // The pool is gone: the block is still the tensor's, and dropping it frees it (ASan checks).
  float* p = t.mutable_data<float>();
  for (int i = 0; i < 1000; ++i) p[i] = static_cast<float>(i);
  EXPECT_EQ(t.data<float>()[999], 999.0f);
  t = Tensor();
}

TEST(BufferPool, LiveLimitRefusesBeforeAllocating) {
  auto pool = std::make_shared<BufferPool>();
  pool->set_live_limit(1024);
  Tensor a = pool->allocate(DType::Float32, {128});  // 512 bytes
  try {
    Tensor b = pool->allocate(DType::Float32, {256});  // 1024 more: past the limit
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("max_intermediate_bytes"), std::string::npos) << e.what();
  }
  EXPECT_EQ(pool->live_bytes(), 512u);
}

TEST(BufferPool, PlannedRunReplaysOffsetsAndReleasesSlots) {
  auto pool = std::make_shared<BufferPool>();
  // Record: two tensors, the first released before the second is made.
  pool->start_run(nullptr, true);
  { Tensor a = pool->allocate(DType::Float32, {64}); }
  Tensor b = pool->allocate(DType::Float32, {64});
  b = Tensor();
  auto pattern = pool->finish_run();
  ASSERT_TRUE(pattern);
  // Replay: both requests come from the arena (the second reuses the first's range).
  pool->start_run(pattern, false);
  const void* pa;
  {
    Tensor a = pool->allocate(DType::Float32, {64});
    pa = a.raw();
    EXPECT_EQ(pool->live_bytes(), 256u);
  }
  EXPECT_EQ(pool->live_bytes(), 0u);
  Tensor c = pool->allocate(DType::Float32, {64});
  EXPECT_EQ(pool->planned_requests(), 2u);
  EXPECT_EQ(c.raw(), pa);
  pool->finish_run();
  // A planned tensor that outlives the pool keeps the arena alive.
  pool.reset();
  c.mutable_data<float>()[63] = 1.5f;
  EXPECT_EQ(c.data<float>()[63], 1.5f);
}
