// conv2d_smallk (kernels/nn/conv_smallk*.{h,cc}), on every ISA level this machine
// has (portable: no kernel, the Conv takes its other paths; AVX2; AVX-512;
// nn::set_smallk_isa): fast vs reference over every output width 1..40 (the
// 16- / 8-column vectors and the 2-vector tiles, masked last vectors), output
// channel counts around the 12- (AVX-512) and 6-channel (AVX2) tiles, 1..32
// taps per output, strides 1 and 2 (plus stride_h 3), dilations, asymmetric
// pads, batch 2, 1 and 2 threads; fused activations, a fused input affine
// (BatchNormalization in front) and a fused residual; the dispatch rule and the
// override, with the profile and explain() agreeing.
#include <gtest/gtest.h>

#include <sstream>

#include "kernels/nn/conv_smallk.h"
#include "kernels/nn/conv_variant.h"
#include "runtime/graph_layout_nchwc.h"
#include "tests/common/conv_case.h"
#include "tests/common/fusion_test_util.h"
#include "tests/common/simd_isas.h"

namespace onnxmini {
namespace test {
namespace {

using SmallKCase = ConvCase;

inline ModelBuilder smallk_model(const SmallKCase& c, uint32_t seed) { return conv_case_model(c, seed); }

struct IsaScope {
  explicit IsaScope(cpu::Isa isa) { nn::set_smallk_isa(isa); }
  ~IsaScope() { nn::reset_smallk_isa(); }
};
struct PolicyScope {
  explicit PolicyScope(nn::SmallKPolicy p) { nn::set_smallk_policy(p); }
  ~PolicyScope() { nn::set_smallk_policy(nn::SmallKPolicy::Rule); }
};
// Lone Convs stay NCHW (the blocked layout's lone-Conv rule is not under test here).
struct NchwcOff {
  NchwcOff() { set_nchwc_layout_enabled_for_tests(false); }
  ~NchwcOff() { reset_nchwc_layout_override(); }
};

// Fast on every ISA level vs the reference; where the level has the kernel and the
// case fits it, the profile must show conv2d_smallk with that isa.
void check_smallk(const SmallKCase& c, uint32_t seed, int threads) {
  NchwcOff nchwc_off;
  const auto x = random_tensor(DType::Float32, c.x, seed + 2);
  ModelBuilder mb = smallk_model(c, seed);
  auto ref = mb.session(options_for(KernelMode::Reference, 1));
  const std::vector<Tensor> want = run_all(*ref, {{"X", x}});
  const int64_t k = c.w[1] * c.w[2] * c.w[3];
  for (cpu::Isa isa : isa_levels()) {
    IsaScope scope(isa);
    auto fast = mb.session(options_for(KernelMode::Fast, threads));
    EXPECT_TRUE(tensors_near(run_all(*fast, {{"X", x}}).at(0), want.at(0), reduction_atol(DType::Float32, k), 1e-4))
        << describe(c) << " threads=" << threads << " isa=" << cpu::isa_name(isa);
    if (isa != cpu::Isa::Portable) {
      const auto vi = variant_isa_of(mb, {{"X", x}}, options_for(KernelMode::Fast, threads));
      EXPECT_EQ(vi.first, "conv2d_smallk") << describe(c) << " isa=" << cpu::isa_name(isa);
      EXPECT_EQ(vi.second, cpu::isa_name(isa)) << describe(c);
    }
  }
}

TEST(ConvSmallK, EveryOutputWidthStridesOneAndTwo) {
  PolicyScope force(nn::SmallKPolicy::Always);
  uint32_t seed = 100;
  for (int64_t ow = 1; ow <= 40; ++ow) {
    SmallKCase a;  // 1 -> 24 channels 3x3 stride 2 pad 1 (ddddocr's first layer): OW = ow
    a.x = {1, 1, 7, 2 * ow};
    a.w = {24, 1, 3, 3};
    a.strides = {2, 2};
    a.pads = {1, 1, 1, 1};
    check_smallk(a, seed += 10, ow % 2 + 1);
    SmallKCase b;  // 3 -> 13 channels 3x3 stride 1 pad 1 (K = 27): a full tile and 1 channel
    b.x = {2, 3, 4, ow};
    b.w = {13, 3, 3, 3};
    b.pads = {1, 1, 1, 1};
    b.bias = ow % 3 != 0;
    check_smallk(b, seed += 10, (ow + 1) % 2 + 1);
    SmallKCase c;  // 2 -> 7 channels 1x5 stride (3, 2), no padding (K = 10)
    c.x = {1, 2, 7, 2 * ow + 3};
    c.w = {7, 2, 1, 5};
    c.strides = {3, 2};
    check_smallk(c, seed += 10, 1);
  }
}

TEST(ConvSmallK, ChannelsTapsDilationsPads) {
  PolicyScope force(nn::SmallKPolicy::Always);
  const int64_t couts[] = {1, 5, 6, 7, 12, 13, 24, 25, 40};
  struct Taps { int64_t c, kh, kw; };
  const Taps taps[] = {{1, 1, 1}, {1, 3, 3}, {3, 3, 3}, {2, 4, 4}, {1, 5, 5}, {4, 2, 3}, {1, 7, 3}};
  uint32_t seed = 2000;
  int i = 0;
  for (int64_t m : couts)
    for (const Taps& t : taps) {
      ++i;
      SmallKCase c;
      const int64_t s = 1 + i % 2, d = 1 + (i / 3) % 2;
      c.w = {m, t.c, t.kh, t.kw};
      c.strides = {1 + i % 3, s};
      c.dilations = {d, 1 + (i / 2) % 2};
      c.pads = {t.kh / 2, i % 3, (t.kh - 1) / 2, t.kw / 2 + i % 2};  // asymmetric
      const int64_t span_h = (t.kh - 1) * c.dilations[0] + 1, span_w = (t.kw - 1) * c.dilations[1] + 1;
      c.x = {1 + i % 2, t.c, std::max<int64_t>(span_h, 5 + i % 4), std::max<int64_t>(span_w, 9 + (i * 7) % 41)};
      c.bias = i % 4 != 1;
      check_smallk(c, seed += 10, 1 + i % 2);
    }
}

// Activations, a BatchNormalization in front (fused as the input affine: the
// padding stays 0) or behind (folded into W and B), and Conv + Add (the fused
// residual), on a 1 -> 20 channel 3x3 stride-(1, 2) layer, every ISA level.
ModelBuilder fused_model(const std::string& act, int bn, bool residual) {  // bn: 0 none, 1 before, 2 after
  return fused_conv_model(FusedConvSpec{{2, 1, 9, 37}, 20, 1, act, bn, residual ? Shape{2, 20, 9, 19} : Shape{}});
}

TEST(ConvSmallK, FusedActivationsBatchNormAndResidual) {
  NchwcOff nchwc_off;
  const auto x = random_tensor(DType::Float32, {2, 1, 9, 37}, 48);
  const auto z = random_tensor(DType::Float32, {2, 20, 9, 19}, 49);
  for (cpu::Isa isa : isa_levels()) {
    IsaScope scope(isa);
    for (int bn : {0, 1, 2})
      for (bool residual : {false, true})
        for (const char* act : {"", "Relu", "Sigmoid", "Clip", "PRelu", "HardSigmoid", "HardSwish"})
          for (int threads : {1, 2}) {
            ModelBuilder mb = fused_model(act, bn, residual);
            std::vector<std::pair<std::string, Tensor>> feeds{{"X", x}};
            if (residual) feeds.push_back({"Z", z});
            check_fusion(mb, feeds, 9 * 4, threads);  // BN scales inputs up to ~3x: k covers it
            if (isa != cpu::Isa::Portable) {
              const auto vi = variant_isa_of(mb, feeds, opts(ORT_ENABLE_ALL, KernelMode::Fast, threads));
              EXPECT_EQ(vi.first, "conv2d_smallk") << act << " bn=" << bn << " residual=" << residual;
              EXPECT_EQ(vi.second, cpu::isa_name(isa));
            }
          }
  }
}

// The rule (kernels/nn/conv_smallk.cc) and the overrides: the profile's variant,
// explain() agreeing with what ran, results matching the reference.
TEST(ConvSmallK, DispatchRuleAndOverrides) {
  NchwcOff nchwc_off;
  struct RuleCase {
    SmallKCase c;
    bool smallk;  // by the rule, where the ISA has the kernel
  };
  const RuleCase cases[] = {
      {{{1, 1, 64, 160}, {24, 1, 3, 3}, {2, 2}, {1, 1}, {1, 1, 1, 1}}, true},   // ddddocr_ocr's first layer
      {{{1, 3, 64, 96}, {16, 3, 3, 3}, {2, 2}, {1, 1}, {1, 1, 1, 1}}, true},    // 3 -> 16, K = 27
      {{{1, 3, 64, 96}, {16, 3, 3, 3}, {3, 3}, {1, 1}, {1, 1, 1, 1}}, false},   // stride_w 3: does not fit
      {{{1, 4, 16, 40}, {16, 4, 3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}}, false},   // K = 36 > 32
      {{{1, 1, 16, 20}, {24, 1, 3, 3}, {2, 2}, {1, 1}, {1, 1, 1, 1}}, false},   // 10 output columns
      {{{1, 2, 16, 20}, {24, 1, 3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}}, false},   // grouped (2 groups)
      {{{1, 16, 4, 40}, {32, 16, 1, 1}, {1, 1}, {1, 1}, {0, 0, 0, 0}}, false},  // plain 1x1: the GEMM on X
      {{{1, 2, 9, 40}, {8, 2, 3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}}, true},      // 2 -> 8 3x3 stride 1
  };
  uint32_t seed = 5000;
  for (const auto& rc : cases) {
    SmallKCase c = rc.c;
    ModelBuilder mb(13);
    mb.input("X", DType::Float32, c.x);
    mb.initializer("W", random_tensor(DType::Float32, c.w, seed += 10));
    mb.node("Conv", {"X", "W"}, {"Y"}).name("c").attr("strides", c.strides).attr("pads", c.pads)
        .attr("group", c.x[1] / c.w[1]);
    mb.output("Y");
    const auto x = random_tensor(DType::Float32, c.x, seed + 2);
    auto ref = mb.session(options_for(KernelMode::Reference, 1));
    const std::vector<Tensor> want = run_all(*ref, {{"X", x}});
    const int64_t k = c.w[1] * c.w[2] * c.w[3];
    for (cpu::Isa isa : isa_levels()) {
      IsaScope scope(isa);
      for (nn::SmallKPolicy p : {nn::SmallKPolicy::Rule, nn::SmallKPolicy::Never}) {
        PolicyScope policy(p);
        const bool expect = isa != cpu::Isa::Portable && rc.smallk && p == nn::SmallKPolicy::Rule;
        const auto vi = variant_isa_of(mb, {{"X", x}}, options_for(KernelMode::Fast, 1));
        EXPECT_EQ(vi.first == "conv2d_smallk", expect) << describe(c) << " on " << cpu::isa_name(isa) << ": " << vi.first;
        auto fast = mb.session(options_for(KernelMode::Fast, 1));
        const auto plan = fast->explain();
        ASSERT_FALSE(plan.empty());
        EXPECT_EQ(plan[0].variant, vi.first) << describe(c) << " on " << cpu::isa_name(isa);
        EXPECT_EQ(plan[0].isa, vi.second) << describe(c) << " on " << cpu::isa_name(isa);
        EXPECT_TRUE(tensors_near(run_all(*fast, {{"X", x}}).at(0), want.at(0), reduction_atol(DType::Float32, k), 1e-4))
            << describe(c) << " on " << cpu::isa_name(isa);
      }
    }
  }
  // ONNXMINI_CONV_VARIANT=smallk forces it where it fits (10 output columns), not where it does not.
  nn::set_conv_variant_override(nn::ConvVariant::SmallK);
  for (int i : {4, 2}) {
    SmallKCase c = cases[i].c;
    ModelBuilder mb = smallk_model(c, 77);
    const auto x = random_tensor(DType::Float32, c.x, 78);
    const auto vi = variant_isa_of(mb, {{"X", x}}, options_for(KernelMode::Fast, 1));
    EXPECT_EQ(vi.first == "conv2d_smallk", i == 4 && cpu::active_isa() != cpu::Isa::Portable) << describe(c);
    auto r = run_fast_and_reference(mb, {{"X", x}}, 1);
    EXPECT_TRUE(tensors_near(r.first.at(0), r.second.at(0), reduction_atol(DType::Float32, 27), 1e-4));
  }
  nn::set_conv_variant_override(nn::ConvVariant::Rule);
}

}  // namespace
}  // namespace test
}  // namespace onnxmini
