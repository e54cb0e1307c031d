// conv_depthwise_blocks (dw_block_channels in kernels/nn/conv_depthwise_impl.h):
// the channels-in-lanes depthwise kernel for small planes, forced on every ISA the
// machine has (portable 8 lanes, AVX2 8, AVX-512 16) against the reference Conv:
// channel counts that are whole blocks and blocks plus a remainder (which the plane
// kernel takes), kernel sizes 3 / 5 / 7 and 3x5, strides 1..3, dilation 2,
// asymmetric pads, batch 2, 1 and 2 threads, with and without bias; the fused
// activations (Relu / Clip / PRelu in registers, HardSwish / Sigmoid after); and
// the measured rule's choice per ISA as the profile and explain() name it.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/cpu_features.h"
#include "kernels/nn/conv_depthwise.h"
#include "tests/common/fusion_test_util.h"

namespace onnxmini {
namespace test {
namespace {

struct IsaScope {
  explicit IsaScope(cpu::Isa isa) { nn::set_depthwise_isa_for_tests(isa); }
  ~IsaScope() { nn::set_depthwise_isa_for_tests(cpu::active_isa()); }
};
struct BlocksScope {
  explicit BlocksScope(nn::DepthwiseBlocks b) { nn::set_depthwise_blocks(b); }
  ~BlocksScope() { nn::set_depthwise_blocks(nn::DepthwiseBlocks::Rule); }
};

std::vector<cpu::Isa> isas() {
  std::vector<cpu::Isa> v{cpu::Isa::Portable};
  if (cpu::hw_has_avx2_fma()) v.push_back(cpu::Isa::Avx2);
  if (cpu::hw_has_avx512()) v.push_back(cpu::Isa::Avx512);
  return v;
}

Tensor scalar_tensor(float v) {
  Tensor t(DType::Float32, Shape{});
  t.mutable_data<float>()[0] = v;
  return t;
}

struct Case {
  Shape x;
  int64_t kh, kw;
  std::vector<int64_t> strides, dilations, pads;
  bool bias;
  std::string act;  // "" or an activation node after the Conv (fused by the graph pass)
};

ModelBuilder model(const Case& c, uint32_t seed) {
  const int64_t C = c.x[1];
  ModelBuilder mb(14);
  mb.input("X", DType::Float32, c.x);
  mb.initializer("W", random_tensor(DType::Float32, {C, 1, c.kh, c.kw}, seed));
  std::vector<std::string> in{"X", "W"};
  if (c.bias) {
    mb.initializer("B", random_tensor(DType::Float32, {C}, seed + 1));
    in.push_back("B");
  }
  const std::string out = c.act.empty() ? "Y" : "T";
  mb.node("Conv", in, {out}).name("dw").attr("group", C).attr("strides", c.strides).attr("dilations", c.dilations)
      .attr("pads", c.pads);
  if (c.act == "Clip") {
    mb.initializer("lo", scalar_tensor(-0.2f));
    mb.initializer("hi", scalar_tensor(0.3f));
    mb.node("Clip", {"T", "lo", "hi"}, {"Y"});
  } else if (c.act == "PRelu") {
    mb.initializer("S", random_tensor(DType::Float32, {C, 1, 1}, seed + 2));
    mb.node("PRelu", {"T", "S"}, {"Y"});
  } else if (!c.act.empty()) {
    mb.node(c.act, {"T"}, {"Y"});
  }
  mb.output("Y");
  return mb;
}

// The kernel sums the bias and K products in float32 (|x|, |w|, |b| <= 1): each of
// the K + 1 additions rounds by at most 2^-24 of a partial sum of magnitude <= K + 1.
double atol_for(int64_t k) { return (static_cast<double>(k + 1) * (k + 1) + 1) * 0x1p-24 * 2; }

void check(const Case& c, uint32_t seed, int threads, cpu::Isa isa) {
  const Tensor x = random_tensor(DType::Float32, c.x, seed + 7);
  const ModelBuilder mb = model(c, seed);
  auto r = run_fast_and_reference(mb, {{"X", x}}, threads);
  EXPECT_TRUE(tensors_near(r.first.at(0), r.second.at(0), atol_for(c.kh * c.kw), 1e-5))
      << shape_to_string(c.x) << " k " << c.kh << "x" << c.kw << " s " << c.strides[0] << "," << c.strides[1]
      << " d " << c.dilations[0] << " pads " << c.pads[0] << c.pads[1] << c.pads[2] << c.pads[3] << " act '"
      << c.act << "' threads " << threads << " on " << cpu::isa_name(isa);
}

TEST(ConvDepthwiseBlocks, ShapesOnEveryIsaMatchReference) {
  BlocksScope force(nn::DepthwiseBlocks::Always);
  uint32_t seed = 700;
  for (cpu::Isa isa : isas()) {
    IsaScope scope(isa);
    int i = 0;
    for (int64_t C : {8, 16, 19, 35})  // whole blocks of 8 / 16, and a remainder
      for (int64_t k : {3, 5, 7})
        for (int64_t s : {1, 2, 3}) {
          const int64_t p = k / 2;
          Case c{{1 + i % 2, C, 5 + i % 9, 4 + (i * 5) % 11}, k, k, {s, s}, {1, 1}, {p, p, p, p}, i % 3 != 2, ""};
          check(c, seed += 10, 1 + i % 2, isa);
          ++i;
        }
    Case a{{1, 17, 9, 12}, 3, 5, {1, 2}, {2, 1}, {2, 0, 1, 3}, true, ""};  // non-square, dilation, asymmetric pads
    check(a, seed += 10, 2, isa);
    Case b{{2, 16, 3, 3}, 5, 5, {1, 1}, {1, 1}, {2, 2, 2, 2}, true, ""};  // kernel wider than the plane
    check(b, seed += 10, 1, isa);
    Case u{{1, 16, 6, 6}, 3, 3, {1, 1}, {1, 1}, {0, 0, 0, 0}, false, ""};  // no padding
    check(u, seed += 10, 1, isa);
    // Planes where most taps read padding (steps with short tap ranges), fewer
    // than 4 output pixels, and steps spanning output rows with partial blocks.
    Case two_rows{{1, 21, 2, 30}, 5, 5, {1, 1}, {1, 1}, {2, 2, 2, 2}, true, ""};
    check(two_rows, seed += 10, 2, isa);
    Case one_px{{2, 17, 1, 1}, 5, 5, {1, 1}, {1, 1}, {2, 2, 2, 2}, true, ""};
    check(one_px, seed += 10, 1, isa);
    Case three_px{{1, 33, 1, 3}, 3, 5, {1, 1}, {1, 1}, {1, 2, 1, 2}, false, ""};
    check(three_px, seed += 10, 2, isa);
    Case far_pad{{1, 18, 3, 4}, 3, 3, {2, 2}, {1, 1}, {3, 3, 3, 3}, true, ""};  // whole steps in the padding
    check(far_pad, seed += 10, 1, isa);
    Case big{{2, 35, 20, 20}, 5, 5, {2, 2}, {1, 1}, {2, 2, 2, 2}, true, ""};  // more than 16 pixels a row
    check(big, seed += 10, 2, isa);
    // Every mix of the kernel's steps (8 pixels, one of 4, single pixels): output
    // planes of 1, 2, 5, 8, 12, 13, 15, 49 pixels at stride 1, and stride 2 planes
    // whose widths are not a multiple of the step (3x5, 2x2, 4x7 outputs).
    for (int64_t w : {1, 2, 5, 8, 12, 13, 15}) {
      Case row{{1, 19, 1, w}, 5, 5, {1, 1}, {1, 1}, {2, 2, 2, 2}, true, ""};
      check(row, seed += 10, 1, isa);
    }
    Case seven{{1, 24, 7, 7}, 5, 5, {1, 1}, {1, 1}, {2, 2, 2, 2}, true, ""};  // 6 steps of 8 + 1
    check(seven, seed += 10, 1, isa);
    for (int64_t h : {5, 3, 7}) {
      Case s2{{1, 21, h, 2 * h - 1 - (h == 3 ? 2 : 0)}, 5, 5, {2, 2}, {1, 1}, {2, 2, 2, 2}, true, ""};
      check(s2, seed += 10, 2, isa);
    }
  }
}

// The row path (dw_block_rows: stride 1 or 2 and dilation 1 along W, 3- or 5-wide
// kernels, output rows of >= 24 pixels; AVX-512 dw_rows_strip, AVX2 dw_rows_strip_stream),
// and the flat steps on the same shapes (set_depthwise_rows(false)): strips of 12 / 8 /
// 4 pixels and the row's last 1-3 pixels by a 4-pixel strip that overlaps the one
// before (widths 24, 25, 26, 27, 29, 37, 76: remainders 0-3 after the 12- and 8-pixel strips),
// KH != KW, stride 2 and dilation 2 down the rows, asymmetric and zero pads, partial
// channel blocks, fused activations, 1 and 2 threads.
TEST(ConvDepthwiseBlocks, RowPathMatchesReference) {
  if (!cpu::hw_has_avx2_fma()) GTEST_SKIP() << "the row path is AVX2 / AVX-512 only";
  BlocksScope force(nn::DepthwiseBlocks::Always);
  uint32_t seed = 1300;
  for (cpu::Isa isa : isas()) {
  if (isa == cpu::Isa::Portable) continue;
  IsaScope scope(isa);
  for (bool rows : {true, false}) {
    nn::set_depthwise_rows(rows);
    int i = 0;
    for (int64_t w : {24, 25, 26, 27, 29, 37, 76})
      for (int64_t k : {3, 5}) {
        const int64_t p = k / 2;
        Case c{{1 + i % 2, i % 2 ? 16 : 19, 3 + i % 5, w}, k, k, {1, 1}, {1, 1}, {p, p, p, p}, i % 3 != 2, ""};
        check(c, seed += 10, 1 + i % 2, isa);
        ++i;
      }
    // Stride 2 along W (even then odd input columns per tap row): output widths 24..40
    // (12-, 4- and 1-pixel strips), odd and even input widths, pads 0..2, stride_h 1 and 2.
    int j = 0;
    for (int64_t w : {47, 48, 49, 55, 61, 80})
      for (int64_t k : {3, 5}) {
        const int64_t p = (k / 2 + j) % 3;
        Case c{{1 + j % 2, j % 2 ? 16 : 21, 4 + j % 5, w}, k, k, {1 + j % 2, 2}, {1, 1}, {p, p, k / 2, k / 2}, j % 3 != 1, ""};
        check(c, seed += 10, 1 + j % 2, isa);
        ++j;
      }
    Case tall{{1, 20, 11, 30}, 5, 3, {2, 1}, {2, 1}, {3, 1, 2, 1}, true, ""};  // KH 5, KW 3, stride / dilation in H
    check(tall, seed += 10, 2, isa);
    Case flat{{1, 33, 4, 40}, 3, 5, {1, 1}, {1, 1}, {0, 0, 0, 0}, false, ""};  // no padding
    check(flat, seed += 10, 1, isa);
    Case skew{{1, 17, 6, 31}, 5, 5, {1, 1}, {1, 1}, {1, 0, 3, 4}, true, ""};  // asymmetric pads
    check(skew, seed += 10, 1, isa);
    for (const char* act : {"Relu", "Clip", "PRelu", "HardSwish", "Sigmoid"}) {
      Case a{{1, 21, 5, 26}, 5, 5, {1, 1}, {1, 1}, {2, 2, 2, 2}, true, act};
      check(a, seed += 10, 2, isa);
    }
  }
  }
  nn::set_depthwise_rows(true);
}

TEST(ConvDepthwiseBlocks, FusedActivationsOnEveryIsa) {
  BlocksScope force(nn::DepthwiseBlocks::Always);
  uint32_t seed = 900;
  for (cpu::Isa isa : isas()) {
    IsaScope scope(isa);
    for (const char* act : {"Relu", "Clip", "PRelu", "HardSigmoid", "HardSwish", "Sigmoid"}) {
      Case c{{2, 20, 7, 7}, 5, 5, {1, 1}, {1, 1}, {2, 2, 2, 2}, true, act};
      check(c, seed += 10, 2, isa);
      Case d{{1, 37, 2, 19}, 5, 5, {1, 1}, {1, 1}, {2, 2, 2, 2}, true, act};  // partial block, padded rows
      check(d, seed += 10, 1, isa);
    }
  }
}

// The measured rule (kernels/nn/conv_depthwise.cc) per ISA: 7x7 outputs take the
// block kernel everywhere; 5x5 layers on AVX2 and AVX-512 unless a large plane has a
// single block of channels (the plane kernel splits over threads); 3x3 on AVX-512 when
// the output row is not whole vectors and the plane at most 512 outputs; 14x14 3x3 on
// portable. The profile and
// explain() agree.
TEST(ConvDepthwiseBlocks, RulePerIsaNamesTheVariant) {
  struct RuleCase {
    Shape x;
    int64_t k;
    bool portable, avx2, avx512;
  } cases[] = {
      {{1, 32, 7, 7}, 5, true, true, true},
      {{1, 32, 56, 56}, 3, false, false, false},   // 3136 outputs: the plane kernel
      {{1, 32, 20, 20}, 3, false, false, true},    // 20 = 1.25 AVX-512 vectors, 400 outputs
      {{1, 32, 12, 160}, 3, false, false, false},  // 160 = 10 vectors: the plane kernel
      {{1, 32, 100, 100}, 3, false, false, false},  // 10000 outputs per plane: the plane kernel
      {{1, 32, 20, 20}, 5, false, true, true},
      {{1, 20, 2, 96}, 5, true, true, true},     // 5x5 on a 2-row plane (partial last block on AVX-512)
      {{1, 16, 6, 60}, 5, false, true, false},   // 5x5, 360 outputs: one AVX-512 block, two AVX2 ones
      {{1, 32, 12, 80}, 5, false, true, true},   // 5x5, 960 outputs
      {{1, 32, 14, 14}, 3, true, false, true},
      {{1, 7, 7, 7}, 3, false, false, false},  // fewer channels than a vector
  };
  uint32_t seed = 1100;
  for (const auto& rc : cases)
    for (cpu::Isa isa : isas()) {
      IsaScope scope(isa);
      const bool want = isa == cpu::Isa::Avx512 ? rc.avx512 : isa == cpu::Isa::Avx2 ? rc.avx2 : rc.portable;
      const int64_t p = rc.k / 2;
      const ModelBuilder mb = model(Case{rc.x, rc.k, rc.k, {1, 1}, {1, 1}, {p, p, p, p}, true, ""}, seed += 10);
      auto s = mb.session(options_for(KernelMode::Fast, 1));
      const auto plan = s->explain();
      ASSERT_FALSE(plan.empty());
      EXPECT_EQ(plan[0].variant, want ? "conv_depthwise_blocks" : "conv_depthwise_simd")
          << shape_to_string(rc.x) << " k" << rc.k << " on " << cpu::isa_name(isa);
      EXPECT_EQ(plan[0].isa, cpu::isa_name(isa));
      check(Case{rc.x, rc.k, rc.k, {1, 1}, {1, 1}, {p, p, p, p}, true, ""}, seed + 5, 1, isa);
    }
}

}  // namespace
}  // namespace test
}  // namespace onnxmini
