// One 2-D Conv test case (shapes, strides, dilations, pads, bias or none), its description
// for failure messages and the one-node model with a constant filter, shared by the tests of
// the Conv paths that pick by shape (test_conv_lanes.cc, test_conv_smallk.cc), and the
// kernel_variant / isa of a profiled run.
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

}  // namespace test
}  // namespace onnxmini
