#include "kernels/signal/fft.h"

#include <cmath>

namespace onnxmini {
namespace signal {

namespace {
constexpr double kPi = 3.14159265358979323846;
bool is_power_of_two(int64_t n) { return n > 0 && (n & (n - 1)) == 0; }
}  // namespace

FftPlan::FftPlan(int64_t n) : n_(n) {
  if (n <= 1) return;
  bluestein_ = !is_power_of_two(n);
  m_ = n;
  if (bluestein_) {
    m_ = 1;
    while (m_ < 2 * n - 1) m_ <<= 1;
  }
  twiddle_.resize(m_);
  for (int64_t h = 1; h < m_; h <<= 1)
    for (int64_t k = 0; k < h; ++k) twiddle_[h + k] = std::polar(1.0, -kPi * static_cast<double>(k) / h);
  if (!bluestein_) return;
  chirp_.resize(n);
  for (int64_t k = 0; k < n; ++k) {
    // k^2 mod 2n keeps the angle small (exact in integers), so large k lose no precision.
    const int64_t k2 = static_cast<int64_t>((static_cast<unsigned __int128>(k) * k) % (2 * static_cast<uint64_t>(n)));
    chirp_[k] = std::polar(1.0, -kPi * static_cast<double>(k2) / n);
  }
  chirp_fft_.assign(m_, Complex(0, 0));
  chirp_fft_[0] = std::conj(chirp_[0]);
  for (int64_t k = 1; k < n; ++k) chirp_fft_[k] = chirp_fft_[m_ - k] = std::conj(chirp_[k]);
  radix2(chirp_fft_.data());
}

void FftPlan::radix2(Complex* a) const {
  const int64_t len = m_;
  for (int64_t i = 1, j = 0; i < len; ++i) {  // bit-reversal permutation
    int64_t bit = len >> 1;
    for (; j & bit; bit >>= 1) j ^= bit;
    j ^= bit;
    if (i < j) std::swap(a[i], a[j]);
  }
  for (int64_t half = 1; half < len; half <<= 1) {
    const Complex* tw = twiddle_.data() + half;
    for (int64_t start = 0; start < len; start += 2 * half) {
      Complex* lo = a + start;
      Complex* hi = lo + half;
      for (int64_t k = 0; k < half; ++k) {
        const Complex t = cmul(hi[k], tw[k]);
        hi[k] = lo[k] - t;
        lo[k] += t;
      }
    }
  }
}

void FftPlan::transform(Complex* data, bool inverse, Complex* scratch) const {
  if (n_ <= 1) return;
  if (inverse)
    for (int64_t i = 0; i < n_; ++i) data[i] = std::conj(data[i]);
  if (!bluestein_) {
    radix2(data);
  } else {
    for (int64_t j = 0; j < n_; ++j) scratch[j] = cmul(data[j], chirp_[j]);
    for (int64_t j = n_; j < m_; ++j) scratch[j] = Complex(0, 0);
    radix2(scratch);
    for (int64_t j = 0; j < m_; ++j) scratch[j] = std::conj(cmul(scratch[j], chirp_fft_[j]));  // inverse via conj
    radix2(scratch);
    const double scale = 1.0 / static_cast<double>(m_);
    for (int64_t k = 0; k < n_; ++k) data[k] = cmul(std::conj(scratch[k]) * scale, chirp_[k]);
  }
  if (inverse)
    for (int64_t i = 0; i < n_; ++i) data[i] = std::conj(data[i]);
}

RealFftPlan::RealFftPlan(int64_t length) : length_(length), half_(length / 2), twiddle_(length / 2 + 1) {
  for (int64_t k = 0; k <= length / 2; ++k) twiddle_[k] = std::polar(1.0, -2 * kPi * static_cast<double>(k) / length);
}

void RealFftPlan::forward(const double* x, Complex* out, Complex* work) const {
  const int64_t h = length_ / 2;
  Complex* z = work;  // z_j = x_2j + i x_2j+1
  for (int64_t j = 0; j < h; ++j) z[j] = Complex(x[2 * j], x[2 * j + 1]);
  half_.transform(z, false, work + h);
  // With E = FFT(even samples), O = FFT(odd samples): Z_k = E_k + i O_k, so
  // E_k = (Z_k + conj(Z_{h-k})) / 2, O_k = (Z_k - conj(Z_{h-k})) / 2i, X_k = E_k + w^k O_k.
  for (int64_t k = 0; k <= h; ++k) {
    const Complex zk = z[k == h ? 0 : k], zr = std::conj(z[k == 0 ? 0 : h - k]);
    const Complex even = 0.5 * (zk + zr), odd = Complex(0, -0.5) * (zk - zr);
    out[k] = even + cmul(twiddle_[k], odd);
  }
}

std::shared_ptr<const FftPlan> FftPlanCache::get(int64_t n) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = plans_.find(n);
  if (it != plans_.end()) return it->second;
  if (plans_.size() >= kMaxPlans) plans_.clear();  // many lengths: rebuild rather than grow without bound
  auto plan = std::make_shared<const FftPlan>(n);
  plans_[n] = plan;
  return plan;
}

std::shared_ptr<const RealFftPlan> FftPlanCache::get_real(int64_t length) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = real_plans_.find(length);
  if (it != real_plans_.end()) return it->second;
  if (real_plans_.size() >= kMaxPlans) real_plans_.clear();
  auto plan = std::make_shared<const RealFftPlan>(length);
  real_plans_[length] = plan;
  return plan;
}

int64_t fft_plan_elements(int64_t n) {
  if (n <= 1 || is_power_of_two(n)) return 2 * n;
  int64_t m = 1;
  while (m < 2 * n - 1) m <<= 1;
  return 3 * m + 2 * n;  // twiddles (m), chirp (n), chirp FFT (m), a line's buffer (n) and scratch (m)
}

void naive_dft(const Complex* in, Complex* out, int64_t n, bool inverse) {
  const double sign = inverse ? 1.0 : -1.0;
  for (int64_t k = 0; k < n; ++k) {
    Complex sum(0, 0);
    for (int64_t j = 0; j < n; ++j) {
      const int64_t jk = static_cast<int64_t>((static_cast<unsigned __int128>(j) * k) % static_cast<uint64_t>(n));
      sum += in[j] * std::polar(1.0, sign * 2 * kPi * static_cast<double>(jk) / n);
    }
    out[k] = sum;
  }
}

}  // namespace signal
}  // namespace onnxmini
