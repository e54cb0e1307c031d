// The 2-D float pools of pool2d_simd.h: avgpool2d_separable (AveragePool:
// column sums, then row sums per ISA) and maxpool2d_separable's float path
// (MaxPool without Indices, the same passes with maxima; at strides 1 the
// register kernel of pool2d_max_rows_impl.h on AVX2 / AVX-512): against the reference (one tap at a time, summed in double) on every ISA
// this machine runs (portable, AVX2, AVX-512 via set_pool2d_isa_for_tests),
// with count_include_pad both ways, ceil_mode overhangs, pads, strides 1 / 2 /
// 3, dilations, rows shorter and longer than a vector (MaxPool exactly, with
// NaN / +-inf planted); and the dispatch: the profile names the path and the
// ISA table that ran.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "kernels/nn/pool2d_simd.h"
#include "tests/common/nn_test_util.h"
#include "tests/common/simd_isas.h"

namespace onnxmini {
namespace test {
namespace {

struct AvgCase {
  Shape x;
  std::vector<int64_t> kernel, strides, dilations, pads;
  int64_t ceil_mode = 0, count_include_pad = 0;
  std::string auto_pad = "NOTSET";
};

ModelBuilder avg_model(const AvgCase& c, const std::string& op = "AveragePool") {
  ModelBuilder mb(19);
  mb.input("X", DType::Float32, c.x);
  auto n = mb.node(op, {"X"}, {"Y"}).attr("kernel_shape", c.kernel).attr("auto_pad", c.auto_pad).attr("ceil_mode", c.ceil_mode);
  if (op == "AveragePool") n.attr("count_include_pad", c.count_include_pad);
  if (!c.strides.empty()) n.attr("strides", c.strides);
  if (!c.dilations.empty()) n.attr("dilations", c.dilations);
  if (!c.pads.empty()) n.attr("pads", c.pads);
  mb.output("Y");
  return mb;
}

// |fast - reference| bound for inputs in [-1, 1]: the kernel adds the K = kh*kw
// taps in float32 (K - 1 additions, each rounding with relative error u = 2^-24
// of a partial sum of magnitude <= K, so <= K^2 u in all), then divides by the
// count (>= 1: the error does not grow) and rounds once more (u); the reference
// sums in double and rounds once (u).
double avg_atol(const AvgCase& c) {
  const double k = static_cast<double>(c.kernel[0] * c.kernel[1]);
  return (k * k + 2) * 0x1p-24;
}

struct IsaScope {  // restores the default ISA when a test ends
  explicit IsaScope(cpu::Isa isa) { nn::set_pool2d_isa_for_tests(isa); }
  ~IsaScope() { nn::set_pool2d_isa_for_tests(cpu::active_isa()); }
};

std::vector<AvgCase> avg_cases() {
  std::vector<AvgCase> v;
  for (int64_t include_pad : {0, 1}) {
    v.push_back({{1, 480, 3, 80}, {3, 2}, {3, 2}, {}, {0, 0, 0, 0}, 0, include_pad});  // ppocr_v4_rec
    v.push_back({{2, 3, 17, 35}, {3, 3}, {1, 1}, {}, {1, 1, 1, 1}, 0, include_pad});     // "same" 3x3
    v.push_back({{1, 4, 13, 13}, {5, 5}, {1, 1}, {}, {2, 2, 2, 2}, 0, include_pad});
    v.push_back({{1, 3, 16, 40}, {2, 2}, {2, 2}, {}, {}, 0, include_pad});                // DenseNet transition
    v.push_back({{1, 2, 10, 11}, {3, 2}, {2, 3}, {2, 1}, {1, 0, 2, 1}, 1, include_pad});  // stride 3, dilation, ceil
    v.push_back({{1, 2, 9, 33}, {3, 3}, {2, 2}, {}, {1, 1, 0, 0}, 1, include_pad});       // ceil_mode overhang
    v.push_back({{1, 2, 8, 9}, {4, 3}, {3, 2}, {}, {}, 0, include_pad, "SAME_LOWER"});
    v.push_back({{1, 2, 4, 3}, {5, 4}, {1, 1}, {}, {2, 2, 2, 1}, 0, include_pad});        // window wider than the map
    v.push_back({{1, 5, 7, 70}, {1, 3}, {1, 2}, {}, {0, 1, 0, 1}, 1, include_pad});
  }
  return v;
}

TEST(AvgPoolSeparable, MatchesReferenceOnEveryIsa) {
  uint32_t seed = 300;
  for (cpu::Isa isa : isa_levels()) {
    IsaScope scope(isa);
    EXPECT_EQ(nn::pool2d_kernels_for(isa).isa, isa);
    for (const AvgCase& c : avg_cases())
      for (int threads : {1, 2}) {
        const ModelBuilder mb = avg_model(c);
        auto r = run_fast_and_reference(mb, {{"X", random_tensor(DType::Float32, c.x, seed++)}}, threads);
        EXPECT_TRUE(tensors_near(r.first.at(0), r.second.at(0), avg_atol(c), 0.0))
            << "isa=" << cpu::isa_name(isa) << " x " << shape_to_string(c.x) << " kernel " << c.kernel[0] << "x"
            << c.kernel[1] << " count_include_pad " << c.count_include_pad << " ceil " << c.ceil_mode
            << " threads " << threads;
      }
  }
}

// MaxPool: the same windows (count_include_pad does not apply) plus SPP-style
// "same" windows on narrow maps and stride-1 windows up to past the register kernel's
// reach, with NaN / -inf / +inf planted: exact.
TEST(MaxPoolSeparable, FloatMatchesReferenceOnEveryIsa) {
  std::vector<AvgCase> v;
  for (const AvgCase& c : avg_cases())
    if (c.count_include_pad == 0) v.push_back(c);
  for (int64_t k : {5, 9, 13}) v.push_back({{1, 3, 13, 13}, {k, k}, {1, 1}, {}, {k / 2, k / 2, k / 2, k / 2}});
  v.push_back({{1, 5, 10, 10}, {5, 5}, {1, 1}, {}, {2, 2, 2, 2}});
  v.push_back({{1, 6, 2, 96}, {2, 2}, {2, 2}, {}, {}});  // ppocr_mobile_v2_cls
  // Stride 1 (maxpool2d_rows on AVX2 / AVX-512): rows of several vectors with a tail, the
  // widest windows each table keeps in registers (9 on AVX2, 17 on AVX-512) and one past,
  // an even window without pads, asymmetric pads.
  v.push_back({{1, 2, 20, 40}, {9, 9}, {1, 1}, {}, {4, 4, 4, 4}});
  v.push_back({{1, 2, 11, 21}, {10, 10}, {1, 1}, {}, {5, 5, 4, 4}});
  v.push_back({{1, 2, 20, 20}, {17, 17}, {1, 1}, {}, {8, 8, 8, 8}});
  v.push_back({{1, 2, 9, 19}, {18, 18}, {1, 1}, {}, {9, 9, 8, 8}});
  v.push_back({{1, 2, 6, 33}, {2, 2}, {1, 1}, {}, {}});
  v.push_back({{1, 2, 7, 19}, {3, 5}, {1, 1}, {}, {0, 2, 1, 1}});
  // Stride_w 2 with 1- or 2-wide windows (maxpool2d_rows_s2): output widths around the 8- and
  // 16-lane chunks, left / right pads (lanes outside X), ceil_mode overhang, stride_h 1..3,
  // a 3-row window; stride_h 3 at stride_w 1 (maxpool2d_rows).
  for (int64_t w : {2, 15, 16, 17, 31, 32, 33, 47, 65}) {
    v.push_back({{1, 3, 6, w}, {2, 2}, {2, 2}, {}, {}, w % 2});
    v.push_back({{1, 2, 7, w}, {2, 2}, {1, 2}, {}, {0, 1, 1, 1}});
    v.push_back({{1, 2, 9, w}, {3, 1}, {3, 2}, {}, {1, 0, 1, 0}});
  }
  v.push_back({{2, 3, 8, 40}, {1, 2}, {2, 2}, {}, {}});
  v.push_back({{1, 2, 11, 23}, {3, 3}, {3, 1}, {}, {1, 1, 1, 1}});
  uint32_t seed = 500;
  for (cpu::Isa isa : isa_levels()) {
    IsaScope scope(isa);
    for (const AvgCase& c : v) {
      Tensor x = random_tensor(DType::Float32, c.x, seed++);
      for (int64_t i = 0; i < x.numel(); ++i) {
        const int64_t pick = i * 7919 % 31;
        if (pick < 3) x.mutable_data<float>()[i] = pick == 0 ? NAN : pick == 1 ? -INFINITY : INFINITY;
      }
      auto r = run_fast_and_reference(avg_model(c, "MaxPool"), {{"X", x}}, 1 + seed % 2);
      EXPECT_TRUE(tensors_near(r.first.at(0), r.second.at(0), 0.0, 0.0))
          << "isa=" << cpu::isa_name(isa) << " x " << shape_to_string(c.x) << " kernel " << c.kernel[0] << "x"
          << c.kernel[1] << " ceil " << c.ceil_mode;
    }
  }
}

// The trace's value of `key` for the first node of a profiled run.
std::string trace_field(const ModelBuilder& mb, const Tensor& x, SessionOptions o, const std::string& key) {
  o.enable_profiling = true;
  o.profile_file_prefix = ::testing::TempDir() + "pool2d_simd_profile_";
  auto s = mb.session(o);
  run_all(*s, {{"X", x}});
  const std::string file = s->end_profiling();
  std::ifstream f(file);
  std::stringstream ss;
  ss << f.rdbuf();
  std::remove(file.c_str());
  const std::string trace = ss.str(), k = "\"" + key + "\" : \"";
  const size_t at = trace.find(k);
  if (at == std::string::npos) return "";
  const size_t b = at + k.size();
  return trace.substr(b, trace.find('"', b) - b);
}

TEST(AvgPoolSeparable, DispatchNamesPathAndIsa) {
  const AvgCase c{{1, 3, 9, 20}, {3, 3}, {1, 1}, {}, {1, 1, 1, 1}};
  const ModelBuilder mb = avg_model(c);
  const Tensor x = random_tensor(DType::Float32, c.x, 7);
  for (cpu::Isa isa : isa_levels()) {
    IsaScope scope(isa);
    const SessionOptions o = options_for(KernelMode::Fast, 1);
    EXPECT_EQ(trace_field(mb, x, o, "kernel_variant"), "avgpool2d_separable");
    EXPECT_EQ(trace_field(mb, x, o, "isa"), cpu::isa_name(isa));
    // Stride 1: the register kernel on AVX2 / AVX-512, the flat passes on portable; a 3x3
    // stride-2 window (and one wider than the AVX2 registers reach): the flat passes everywhere.
    const ModelBuilder max = avg_model(c, "MaxPool");
    EXPECT_EQ(trace_field(max, x, o, "kernel_variant"), isa == cpu::Isa::Portable ? "maxpool2d_separable" : "maxpool2d_rows");
    EXPECT_EQ(trace_field(max, x, o, "isa"), cpu::isa_name(isa));
    const ModelBuilder strided = avg_model({{1, 3, 9, 20}, {3, 3}, {2, 2}, {}, {1, 1, 1, 1}}, "MaxPool");
    EXPECT_EQ(trace_field(strided, x, o, "kernel_variant"), "maxpool2d_separable");
    // 2x2 stride 2: the stride-2 register kernel on AVX2 / AVX-512.
    const ModelBuilder down = avg_model({{1, 3, 9, 20}, {2, 2}, {2, 2}, {}, {}}, "MaxPool");
    EXPECT_EQ(trace_field(down, x, o, "kernel_variant"), isa == cpu::Isa::Portable ? "maxpool2d_separable" : "maxpool2d_rows_s2");
    const ModelBuilder wide = avg_model({{1, 3, 9, 20}, {13, 13}, {1, 1}, {}, {6, 6, 6, 6}}, "MaxPool");
    EXPECT_EQ(trace_field(wide, x, o, "kernel_variant"), isa == cpu::Isa::Avx512 ? "maxpool2d_rows" : "maxpool2d_separable");
  }
}

// Windows far out of proportion to the plane leave the SIMD path on every ISA (its rows are
// padded to the window's reach): a stride beyond the plane (the fuzzer's AveragePool: 7.6 GB
// of scratch) takes pool2d_direct, or for MaxPool the typed separable loops (rows of OW
// maxima: no padding); kernels of 100 taps over 5 or 6 pixels take pool2d_direct for both
// (the separable loops keep a table per kernel column: kernel_near_input in pool.cc). The
// direct loops sum in double: the averages match the reference to its rounding.
TEST(AvgPoolSeparable, WindowsFarFromThePlaneTakeTheDirectLoops) {
  const std::vector<AvgCase> cases{
      {{1, 1, 5, 5}, {3, 3}, {2, 239009791}, {}, {}, 0, 0, "SAME_UPPER"},
      {{1, 2, 5, 6}, {3, 100}, {1, 1}, {}, {1, 50, 1, 49}},
      {{1, 2, 6, 5}, {100, 3}, {1, 2}, {}, {50, 1, 49, 1}, 0, 1},
  };
  for (cpu::Isa isa : isa_levels()) {
    IsaScope scope(isa);
    uint32_t seed = 3;
    for (const AvgCase& c : cases)
      for (const char* op : {"AveragePool", "MaxPool"}) {
        const ModelBuilder mb = avg_model(c, op);
        const Tensor x = random_tensor(DType::Float32, c.x, seed++);
        const bool strided_max = c.strides[1] > 1000 && std::string(op) == "MaxPool";
        EXPECT_EQ(trace_field(mb, x, options_for(KernelMode::Fast, 1), "kernel_variant"),
                  strided_max ? "maxpool2d_separable" : "pool2d_direct")
            << op << " " << shape_to_string(c.x) << " " << cpu::isa_name(isa);
        auto r = run_fast_and_reference(mb, {{"X", x}}, 2);
        EXPECT_TRUE(tensors_near(r.first.at(0), r.second.at(0), 1e-6, 0.0)) << op << " " << shape_to_string(c.x);
      }
  }
}

}  // namespace
}  // namespace test
}  // namespace onnxmini
