// One 2-D Conv test case (shapes, strides, dilations, pads, bias or none), its description
// for failure messages and the one-node model with a constant filter, shared by the tests of
// the Conv paths that pick by shape (test_conv_lanes.cc, test_conv_smallk.cc); the
// kernel_variant / isa of a profiled run; and a Conv with the neighbours the fusion pass folds
// into it (test_conv_lanes.cc, test_conv_smallk.cc, test_conv_depthwise.cc).
#pragma once
#include <cstdint>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "tests/common/model_builder.h"
#include "tests/common/profile_test_util.h"

namespace onnxmini {
namespace test {

struct ConvCase {
  Shape x, w;
  std::vector<int64_t> strides{1, 1}, dilations{1, 1}, pads{0, 0, 0, 0};
  bool bias = true;
};

inline std::string describe(const ConvCase& c) {
  std::ostringstream s;
  s << "x=" << shape_to_string(c.x) << " w=" << shape_to_string(c.w) << " strides=" << c.strides[0] << ","
    << c.strides[1] << " dil=" << c.dilations[0] << "," << c.dilations[1] << " pads=" << c.pads[0] << ","
    << c.pads[1] << "," << c.pads[2] << "," << c.pads[3] << " bias=" << c.bias;
  return s.str();
}

// X -> Conv(W constant, B constant unless !bias) -> Y, opset 13, node name "c".
inline ModelBuilder conv_case_model(const ConvCase& c, uint32_t seed) {
  ModelBuilder mb(13);
  mb.input("X", DType::Float32, c.x);
  mb.initializer("W", random_tensor(DType::Float32, c.w, seed));
  std::vector<std::string> in{"X", "W"};
  if (c.bias) {
    mb.initializer("B", random_tensor(DType::Float32, {c.w[0]}, seed + 1));
    in.push_back("B");
  }
  mb.node("Conv", in, {"Y"}).name("c").attr("strides", c.strides).attr("dilations", c.dilations).attr("pads", c.pads);
  mb.output("Y");
  return mb;
}

// The kernel_variant and isa of the first node in a profiled run of `mb`.
inline std::pair<std::string, std::string> variant_isa_of(const ModelBuilder& mb,
                                                          const std::vector<std::pair<std::string, Tensor>>& feeds,
                                                          SessionOptions o) {
  const std::string trace = profiled_trace(mb, std::move(o), feeds);
  return {trace_value(trace, "kernel_variant"), trace_value(trace, "isa")};
}


// A 3x3 Conv (pads 1, 0, 1, 2, strides 1, 2) with a BatchNormalization before (bn 1) or after
// (bn 2) it, a residual Add (when z is not empty: Z's shape), and an activation node (act:
// "" for none, "PRelu" with per-channel slopes, "Clip" with [-0.2, 0.3], or any one-input op),
// as the graph fusion pass folds them: the fused-epilogue tests of the Conv paths.
struct FusedConvSpec {
  Shape x;
  int64_t M = 0;
  int64_t group = 1;
  std::string act;
  int bn = 0;
  Shape z;
};

inline ModelBuilder fused_conv_model(const FusedConvSpec& f) {
  const int64_t C = f.x[1], M = f.M, BC = f.bn == 1 ? C : M;
  ModelBuilder mb(14);  // HardSwish is opset 14
  mb.input("X", DType::Float32, f.x);
  mb.initializer("W", random_tensor(DType::Float32, {M, C / f.group, 3, 3}, 41));
  mb.initializer("B", random_tensor(DType::Float32, {M}, 42));
  std::string in = "X";
  if (f.bn) {
    mb.initializer("g", random_tensor(DType::Float32, {BC}, 43, 0.5, 1.5));
    mb.initializer("b", random_tensor(DType::Float32, {BC}, 44));
    mb.initializer("m", random_tensor(DType::Float32, {BC}, 45));
    mb.initializer("v", random_tensor(DType::Float32, {BC}, 46, 0.2, 2.0));
  }
  if (f.bn == 1) {
    mb.node("BatchNormalization", {"X", "g", "b", "m", "v"}, {"N"}).name("bn");
    in = "N";
  }
  mb.node("Conv", {in, "W", "B"}, {"C"})
      .name("c0")
      .attr("group", f.group)
      .attr("pads", std::vector<int64_t>{1, 0, 1, 2})
      .attr("strides", std::vector<int64_t>{1, 2});
  std::string out = "C";
  if (f.bn == 2) {
    mb.node("BatchNormalization", {"C", "g", "b", "m", "v"}, {"D"}).name("bn");
    out = "D";
  }
  if (!f.z.empty()) {
    mb.input("Z", DType::Float32, f.z);
    mb.node("Add", {out, "Z"}, {"R"}).name("add");
    out = "R";
  }
  if (f.act == "PRelu") {
    mb.initializer("S", random_tensor(DType::Float32, {M, 1, 1}, 47, 0.0, 0.5));
    mb.node("PRelu", {out, "S"}, {"Y"}).name("a0");
  } else if (f.act == "Clip") {
    mb.initializer("lo", Tensor::from_vector<float>({}, {-0.2f}));
    mb.initializer("hi", Tensor::from_vector<float>({}, {0.3f}));
    mb.node("Clip", {out, "lo", "hi"}, {"Y"}).name("a0");
  } else if (!f.act.empty()) {
    mb.node(f.act, {out}, {"Y"}).name("a0");
  } else {
    mb.node("Identity", {out}, {"Y"}).name("a0");
  }
  mb.output("Y");
  return mb;
}

}  // namespace test
}  // namespace onnxmini
