// conv_depthwise_simd (kernels/nn/conv_depthwise*.{h,cc}): fast vs the reference
// Conv over kernel sizes 3/5/7 (and non-square), strides 1/2/3, dilations 1/2,
// symmetric and asymmetric pads, output widths 1..40 (every remainder of the
// 8- and 16-lane vectors), batch 2, 1 and 2 threads, bias or none, fused
// activations and BatchNormalization, on every ISA the machine has (portable,
// AVX2, AVX-512 through set_depthwise_isa_for_tests); and the dispatch: the
// profile names conv_depthwise_simd and the ISA table that ran. The sweeps run
// with padded planes copied (column-parity split at stride 2), in place, and
// the rule's mix (DepthwisePadCopy).
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <vector>

#include "core/cpu_features.h"
#include "kernels/nn/conv_depthwise.h"
#include "kernels/nn/conv_variant.h"
#include "tests/common/conv_case.h"
#include "tests/common/fusion_test_util.h"

namespace onnxmini {
namespace test {
namespace {

struct DwCase {
  Shape x;  // N x C x H x W
  int64_t kh = 3, kw = 3;
  std::vector<int64_t> strides{1, 1}, dilations{1, 1}, pads{0, 0, 0, 0};
  bool bias = true;
};

std::string describe(const DwCase& c) {
  std::ostringstream s;
  s << "x=" << shape_to_string(c.x) << " k=" << c.kh << "x" << c.kw << " strides=" << c.strides[0] << ","
    << c.strides[1] << " dil=" << c.dilations[0] << "," << c.dilations[1] << " pads=" << c.pads[0] << "," << c.pads[1]
    << "," << c.pads[2] << "," << c.pads[3] << " bias=" << c.bias;
  return s.str();
}

ModelBuilder dw_model(const DwCase& c, uint32_t seed) {
  const int64_t C = c.x[1];
  ModelBuilder mb(13);
  mb.input("X", DType::Float32, c.x);
  mb.initializer("W", random_tensor(DType::Float32, {C, 1, c.kh, c.kw}, seed));
  std::vector<std::string> in{"X", "W"};
  if (c.bias) {
    mb.initializer("B", random_tensor(DType::Float32, {C}, seed + 1));
    in.push_back("B");
  }
  mb.node("Conv", in, {"Y"})
      .name("dw")
      .attr("group", C)
      .attr("strides", c.strides)
      .attr("dilations", c.dilations)
      .attr("pads", c.pads);
  mb.output("Y");
  return mb;
}

// The trace's value of `key` for the first node of a profiled run.
std::string trace_field(const ModelBuilder& mb, const std::vector<std::pair<std::string, Tensor>>& feeds,
                        SessionOptions o, const std::string& key) {
  return trace_value(profiled_trace(mb, std::move(o), feeds), key);
}

// |fast - reference| bound: the reference sums in double and rounds once; the
// kernel sums the bias and K = kh*kw products in float32 (FMA or mul + add), so
// each of the K + 1 additions rounds with relative error u = 2^-24 of a partial
// sum whose magnitude is at most K + 1 (|x|, |w|, |b| <= 1): (K + 1)^2 u, plus
// the reference's own final rounding.
double dw_atol(int64_t k) { return (static_cast<double>(k + 1) * (k + 1) + 1) * 0x1p-24 * 2; }

// The ISAs this machine can run conv_depthwise_simd at.
std::vector<cpu::Isa> dw_isas() {
  std::vector<cpu::Isa> v{cpu::Isa::Portable};
  if (cpu::hw_has_avx2_fma()) v.push_back(cpu::Isa::Avx2);
  if (cpu::hw_has_avx512()) v.push_back(cpu::Isa::Avx512);
  return v;
}

struct IsaScope {  // restores the default ISA when a test ends
  explicit IsaScope(cpu::Isa isa) { nn::set_depthwise_isa_for_tests(isa); }
  ~IsaScope() { nn::set_depthwise_isa_for_tests(cpu::active_isa()); }
};
struct PadCopyScope {  // restores the rule when a test ends
  explicit PadCopyScope(nn::DepthwisePadCopy p) { nn::set_depthwise_pad_copy(p); }
  ~PadCopyScope() { nn::set_depthwise_pad_copy(nn::DepthwisePadCopy::Rule); }
};
// Both ways of handling padding and stride 2 (padded / column-parity copy, or
// in place with border code; stride 2 is copied in every mode), and the rule's mix.
const nn::DepthwisePadCopy kPadModes[] = {nn::DepthwisePadCopy::Rule, nn::DepthwisePadCopy::Always,
                                          nn::DepthwisePadCopy::Never};

void check_dw(const DwCase& c, uint32_t seed, int threads, cpu::Isa isa) {
  const auto x = random_tensor(DType::Float32, c.x, seed + 2);
  ModelBuilder mb = dw_model(c, seed);
  auto r = run_fast_and_reference(mb, {{"X", x}}, threads);
  EXPECT_TRUE(tensors_near(r.first.at(0), r.second.at(0), dw_atol(c.kh * c.kw), 0.0))
      << describe(c) << " threads=" << threads << " isa=" << cpu::isa_name(isa);
}

TEST(ConvDepthwise, KernelsStridesDilationsPadsOnEveryIsa) {
  for (cpu::Isa isa : dw_isas()) {
    for (nn::DepthwisePadCopy mode : kPadModes) {
      PadCopyScope pad(mode);
      IsaScope scope(isa);
      EXPECT_EQ(nn::depthwise_kernels_for(isa).isa, isa);
      uint32_t seed = 100;
      int i = 0;
      for (int64_t k : {3, 5, 7})
        for (int64_t s : {1, 2, 3})
          for (int64_t d : {1, 2})
            for (int pad_kind = 0; pad_kind < 3; ++pad_kind) {
              ++i;
              DwCase c;
              c.kh = c.kw = k;
              c.strides = {s, s == 3 ? 1 : s};  // stride 3 along H only once in a while
              if (i % 2) c.strides = {s, s};
              c.dilations = {d, d};
              const int64_t half = (k - 1) * d / 2;
              if (pad_kind == 1) c.pads = {half, half, half, half};
              if (pad_kind == 2) c.pads = {half, half / 2, 0, half + 1};  // asymmetric
              c.x = {2, 3, (k - 1) * d + 1 + i % 9, (k - 1) * d + 1 + (i * 7) % 37};
              c.bias = i % 3 != 1;
              check_dw(c, seed += 10, 1 + i % 2, isa);
            }
    }
  }
}

TEST(ConvDepthwise, EveryOutputWidthOnEveryIsa) {
  for (cpu::Isa isa : dw_isas()) {
    for (nn::DepthwisePadCopy mode : kPadModes) {
      PadCopyScope pad(mode);
      IsaScope scope(isa);
      uint32_t seed = 2000;
      for (int64_t ow = 1; ow <= 40; ++ow) {
        DwCase a;  // 3x3 stride 1 pad 1: OW = W
        a.x = {1, 2, 6, ow};
        a.pads = {1, 1, 1, 1};
        check_dw(a, seed += 10, 1, isa);
        DwCase b;  // 3x3 stride 2 pad 1 (MobileNet's downsampling): OW = ow
        b.x = {1, 2, 9, 2 * ow};
        b.strides = {2, 2};
        b.pads = {0, 0, 1, 1};
        check_dw(b, seed += 10, 2, isa);
        DwCase c;  // 5x5 stride 1 pad 2, width 1 included
        c.x = {1, 2, 7, ow};
        c.kh = c.kw = 5;
        c.pads = {2, 2, 2, 2};
        check_dw(c, seed += 10, 1, isa);
        DwCase d;  // 3x3 stride 2 pad 1, input width ow: odd and even rows, odd left pad (deinterleave tails)
        d.x = {1, 2, 5, ow};
        d.strides = {2, 2};
        d.pads = {1, 1, 1, 1};
        check_dw(d, seed += 10, 1, isa);
      }
    }
  }
}

TEST(ConvDepthwise, NonSquareAndOversizedKernels) {
  for (cpu::Isa isa : dw_isas()) {
    for (nn::DepthwisePadCopy mode : kPadModes) {
      PadCopyScope pad(mode);
      IsaScope scope(isa);
      uint32_t seed = 3000;
      DwCase a;  // 1x5 and 5x1 (generic path)
      a.x = {1, 4, 9, 21};
      a.kh = 1, a.kw = 5;
      a.pads = {0, 2, 0, 2};
      check_dw(a, seed += 10, 2, isa);
      a.kh = 5, a.kw = 1;
      a.pads = {2, 0, 2, 0};
      check_dw(a, seed += 10, 1, isa);
      DwCase b;  // kernel wider than the input: no interior column or row at all
      b.x = {1, 3, 2, 3};
      b.kh = b.kw = 7;
      b.pads = {3, 3, 3, 3};
      check_dw(b, seed += 10, 1, isa);
      DwCase c;  // whole output rows in the padding
      c.x = {1, 2, 3, 17};
      c.pads = {4, 1, 5, 1};
      check_dw(c, seed += 10, 2, isa);
    }
  }
}

// A depthwise Conv with a fused activation / BatchNormalization (the graph
// fusion pass's patterns), fused vs unfused vs reference, on every ISA.
ModelBuilder fused_dw_model(const std::string& act, int bn) {  // bn: 0 none, 1 before, 2 after
  return fused_conv_model(FusedConvSpec{{2, 5, 9, 19}, 5, 5, act, bn, {}});
}

TEST(ConvDepthwise, FusedActivationsAndBatchNormOnEveryIsa) {
  const auto x = random_tensor(DType::Float32, {2, 5, 9, 19}, 58);
  for (cpu::Isa isa : dw_isas()) {
    IsaScope scope(isa);
    for (int bn : {0, 1, 2})
      for (const char* act : {"", "Relu", "Sigmoid", "Clip", "PRelu", "HardSigmoid", "HardSwish"})
        for (int threads : {1, 2}) {
          ModelBuilder mb = fused_dw_model(act, bn);
          check_fusion(mb, {{"X", x}}, 9 * 4, threads);  // BN scales inputs up to ~3x: k covers it
          EXPECT_EQ(trace_field(mb, {{"X", x}}, opts(ORT_ENABLE_ALL, KernelMode::Fast, threads), "kernel_variant"),
                    "conv_depthwise_simd")
              << act << " bn=" << bn;
        }
  }
}

// The rule sends every 2-D float32 depthwise layer to conv_depthwise_simd and the
// profile names the ISA table that ran; ONNXMINI_CONV_VARIANT=direct keeps the
// portable loops (the "before" of docs/performance.md) with the same result.
TEST(ConvDepthwise, DispatchNamesPathAndIsa) {
  DwCase c;
  c.x = {1, 7, 14, 14};  // fewer channels than a vector: never the block kernel (test_conv_depthwise_blocks.cc)
  c.pads = {1, 1, 1, 1};
  const auto x = random_tensor(DType::Float32, c.x, 61);
  ModelBuilder mb = dw_model(c, 60);
  for (cpu::Isa isa : dw_isas()) {
    IsaScope scope(isa);
    const SessionOptions o = options_for(KernelMode::Fast, 1);
    EXPECT_EQ(trace_field(mb, {{"X", x}}, o, "kernel_variant"), "conv_depthwise_simd");
    EXPECT_EQ(trace_field(mb, {{"X", x}}, o, "isa"), cpu::isa_name(isa));
  }
  nn::set_conv_variant_override(nn::ConvVariant::Direct);
  EXPECT_EQ(trace_field(mb, {{"X", x}}, options_for(KernelMode::Fast, 1), "kernel_variant"), "conv_depthwise");
  auto r = run_fast_and_reference(mb, {{"X", x}}, 1);
  EXPECT_TRUE(tensors_near(r.first.at(0), r.second.at(0), dw_atol(9), 0.0));
  nn::set_conv_variant_override(nn::ConvVariant::Rule);
}

}  // namespace
}  // namespace test
}  // namespace onnxmini
