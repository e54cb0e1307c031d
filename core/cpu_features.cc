// CPU detection via __builtin_cpu_supports (libgcc also checks that the OS
// saves the wider registers, XCR0), plus the ONNXMINI_ISA cap.
#include "core/cpu_features.h"

#include <cstdlib>
#include <cstring>

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

}  // namespace cpu
}  // namespace onnxmini
