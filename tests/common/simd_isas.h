// The float32 SIMD tables (kernels/simd/f32_kernels.h) this machine can run,
// so that tests check every ISA's kernels (AVX2 and AVX-512), not only the
// active one. The portable level has no table: the op-level tests cover it
// when run with ONNXMINI_ISA=portable (tests/CMakeLists.txt does).
#pragma once
#include <string>
#include <vector>

#include "core/cpu_features.h"
#include "kernels/gemm_engine/qgemm.h"
#include "kernels/simd/f32_kernels.h"

namespace onnxmini {
namespace test {

inline std::vector<const simd::F32Kernels*> simd_tables() {
  std::vector<const simd::F32Kernels*> v;
  if (cpu::hw_has_avx2_fma()) v.push_back(&simd::f32_kernels_for(cpu::Isa::Avx2));
  if (cpu::hw_has_avx512()) v.push_back(&simd::f32_kernels_for(cpu::Isa::Avx512));
  return v;
}

// The int8 GEMM paths this machine can run (portable, AVX2, AVX-VNNI, AVX-512BW, AVX-512 VNNI).
inline std::vector<gemm::QIsa> qgemm_isas() {
  std::vector<gemm::QIsa> v;
  for (auto isa : {gemm::QIsa::Portable, gemm::QIsa::Avx2, gemm::QIsa::AvxVnni, gemm::QIsa::Avx512bw,
                   gemm::QIsa::Avx512vnni})
    if (gemm::qisa_available(isa)) v.push_back(isa);
  return v;
}

// Every ISA level this machine can run, portable first: for kernels that pick
// their code by level and offer a test override (e.g. nn::set_lanes_isa).
inline std::vector<cpu::Isa> isa_levels() {
  std::vector<cpu::Isa> v{cpu::Isa::Portable};
  if (cpu::hw_has_avx2_fma()) v.push_back(cpu::Isa::Avx2);
  if (cpu::hw_has_avx512()) v.push_back(cpu::Isa::Avx512);
  return v;
}

inline std::string isa_of(const simd::F32Kernels& k) { return cpu::isa_name(k.isa); }

}  // namespace test
}  // namespace onnxmini
