// The FFT (radix-2 and Bluestein) against the naive DFT for every length up to
// 130 and a few large / prime ones; DFT and STFT nodes (fast FFT path vs the
// naive reference kernel, round trips, onesided / inverse / dft_length / axis
// forms of opsets 17 and 20); window functions against numpy's published
// values; MelWeightMatrix's shape and triangle properties; error messages.
// (tests/python/test_signal_ops.py compares these ops with onnxruntime.)
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "kernels/signal/fft.h"
#include "tests/common/op_test_util.h"

namespace onnxmini {
namespace test {
namespace {

using signal::Complex;

std::vector<Complex> random_complex(int64_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<Complex> v(n);
  for (auto& c : v) c = Complex(u(rng), u(rng));
  return v;
}

// Rounding error of an FFT grows like eps * log2(n) * ||x||; the naive DFT's like eps * n
// (its twiddles are exact to eps, the sums have n terms). Allow both, with margin 16.
double fft_bound(int64_t n, const std::vector<Complex>& x) {
  double norm = 0;
  for (const auto& c : x) norm += std::norm(c);
  return 16 * 2.2e-16 * (std::log2(static_cast<double>(n)) + 1 + n) * std::sqrt(norm + 1);
}

TEST(Fft, MatchesNaiveDftForEveryLength) {
  std::vector<int64_t> lengths;
  for (int64_t n = 1; n <= 130; ++n) lengths.push_back(n);
  for (int64_t n : {256, 997, 1000, 1024, 1031}) lengths.push_back(n);
  for (int64_t n : lengths)
    for (bool inverse : {false, true}) {
      const auto x = random_complex(n, static_cast<uint32_t>(n));
      std::vector<Complex> want(n), got = x;
      signal::naive_dft(x.data(), want.data(), n, inverse);
      signal::FftPlan plan(n);
      std::vector<Complex> scratch(std::max<int64_t>(plan.scratch_size(), 1));
      plan.transform(got.data(), inverse, scratch.data());
      double err = 0;
      for (int64_t k = 0; k < n; ++k) err = std::max(err, std::abs(got[k] - want[k]));
      EXPECT_LE(err, fft_bound(n, x)) << "n " << n << (inverse ? " inverse" : " forward");
    }
}

std::vector<double> values_of(const Tensor& t) {
  std::vector<double> v;
  for (int64_t i = 0; i < t.numel(); ++i) v.push_back(t.get_as_double(i));
  return v;
}

Tensor signal_tensor(DType t, const Shape& s, uint32_t seed) { return random_values(t, s, seed, -1.0, 1.0); }

TEST(Dft, FastMatchesNaiveReference) {
  struct Case {
    Shape x;
    int64_t axis, inverse, onesided, length;  // length 0: no dft_length input
  };
  const std::vector<Case> cases = {
      {{2, 16, 1}, 1, 0, 0, 0},  {{2, 12, 2}, 1, 0, 0, 0}, {{3, 7, 1}, 1, 0, 1, 0},  {{2, 10, 2}, 1, 1, 0, 0},
      {{2, 9, 3, 2}, 1, 0, 0, 0}, {{2, 5, 6, 1}, 2, 0, 1, 0}, {{2, 9, 2}, 1, 0, 0, 16}, {{2, 20, 2}, 1, 0, 0, 13},
      {{1, 6, 2}, 1, 1, 1, 0},   {{1, 6, 2}, 1, 1, 1, 9},
      // Real input, even length: the half-length real plan (two-sided output filled by symmetry).
      {{2, 20, 1}, 1, 0, 0, 14}, {{2, 2, 1}, 1, 0, 0, 0}, {{3, 4, 30, 1}, 2, 0, 0, 0}, {{2, 7, 1}, 1, 0, 1, 12},
      {{2, 100, 1}, 1, 0, 1, 0}, {{2, 9, 1}, 1, 0, 0, 0}};
  for (const Case& c : cases)
    for (DType t : {DType::Float32, DType::Float64}) {
      std::vector<Tensor> in = {signal_tensor(t, c.x, 3)};
      in.push_back(c.length ? Tensor::scalar<int64_t>(c.length) : Tensor());
      auto attrs = [&](NodeBuilder& n) { n.attr("axis", c.axis).attr("inverse", c.inverse).attr("onesided", c.onesided); };
      EXPECT_TRUE(fast_matches_reference(17, "DFT", in, attrs, 1e-5, 1e-5)) << shape_to_string(c.x) << " axis " << c.axis;
    }
}

TEST(Dft, MatchesDefinitionAndRoundTrips) {
  // x real, length 8: X_k = sum_j x_j e^{-2 pi i jk/8}, checked against the naive transform
  // written out here.
  const std::vector<float> xs = {1, 2, -1, 0.5f, 3, -2, 0, 1};
  const Tensor x = Tensor::from_vector<float>({1, 8, 1}, xs);
  const Tensor y = run_op(17, "DFT", {x});
  ASSERT_EQ(y.shape(), (Shape{1, 8, 2}));
  for (int k = 0; k < 8; ++k) {
    Complex want(0, 0);
    for (int j = 0; j < 8; ++j) want += static_cast<double>(xs[j]) * std::polar(1.0, -2 * M_PI * j * k / 8);
    EXPECT_NEAR(y.get_as_double(2 * k), want.real(), 1e-5);
    EXPECT_NEAR(y.get_as_double(2 * k + 1), want.imag(), 1e-5);
  }
  // Opset 20 (axis as an input): inverse(forward(x)) = x, for a Bluestein length.
  const Tensor z = signal_tensor(DType::Float64, {2, 3, 11, 2}, 5);
  const Tensor axis = Tensor::scalar<int64_t>(-2);
  const Tensor f = run_op(20, "DFT", {z, Tensor(), axis});
  const Tensor back = run_op(20, "DFT", {f, Tensor(), axis}, [](NodeBuilder& n) { n.attr("inverse", int64_t{1}); });
  EXPECT_TRUE(tensors_near(back, z, 1e-12, 1e-12));
  // Real input: onesided forward, then the inverse real FFT (inverse + onesided) gives x back.
  const Tensor r = signal_tensor(DType::Float64, {2, 10, 1}, 6);
  const Tensor half = run_op(20, "DFT", {r, Tensor(), Tensor::scalar<int64_t>(1)}, [](NodeBuilder& n) { n.attr("onesided", int64_t{1}); });
  ASSERT_EQ(half.shape(), (Shape{2, 6, 2}));
  const Tensor real = run_op(20, "DFT", {half, Tensor(), Tensor::scalar<int64_t>(1)},
                             [](NodeBuilder& n) { n.attr("onesided", int64_t{1}).attr("inverse", int64_t{1}); });
  EXPECT_TRUE(tensors_near(real, r, 1e-12, 1e-12));
}

TEST(Dft, HalfTypesRoundTheFloat32ResultOnce) {
  // float16 / bfloat16 inputs are widened exactly, transformed in double and rounded once:
  // the result equals the float32 transform of the widened input, narrowed.
  for (DType half : {DType::Float16, DType::BFloat16}) {
    const Tensor f = signal_tensor(DType::Float32, {2, 12, 2}, 21);
    Tensor h(half, f.shape()), widened(DType::Float32, f.shape());
    for (int64_t i = 0; i < f.numel(); ++i) {
      const float v = f.data<float>()[i];
      const uint16_t bits = half == DType::Float16 ? float_to_half(v) : float_to_bfloat16(v);
      static_cast<uint16_t*>(h.raw_mut())[i] = bits;
      widened.mutable_data<float>()[i] = half == DType::Float16 ? half_to_float(bits) : bfloat16_to_float(bits);
    }
    const Tensor yh = run_op(17, "DFT", {h}), yf = run_op(17, "DFT", {widened});
    ASSERT_EQ(yh.dtype(), half);
    for (int64_t i = 0; i < yf.numel(); ++i) {
      const float v = yf.data<float>()[i];
      const uint16_t want = half == DType::Float16 ? float_to_half(v) : float_to_bfloat16(v);
      EXPECT_EQ(static_cast<const uint16_t*>(yh.raw())[i], want) << dtype_name(half) << " element " << i;
    }
  }
}

TEST(Dft, Errors) {
  const Tensor x = signal_tensor(DType::Float32, {2, 8, 3}, 1);
  EXPECT_NE(op_error(17, "DFT", {x}).find("last dimension of 1 (real) or 2 (complex)"), std::string::npos);
  const Tensor ok = signal_tensor(DType::Float32, {2, 8, 2}, 1);
  EXPECT_NE(op_error(17, "DFT", {ok}, [](NodeBuilder& n) { n.attr("axis", int64_t{2}); }).find("axis 2 is out of range"),
            std::string::npos);
  EXPECT_NE(op_error(17, "DFT", {ok, Tensor::scalar<int64_t>(0)}).find("dft_length must be positive, got 0"), std::string::npos);
  EXPECT_NE(op_error(17, "DFT", {ok, Tensor::scalar<int64_t>(int64_t{1} << 60)}).find("dft_length"), std::string::npos);
}

TEST(Stft, MatchesFramewiseDft) {
  const Tensor x = signal_tensor(DType::Float64, {2, 40, 1}, 9);
  const Tensor w = signal_tensor(DType::Float64, {12}, 10);
  const Tensor y = run_op(17, "STFT", {x, Tensor::scalar<int64_t>(5), w});
  const int64_t frames = (40 - 12) / 5 + 1, bins = 12 / 2 + 1;
  ASSERT_EQ(y.shape(), (Shape{2, frames, bins, 2}));
  for (int64_t b = 0; b < 2; ++b)
    for (int64_t f = 0; f < frames; ++f)
      for (int64_t k = 0; k < bins; ++k) {
        Complex want(0, 0);
        for (int64_t j = 0; j < 12; ++j)
          want += x.get_as_double(b * 40 + f * 5 + j) * w.get_as_double(j) * std::polar(1.0, -2 * M_PI * j * k / 12);
        const int64_t at = ((b * frames + f) * bins + k) * 2;
        EXPECT_NEAR(y.get_as_double(at), want.real(), 1e-12);
        EXPECT_NEAR(y.get_as_double(at + 1), want.imag(), 1e-12);
      }
  // Complex signal, no window (frame_length input), two-sided, prime frame length: fast vs naive.
  const Tensor c = signal_tensor(DType::Float32, {1, 50, 2}, 11);
  EXPECT_TRUE(fast_matches_reference(17, "STFT", {c, Tensor::scalar<int64_t>(7), Tensor(), Tensor::scalar<int64_t>(13)},
                                     [](NodeBuilder& n) { n.attr("onesided", int64_t{0}); }, 1e-5, 1e-5));
  EXPECT_NE(op_error(17, "STFT", {x, Tensor::scalar<int64_t>(5), w, Tensor::scalar<int64_t>(10)})
                .find("frame_length is 10 but the window has 12 entries"),
            std::string::npos);
  EXPECT_NE(op_error(17, "STFT", {x, Tensor::scalar<int64_t>(0), w}).find("frame_step must be positive"), std::string::npos);
}

TEST(Windows, MatchNumpyValues) {
  // numpy.hanning(5) = [0, .5, 1, .5, 0] (symmetric); the periodic window of size 4 is hanning(5)[:4].
  auto run = [](const char* op, int64_t size, int64_t periodic) {
    return values_of(run_op(17, op, {Tensor::scalar<int64_t>(size)}, [&](NodeBuilder& n) { n.attr("periodic", periodic); }));
  };
  const std::vector<double> hann = run("HannWindow", 5, 0);
  const double want_hann[] = {0, 0.5, 1, 0.5, 0};
  for (int i = 0; i < 5; ++i) EXPECT_NEAR(hann[i], want_hann[i], 1e-7);
  const std::vector<double> hann_p = run("HannWindow", 4, 1);
  for (int i = 0; i < 4; ++i) EXPECT_NEAR(hann_p[i], want_hann[i], 1e-7);
  // numpy.hamming(5) uses 0.54 / 0.46; ONNX uses 25/46 / 21/46: ends are 4/46.
  const std::vector<double> ham = run("HammingWindow", 5, 0);
  EXPECT_NEAR(ham[0], 4.0 / 46, 1e-7);
  EXPECT_NEAR(ham[2], 1.0, 1e-7);
  // numpy.blackman(5) = [0, 0.34, 1, 0.34, 0] (up to -1.4e-17 at the ends).
  const std::vector<double> bl = run("BlackmanWindow", 5, 0);
  const double want_bl[] = {0, 0.34, 1, 0.34, 0};
  for (int i = 0; i < 5; ++i) EXPECT_NEAR(bl[i], want_bl[i], 1e-7);
  EXPECT_EQ(run("HannWindow", 1, 0), std::vector<double>{1.0});  // numpy's convention for N = 0
  const Tensor d = run_op(17, "HannWindow", {Tensor::scalar<int32_t>(3)}, [](NodeBuilder& n) { n.attr("output_datatype", int64_t{11}); });
  EXPECT_EQ(d.dtype(), DType::Float64);
  EXPECT_NE(op_error(17, "HannWindow", {Tensor::scalar<int64_t>(-1)}).find("size must be non-negative, got -1"), std::string::npos);
  EXPECT_NE(op_error(17, "HannWindow", {Tensor::scalar<int64_t>(3)}, [](NodeBuilder& n) { n.attr("output_datatype", int64_t{8}); })
                .find("output dtype code 8"),
            std::string::npos);
}

TEST(MelWeightMatrix, TrianglesPartitionTheBand) {
  const Tensor m = run_op(17, "MelWeightMatrix",
                          {Tensor::scalar<int64_t>(8), Tensor::scalar<int64_t>(64), Tensor::scalar<int64_t>(8000),
                           Tensor::scalar<float>(100.f), Tensor::scalar<float>(3500.f)});
  ASSERT_EQ(m.shape(), (Shape{33, 8}));
  // Every band is a triangle: values in [0, 1], a peak of exactly 1, non-zero on one contiguous run.
  for (int64_t i = 0; i < 8; ++i) {
    double peak = 0;
    int runs = 0;
    bool inside = false;
    for (int64_t j = 0; j < 33; ++j) {
      const double v = m.get_as_double(j * 8 + i);
      EXPECT_GE(v, 0);
      EXPECT_LE(v, 1);
      peak = std::max(peak, v);
      if (v > 0 && !inside) ++runs;
      inside = v > 0;
    }
    EXPECT_EQ(peak, 1.0) << "band " << i;
    EXPECT_EQ(runs, 1) << "band " << i;
  }
  // float16 edges (T2 allows the half types) give the same matrix (100 and 3500 are exact in float16).
  Tensor lo(DType::Float16, {}), hi(DType::Float16, {});
  static_cast<uint16_t*>(lo.raw_mut())[0] = float_to_half(100.f);
  static_cast<uint16_t*>(hi.raw_mut())[0] = float_to_half(3500.f);
  const Tensor mh = run_op(17, "MelWeightMatrix",
                           {Tensor::scalar<int64_t>(8), Tensor::scalar<int64_t>(64), Tensor::scalar<int64_t>(8000), lo, hi});
  EXPECT_TRUE(tensors_near(mh, m, 0, 0));
  EXPECT_NE(op_error(17, "MelWeightMatrix",
                     {Tensor::scalar<int64_t>(8), Tensor::scalar<int64_t>(64), Tensor::scalar<int64_t>(8000),
                      Tensor::scalar<float>(100.f), Tensor::scalar<float>(20000.f)})
                .find("outside [0, 33)"),
            std::string::npos);
}

}  // namespace
}  // namespace test
}  // namespace onnxmini
