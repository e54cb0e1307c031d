// Resize fast paths (kernels/nn/resize_fast.h) against the general separable
// path (KernelMode::Reference), on every ISA this machine has (portable, AVX2,
// AVX-512): pixel replication and nearest gathers must match exactly (both
// copy source values); bilinear within the float32 rounding bound below. Odd
// widths exercise the vector tails. Cases a fast path cannot compute the same
// way (cubic, resized channels, extrapolation, antialias widening, float64)
// must stay on the general path, seen through resize_path_counts(). The
// whole-plane nearest stream (resize_nearest_flat) is forced on and off here
// (set_resize_flat), its rule checked separately.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "core/cpu_features.h"
#include "core/float16.h"
#include "kernels/nn/resize_fast.h"
#include "tests/common/node_runner.h"

namespace onnxmini {
namespace test {
namespace {

using nn::resize_path_counts;

std::vector<cpu::Isa> isas() {
  std::vector<cpu::Isa> v{cpu::Isa::Portable};
  if (cpu::hw_has_avx2_fma()) v.push_back(cpu::Isa::Avx2);
  if (cpu::hw_has_avx512()) v.push_back(cpu::Isa::Avx512);
  return v;
}

// Runs the fast paths at one ISA for the scope's lifetime.
struct IsaScope {
  explicit IsaScope(cpu::Isa isa) { nn::set_resize_isa_for_tests(isa); }
  ~IsaScope() { nn::set_resize_isa_for_tests(cpu::active_isa()); }
};

Tensor f32(const std::vector<float>& v) { return Tensor::from_vector<float>({static_cast<int64_t>(v.size())}, v); }

AttrSetter attrs(const std::string& mode, const std::string& coord, const std::string& nearest = "round_prefer_floor",
                 std::vector<int64_t> axes = {}) {
  return [=](NodeBuilder& n) {
    n.attr("mode", mode);
    n.attr("coordinate_transformation_mode", coord);
    n.attr("nearest_mode", nearest);
    if (!axes.empty()) n.attr("axes", axes);
  };
}

// Forces the whole-plane nearest stream on or off for the scope's lifetime.
struct FlatScope {
  explicit FlatScope(nn::ResizeFlat f) { nn::set_resize_flat(f); }
  ~FlatScope() { nn::set_resize_flat(nn::ResizeFlat::Rule); }
};

enum Path { General, Replicate, Gather, Bilinear, Flat };
const char* path_name(Path p) {
  static const char* names[] = {"general", "nearest_replicate", "nearest_gather", "bilinear", "nearest_flat"};
  return names[p];
}
int64_t count(Path p) {
  auto& c = resize_path_counts();
  switch (p) {
    case General: return c.general.load();
    case Replicate: return c.nearest_replicate.load();
    case Gather: return c.nearest_gather.load();
    case Bilinear: return c.bilinear.load();
    case Flat: return c.nearest_flat.load();
  }
  return 0;
}

double max_abs(const Tensor& t) {
  double m = 0;
  for (int64_t i = 0; i < t.numel(); ++i) m = std::max(m, std::fabs(t.get_as_double(i)));
  return m;
}

// Bilinear bound: an output is a convex combination of at most 4 inputs. The
// fast path rounds each weight to float (u = 2^-24 relative) and, per axis,
// a product and a sum (FMA) or two products and a sum (portable): at most 4u
// of the largest input per axis, 8u for the two axes; the general path
// accumulates in double and rounds once (u). 10u * max|x| covers both.
double bilinear_atol(const Tensor& x) { return 10 * std::ldexp(1.0, -24) * max_abs(x); }

// Runs the node at every ISA with 3 threads (uneven bands) and checks the
// path taken and the values against the general path.
void expect_fast_matches(const std::vector<Tensor>& inputs, const AttrSetter& a, Path want, int opset = 13,
                         const std::string& op = "Resize") {
  // The row paths unless the stream is what the case wants.
  FlatScope flat(want == Flat ? nn::ResizeFlat::Always : nn::ResizeFlat::Never);
  const Tensor ref = run_node(op, opset, inputs, a, 1, KernelMode::Reference, 1)[0];
  const bool exact = want != Bilinear;
  for (cpu::Isa isa : isas()) {
    SCOPED_TRACE(std::string("isa ") + cpu::isa_name(isa) + ", input " + shape_to_string(inputs[0].shape()));
    IsaScope scope(isa);
    const int64_t before = count(want);
    const Tensor got = run_node(op, opset, inputs, a, 1, KernelMode::Fast, 3)[0];
    // An empty output (e.g. 1 pixel at scale 0.5) returns before any path.
    EXPECT_EQ(count(want), before + (ref.numel() > 0 ? 1 : 0)) << "expected the " << path_name(want) << " path";
    if (exact) EXPECT_TRUE(tensors_near(got, ref, 0, 0));
    else EXPECT_TRUE(tensors_near(got, ref, bilinear_atol(inputs[0]), 0));
  }
}

const std::vector<Shape> kShapes = {{1, 1, 1, 1}, {2, 3, 5, 19}, {1, 2, 7, 33}, {1, 1, 3, 16}, {3, 1, 4, 8}};

TEST(ResizeFast, NearestIntegerScalesReplicateExactly) {
  // The (coordinate, nearest) pairs that are pixel replication at these factors (resize_fast.cc's derivation).
  struct Mode { std::string coord, nearest; std::vector<float> factors; };
  const std::vector<Mode> modes = {
      {"half_pixel", "round_prefer_floor", {2, 3, 4, 17}},
      {"half_pixel", "round_prefer_ceil", {2, 4}},
      {"pytorch_half_pixel", "round_prefer_floor", {2, 3}},
      {"half_pixel_symmetric", "round_prefer_ceil", {2, 5}},
      {"asymmetric", "floor", {2, 3, 4, 8, 16}},
      {"asymmetric", "round_prefer_floor", {2}},
      {"tf_half_pixel_for_nearest", "floor", {2, 4}},
  };
  uint32_t seed = 1;
  for (const Mode& m : modes)
    for (float s : m.factors)
      for (const Shape& shape : kShapes) {
        SCOPED_TRACE(m.coord + " " + m.nearest + " x" + std::to_string(s));
        const int opset = m.coord == "half_pixel_symmetric" ? 19 : 13;
        expect_fast_matches({random_tensor(DType::Float32, shape, seed++), Tensor(), f32({1, 1, s, s})},
                            attrs("nearest", m.coord, m.nearest), Replicate, opset);
      }
  // Different factors on H and W, given as sizes; and Upsample-9 (asymmetric + floor).
  expect_fast_matches({random_tensor(DType::Float32, {2, 2, 5, 9}, 3), Tensor(), Tensor(), i64({2, 2, 15, 18})},
                      attrs("nearest", "asymmetric", "floor"), Replicate);
  expect_fast_matches({random_tensor(DType::Float32, {1, 4, 6, 23}, 4), f32({1, 1, 2, 2})},
                      [](NodeBuilder& n) { n.attr("mode", "nearest"); }, Replicate, 9, "Upsample");
}

TEST(ResizeFast, NearestOtherTablesGatherExactly) {
  // Not replication: asymmetric + round_prefer_ceil / ceil at 2x, 3x with round_prefer_floor,
  // non-integer scales and downscaling, align_corners.
  expect_fast_matches({random_tensor(DType::Float32, {1, 2, 5, 19}, 5), Tensor(), f32({1, 1, 2, 2})},
                      attrs("nearest", "asymmetric", "round_prefer_ceil"), Gather);
  expect_fast_matches({random_tensor(DType::Float32, {1, 2, 5, 19}, 6), Tensor(), f32({1, 1, 3, 3})},
                      attrs("nearest", "asymmetric", "round_prefer_floor"), Gather);
  expect_fast_matches({random_tensor(DType::Float32, {2, 2, 9, 37}, 7), Tensor(), f32({1, 1, 1.7f, 0.6f})},
                      attrs("nearest", "half_pixel", "ceil"), Gather);
  expect_fast_matches({random_tensor(DType::Float32, {1, 3, 6, 7}, 8), Tensor(), Tensor(), i64({1, 3, 11, 20})},
                      attrs("nearest", "align_corners", "round_prefer_floor"), Gather);
}

// The whole-plane stream, forced: replication and other tables, output rows narrower
// than a vector, rows whose chunks cross into the next row within 16 / 32 sources
// (one and two windows) and beyond (the gather), output planes that are not whole
// vectors, a source window running past the plane's end, downscaling.
TEST(ResizeFast, NearestFlatStreamsExactly) {
  uint32_t seed = 300;
  const std::vector<Shape> shapes = {{1, 1, 1, 1}, {2, 3, 5, 9}, {1, 2, 7, 19}, {1, 2, 5, 40}, {3, 1, 4, 8}, {1, 1, 3, 13}};
  for (const Shape& shape : shapes) {
    SCOPED_TRACE(shape_to_string(shape));
    expect_fast_matches({random_tensor(DType::Float32, shape, seed++), Tensor(), f32({1, 1, 2, 2})},
                        attrs("nearest", "asymmetric", "floor"), Flat);
    expect_fast_matches({random_tensor(DType::Float32, shape, seed++), Tensor(), f32({1, 1, 3, 1.5f})},
                        attrs("nearest", "half_pixel", "round_prefer_ceil"), Flat);
    expect_fast_matches({random_tensor(DType::Float32, shape, seed++), Tensor(), f32({1, 1, 0.6f, 0.7f})},
                        attrs("nearest", "half_pixel", "floor"), Flat);
  }
  expect_fast_matches({random_tensor(DType::Float32, {1, 4, 6, 23}, seed++), f32({1, 1, 2, 2})},
                      [](NodeBuilder& n) { n.attr("mode", "nearest"); }, Flat, 9, "Upsample");
}

// The rule: small output planes with narrow rows stream (YOLO's 10x10 -> 20x20 head),
// wider rows keep the row kernels.
TEST(ResizeFast, NearestFlatRuleTakesSmallPlanes) {
  struct Case { Shape x; Path want; } cases[] = {
      {{1, 8, 10, 10}, Flat},        // 20 wide, 400 per plane
      {{1, 8, 26, 26}, Replicate},   // 52 wide (the row kernels won from here: docs/kernels/nn.md)
      {{1, 1, 300, 15}, Replicate},  // 30 wide but 18000 per plane: index table too large
  };
  for (const auto& c : cases) {
    const int64_t before = count(c.want);
    run_node("Resize", 13, {random_tensor(DType::Float32, c.x, 5), Tensor(), f32({1, 1, 2, 2})},
             attrs("nearest", "asymmetric", "floor"), 1, KernelMode::Fast);
    EXPECT_EQ(count(c.want), before + 1) << shape_to_string(c.x) << " expected " << path_name(c.want);
  }
}

// The primitive alone: random and monotone index tables, every plane length up to 70 (each
// tail), windows at the end of the source; nothing written past n.
TEST(ResizeFast, NearestFlatPrimitiveEveryLength) {
  std::mt19937 rng(9);
  for (cpu::Isa isa : isas()) {
    const nn::ResizeRowKernels& k = nn::resize_row_kernels_for(isa);
    for (int64_t src_n : {1, 5, 17, 40})
      for (int64_t n = 1; n <= 70; ++n)
        for (int kind = 0; kind < 3; ++kind) {
          std::vector<float> src(static_cast<size_t>(src_n));
          for (int64_t i = 0; i < src_n; ++i) src[i] = static_cast<float>(i) + 0.25f;
          std::vector<int32_t> idx(static_cast<size_t>(n));
          for (int64_t q = 0; q < n; ++q)  // 0: random; 1: near the end; 2: monotone
            idx[q] = kind == 0 ? static_cast<int32_t>(rng() % src_n)
                   : kind == 1 ? static_cast<int32_t>(src_n - 1 - (rng() % std::min<int64_t>(src_n, 3)))
                               : static_cast<int32_t>(q * src_n / n);
          const int64_t chunks = (n + nn::kFlatChunk - 1) / nn::kFlatChunk;
          std::vector<int32_t> lo(chunks), hi(chunks);
          for (int64_t c = 0; c < chunks; ++c) {
            const auto a = idx.begin() + c * nn::kFlatChunk, b = idx.begin() + std::min(n, (c + 1) * nn::kFlatChunk);
            lo[c] = *std::min_element(a, b), hi[c] = *std::max_element(a, b);
          }
          std::vector<float> dst(static_cast<size_t>(n + 20), -1.f);
          k.nearest_flat(src.data(), src_n, idx.data(), lo.data(), hi.data(), n, dst.data());
          for (int64_t q = 0; q < n + 20; ++q)
            ASSERT_EQ(dst[q], q < n ? src[idx[q]] : -1.f)
                << cpu::isa_name(isa) << " src_n " << src_n << " n " << n << " kind " << kind << " q " << q;
        }
  }
}

TEST(ResizeFast, BilinearWithinRoundingBound) {
  uint32_t seed = 100;
  for (const std::string coord : {"half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric"}) {
    for (const std::vector<float>& s : std::vector<std::vector<float>>{{2, 2}, {1.7f, 0.6f}, {0.5f, 3}, {1, 2.5f}}) {
      for (const Shape& shape : kShapes) {
        SCOPED_TRACE(coord + " scales " + std::to_string(s[0]) + "," + std::to_string(s[1]));
        expect_fast_matches({random_tensor(DType::Float32, shape, seed++, -3, 5), Tensor(), f32({1, 1, s[0], s[1]})},
                            attrs("linear", coord), Bilinear);
      }
    }
  }
  // Sizes to odd targets, half_pixel_symmetric (opset 19), and one axis only (axes, opset 18).
  expect_fast_matches({random_tensor(DType::Float32, {1, 2, 5, 7}, 7), Tensor(), Tensor(), i64({1, 2, 13, 29})},
                      attrs("linear", "half_pixel"), Bilinear);
  expect_fast_matches({random_tensor(DType::Float32, {1, 2, 5, 7}, 8), Tensor(), f32({1.3f, 2.9f})},
                      attrs("linear", "half_pixel_symmetric", "round_prefer_floor", {2, 3}), Bilinear, 19);
  expect_fast_matches({random_tensor(DType::Float32, {2, 2, 5, 21}, 9), Tensor(), f32({2})},
                      attrs("linear", "half_pixel", "round_prefer_floor", {-1}), Bilinear, 18);
  expect_fast_matches({random_tensor(DType::Float32, {2, 2, 5, 21}, 10), Tensor(), f32({3})},
                      attrs("linear", "align_corners", "round_prefer_floor", {2}), Bilinear, 18);
  // One plane bigger than the band split (threads share the rows of a single image).
  expect_fast_matches({random_tensor(DType::Float32, {1, 1, 40, 45}, 11), Tensor(), f32({1, 1, 2, 2})},
                      attrs("linear", "half_pixel"), Bilinear);
}

TEST(ResizeFast, IneligibleCasesTakeTheGeneralPath) {
  const Tensor x = random_tensor(DType::Float32, {2, 3, 5, 6}, 12);
  struct Case { std::vector<Tensor> inputs; AttrSetter a; int opset; const char* why; };
  const std::vector<Case> cases = {
      {{x, Tensor(), f32({1, 1, 2, 2})}, attrs("cubic", "half_pixel"), 13, "cubic"},
      {{x, Tensor(), f32({1, 2, 2, 2})}, attrs("nearest", "asymmetric", "floor"), 13, "channels resized"},
      {{x, f32({0, 0, 0, 0, 1, 1, 1.5f, 1.5f}), Tensor(), i64({2, 3, 7, 9})},
       attrs("linear", "tf_crop_and_resize"), 13, "extrapolation_value outside the roi"},
      {{x, Tensor(), f32({1, 1, 0.5f, 0.5f})},
       [](NodeBuilder& n) { n.attr("mode", "linear"); n.attr("antialias", int64_t{1}); }, 18,
       "antialias widens the filter past two taps"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.why);
    const int64_t general = count(General), fast = count(Replicate) + count(Gather) + count(Bilinear) + count(Flat);
    EXPECT_TRUE(fast_matches_reference("Resize", c.opset, c.inputs, c.a, 1, 0, 0));
    EXPECT_EQ(count(General), general + 2);  // the fast-mode run too
    EXPECT_EQ(count(Replicate) + count(Gather) + count(Bilinear) + count(Flat), fast);
  }
  // float64 has no fast path.
  const int64_t general = count(General);
  run_node("Resize", 13, {random_tensor(DType::Float64, {1, 1, 4, 4}, 13), Tensor(), f32({1, 1, 2, 2})},
           attrs("nearest", "asymmetric", "floor"), 1, KernelMode::Fast);
  EXPECT_EQ(count(General), general + 1);
}

Tensor to_half(const Tensor& x, DType t) {
  Tensor h(t, x.shape());
  uint16_t* bits = static_cast<uint16_t*>(h.raw_mut());  // the half types have no typed accessor
  for (int64_t i = 0; i < x.numel(); ++i) {
    const float v = x.data<float>()[i];
    bits[i] = t == DType::Float16 ? float_to_half(v) : float_to_bfloat16(v);
  }
  return h;
}

TEST(ResizeFast, Float16AndBFloat16GoThroughFloat32) {
  const Tensor x = random_tensor(DType::Float32, {1, 3, 5, 9}, 14, -2, 2);
  for (DType t : {DType::Float16, DType::BFloat16}) {
    const Tensor xh = to_half(x, t);
    Tensor xf(DType::Float32, x.shape());  // the half values, as float32
    for (int64_t i = 0; i < x.numel(); ++i) xf.mutable_data<float>()[i] = static_cast<float>(xh.get_as_double(i));
    for (const char* mode : {"nearest", "linear"}) {
      SCOPED_TRACE(std::string(dtype_name(t)) + " " + mode);
      const std::vector<float> s = {1, 1, 2, 1.5f};
      const Tensor yh = run_node("Resize", 13, {xh, Tensor(), f32(s)}, attrs(mode, "half_pixel"), 1, KernelMode::Fast)[0];
      const Tensor yf = run_node("Resize", 13, {xf, Tensor(), f32(s)}, attrs(mode, "half_pixel"), 1, KernelMode::Fast)[0];
      EXPECT_EQ(yh.dtype(), t);
      // Float32 results (fast and general differ by the bilinear bound) rounded once to the half
      // type: one ulp apart at most where a value sits near a rounding tie (2^-10 / 2^-7 relative).
      const double rel = t == DType::Float16 ? std::ldexp(1.0, -10) : std::ldexp(1.0, -7);
      Tensor yh_f(DType::Float32, yh.shape());
      for (int64_t i = 0; i < yh.numel(); ++i) yh_f.mutable_data<float>()[i] = static_cast<float>(yh.get_as_double(i));
      EXPECT_TRUE(tensors_near(yh_f, yf, 0, rel));
      EXPECT_TRUE(fast_matches_reference("Resize", 13, {xh, Tensor(), f32(s)}, attrs(mode, "half_pixel"), 1, 0, rel));
    }
  }
}

TEST(ResizeFast, ReplicateRowEveryWidthAndFactor) {
  // The row primitive alone: every tail length and factor (also past the vector width), one, two
  // (s = 2: the 2x upsample's own path) and three rows, adjacent (stride n) or with a gap.
  std::vector<float> src(40);
  for (size_t i = 0; i < src.size(); ++i) src[i] = static_cast<float>(i) + 0.5f;
  for (cpu::Isa isa : isas()) {
    const nn::ResizeRowKernels& k = nn::resize_row_kernels_for(isa);
    for (int64_t w = 1; w <= 40; ++w)
      for (int64_t s = 1; s <= 18; ++s)
        for (int64_t copies : {1, 2, 3})
          for (int64_t gap : {0, 5}) {
          const int64_t n = w * s, stride = n + gap;  // a gap after each row that must stay untouched
          std::vector<float> dst(static_cast<size_t>(copies * stride + 5), -1.f);  // 5 more after the last row
          k.replicate_row(src.data(), w, s, dst.data(), copies, stride);
          for (int64_t r = 0; r < copies; ++r)
            for (int64_t x = 0; x < stride; ++x)
              ASSERT_EQ(dst[r * stride + x], x < n ? src[x / s] : -1.f)
                  << cpu::isa_name(isa) << " w " << w << " s " << s << " row " << r << " x " << x;
          for (int64_t x = copies * stride; x < copies * stride + 5; ++x)
            ASSERT_EQ(dst[x], -1.f) << cpu::isa_name(isa) << " w " << w << " s " << s << " past the last row";
        }
  }
}

}  // namespace
}  // namespace test
}  // namespace onnxmini
