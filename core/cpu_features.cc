// CPU detection via __builtin_cpu_supports (libgcc also checks that the OS
// saves the wider registers, XCR0), plus the ONNXMINI_ISA cap.
#include "core/cpu_features.h"

#include <cpuid.h>
#include <sched.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <set>
#include <string>
#include <thread>
#include <utility>

namespace onnxmini {
namespace cpu {

bool hw_has_avx2_fma() {
  static const bool v = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return v;
}

bool hw_has_avx512() {
  // The *_avx512.cc files are built with F/BW/DQ/VL; require all four.
  static const bool v = hw_has_avx2_fma() && __builtin_cpu_supports("avx512f") &&
                        __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq") &&
                        __builtin_cpu_supports("avx512vl");
  return v;
}

// CPUID leaf 7 feature bits the compilers' __builtin_cpu_supports does not name everywhere
// (clang 14 knows neither "avxvnni" nor, in every version, "avx512vnni"). The OS-saves-state
// check is covered by the AVX2 / AVX-512 tests these are combined with.
namespace {
bool cpuid7_bit(unsigned subleaf, int reg, unsigned bit) {
  unsigned r[4] = {0, 0, 0, 0};
  if (!__get_cpuid_count(7, subleaf, &r[0], &r[1], &r[2], &r[3])) return false;
  return (r[reg] >> bit) & 1u;
}
}  // namespace

bool hw_has_avx512_vnni() {
  static const bool v = hw_has_avx512() && cpuid7_bit(0, 2, 11);  // ECX bit 11: AVX512_VNNI
  return v;
}

bool hw_has_avx_vnni() {
  static const bool v = hw_has_avx2_fma() && cpuid7_bit(1, 0, 4);  // subleaf 1 EAX bit 4: AVX-VNNI
  return v;
}

Isa hw_isa() {
  if (hw_has_avx512()) return Isa::Avx512;
  if (hw_has_avx2_fma()) return Isa::Avx2;
  return Isa::Portable;
}

namespace {
Isa compute_active() {
  Isa hw = hw_isa();
  const char* env = std::getenv("ONNXMINI_ISA");
  if (!env || !*env) return hw;
  Isa want = hw;
  if (std::strcmp(env, "portable") == 0) want = Isa::Portable;
  else if (std::strcmp(env, "avx2") == 0) want = Isa::Avx2;
  else if (std::strcmp(env, "avx512") == 0) want = Isa::Avx512;
  return static_cast<int>(want) < static_cast<int>(hw) ? want : hw;
}
}  // namespace

Isa active_isa() {
  static const Isa v = compute_active();
  return v;
}

const char* isa_name(Isa isa) {
  switch (isa) {
    case Isa::Avx512: return "avx512";
    case Isa::Avx2: return "avx2";
    case Isa::Portable: return "portable";
  }
  return "portable";
}

namespace {

// One integer from a sysfs file, or -1.
long read_sysfs_long(const std::string& path) {
  std::ifstream f(path);
  long v = -1;
  if (!(f >> v)) return -1;
  return v;
}

int count_physical_cores() {
  cpu_set_t mask;
  CPU_ZERO(&mask);
  const int hw = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  if (sched_getaffinity(0, sizeof(mask), &mask) != 0) return hw;
  const int allowed = CPU_COUNT(&mask);
  std::set<std::pair<long, long>> cores;
  for (int c = 0; c < CPU_SETSIZE; ++c) {
    if (!CPU_ISSET(c, &mask)) continue;
    const std::string dir = "/sys/devices/system/cpu/cpu" + std::to_string(c) + "/topology/";
    const long package = read_sysfs_long(dir + "physical_package_id");
    const long core = read_sysfs_long(dir + "core_id");
    if (package < 0 || core < 0) return std::max(1, allowed);  // no topology: count what we may run on
    cores.insert({package, core});
  }
  return cores.empty() ? std::max(1, allowed) : static_cast<int>(cores.size());
}

}  // namespace

int physical_cores() {
  static const int n = count_physical_cores();
  return n;
}

}  // namespace cpu
}  // namespace onnxmini
