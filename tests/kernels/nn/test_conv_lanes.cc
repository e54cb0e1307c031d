// conv2d_lanes (kernels/nn/conv_lanes_avx512.cc, conv_lanes_avx2.cc), on every
// ISA level this machine has (portable: no lanes kernel, the Conv takes its
// other paths; AVX2; AVX-512; nn::set_lanes_isa): fast vs reference over
// output channel counts around the 16-lane blocks and the 64-channel groups,
// input channel counts, kernel sizes, strides, dilations, asymmetric pads,
// every output width remainder of the 6-column tile (and of the split of a
// short remainder with the last full tile) at strides 1, 2, 3, batch 2, 1 and 2 threads,
// bias or none, fused activations and input affine; the dispatch (profile
// variant and isa) with each ISA's rule, with the override, and under
// ONNXMINI_ISA=avx2 / portable.
// Most cases force the kernel on (LanesPolicy::Always) so that shapes the
// dispatch rule sends elsewhere still test it.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "kernels/nn/conv_lanes.h"
#include "runtime/graph_layout_nchwc.h"
#include "tests/common/conv_case.h"
#include "tests/common/fusion_test_util.h"
#include "tests/common/simd_isas.h"

namespace onnxmini {
namespace test {
namespace {

using LanesCase = ConvCase;

// A Conv with a constant filter (only those are repacked for conv2d_lanes).
inline ModelBuilder lanes_model(const LanesCase& c, uint32_t seed) { return conv_case_model(c, seed); }

std::string variant_of(const ModelBuilder& mb, const std::vector<std::pair<std::string, Tensor>>& feeds,
                       SessionOptions o) {
  return variant_isa_of(mb, feeds, std::move(o)).first;
}

// Runs conv2d_lanes as on one ISA level until the scope ends.
struct IsaScope {
  explicit IsaScope(cpu::Isa isa) { nn::set_lanes_isa(isa); }
  ~IsaScope() { nn::reset_lanes_isa(); }
};

// The NCHW kernels of a lone Conv: a heavy one (64 -> 64 3x3 and up) would otherwise run in
// the blocked layout (runtime/graph_layout_nchwc.cc's lone-Conv rule), which these tests do
// not look at.
struct NchwcOff {
  NchwcOff() { set_nchwc_layout_enabled_for_tests(false); }
  ~NchwcOff() { reset_nchwc_layout_override(); }
};

// Restores the default dispatch rule when a test ends.
struct PolicyScope {
  explicit PolicyScope(nn::LanesPolicy p) { nn::set_lanes_policy(p); }
  ~PolicyScope() { nn::set_lanes_policy(nn::LanesPolicy::Rule); }
};

// The Conv on every ISA level vs the reference kernel; where the level has a
// lanes kernel, the profile must show it ran (variant and isa).
void check_lanes(const LanesCase& c, uint32_t seed, int threads) {
  NchwcOff nchwc_off;
  const auto x = random_tensor(DType::Float32, c.x, seed + 2);
  ModelBuilder mb = lanes_model(c, seed);
  auto ref = mb.session(options_for(KernelMode::Reference, 1));
  const std::vector<Tensor> want = run_all(*ref, {{"X", x}});
  const int64_t k = c.w[1] * c.w[2] * c.w[3];
  for (cpu::Isa isa : isa_levels()) {
    IsaScope scope(isa);
    auto fast = mb.session(options_for(KernelMode::Fast, threads));
    EXPECT_TRUE(tensors_near(run_all(*fast, {{"X", x}}).at(0), want.at(0), reduction_atol(DType::Float32, k), 1e-4))
        << describe(c) << " threads=" << threads << " isa=" << cpu::isa_name(isa);
    if (nn::lanes_isa()) {
      const auto vi = variant_isa_of(mb, {{"X", x}}, options_for(KernelMode::Fast, threads));
      EXPECT_EQ(vi.first, "conv2d_lanes") << describe(c);
      EXPECT_EQ(vi.second, cpu::isa_name(isa)) << describe(c);
    }
  }
}

TEST(ConvLanes, ChannelsKernelsStridesDilationsPads) {
  PolicyScope force(nn::LanesPolicy::Always);
  const int64_t couts[] = {1, 15, 16, 17, 48, 64, 80}, cins[] = {1, 3, 8, 64};
  const int64_t ks[] = {1, 3, 5, 7}, strides[] = {1, 2, 3};
  uint32_t seed = 1000;
  int i = 0;
  for (int64_t m : couts)
    for (int64_t c : cins) {
      ++i;
      const int64_t k = ks[i % 4], s = strides[i % 3], d = 1 + (i / 4) % 2;
      LanesCase lc;
      lc.x = {2, c, 6 + i % 5, 9 + (i * 7) % 23};
      lc.w = {m, c, k, k};
      lc.strides = {s, s == 3 ? 2 : s};
      lc.dilations = {d, k == 7 ? 1 : d};
      lc.pads = {k / 2, k / 2 + i % 2, k / 2 + (i + 1) % 2, i % 3 == 0 ? 0 : k / 2};  // asymmetric
      if (k == 1 && i % 2 == 0) lc.pads = {0, 0, 0, 0};  // 1x1 read in place, no copy
      if ((lc.x[2] + lc.pads[0] + lc.pads[2] - (k - 1) * lc.dilations[0] - 1) < 0) lc.x[2] = (k - 1) * d + 1;
      if ((lc.x[3] + lc.pads[1] + lc.pads[3] - (k - 1) * lc.dilations[1] - 1) < 0) lc.x[3] = (k - 1) * d + 1;
      lc.bias = i % 3 != 1;
      check_lanes(lc, seed += 10, 1 + i % 2);
    }
}

TEST(ConvLanes, EveryOutputWidth) {
  PolicyScope force(nn::LanesPolicy::Always);
  uint32_t seed = 2000;
  for (int64_t ow = 1; ow <= 40; ++ow) {
    LanesCase a;  // 3x3 stride 1 pad 1: OW = W; 17 channels = a full and a 1-lane block
    a.x = {1, 3, 3, ow};
    a.w = {17, 3, 3, 3};
    a.pads = {1, 1, 1, 1};
    check_lanes(a, seed += 10, ow % 2 + 1);
    LanesCase b;  // stride 2, no padding, 1x1: in place with column stride 2; 80 = 64 + 16 channels
    b.x = {1, 8, 3, 2 * ow - 1};
    b.w = {80, 8, 1, 1};
    b.strides = {2, 2};
    b.bias = false;
    check_lanes(b, seed += 10, ow % 2 + 1);
    LanesCase c;  // 3x3 stride 3 pad 1 (padded copy, 3 parity planes): OW = ow
    c.x = {1, 4, 5, 3 * ow - 2};
    c.w = {20, 4, 3, 3};
    c.strides = {3, 3};
    c.pads = {1, 1, 1, 1};
    check_lanes(c, seed += 10, (ow + 1) % 2 + 1);
  }
}

// Restores the default (X read in place) when a test ends.
struct PadCopyScope {
  explicit PadCopyScope(bool copy) { nn::set_lanes_pad_copy(copy); }
  ~PadCopyScope() { nn::set_lanes_pad_copy(false); }
};

// Column stride 2 with padding or a fused input affine takes the AVX-512 copy
// into the two column-parity planes (16 + 16 columns per step, masked at the
// row end): every plane width Wq = 1..33 (around 16 and 32) with left pads 0..2,
// right pads 0..2, row strides 1, 2, 3, 1 and 2 threads. Forced here (without
// an affine the kernel reads X in place: PaddedInPlaceEdges).
TEST(ConvLanes, StrideTwoPaddedCopyEveryWidth) {
  PolicyScope force(nn::LanesPolicy::Always);
  PadCopyScope copy(true);
  uint32_t seed = 2500;
  for (int64_t w = 1; w <= 64; ++w) {
    LanesCase c;
    const int64_t pl = w % 3, pr = (w / 3) % 3, sh = 1 + w % 3;
    c.x = {1, 5, 4 + w % 4, w};
    c.w = {20, 5, 3, 3};
    c.strides = {sh, 2};
    c.pads = {1, pl, w % 2, pr};
    if (w + pl + pr < 3) c.x[3] = 3;
    c.bias = w % 2 == 0;
    check_lanes(c, seed += 10, 1 + w % 2);
  }
}

// Padded, no affine: X read in place where every tap is inside, per-task
// padded copies for the edge columns (at least one full tile wide) and the
// rows touching the top / bottom padding. Output widths 1..30 (edge segments
// alone, edges with 1..6+ interior columns: every tile remainder inside and at
// the edges), heights 1..5, pads 0..2 per side (asymmetric), kernels 1..5,
// strides 1..3, dilation 1..2, batch 2, 1 and 2 threads.
TEST(ConvLanes, PaddedInPlaceEdges) {
  PolicyScope force(nn::LanesPolicy::Always);
  uint32_t seed = 2800;
  for (int64_t i = 0; i < 60; ++i) {
    LanesCase c;
    const int64_t k = 1 + 2 * (i % 3) - (i % 7 == 0 ? 1 : 0);  // 1, 3, 5 and sometimes 0 -> 1
    const int64_t kk = std::max<int64_t>(1, k), s = 1 + i % 3, d = 1 + (i / 3) % 2;
    const int64_t ow = 1 + i % 30, oh = 1 + i % 5;
    c.pads = {i % 3, (i / 2) % 3, (i / 5) % 3, (i / 7) % 3};
    if (c.pads[0] + c.pads[1] + c.pads[2] + c.pads[3] == 0) c.pads[1] = 1;
    const int64_t span = (kk - 1) * d + 1;
    // Input size giving ow x oh outputs: (in + pads - span) / s + 1 = out.
    c.x = {2, 3 + i % 4, std::max<int64_t>(1, (oh - 1) * s + span - c.pads[0] - c.pads[2]),
           std::max<int64_t>(1, (ow - 1) * s + span - c.pads[1] - c.pads[3])};
    c.w = {16 + (i % 4) * 8, c.x[1], kk, kk};
    c.strides = {s, 1 + (i + 1) % 3};
    c.dilations = {d, d};
    if ((c.x[2] + c.pads[0] + c.pads[2] - span) < 0 || (c.x[3] + c.pads[1] + c.pads[3] - span) < 0) continue;
    c.bias = i % 2 == 0;
    check_lanes(c, seed += 10, 1 + i % 2);
  }
}

TEST(ConvLanes, SmallOnnxShapesBatchAndThreads) {
  NchwcOff nchwc_off;
  PolicyScope force(nn::LanesPolicy::Always);
  const LanesCase cases[] = {
      {{2, 64, 9, 30}, {64, 64, 3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}},  // n9-like
      {{2, 64, 9, 30}, {64, 64, 3, 3}, {2, 2}, {1, 1}, {1, 1, 1, 1}},  // n11-like
      {{2, 3, 11, 37}, {64, 3, 3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}},   // first layer
      {{2, 64, 10, 30}, {64, 64, 1, 1}, {2, 2}, {1, 1}, {0, 0, 0, 0}},  // 1x1 stride 2
      {{2, 2, 12, 20}, {1, 2, 7, 7}, {1, 1}, {1, 1}, {3, 3, 3, 3}},     // 7x7, one output channel
      {{1, 16, 8, 25}, {130, 16, 3, 3}, {1, 2}, {2, 1}, {2, 0, 1, 2}},  // 3 groups of 64, last 2 channels
  };
  uint32_t seed = 3000;
  for (bool copy : {false, true}) {
    PadCopyScope scope(copy);
    for (const auto& c : cases)
      for (int threads : {1, 2}) check_lanes(c, seed += 10, threads);
  }
}

// Regression: with more than 64 output channels, a group's last block once
// stored up to M - m0 channels instead of 16, overwriting the next group's rows
// with garbage. One thread hides it (the next group rewrites them later), so
// this runs 2 threads, repeatedly, with the later group often finishing first.
TEST(ConvLanes, GroupsDoNotWriteIntoEachOther) {
  PolicyScope force(nn::LanesPolicy::Always);
  const LanesCase cases[] = {{{1, 16, 8, 25}, {130, 16, 3, 3}, {1, 2}, {2, 1}, {2, 0, 1, 2}},
                             {{1, 8, 6, 20}, {80, 8, 3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}}};
  for (const auto& c : cases)
    for (int i = 0; i < 20; ++i) check_lanes(c, 3060, 2);
}

// Activations and BatchNormalization fused into the Conv at level 1 (the
// test_graph_fusion.cc patterns), with the lanes kernel forced on, on a shape
// with a partial block (20 channels) and an odd width.
ModelBuilder fused_model(const std::string& act, int bn) {  // bn: 0 none, 1 before, 2 after
  return fused_conv_model(FusedConvSpec{{2, 6, 7, 23}, 20, 1, act, bn, {}});
}

TEST(ConvLanes, FusedActivationsAndBatchNorm) {
  PolicyScope force(nn::LanesPolicy::Always);
  const auto x = random_tensor(DType::Float32, {2, 6, 7, 23}, 48);
  for (cpu::Isa isa : isa_levels()) {
    IsaScope scope(isa);
    for (int bn : {0, 1, 2})
      for (const char* act : {"", "Relu", "Sigmoid", "Clip", "PRelu"})
        for (int threads : {1, 2}) {
          ModelBuilder mb = fused_model(act, bn);
          check_fusion(mb, {{"X", x}}, 6 * 9 * 4, threads);  // BN scales inputs up to ~3x: k covers it
          if (nn::lanes_isa()) {
            const auto vi = variant_isa_of(mb, {{"X", x}}, opts(ORT_ENABLE_ALL, KernelMode::Fast, threads));
            EXPECT_EQ(vi.first, "conv2d_lanes") << act << " bn=" << bn << " " << cpu::isa_name(isa);
            EXPECT_EQ(vi.second, cpu::isa_name(isa));
          }
        }
  }
}

// The dispatch without the override on the process's ISA (cpu::active_isa):
// conv2d_lanes for the small.onnx 3x3 layer on AVX-512 and AVX2 (both rules
// take 64 channels, K = 576), reported with that ISA, never for a filter that
// is a graph input (not repacked) or under LanesPolicy::Never; the result
// matches the reference either way. Re-run under ONNXMINI_ISA=avx2 and
// portable by DispatchUnderCappedIsa.
TEST(ConvLanes, DispatchFollowsIsaAndPolicy) {
  NchwcOff nchwc_off;
  LanesCase c{{1, 64, 10, 56}, {64, 64, 3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}};
  const auto x = random_tensor(DType::Float32, c.x, 7);
  ModelBuilder mb = lanes_model(c, 5);
  const auto vi = variant_isa_of(mb, {{"X", x}}, options_for(KernelMode::Fast, 1));
  const bool simd = cpu::active_isa() != cpu::Isa::Portable;
  EXPECT_EQ(vi.first == "conv2d_lanes", simd) << vi.first << " on " << cpu::active_isa_name();
  if (simd) {
    EXPECT_EQ(vi.second, cpu::active_isa_name());
  }
  auto r = run_fast_and_reference(mb, {{"X", x}}, 2);
  EXPECT_TRUE(tensors_near(r.first.at(0), r.second.at(0), reduction_atol(DType::Float32, 576), 1e-4));
  {
    PolicyScope never(nn::LanesPolicy::Never);
    EXPECT_EQ(variant_of(mb, {{"X", x}}, options_for(KernelMode::Fast, 1)), "conv2d_implicit_gemm");
  }
  ModelBuilder dyn(13);  // filter as a graph input
  dyn.input("X", DType::Float32, c.x);
  dyn.input("W", DType::Float32, c.w);
  dyn.node("Conv", {"X", "W"}, {"Y"}).name("c").attr("pads", c.pads);
  dyn.output("Y");
  EXPECT_EQ(variant_of(dyn, {{"X", x}, {"W", random_tensor(DType::Float32, c.w, 8)}}, options_for(KernelMode::Fast, 1)),
            "conv2d_implicit_gemm");
}

// Each ISA's measured rule (kernels/nn/conv_lanes.cc): shapes where the AVX2
// and AVX-512 rules differ, the profile's variant / isa, and the session's
// explain() (Kernel::describe) agreeing with what ran.
TEST(ConvLanes, DispatchRulePerIsa) {
  NchwcOff nchwc_off;
  struct RuleCase {
    LanesCase c;
    bool avx2, avx512;  // lanes expected
  };
  const RuleCase cases[] = {
      // 16 channels, 3x3 stride 1 (K = 144): neither (both lost at 16 channels and K < 288).
      {{{1, 16, 12, 40}, {16, 16, 3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}}, false, false},
      // 8 -> 16 channels stride 2 (K = 72): both ISAs take every strided layer (with
      // K <= 32, conv2d_smallk takes it first: test_conv_smallk.cc).
      {{{1, 8, 24, 40}, {16, 8, 3, 3}, {2, 2}, {1, 1}, {1, 1, 1, 1}}, true, true},
      // 24 channels stride 1 (K = 216): neither (32 channels and K >= 288 needed at stride 1).
      {{{1, 24, 12, 40}, {24, 24, 3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}}, false, false},
      // 32 -> 64 channels stride 1 (K = 288): both.
      {{{1, 32, 12, 40}, {64, 32, 3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}}, true, true},
      // 64 channels 3x3 stride 1 with 112-column output rows: a tie on AVX2, kept on the GEMM.
      {{{1, 64, 4, 112}, {64, 64, 3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}}, false, true},
      // 64 channels 3x3 stride 1 and 1x1 stride 2: both.
      {{{1, 64, 10, 30}, {64, 64, 3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}}, true, true},
      {{{1, 64, 10, 30}, {64, 64, 1, 1}, {2, 2}, {1, 1}, {0, 0, 0, 0}}, true, true},
      // 1x1 stride 1 unpadded (plain GEMM on X) and 8 output channels: neither.
      {{{1, 64, 10, 30}, {64, 64, 1, 1}, {1, 1}, {1, 1}, {0, 0, 0, 0}}, false, false},
      {{{1, 64, 10, 30}, {8, 64, 3, 3}, {2, 2}, {1, 1}, {1, 1, 1, 1}}, false, false},
  };
  uint32_t seed = 4000;
  for (const auto& rc : cases) {
    const auto x = random_tensor(DType::Float32, rc.c.x, seed + 2);
    ModelBuilder mb = lanes_model(rc.c, seed += 10);
    auto ref = mb.session(options_for(KernelMode::Reference, 1));
    const std::vector<Tensor> want = run_all(*ref, {{"X", x}});
    const int64_t k = rc.c.w[1] * rc.c.w[2] * rc.c.w[3];
    for (cpu::Isa isa : isa_levels()) {
      IsaScope scope(isa);
      const bool lanes = isa == cpu::Isa::Avx512 ? rc.avx512 : isa == cpu::Isa::Avx2 && rc.avx2;
      const auto vi = variant_isa_of(mb, {{"X", x}}, options_for(KernelMode::Fast, 1));
      EXPECT_EQ(vi.first == "conv2d_lanes", lanes) << describe(rc.c) << " on " << cpu::isa_name(isa) << ": " << vi.first;
      if (lanes) {
        EXPECT_EQ(vi.second, cpu::isa_name(isa)) << describe(rc.c);
      }
      auto fast = mb.session(options_for(KernelMode::Fast, 1));
      const auto plan = fast->explain();
      ASSERT_FALSE(plan.empty());
      EXPECT_EQ(plan[0].variant, vi.first) << describe(rc.c) << " on " << cpu::isa_name(isa);
      EXPECT_EQ(plan[0].isa, vi.second) << describe(rc.c) << " on " << cpu::isa_name(isa);
      EXPECT_TRUE(tensors_near(run_all(*fast, {{"X", x}}).at(0), want.at(0), reduction_atol(DType::Float32, k), 1e-4))
          << describe(rc.c) << " on " << cpu::isa_name(isa);
    }
  }
}

TEST(ConvLanes, DispatchUnderCappedIsa) {
  NchwcOff nchwc_off;
  if (std::getenv("ONNXMINI_ISA")) GTEST_SKIP() << "already capped";
  std::error_code ec;
  const std::string self = std::filesystem::read_symlink("/proc/self/exe", ec).string();
  if (ec) GTEST_SKIP() << "no /proc/self/exe";
  for (const char* isa : {"avx2", "portable"}) {
    const std::string cmd = std::string("ONNXMINI_ISA=") + isa + " '" + self +
                            "' --gtest_filter=ConvLanes.DispatchFollowsIsaAndPolicy >/dev/null 2>&1";
    EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
  }
}

}  // namespace
}  // namespace test
}  // namespace onnxmini
