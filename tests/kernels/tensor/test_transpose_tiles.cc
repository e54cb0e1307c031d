// Transpose's 2-D tiled path for 4-byte elements (kernels/tensor/transpose_simd.h):
// the AVX-512 / AVX2 tile routines called directly for every ISA this machine
// has, and the op in fast mode (1 and 2 threads) against the reference kernel,
// bit for bit. CTest reruns the op tests with ONNXMINI_ISA=avx2 and portable.
#include <cstring>

#include "kernels/tensor/transpose_simd.h"
#include "tests/common/node_runner.h"

namespace onnxmini {
namespace test {
namespace {

using tensor_ops::Transpose32TileFn;

// Distinct 32-bit patterns per element (NaN and denormal payloads included when read as float).
Tensor bits_tensor(DType dtype, const Shape& shape, uint32_t seed) {
  Tensor t(dtype, shape);
  std::mt19937 rng(seed);
  uint32_t* p = static_cast<uint32_t*>(t.raw_mut());
  for (int64_t i = 0; i < t.numel(); ++i) p[i] = static_cast<uint32_t>(rng());
  return t;
}

::testing::AssertionResult same_bits(const Tensor& a, const Tensor& b) {
  if (a.dtype() != b.dtype() || a.shape() != b.shape()) return ::testing::AssertionFailure() << "dtype/shape differ";
  const auto* pa = static_cast<const uint32_t*>(a.raw());
  const auto* pb = static_cast<const uint32_t*>(b.raw());
  for (int64_t i = 0; i < a.numel(); ++i)
    if (pa[i] != pb[i]) return ::testing::AssertionFailure() << "element " << i << ": " << pa[i] << " vs " << pb[i];
  return ::testing::AssertionSuccess();
}

// Fast mode at 1 and 2 threads vs the reference kernel, exact.
::testing::AssertionResult fast_equals_reference(const Tensor& x, const std::vector<int64_t>& perm) {
  const AttrSetter attrs = [&](NodeBuilder& n) { n.attr("perm", perm); };
  const Tensor ref = run_node("Transpose", 13, {x}, attrs, 1, KernelMode::Reference, 1)[0];
  for (int threads : {1, 2}) {
    auto r = same_bits(run_node("Transpose", 13, {x}, attrs, 1, KernelMode::Fast, threads)[0], ref);
    if (!r) return r << " (threads " << threads << ")";
  }
  return ::testing::AssertionSuccess();
}

std::vector<cpu::Isa> simd_isas() {
  std::vector<cpu::Isa> v;
  if (cpu::hw_has_avx2_fma()) v.push_back(cpu::Isa::Avx2);
  if (cpu::hw_has_avx512()) v.push_back(cpu::Isa::Avx512);
  return v;
}

// The tile routine on a rows x cols block inside larger matrices (leading
// dimensions past the block): every element transposed, nothing outside written.
TEST(TransposeTiles, RoutineEveryBlockRemainder) {
  std::mt19937 rng(7);
  for (cpu::Isa isa : simd_isas()) {
    const Transpose32TileFn fn = tensor_ops::transpose32_tile_for(isa);
    ASSERT_NE(fn, nullptr);
    for (int64_t rows = 1; rows <= 40; ++rows)
      for (int64_t cols = 1; cols <= 40; ++cols) {
        const int64_t ld_src = cols + 3, ld_dst = rows + 5;
        std::vector<uint32_t> src(rows * ld_src), dst(cols * ld_dst, 0xdeadbeefu);
        for (auto& v : src) v = static_cast<uint32_t>(rng());
        fn(src.data(), ld_src, dst.data(), ld_dst, rows, cols, (rows + cols) % 2 == 0);
        for (int64_t c = 0; c < cols; ++c)
          for (int64_t r = 0; r < ld_dst; ++r) {
            const uint32_t want = r < rows ? src[r * ld_src + c] : 0xdeadbeefu;
            ASSERT_EQ(dst[c * ld_dst + r], want)
                << cpu::isa_name(isa) << " " << rows << "x" << cols << " at c " << c << " r " << r;
          }
      }
  }
}

TEST(TransposeTiles, Small2DEveryRemainder) {
  for (DType dt : {DType::Float32, DType::Int32})
    for (int64_t rows = 1; rows <= 40; ++rows)
      for (int64_t cols = 1; cols <= 40; ++cols)
        ASSERT_TRUE(fast_equals_reference(bits_tensor(dt, {rows, cols}, static_cast<uint32_t>(rows * 41 + cols)),
                                          {1, 0}))
            << dtype_name(dt) << " " << rows << "x" << cols;
}

TEST(TransposeTiles, TallWideAndBatched) {
  for (DType dt : {DType::Float32, DType::Int32, DType::UInt32}) {
    for (const Shape& s : {Shape{64, 1568}, Shape{3, 1000}, Shape{1000, 3}, Shape{130, 67}, Shape{17, 257}})
      EXPECT_TRUE(fast_equals_reference(bits_tensor(dt, s, 1), {1, 0})) << dtype_name(dt) << " " << s[0] << "x" << s[1];
    for (int64_t batch = 1; batch <= 3; ++batch)
      EXPECT_TRUE(fast_equals_reference(bits_tensor(dt, {batch, 45, 77}, 2), {0, 2, 1})) << "batch " << batch;
  }
}

TEST(TransposeTiles, Rank4MergesTo2D) {
  for (DType dt : {DType::Float32, DType::Int32}) {
    EXPECT_TRUE(fast_equals_reference(bits_tensor(dt, {2, 64, 14, 14}, 3), {0, 2, 3, 1}));  // NCHW -> NHWC
    EXPECT_TRUE(fast_equals_reference(bits_tensor(dt, {1, 19, 9, 23}, 4), {0, 2, 3, 1}));
    EXPECT_TRUE(fast_equals_reference(bits_tensor(dt, {3, 14, 14, 64}, 5), {0, 3, 1, 2}));  // NHWC -> NCHW
    EXPECT_TRUE(fast_equals_reference(bits_tensor(dt, {1, 7, 11, 33}, 6), {0, 3, 1, 2}));
  }
}

}  // namespace
}  // namespace test
}  // namespace onnxmini
