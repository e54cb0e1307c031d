// Pools, normalizations, Softmax / LogSoftmax: hand-computed values, fast vs
// reference on random shapes, short Softmax rows (SIMD, every ISA, with -inf /
// +inf / NaN rows), and error messages.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "core/shape_util.h"
#include "tests/common/simd_isas.h"
#include "tests/common/nn_test_util.h"

namespace onnxmini {
namespace test {
namespace {

struct PoolCase {
  std::string op;
  Shape x;
  std::vector<int64_t> kernel, strides, dilations, pads;
  std::string auto_pad = "NOTSET";
  int64_t ceil_mode = 0, count_include_pad = 0;
  bool indices = false;
};

void check_pool(const PoolCase& c, DType t, uint32_t seed) {
  ModelBuilder mb(19);
  mb.input("X", t, c.x);
  std::vector<std::string> outs{"Y"};
  if (c.indices) outs.push_back("I");
  auto n = mb.node(c.op, {"X"}, outs).attr("kernel_shape", c.kernel).attr("auto_pad", c.auto_pad).attr("ceil_mode", c.ceil_mode);
  if (c.op == "AveragePool") n.attr("count_include_pad", c.count_include_pad);
  if (!c.strides.empty()) n.attr("strides", c.strides);
  if (!c.dilations.empty()) n.attr("dilations", c.dilations);
  if (!c.pads.empty()) n.attr("pads", c.pads);
  for (const auto& o : outs) mb.output(o);
  auto r = run_fast_and_reference(mb, {{"X", random_tensor(t, c.x, seed)}});
  for (size_t i = 0; i < outs.size(); ++i)
    EXPECT_TRUE(tensors_near(r.first.at(i), r.second.at(i), 1e-6, 1e-5)) << c.op << " " << shape_to_string(c.x) << " output " << i;
}

TEST(Pool, FastMatchesReference) {
  std::vector<PoolCase> v;
  for (const char* op : {"MaxPool", "AveragePool"}) {
    v.push_back({op, {2, 3, 9, 7}, {3, 3}, {2, 2}, {}, {1, 1, 1, 1}});
    v.push_back({op, {1, 2, 10, 11}, {3, 2}, {2, 3}, {2, 1}, {1, 0, 2, 1}, "NOTSET", 1, 1});
    v.push_back({op, {1, 2, 8, 9}, {3, 3}, {2, 2}, {}, {}, "SAME_UPPER"});
    v.push_back({op, {1, 2, 8, 9}, {4, 3}, {3, 2}, {}, {}, "SAME_LOWER", 0, 1});
    v.push_back({op, {1, 2, 8, 9}, {2, 2}, {3, 3}, {}, {}, "NOTSET", 1});
    v.push_back({op, {2, 3, 13}, {4}, {3}, {}, {2, 1}});
    v.push_back({op, {1, 2, 5, 6, 7}, {2, 3, 2}, {2, 1, 2}, {}, {1, 1, 0, 0, 1, 1}, "NOTSET", 0, 1});
    // A stride far beyond the plane (the fuzzer's AveragePool): the SIMD path's padded rows
    // would round up to the stride (gigabytes of scratch), so the direct loops take it.
    v.push_back({op, {1, 1, 5, 5}, {3, 3}, {2, 239009791}, {}, {}, "SAME_UPPER"});
  }
  v.push_back({"MaxPool", {2, 3, 9, 7}, {3, 3}, {2, 1}, {2, 1}, {1, 1, 1, 1}, "NOTSET", 1, 0, true});
  v.push_back({"MaxPool", {1, 2, 5, 6, 7}, {2, 2, 2}, {2, 2, 2}, {}, {}, "NOTSET", 0, 0, true});
  uint32_t seed = 1;
  for (const auto& c : v)
    for (DType t : {DType::Float32, DType::Float64}) check_pool(c, t, seed++);
}

// MaxPool without Indices takes the separable path (row maxima, then column maxima):
// exact against the reference on SPP-style windows (stride 1, "same" pads, up to 13x13),
// strides, dilations and ceil_mode overhangs, every element type, with NaN / +-inf planted
// (NaN in a window's first tap is the result; elsewhere it is skipped, as the scan does).
TEST(Pool, MaxPoolSeparableMatchesReference) {
  std::vector<PoolCase> v;
  for (int64_t k : {5, 9, 13})
    v.push_back({"MaxPool", {1, 3, 13, 13}, {k, k}, {1, 1}, {}, {k / 2, k / 2, k / 2, k / 2}});
  v.push_back({"MaxPool", {1, 4, 20, 17}, {5, 5}, {1, 1}, {}, {2, 2, 2, 2}});
  v.push_back({"MaxPool", {2, 3, 9, 7}, {3, 2}, {2, 3}, {2, 1}, {1, 0, 2, 1}, "NOTSET", 1});
  v.push_back({"MaxPool", {1, 2, 8, 9}, {2, 2}, {3, 3}, {}, {}, "NOTSET", 1});
  v.push_back({"MaxPool", {1, 2, 11, 12}, {3, 3}, {2, 2}, {}, {}, "SAME_UPPER"});
  v.push_back({"MaxPool", {1, 2, 4, 3}, {5, 4}, {1, 1}, {}, {2, 2, 2, 1}});  // window wider than the map
  uint32_t seed = 100;
  for (const auto& c : v)
    for (DType t : {DType::Float32, DType::Float64, DType::Int8, DType::UInt8}) {
      Tensor x(t, c.x);
      const Tensor r = random_tensor(DType::Float64, c.x, seed++, -100.0, 100.0);
      for (int64_t i = 0; i < x.numel(); ++i) {
        const double d = r.data<double>()[i];
        const int64_t pick = i * 7919 % 31;  // planted specials, float types only
        const double special = pick == 0 ? NAN : pick == 1 ? -INFINITY : pick == 2 ? INFINITY : d;
        switch (t) {
          case DType::Float32: x.mutable_data<float>()[i] = static_cast<float>(special); break;
          case DType::Float64: x.mutable_data<double>()[i] = special; break;
          case DType::Int8: x.mutable_data<int8_t>()[i] = static_cast<int8_t>(std::floor(d)); break;
          default: x.mutable_data<uint8_t>()[i] = static_cast<uint8_t>(std::floor(d) + 100.0); break;
        }
      }
      ModelBuilder mb(19);
      mb.input("X", t, c.x);
      auto n = mb.node("MaxPool", {"X"}, {"Y"}).attr("kernel_shape", c.kernel).attr("auto_pad", c.auto_pad).attr("ceil_mode", c.ceil_mode);
      if (!c.strides.empty()) n.attr("strides", c.strides);
      if (!c.dilations.empty()) n.attr("dilations", c.dilations);
      if (!c.pads.empty()) n.attr("pads", c.pads);
      mb.output("Y");
      auto res = run_fast_and_reference(mb, {{"X", x}});
      EXPECT_TRUE(tensors_near(res.first.at(0), res.second.at(0), 0.0, 0.0))
          << dtype_name(t) << " " << shape_to_string(c.x) << " kernel " << c.kernel[0] << "x" << c.kernel[1];
    }
}

TEST(Pool, HandComputed) {
  // 4x4 input 0..15, 2x2 windows stride 2: max = bottom-right, average = block mean.
  Tensor x(DType::Float32, {1, 1, 4, 4});
  for (int i = 0; i < 16; ++i) x.mutable_data<float>()[i] = static_cast<float>(i);
  for (KernelMode m : {KernelMode::Fast, KernelMode::Reference}) {
    ModelBuilder mb(12);
    mb.input("X", DType::Float32, {1, 1, 4, 4});
    mb.node("MaxPool", {"X"}, {"Y", "I"}).attr("kernel_shape", std::vector<int64_t>{2, 2}).attr("strides", std::vector<int64_t>{2, 2});
    mb.node("AveragePool", {"X"}, {"A"}).attr("kernel_shape", std::vector<int64_t>{2, 2}).attr("strides", std::vector<int64_t>{2, 2});
    // count_include_pad: a 3x3 window at the corner covers 4 real pixels and 5 pads.
    mb.node("AveragePool", {"X"}, {"P"}).attr("kernel_shape", std::vector<int64_t>{3, 3}).attr("pads", std::vector<int64_t>{1, 1, 1, 1})
        .attr("strides", std::vector<int64_t>{3, 3}).attr("count_include_pad", int64_t{1});
    mb.output("Y").output("I").output("A").output("P");
    auto s = mb.session(options_for(m));
    auto out = run_all(*s, {{"X", x}});
    EXPECT_TRUE(tensors_near(out[0], Tensor::from_vector<float>({1, 1, 2, 2}, {5, 7, 13, 15})));
    EXPECT_EQ(out[1].to_int64_vector(), (std::vector<int64_t>{5, 7, 13, 15}));
    EXPECT_TRUE(tensors_near(out[2], Tensor::from_vector<float>({1, 1, 2, 2}, {2.5f, 4.5f, 10.5f, 12.5f})));
    // Windows start at -1 and 2: rows/cols {-1,0,1} and {2,3,4}, all inside the padded extent [-1, 5),
    // so every divisor is 9 even though each window holds only 4 real pixels.
    EXPECT_TRUE(tensors_near(out[3], Tensor::from_vector<float>({1, 1, 2, 2}, {(0 + 1 + 4 + 5) / 9.f, (2 + 3 + 6 + 7) / 9.f,
                                                                               (8 + 9 + 12 + 13) / 9.f, (10 + 11 + 14 + 15) / 9.f})));
  }
}

TEST(Pool, GlobalPools) {
  Tensor x = random_tensor(DType::Float32, {2, 3, 4, 5}, 9);
  ModelBuilder mb(13);
  mb.input("X", DType::Float32, x.shape());
  mb.node("GlobalAveragePool", {"X"}, {"A"});
  mb.node("GlobalMaxPool", {"X"}, {"M"});
  mb.output("A").output("M");
  auto s = mb.session();
  auto out = run_all(*s, {{"X", x}});
  Tensor ea(DType::Float32, {2, 3, 1, 1}), em(DType::Float32, {2, 3, 1, 1});
  for (int p = 0; p < 6; ++p) {
    double sum = 0, mx = -1e30;
    for (int i = 0; i < 20; ++i) sum += x.data<float>()[p * 20 + i], mx = std::max<double>(mx, x.data<float>()[p * 20 + i]);
    ea.mutable_data<float>()[p] = static_cast<float>(sum / 20), em.mutable_data<float>()[p] = static_cast<float>(mx);
  }
  EXPECT_TRUE(tensors_near(out[0], ea));
  EXPECT_TRUE(tensors_near(out[1], em, 0, 0));
}

// A kernel of 10^9 taps with pads of 5 * 10^8 over a few pixels is a legal window (every
// output covers the whole axis); the fast paths visit only the taps inside the input, so the
// run takes microseconds (it used to allocate gigabytes of per-tap tables, or loop 10^9 taps
// per output). Expected values from a scan over the input with the window's bounds
// [o - pad_begin, o - pad_begin + K) (strides and dilations 1); count_include_pad divides by
// the taps inside [-pad_begin, in + pad_end), the whole window here: K per axis.
struct HugeKernelCase {
  Shape x;
  std::vector<int64_t> kernel, pads;
};

void check_huge_kernel(const HugeKernelCase& c, DType t, int threads) {
  const size_t r = c.x.size() - 2;
  Tensor x = random_tensor(t == DType::Int8 ? DType::Int32 : t, c.x, 11, -100.0, 100.0);
  if (t == DType::Int8) {
    Tensor narrow(DType::Int8, c.x);
    for (int64_t i = 0; i < x.numel(); ++i) narrow.mutable_data<int8_t>()[i] = static_cast<int8_t>(x.data<int32_t>()[i]);
    x = narrow;
  }
  Shape out_shape{c.x[0], c.x[1]};
  for (size_t d = 0; d < r; ++d) out_shape.push_back(c.x[2 + d] + c.pads[d] + c.pads[r + d] - c.kernel[d] + 1);
  ModelBuilder mb(19);
  mb.input("X", t, c.x);
  mb.node("MaxPool", {"X"}, {"M", "I"}).attr("kernel_shape", c.kernel).attr("pads", c.pads);
  mb.output("M").output("I");
  const bool avg = t == DType::Float32 || t == DType::Float64;
  if (avg) {
    mb.node("AveragePool", {"X"}, {"A"}).attr("kernel_shape", c.kernel).attr("pads", c.pads);
    mb.node("AveragePool", {"X"}, {"P"}).attr("kernel_shape", c.kernel).attr("pads", c.pads).attr("count_include_pad", int64_t{1});
    mb.node("MaxPool", {"X"}, {"N"}).attr("kernel_shape", c.kernel).attr("pads", c.pads);  // no Indices: other paths
    mb.output("A").output("P").output("N");
  }
  const auto out = run_all(*mb.session(options_for(KernelMode::Fast, threads)), {{"X", x}});
  const std::vector<int64_t> in(c.x.begin() + 2, c.x.end()), os(out_shape.begin() + 2, out_shape.end());
  const int64_t planes = c.x[0] * c.x[1], IP = shape_product(in, 0, r), OP = shape_product(os, 0, r);
  double padded = 1;
  for (size_t d = 0; d < r; ++d) padded *= static_cast<double>(c.kernel[d]);
  std::vector<int64_t> oc(r), ic(r);
  for (int64_t pl = 0; pl < planes; ++pl)
    for (int64_t o = 0; o < OP; ++o) {
      unravel_index(o, os, oc.data());
      double mx = -1e300, sum = 0;
      int64_t n = 0, arg = -1;
      for (int64_t i = 0; i < IP; ++i) {
        unravel_index(i, in, ic.data());
        bool inside = true;
        for (size_t d = 0; d < r; ++d) inside = inside && ic[d] >= oc[d] - c.pads[d] && ic[d] < oc[d] - c.pads[d] + c.kernel[d];
        if (!inside) continue;
        const double v = x.get_as_double(pl * IP + i);
        if (arg < 0 || v > mx) mx = v, arg = i;
        sum += v, ++n;
      }
      const int64_t at = pl * OP + o;
      const std::string where = std::string(dtype_name(t)) + " " + shape_to_string(c.x) + " output " + std::to_string(o);
      ASSERT_GT(n, 0) << where;
      EXPECT_EQ(out[0].get_as_double(at), mx) << where;
      EXPECT_EQ(out[1].data<int64_t>()[at], pl * IP + arg) << where;
      if (!avg) continue;
      // float32: n terms of |x| <= 100 summed in float (partial sums <= 100 n, each add off by
      // <= 100 n u), divided and rounded: the mean is off by <= (n + 1) 100 u; float64 far less.
      const double tol = (n + 1) * 100.0 * 0x1p-24;
      EXPECT_NEAR(out[2].get_as_double(at), sum / n, tol) << where;
      EXPECT_NEAR(out[3].get_as_double(at), sum / padded, tol * n / padded) << where;
      EXPECT_EQ(out[4].get_as_double(at), mx) << where;
    }
}

TEST(Pool, KernelFarLargerThanTheInput) {
  const int64_t K = 1000000000, P = K / 2;
  const std::vector<HugeKernelCase> cases{
      {{1, 2, 5, 5}, {3, K}, {1, P, 1, P}},             // 2-D, the wide axis
      {{1, 2, 5, 5}, {K, 3}, {P, 1, P, 1}},             // 2-D, the tall axis
      {{2, 1, 4}, {K}, {P, P}},                         // 1-D
      {{1, 1, 3, 4, 5}, {K, 2, K}, {P, 0, P, P, 1, P}},  // 3-D
      {{1, 1, 4, 5}, {5 * K, 5 * K}, {5 * P, 5 * P, 5 * P, 5 * P}},  // padded count 2.5e19: past int64
  };
  for (const auto& c : cases)
    for (DType t : {DType::Float32, DType::Float64, DType::Int8}) check_huge_kernel(c, t, 1 + (c.x[1] > 1));
}

TEST(Pool, Errors) {
  ModelBuilder mb(13);
  mb.input("X", DType::Float32, {1, 1, 3, 3});
  mb.node("MaxPool", {"X"}, {"Y"}).name("p1").attr("kernel_shape", std::vector<int64_t>{5, 5});
  mb.output("Y");
  std::string e = error_message([&] { auto s = mb.session(); run_single(*s, {{"X", random_tensor(DType::Float32, {1, 1, 3, 3}, 1)}}); });
  EXPECT_NE(e.find("MaxPool 'p1': kernel extent 5"), std::string::npos) << e;
  EXPECT_NE(e.find("larger than the padded input 3"), std::string::npos) << e;
  ModelBuilder mb2(13);
  mb2.input("X", DType::Float32, {1, 1, 3});
  mb2.node("AveragePool", {"X"}, {"Y"}).name("p2").attr("kernel_shape", std::vector<int64_t>{2, 2});
  mb2.output("Y");
  e = error_message([&] { auto s = mb2.session(); run_single(*s, {{"X", random_tensor(DType::Float32, {1, 1, 3}, 1)}}); });
  EXPECT_NE(e.find("AveragePool 'p2': input has shape 1x1x3"), std::string::npos) << e;
}

// ---- normalization ----

// GlobalAveragePool over planes longer than its 256-float blocks (with a tail),
// float32 and float64, against a double sum. float32: a lane adds 16 terms of
// |x| <= 4 (partial sums <= 64), each add off by <= 64 u, so a lane by <= 1024 u,
// a block of 16 lanes by <= 16384 u = 64 u per term: the mean is off by <= 64 u.
TEST(Pool, GlobalAveragePoolLongPlanes) {
  for (DType t : {DType::Float32, DType::Float64})
    for (const Shape& xs : {Shape{1, 3, 80, 80}, Shape{2, 2, 7, 41}, Shape{1, 1, 1, 257}}) {
      const Tensor x = random_tensor(t, xs, 77, -4.0, 4.0);
      ModelBuilder mb(13);
      mb.input("X", t, xs);
      mb.node("GlobalAveragePool", {"X"}, {"A"});
      mb.output("A");
      auto out = run_all(*mb.session(), {{"X", x}}).at(0);
      const int64_t planes = xs[0] * xs[1], n = xs[2] * xs[3];
      Tensor want(t, {xs[0], xs[1], 1, 1});
      for (int64_t p = 0; p < planes; ++p) {
        double sum = 0;
        for (int64_t i = 0; i < n; ++i) sum += x.get_as_double(p * n + i);
        if (t == DType::Float32) want.mutable_data<float>()[p] = static_cast<float>(sum / n);
        else want.mutable_data<double>()[p] = sum / n;
      }
      EXPECT_TRUE(tensors_near(out, want, 16 * 0x1p-24 * 4.0 + 1e-7, 0.0)) << dtype_name(t) << " " << shape_to_string(xs);
    }
}

TEST(Norm, BatchNormHandComputed) {
  // y = (x - mean) / sqrt(var + eps) * scale + B with eps = 0 so values are exact.
  ModelBuilder mb(15);
  mb.input("X", DType::Float32, {1, 2, 1, 2});
  mb.initializer("s", Tensor::from_vector<float>({2}, {2, 3}));
  mb.initializer("b", Tensor::from_vector<float>({2}, {1, -1}));
  mb.initializer("m", Tensor::from_vector<float>({2}, {1, 2}));
  mb.initializer("v", Tensor::from_vector<float>({2}, {4, 9}));
  mb.node("BatchNormalization", {"X", "s", "b", "m", "v"}, {"Y"}).attr("epsilon", 0.0f);
  mb.output("Y");
  for (KernelMode m : {KernelMode::Fast, KernelMode::Reference}) {
    auto s = mb.session(options_for(m));
    Tensor y = run_single(*s, {{"X", Tensor::from_vector<float>({1, 2, 1, 2}, {3, 5, 8, 5})}});
    EXPECT_TRUE(tensors_near(y, Tensor::from_vector<float>({1, 2, 1, 2}, {3, 5, 5, 2})));
  }
}

TEST(Norm, FastMatchesReference) {
  for (DType t : {DType::Float32, DType::Float64}) {
    const Shape xs{2, 3, 5, 4};
    {
      ModelBuilder mb(15);
      mb.input("X", t, xs);
      mb.initializer("s", random_tensor(t, {3}, 1)).initializer("b", random_tensor(t, {3}, 2));
      mb.initializer("m", random_tensor(t, {3}, 3)).initializer("v", random_tensor(t, {3}, 4, 0.5, 2.0));
      mb.node("BatchNormalization", {"X", "s", "b", "m", "v"}, {"Y"});
      mb.node("InstanceNormalization", {"X", "s", "b"}, {"Z"});
      mb.output("Y").output("Z");
      auto r = run_fast_and_reference(mb, {{"X", random_tensor(t, xs, 5)}});
      EXPECT_TRUE(tensors_near(r.first[0], r.second[0], 1e-6, 1e-5));
      EXPECT_TRUE(tensors_near(r.first[1], r.second[1], 1e-6, 1e-5));
    }
    for (int64_t axis : {0, 1, -1, -2}) {
      ModelBuilder mb(17);
      mb.input("X", t, xs);
      Shape ps(xs.begin() + (axis < 0 ? axis + 4 : axis), xs.end());
      mb.initializer("s", random_tensor(t, ps, 1)).initializer("b", random_tensor(t, ps, 2));
      mb.node("LayerNormalization", {"X", "s", "b"}, {"Y", "M", "I"}).attr("axis", axis).attr("epsilon", 1e-3f);
      mb.output("Y").output("M").output("I");
      Tensor x = random_tensor(t, xs, 6);
      auto r = run_fast_and_reference(mb, {{"X", x}});
      for (int i = 0; i < 3; ++i) EXPECT_TRUE(tensors_near(r.first[i], r.second[i], 1e-6, 1e-5)) << "axis " << axis;
      // Independent check of the statistics output shape: shape[:axis] + ones.
      Shape stat(xs.begin(), xs.begin() + (axis < 0 ? axis + 4 : axis));
      stat.resize(4, 1);
      EXPECT_EQ(r.first[1].shape(), stat);
    }
  }
}

TEST(Norm, LayerNormHandComputed) {
  // Row {1, 3}: mean 2, var 1, so y = x - 2 = {-1, 1} (eps 0), InvStdDev 1.
  ModelBuilder mb(17);
  mb.input("X", DType::Float32, {1, 2});
  mb.initializer("s", Tensor::from_vector<float>({2}, {1, 1}));
  mb.node("LayerNormalization", {"X", "s"}, {"Y", "", "I"}).attr("epsilon", 0.0f);
  mb.output("Y").output("I");
  auto s = mb.session();
  auto out = run_all(*s, {{"X", Tensor::from_vector<float>({1, 2}, {1, 3})}});
  EXPECT_TRUE(tensors_near(out[0], Tensor::from_vector<float>({1, 2}, {-1, 1})));
  EXPECT_TRUE(tensors_near(out[1], Tensor::from_vector<float>({1, 1}, {1})));
}

// The float32 fast path (layer_norm_rows_f32: SIMD row sums in float32) on rows longer than
// the SIMD width with ragged tails, with and without B, against the reference path (double):
// two float32 reductions of length C bound the difference (reduction_atol), relative to the
// normalised values' size (|y| up to a few units).
TEST(Norm, LayerNormFloat32FastPathLongRows) {
  for (const Shape& xs : {Shape{6, 768}, Shape{2, 3, 1001}, Shape{4, 17}}) {
    for (bool with_bias : {true, false}) {
      const int64_t c = xs.back();
      ModelBuilder mb(17);
      mb.input("X", DType::Float32, xs);
      mb.initializer("s", random_tensor(DType::Float32, {c}, 1, 0.5, 1.5));
      mb.initializer("b", random_tensor(DType::Float32, {c}, 2));
      mb.node("LayerNormalization", with_bias ? std::vector<std::string>{"X", "s", "b"} : std::vector<std::string>{"X", "s"},
              {"Y", "M", "I"}).attr("epsilon", 1e-5f);
      mb.output("Y").output("M").output("I");
      auto r = run_fast_and_reference(mb, {{"X", random_tensor(DType::Float32, xs, 7, -3.0, 5.0)}});
      for (int i = 0; i < 3; ++i)
        EXPECT_TRUE(tensors_near(r.first[i], r.second[i], reduction_atol(DType::Float32, c), 1e-5))
            << shape_to_string(xs) << " output " << i << (with_bias ? " with B" : " without B");
    }
  }
}

// training_mode = 1 (opset 15): Y uses the batch's mean and biased variance per channel,
// the running statistics blend the inputs with them by momentum; checked in double.
TEST(Norm, BatchNormTrainingMode) {
  const Tensor x = random_tensor(DType::Float32, {3, 2, 4, 5}, 7);
  Tensor scale = random_tensor(DType::Float32, {2}, 8), bias = random_tensor(DType::Float32, {2}, 9);
  Tensor mean = random_tensor(DType::Float32, {2}, 10), var = random_tensor(DType::Float32, {2}, 11, 0.5, 2.0);
  ModelBuilder mb(15);
  mb.input("X", DType::Float32, {3, 2, 4, 5});
  mb.initializer("s", scale).initializer("b", bias).initializer("m", mean).initializer("v", var);
  mb.node("BatchNormalization", {"X", "s", "b", "m", "v"}, {"Y", "rm", "rv"})
      .attr("training_mode", int64_t{1}).attr("momentum", 0.8f).attr("epsilon", 1e-3f);
  mb.output("Y").output("rm").output("rv");
  for (KernelMode mode : {KernelMode::Fast, KernelMode::Reference}) {
    auto s = mb.session(options_for(mode, 2));
    auto out = run_all(*s, {{"X", x}});
    Tensor y(DType::Float32, x.shape()), rm(DType::Float32, {2}), rv(DType::Float32, {2});
    for (int c = 0; c < 2; ++c) {
      double sum = 0, sq = 0;
      for (int n = 0; n < 3; ++n)
        for (int k = 0; k < 20; ++k) sum += x.data<float>()[(n * 2 + c) * 20 + k];
      const double m = sum / 60;
      for (int n = 0; n < 3; ++n)
        for (int k = 0; k < 20; ++k) sq += std::pow(x.data<float>()[(n * 2 + c) * 20 + k] - m, 2);
      const double v = sq / 60;
      for (int n = 0; n < 3; ++n)
        for (int k = 0; k < 20; ++k) {
          const int i = (n * 2 + c) * 20 + k;
          y.mutable_data<float>()[i] = static_cast<float>((x.data<float>()[i] - m) / std::sqrt(v + 1e-3) *
                                                              scale.data<float>()[c] + bias.data<float>()[c]);
        }
      rm.mutable_data<float>()[c] = static_cast<float>(mean.data<float>()[c] * 0.8 + m * 0.2);
      rv.mutable_data<float>()[c] = static_cast<float>(var.data<float>()[c] * 0.8 + v * 0.2);
    }
    EXPECT_TRUE(tensors_near(out[0], y, 1e-5, 1e-5));
    EXPECT_TRUE(tensors_near(out[1], rm, 1e-6, 1e-6));
    EXPECT_TRUE(tensors_near(out[2], rv, 1e-6, 1e-6));
  }
}

TEST(Norm, Errors) {
  ModelBuilder mb(15);
  mb.input("X", DType::Float32, {1, 3, 2, 2});
  for (const char* n : {"s", "b", "m", "v"}) mb.initializer(n, random_tensor(DType::Float32, {4}, 1));
  mb.node("BatchNormalization", {"X", "s", "b", "m", "v"}, {"Y"}).name("bn");
  mb.output("Y");
  std::string e = error_message([&] { auto s = mb.session(); run_single(*s, {{"X", random_tensor(DType::Float32, {1, 3, 2, 2}, 1)}}); });
  EXPECT_EQ(e, "BatchNormalization 'bn': scale has shape 4, expected 3 for input 1x3x2x2");
  ModelBuilder mb2(9);  // the opset 1-13 training outputs (saved statistics) stay refused
  mb2.input("X", DType::Float32, {1, 3, 2, 2});
  for (const char* n : {"s", "b", "m", "v"}) mb2.initializer(n, random_tensor(DType::Float32, {3}, 1));
  mb2.node("BatchNormalization", {"X", "s", "b", "m", "v"}, {"Y", "rm", "rv"}).name("bt");
  mb2.output("Y");
  e = error_message([&] { mb2.session(); });
  EXPECT_NE(e.find("BatchNormalization 'bt': training outputs (running mean / var, saved statistics) of opsets 1-13"),
            std::string::npos) << e;
  ModelBuilder mb3(17);
  mb3.input("X", DType::Float32, {2, 3});
  mb3.initializer("s", random_tensor(DType::Float32, {2}, 1));
  mb3.node("LayerNormalization", {"X", "s"}, {"Y"}).name("ln").attr("axis", int64_t{1});
  mb3.output("Y");
  e = error_message([&] { auto s = mb3.session(); run_single(*s, {{"X", random_tensor(DType::Float32, {2, 3}, 1)}}); });
  EXPECT_EQ(e, "LayerNormalization 'ln': Scale has shape 2, expected the normalised shape 3");
}

// ---- softmax ----

TEST(Softmax, HandComputedAndStable) {
  // Softmax of {0, ln 3} is {1/4, 3/4}; adding 1000 must not overflow.
  const float l3 = std::log(3.0f);
  for (KernelMode m : {KernelMode::Fast, KernelMode::Reference}) {
    ModelBuilder mb(13);
    mb.input("X", DType::Float32, {2, 2});
    mb.node("Softmax", {"X"}, {"Y"});
    mb.node("LogSoftmax", {"X"}, {"L"});
    mb.output("Y").output("L");
    auto s = mb.session(options_for(m));
    auto out = run_all(*s, {{"X", Tensor::from_vector<float>({2, 2}, {0, l3, 1000, 1000 + l3})}});
    EXPECT_TRUE(tensors_near(out[0], Tensor::from_vector<float>({2, 2}, {0.25f, 0.75f, 0.25f, 0.75f})));
    EXPECT_TRUE(tensors_near(out[1], Tensor::from_vector<float>({2, 2}, {std::log(0.25f), std::log(0.75f), std::log(0.25f), std::log(0.75f)})));
  }
}

TEST(Softmax, EmptyAxisGivesAnEmptyOutput) {
  // A zero-length softmax axis (the fuzzer's case: the row paths divided by the axis length)
  // or zero rows: an empty output of the input's shape, for both ops and every axis.
  for (const Shape& shape : {Shape{3, 0}, Shape{0, 4}, Shape{2, 0, 5}}) {
    for (int64_t axis = 0; axis < static_cast<int64_t>(shape.size()); ++axis) {
      ModelBuilder mb(13);
      mb.input("X", DType::Float32, shape);
      mb.node("Softmax", {"X"}, {"Y"}).attr("axis", axis);
      mb.node("LogSoftmax", {"X"}, {"L"}).attr("axis", axis);
      mb.output("Y").output("L");
      auto s = mb.session();
      auto out = run_all(*s, {{"X", Tensor(DType::Float32, shape)}});
      EXPECT_EQ(out[0].shape(), shape) << axis;
      EXPECT_EQ(out[1].shape(), shape) << axis;
    }
  }
}

TEST(Softmax, OpsetAxisSemantics) {
  // Opset 11, axis 1 on 2x2x2: softmax over the 4 flattened trailing values.
  // Opset 13, axis 1: softmax over axis 1 only (pairs x[n, 0, k], x[n, 1, k]).
  Tensor x = Tensor::from_vector<float>({1, 2, 2}, {0, 0, 0, 0});
  for (int opset : {11, 13}) {
    ModelBuilder mb(opset);
    mb.input("X", DType::Float32, {1, 2, 2});
    mb.node("Softmax", {"X"}, {"Y"}).attr("axis", int64_t{1});
    mb.output("Y");
    auto s = mb.session();
    const float v = opset == 11 ? 0.25f : 0.5f;
    EXPECT_TRUE(tensors_near(run_single(*s, {{"X", x}}), Tensor::from_vector<float>({1, 2, 2}, {v, v, v, v}))) << opset;
  }
}

TEST(Softmax, FastMatchesReference) {
  for (int opset : {11, 13})
    for (int64_t axis : {0, 1, 2, -1})
      for (DType t : {DType::Float32, DType::Float64}) {
        ModelBuilder mb(opset);
        mb.input("X", t, {3, 5, 7});
        mb.node("Softmax", {"X"}, {"Y"}).attr("axis", axis);
        mb.node("LogSoftmax", {"X"}, {"L"}).attr("axis", axis);
        mb.output("Y").output("L");
        auto r = run_fast_and_reference(mb, {{"X", random_tensor(t, {3, 5, 7}, 4, -20, 20)}});
        EXPECT_TRUE(tensors_near(r.first[0], r.second[0], 1e-6, 1e-5)) << opset << " " << axis;
        EXPECT_TRUE(tensors_near(r.first[1], r.second[1], 1e-5, 1e-5)) << opset << " " << axis;
      }
}

TEST(Softmax, ErrorAxis) {
  ModelBuilder mb(13);
  mb.input("X", DType::Float32, {2, 3});
  mb.node("Softmax", {"X"}, {"Y"}).name("sm").attr("axis", int64_t{2});
  mb.output("Y");
  std::string e = error_message([&] { auto s = mb.session(); run_single(*s, {{"X", random_tensor(DType::Float32, {2, 3}, 1)}}); });
  EXPECT_EQ(e, "Softmax 'sm': axis 2 is out of range for input of rank 2");
}

// Short rows: len 1..33 (32 is AVX-512's two-register limit, 16 AVX2's),
// values spread over [-120, 20] so some exps are flushed (below e^-87) and
// some rows have -inf / +inf / NaN entries or are all -inf.
Tensor softmax_rows_input(int64_t rows, int64_t len, uint32_t seed) {
  Tensor x = random_tensor(DType::Float32, {rows, len}, seed, -120, 20);
  std::mt19937 rng(seed);
  float* p = x.mutable_data<float>();
  for (int64_t r = 0; r < rows; ++r) {
    const int kind = static_cast<int>(r % 7);
    // Every other NaN row gets a NaN with low payload bits set: the AVX2 exp adds
    // t's low bits into the exponent field, which a NaN reaching it could turn finite.
    const uint32_t nan_bits = r % 14 == 3 ? 0x7FC001FFu : 0x7FC00000u;
    float nan_value;
    std::memcpy(&nan_value, &nan_bits, sizeof nan_value);
    const float special = kind == 1 ? -INFINITY : kind == 2 ? INFINITY : kind == 3 ? nan_value : 0.0f;
    if (kind >= 1 && kind <= 3) p[r * len + rng() % len] = special;
    if (kind == 4)
      for (int64_t j = 0; j < len; ++j) p[r * len + j] = -INFINITY;
  }
  return x;
}

TEST(Softmax, ShortRowsFastMatchesReference) {
  const int64_t row_counts[] = {1, 7, 16, 100};
  for (int64_t len = 1; len <= 33; ++len) {
    const int64_t rows = row_counts[len % 4];
    ModelBuilder mb(13);
    mb.input("X", DType::Float32, {rows, len});
    mb.node("Softmax", {"X"}, {"Y"}).attr("axis", int64_t{-1});
    mb.output("Y");
    auto r = run_fast_and_reference(mb, {{"X", softmax_rows_input(rows, len, static_cast<uint32_t>(len))}});
    EXPECT_TRUE(tensors_near(r.first[0], r.second[0], 1e-6, 1e-5)) << "len " << len;
  }
}

// Each ISA's softmax rows against the double formula (NaN where it is NaN).
TEST(Softmax, SimdRowsEveryIsa) {
  for (const simd::F32Kernels* k : simd_tables())
    for (int64_t len = 1; len <= std::min<int64_t>(k->softmax_max_len, 100); ++len) {  // registers, then 3 passes
      const int64_t rows = 37;  // two groups of 16 (AVX-512) / four of 8 (AVX2) and single rows
      Tensor x = softmax_rows_input(rows, len, static_cast<uint32_t>(len + 50));
      const float* px = x.data<float>();
      std::vector<float> y(rows * len + 1, -3.0f);
      k->softmax_rows(px, rows, len, y.data());
      EXPECT_EQ(y[rows * len], -3.0f) << isa_of(*k) << " wrote past the rows, len " << len;
      for (int64_t r = 0; r < rows; ++r) {
        double m = -INFINITY, s = 0;
        for (int64_t j = 0; j < len; ++j) m = std::max(m, static_cast<double>(px[r * len + j]));
        for (int64_t j = 0; j < len; ++j) s += std::exp(px[r * len + j] - m);
        for (int64_t j = 0; j < len; ++j) {
          const double want = std::exp(px[r * len + j] - m) / s, got = y[r * len + j];
          if (std::isnan(want)) EXPECT_TRUE(std::isnan(got)) << isa_of(*k) << " len " << len << " row " << r;
          else EXPECT_NEAR(got, want, 1e-6 + 1e-5 * want) << isa_of(*k) << " len " << len << " row " << r << " j " << j;
        }
      }
    }
}

}  // namespace
}  // namespace test
}  // namespace onnxmini
