// Complex FFT of any length, in double precision, for DFT and STFT.
//
// A plan is built once per transform length n and shared (read-only) by every
// line and thread that transforms that length:
//   - n a power of two: iterative radix-2 (bit-reversal permutation, then
//     log2(n) butterfly passes). The twiddles of the pass with half-size h sit
//     contiguously at table[h .. 2h) (exp(-2 pi i k / 2h), k < h), so every
//     pass reads its twiddles in order.
//   - any other n: Bluestein's algorithm. With w_k = exp(-i pi k^2 / n) and
//     jk = (j^2 + k^2 - (k - j)^2) / 2, the DFT becomes a convolution
//     X_k = w_k * sum_j (x_j w_j) conj(w_{k-j}), evaluated with radix-2
//     transforms of a power-of-two length m >= 2n - 1 (the FFT of the chirp
//     is precomputed in the plan). O(n log n) for every n, primes included.
// The inverse transform is conj(FFT(conj(x))), unscaled: callers divide by n.
// RealFftPlan transforms a real signal of even length L through a complex
// plan of length L/2 (even samples as real parts, odd as imaginary) and one
// O(L) untangling pass: half the work of the complex transform.
// naive_dft is the O(n^2) definition, the reference kernel and the test oracle.
#pragma once
#include <complex>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

namespace onnxmini {
namespace signal {

using Complex = std::complex<double>;

// a * b without the NaN / infinity recovery of std::complex's operator* (a
// library call when the product is NaN): the FFT inputs are finite or the
// result is NaN anyway.
inline Complex cmul(const Complex& a, const Complex& b) {
  return Complex(a.real() * b.real() - a.imag() * b.imag(), a.real() * b.imag() + a.imag() * b.real());
}

class FftPlan {
 public:
  explicit FftPlan(int64_t n);
  int64_t size() const { return n_; }
  // Complex elements of scratch that transform() needs (0 for radix-2 lengths).
  int64_t scratch_size() const { return bluestein_ ? m_ : 0; }
  // In place: data[k] = sum_j data[j] exp(-+2 pi i j k / n), minus sign forward,
  // plus inverse, no 1/n scaling. `scratch` holds scratch_size() elements.
  void transform(Complex* data, bool inverse, Complex* scratch) const;

 private:
  void radix2(Complex* data) const;  // forward, length m_
  int64_t n_ = 0, m_ = 0;  // m_: the radix-2 length (n itself, or Bluestein's padded length)
  bool bluestein_ = false;
  std::vector<Complex> twiddle_;     // per pass: [h, 2h) = exp(-2 pi i k / 2h), k < h
  std::vector<Complex> chirp_;       // Bluestein: w_k = exp(-i pi k^2 / n), k < n
  std::vector<Complex> chirp_fft_;   // Bluestein: radix-2 FFT of the conjugate chirp, wrapped to length m
};

// Forward transform of a real signal of even length L: the first L/2 + 1
// frequencies (the rest are their conjugates, X[L - k] = conj(X[k])).
class RealFftPlan {
 public:
  explicit RealFftPlan(int64_t length);  // length even, >= 2
  int64_t size() const { return length_; }
  // Complex elements of work that forward() needs.
  int64_t work_size() const { return half_.size() + half_.scratch_size(); }
  // out[0 .. L/2] = X[0 .. L/2] of the real signal x[0 .. L).
  void forward(const double* x, Complex* out, Complex* work) const;

 private:
  int64_t length_;
  FftPlan half_;
  std::vector<Complex> twiddle_;  // exp(-2 pi i k / L), k <= L/2
};

// Plans by length, built on first use and kept (a kernel object is shared by
// concurrent runs, so access is locked; at most kMaxPlans of each kind are kept).
class FftPlanCache {
 public:
  std::shared_ptr<const FftPlan> get(int64_t n);
  std::shared_ptr<const RealFftPlan> get_real(int64_t length);

 private:
  static constexpr size_t kMaxPlans = 16;
  std::mutex mu_;
  std::map<int64_t, std::shared_ptr<const FftPlan>> plans_;
  std::map<int64_t, std::shared_ptr<const RealFftPlan>> real_plans_;
};

// Complex elements a plan of length n holds (twiddles, chirps): to check before building one.
int64_t fft_plan_elements(int64_t n);

// out[k] = sum_j in[j] exp(-+2 pi i j k / n), unscaled; in and out must not alias.
void naive_dft(const Complex* in, Complex* out, int64_t n, bool inverse);

}  // namespace signal
}  // namespace onnxmini
