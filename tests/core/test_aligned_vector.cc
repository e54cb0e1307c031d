#include "core/aligned_vector.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

namespace onnxmini {
namespace {

bool on_cache_line(const void* p) { return reinterpret_cast<std::uintptr_t>(p) % 64 == 0; }

// Sizes around malloc's mmap threshold (128 KiB) too: a plain vector of that size
// starts 16 bytes past a page, the case that made kernel scratch misaligned.
TEST(AlignedVector, DataStartsOnACacheLineWhateverTheSize) {
  std::vector<std::vector<char>> noise;  // odd-sized allocations in between move the heap's state
  for (size_t n : {1u, 3u, 17u, 1000u, 32768u, 40000u, 1u << 20}) {
    noise.emplace_back(n % 61 + 1);
    AlignedVector<float> v(n, 1.0f);
    EXPECT_TRUE(on_cache_line(v.data())) << n;
    v.resize(3 * n + 5);  // a reallocation keeps the alignment
    EXPECT_TRUE(on_cache_line(v.data())) << n;
    EXPECT_EQ(v[0], 1.0f);
    AlignedVector<uint8_t> b(n + 1);
    EXPECT_TRUE(on_cache_line(b.data())) << n;
  }
}

TEST(AlignedVector, ThreadLocalScratchIsAligned) {
  thread_local AlignedVector<float> scratch;
  for (size_t n : {5u, 4096u, 300000u}) {
    scratch.resize(n);
    EXPECT_TRUE(on_cache_line(scratch.data())) << n;
  }
}

}  // namespace
}  // namespace onnxmini
