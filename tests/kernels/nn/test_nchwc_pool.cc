// NchwcMaxPool / NchwcAveragePool / NchwcGlobal{Max,Average}Pool / NchwcResize
// (kernels/nn/nchwc_pool.cc): ReorderToBlocked -> the blocked op -> ReorderFromBlocked
// against the plain ONNX op (reference kernels), on every ISA level the machine has
// (set_nchwc_isa_for_tests), 1 and 2 threads: odd channel counts (padding channels), N > 1,
// kernels / strides / pads / dilations / auto_pad / ceil_mode, count_include_pad both ways,
// nearest Resize with every coordinate and nearest mode it takes, NchwcSqueezeExcite against
// SqueezeExcite; bad attributes name the node.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <sstream>

#include "core/cpu_features.h"
#include "kernels/nn/nchwc_conv.h"
#include "tests/common/fusion_test_util.h"
#include "tests/common/simd_isas.h"

namespace onnxmini {
namespace test {
namespace {

// One op's attributes, applied to both the plain and the blocked node.
using AttrFn = std::function<void(NodeBuilder&)>;

struct PoolCase {
  std::string op;  // ONNX op type: MaxPool, AveragePool, GlobalMaxPool, GlobalAveragePool, Resize
  Shape x;
  AttrFn attrs;
  std::vector<float> scales;  // Resize: H, W
  std::string label;
};

ModelBuilder plain_model(const PoolCase& c) {
  ModelBuilder mb(19);
  mb.input("X", DType::Float32, c.x);
  std::vector<std::string> in{"X"};
  if (c.op == "Resize") {
    mb.initializer("roi", Tensor(DType::Float32, {0}));
    Tensor s(DType::Float32, {4});
    float* v = s.mutable_data<float>();
    v[0] = v[1] = 1.0f, v[2] = c.scales[0], v[3] = c.scales[1];
    mb.initializer("scales", std::move(s));
    in = {"X", "roi", "scales"};
  }
  NodeBuilder nb = mb.node(c.op, in, {"Y"}).name("plain");
  if (c.attrs) c.attrs(nb);
  mb.output("Y");
  return mb;
}

ModelBuilder blocked_model(const PoolCase& c) {
  ModelBuilder mb(19);
  mb.import_domain("ai.onnxmini", 1);
  mb.input("X", DType::Float32, c.x);
  mb.node("ReorderToBlocked", {"X"}, {"xb"}).domain("ai.onnxmini");
  NodeBuilder nb = mb.node("Nchwc" + c.op, {"xb"}, {"yb"}).domain("ai.onnxmini").name("blocked");
  if (c.attrs) c.attrs(nb);
  if (c.op == "Resize") nb.attr("scales", c.scales);
  mb.node("ReorderFromBlocked", {"yb"}, {"Y"}).domain("ai.onnxmini").attr("channels", c.x[1]);
  mb.output("Y");
  return mb;
}

class NchwcIsaGuard {
 public:
  ~NchwcIsaGuard() { nn::set_nchwc_isa_for_tests(cpu::active_isa()); }
};

// taps: the most values one output sums (AveragePool / GlobalAveragePool rounding).
void check_case(const PoolCase& c, uint32_t seed, int64_t taps = 1) {
  SCOPED_TRACE(c.op + " " + c.label + " x=" + shape_to_string(c.x));
  const std::vector<std::pair<std::string, Tensor>> feeds{{"X", random_tensor(DType::Float32, c.x, seed)}};
  auto ref = plain_model(c).session(opts(0, KernelMode::Reference));
  const Tensor want = run_single(*ref, feeds);
  // Max and nearest copy values: exact. Means: a float sum of `taps` values in [-1, 1].
  const double atol = taps > 1 ? reduction_atol(DType::Float32, taps) : 0.0;
  const double rtol = taps > 1 ? 1e-5 : 0.0;
  const ModelBuilder blocked = blocked_model(c);
  NchwcIsaGuard guard;
  for (cpu::Isa isa : isa_levels()) {
    nn::set_nchwc_isa_for_tests(isa);
    for (int threads : {1, 2}) {
      SCOPED_TRACE(std::string(cpu::isa_name(isa)) + " threads=" + std::to_string(threads));
      auto s = blocked.session(opts(0, KernelMode::Fast, threads));
      const Tensor got = run_single(*s, feeds);
      ASSERT_EQ(got.shape(), want.shape());
      EXPECT_TRUE(tensors_near(got, want, atol, rtol));
    }
  }
  auto reference_mode = blocked.session(opts(0, KernelMode::Reference));
  EXPECT_TRUE(tensors_near(run_single(*reference_mode, feeds), want, atol, rtol)) << "reference mode";
}

struct Win {
  std::vector<int64_t> k, s, d, pads;
  std::string auto_pad;
  bool ceil = false;
};

AttrFn window_attrs(const Win& w, int64_t count_include_pad = -1) {
  return [w, count_include_pad](NodeBuilder& nb) {
    nb.attr("kernel_shape", w.k);
    if (!w.s.empty()) nb.attr("strides", w.s);
    if (!w.d.empty()) nb.attr("dilations", w.d);
    if (w.auto_pad.empty() && !w.pads.empty()) nb.attr("pads", w.pads);
    if (!w.auto_pad.empty()) nb.attr("auto_pad", w.auto_pad);
    if (w.ceil) nb.attr("ceil_mode", int64_t{1});
    if (count_include_pad >= 0) nb.attr("count_include_pad", count_include_pad);
  };
}

std::vector<Win> windows() {
  return {
      Win{{5, 5}, {1, 1}, {}, {2, 2, 2, 2}, ""},      // YOLO SPPF
      Win{{3, 3}, {2, 2}, {}, {1, 1, 1, 1}, ""},      // ResNet stem
      Win{{2, 2}, {2, 2}, {}, {}, ""},                // plain 2x2
      Win{{3, 3}, {2, 2}, {}, {0, 0, 0, 0}, "", true},  // ceil_mode overhang
      Win{{3, 2}, {1, 2}, {2, 1}, {1, 0, 2, 1}, ""},  // dilation, asymmetric pads
      Win{{3, 3}, {2, 2}, {}, {}, "SAME_UPPER"},
      Win{{2, 3}, {1, 1}, {}, {}, "SAME_LOWER"},
      Win{{3, 3}, {1, 1}, {}, {}, "VALID"},
      Win{{2, 2}, {3, 3}, {}, {1, 1, 1, 1}, "", true},
      Win{{100, 3}, {1, 1}, {}, {50, 1, 49, 1}, ""},  // kernels far beyond the map: window_taps
      Win{{3, 100}, {1, 2}, {}, {1, 50, 1, 49}, ""},
  };
}

std::string describe(const Win& w) {
  std::ostringstream s;
  s << "k=" << w.k[0] << "x" << w.k[1] << " pads=" << (w.pads.empty() ? 0 : w.pads[0]) << " auto_pad=" << w.auto_pad
    << " ceil=" << w.ceil << " d=" << (w.d.empty() ? 1 : w.d[0]);
  return s.str();
}

TEST(NchwcPool, MaxPoolMatchesMaxPool) {
  uint32_t seed = 10;
  for (const Shape& x : {Shape{1, 16, 11, 13}, Shape{2, 20, 9, 8}, Shape{1, 35, 6, 7}})
    for (const Win& w : windows()) check_case({"MaxPool", x, window_attrs(w), {}, describe(w)}, seed++);
}

TEST(NchwcPool, AveragePoolMatchesAveragePoolBothPadCounts) {
  uint32_t seed = 100;
  for (const Shape& x : {Shape{1, 16, 11, 13}, Shape{2, 21, 9, 8}})
    for (const Win& w : windows())
      for (int64_t cip : {0, 1}) {
        const int64_t taps = w.k[0] * w.k[1];
        check_case({"AveragePool", x, window_attrs(w, cip), {}, describe(w) + " cip=" + std::to_string(cip)},
                   seed++, taps);
      }
}

TEST(NchwcPool, GlobalPoolsStayBlocked) {
  uint32_t seed = 200;
  for (const Shape& x : {Shape{1, 16, 7, 7}, Shape{2, 40, 80, 80}, Shape{1, 3, 1, 1}, Shape{1, 24, 13, 1}}) {
    check_case({"GlobalMaxPool", x, nullptr, {}, ""}, seed++);
    check_case({"GlobalAveragePool", x, nullptr, {}, ""}, seed++, x[2] * x[3]);
  }
}

TEST(NchwcPool, ResizeNearestMatchesResize) {
  uint32_t seed = 300;
  const std::vector<std::vector<float>> scales{{2, 2}, {1.5f, 0.75f}, {3, 1}, {0.5f, 0.5f}, {1.7f, 2.3f}};
  for (const std::string coord :
       {"half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric", "tf_half_pixel_for_nearest"})
    for (const std::string nearest : {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"})
      for (const auto& s : scales) {
        AttrFn attrs = [coord, nearest](NodeBuilder& nb) {
          nb.attr("mode", std::string("nearest"))
              .attr("coordinate_transformation_mode", coord)
              .attr("nearest_mode", nearest);
        };
        check_case({"Resize", Shape{2, 19, 7, 10}, attrs, s, coord + " " + nearest}, seed++);
      }
}

// NchwcSqueezeExcite against SqueezeExcite (reference kernels): Cm x C / C x Cm 1x1 filters,
// both activations, residual, padding channels, N > 1.
struct SeCase {
  int64_t N, C, Cm, H, W;
  std::string act1, act2;
  bool residual;
};

ModelBuilder se_model(const SeCase& c, bool blocked) {
  ModelBuilder mb(17);
  mb.import_domain("ai.onnxmini", 1);
  mb.input("X", DType::Float32, {c.N, c.C, c.H, c.W});
  mb.initializer("W1", random_tensor(DType::Float32, {c.Cm, c.C, 1, 1}, 7, -0.3, 0.3));
  mb.initializer("B1", random_tensor(DType::Float32, {c.Cm}, 8));
  mb.initializer("W2", random_tensor(DType::Float32, {c.C, c.Cm, 1, 1}, 9, -0.3, 0.3));
  mb.initializer("B2", random_tensor(DType::Float32, {c.C}, 10));
  std::string x = "X", y = "Y";
  if (blocked) {
    mb.node("ReorderToBlocked", {"X"}, {"xb"}).domain("ai.onnxmini");
    x = "xb", y = "yb";
  }
  NodeBuilder nb = mb.node(blocked ? "NchwcSqueezeExcite" : "SqueezeExcite", {x, "W1", "B1", "W2", "B2"}, {y})
                       .domain("ai.onnxmini")
                       .name("se")
                       .attr("activation1", c.act1)
                       .attr("activation2", c.act2)
                       .attr("residual", int64_t{c.residual});
  if (c.act2 == "HardSigmoid") nb.attr("activation2_params", std::vector<float>{1.0f / 6, 0.5f});
  if (blocked) mb.node("ReorderFromBlocked", {"yb"}, {"Y"}).domain("ai.onnxmini").attr("channels", c.C);
  mb.output("Y");
  return mb;
}

TEST(NchwcPool, SqueezeExciteMatchesSqueezeExcite) {
  uint32_t seed = 400;
  for (const SeCase& c : {SeCase{1, 16, 4, 7, 7, "Relu", "HardSigmoid", false},
                          SeCase{2, 40, 10, 5, 6, "Relu", "Sigmoid", false},
                          SeCase{1, 72, 18, 13, 13, "Relu", "HardSigmoid", true},
                          SeCase{1, 3, 2, 4, 4, "HardSwish", "Sigmoid", true}}) {
    SCOPED_TRACE("C=" + std::to_string(c.C) + " Cm=" + std::to_string(c.Cm) + " N=" + std::to_string(c.N) +
                 " residual=" + std::to_string(c.residual));
    const std::vector<std::pair<std::string, Tensor>> feeds{
        {"X", random_tensor(DType::Float32, {c.N, c.C, c.H, c.W}, seed++)}};
    auto ref = se_model(c, false).session(opts(0, KernelMode::Reference));
    const Tensor want = run_single(*ref, feeds);
    // The mean sums H * W values; the 1x1 layers sum C and Cm products: the gate's error
    // stays within a reduction of that many terms (the activations are 1-Lipschitz or flatter).
    const double atol = reduction_atol(DType::Float32, c.H * c.W + c.C + c.Cm);
    const ModelBuilder blocked = se_model(c, true);
    NchwcIsaGuard guard;
    for (cpu::Isa isa : isa_levels()) {
      nn::set_nchwc_isa_for_tests(isa);
      for (int threads : {1, 2}) {
        SCOPED_TRACE(std::string(cpu::isa_name(isa)) + " threads=" + std::to_string(threads));
        auto s = blocked.session(opts(0, KernelMode::Fast, threads));
        const Tensor got = run_single(*s, feeds);
        ASSERT_EQ(got.shape(), want.shape());
        EXPECT_TRUE(tensors_near(got, want, atol, 1e-5));
      }
    }
  }
}

// explain names what each blocked op runs, as its trace records it: every ISA level and
// reference mode (the portable routines). describe() said "nchwc_pool" / "nchwc_global_pool" /
// "nchwc_squeeze_excite", portable, on every ISA until 2026-12-07.
TEST(NchwcPool, ExplainAgreesWithTheTrace) {
  AttrFn nearest = [](NodeBuilder& nb) { nb.attr("mode", std::string("nearest")); };
  const Win w{{3, 3}, {2, 2}, {}, {1, 1, 1, 1}, ""};
  std::vector<std::pair<std::string, ModelBuilder>> models{
      {"NchwcMaxPool", blocked_model({"MaxPool", Shape{1, 20, 9, 9}, window_attrs(w), {}, ""})},
      {"NchwcAveragePool", blocked_model({"AveragePool", Shape{1, 20, 9, 9}, window_attrs(w, 1), {}, ""})},
      {"NchwcGlobalMaxPool", blocked_model({"GlobalMaxPool", Shape{1, 20, 9, 9}, nullptr, {}, ""})},
      {"NchwcGlobalAveragePool", blocked_model({"GlobalAveragePool", Shape{1, 20, 9, 9}, nullptr, {}, ""})},
      {"NchwcResize", blocked_model({"Resize", Shape{1, 20, 9, 9}, nearest, {2, 2}, ""})},
      {"NchwcSqueezeExcite", se_model(SeCase{1, 20, 5, 9, 9, "Relu", "Sigmoid", false}, true)}};
  const std::vector<std::pair<std::string, Tensor>> feeds{{"X", random_tensor(DType::Float32, {1, 20, 9, 9}, 5)}};
  NchwcIsaGuard guard;
  for (const auto& [op, mb] : models)
    for (cpu::Isa isa : isa_levels())
      for (KernelMode mode : {KernelMode::Fast, KernelMode::Reference}) {
        nn::set_nchwc_isa_for_tests(isa);
        SCOPED_TRACE(op + " " + cpu::isa_name(isa) + (mode == KernelMode::Reference ? " reference" : " fast"));
        const std::string trace = profiled_trace(mb, opts(0, mode), feeds);
        int checked = 0;
        for (const KernelExplanation& e : mb.session(opts(0, mode))->explain()) {
          const size_t at = trace.find("\"" + e.node + "_kernel_time\"");
          ASSERT_NE(at, std::string::npos) << e.node;
          EXPECT_EQ(e.variant, trace_value(trace, "kernel_variant", at)) << e.node;
          EXPECT_EQ(e.isa, trace_value(trace, "isa", at)) << e.node;
          checked += e.op_type == op;
        }
        EXPECT_EQ(checked, 1);
      }
}

TEST(NchwcPool, BadAttributesNameTheNode) {
  PoolCase c{"Resize", Shape{1, 16, 4, 4},
             [](NodeBuilder& nb) { nb.attr("mode", std::string("linear")); }, {2, 2}, ""};
  try {
    auto s = blocked_model(c).session(opts(0));
    run_single(*s, {{"X", random_tensor(DType::Float32, c.x, 1)}});
    FAIL() << "linear NchwcResize was accepted";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("blocked"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("linear"), std::string::npos) << e.what();
  }
  PoolCase p{"MaxPool", Shape{1, 16, 4, 4}, [](NodeBuilder& nb) { nb.attr("kernel_shape", std::vector<int64_t>{3}); },
             {}, ""};
  try {
    auto s = blocked_model(p).session(opts(0));
    run_single(*s, {{"X", random_tensor(DType::Float32, p.x, 1)}});
    FAIL() << "a 1-D kernel_shape was accepted";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("kernel_shape"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace test
}  // namespace onnxmini
