// The random ops' generator: counter-based, so element i of an output is a
// pure function of (stream key, i). Results do not depend on the thread
// count or on how the elements are split, and a seeded node gives the same
// output on every run and every machine (no std:: distribution, whose
// algorithms differ between standard libraries).
//
// key: the node's `seed` attribute (its float bits, so 1.0 and 1.5 differ) or,
// without a seed, a fresh value per run from std::random_device mixed with a
// process-wide counter. bits(i) = splitmix64 finaliser of key + i * golden
// ratio (a bijection of the counter: passes BigCrush as a generator).
#pragma once
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>

#include "kernels/kernel.h"

namespace onnxmini {
namespace random {

class CounterRng {
 public:
  explicit CounterRng(uint64_t key) : key_(key) {}

  uint64_t bits(uint64_t i) const {
    uint64_t z = key_ + (i + 1) * 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  // Uniform in [0, 1) with 53 random bits.
  double uniform(uint64_t i) const { return static_cast<double>(bits(i) >> 11) * 0x1.0p-53; }
  // Standard normal (Box-Muller on counters 2i and 2i + 1; 1 - u keeps the log finite).
  double normal(uint64_t i) const {
    constexpr double kTwoPi = 6.28318530717958647692;
    const double u1 = 1.0 - uniform(2 * i), u2 = uniform(2 * i + 1);
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(kTwoPi * u2);
  }

 private:
  uint64_t key_;
};

// The stream key for one run of a node: from `seed` when the node has one,
// else fresh entropy (a different stream on every run).
inline uint64_t stream_key(bool has_seed, float seed) {
  if (has_seed) {
    uint32_t b;
    std::memcpy(&b, &seed, sizeof b);
    return 0x5EEDull << 32 | b;
  }
  static std::atomic<uint64_t> runs{0};
  std::random_device rd;
  return (static_cast<uint64_t>(rd()) << 32 | rd()) ^ (runs.fetch_add(1) * 0xD1B54A32D192ED03ull);
}

// The node's seed attribute, if any.
struct SeedAttr {
  explicit SeedAttr(const KernelInfo& info)
      : has(info.attrs.has("seed")), value(has ? info.attrs.get_float("seed") : 0.f) {}
  uint64_t key() const { return stream_key(has, value); }
  bool has;
  float value;
};

}  // namespace random
}  // namespace onnxmini
