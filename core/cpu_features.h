// Run-time CPU detection for the SIMD kernel paths. Files named *_avx2.cc /
// *_avx512.cc are compiled with those -m flags; callers must only enter them
// when the matching level here is available.
//
// ONNXMINI_ISA=avx512|avx2|portable (read once) caps the level, so a machine
// with AVX-512 can exercise the lower paths in tests. It never raises it.
#pragma once

namespace onnxmini {
namespace cpu {

enum class Isa { Portable = 0, Avx2 = 1, Avx512 = 2 };

// What the hardware and OS support (ignores ONNXMINI_ISA).
bool hw_has_avx2_fma();
bool hw_has_avx512();
bool hw_has_avx512_vnni();  // AVX-512 (as above) and AVX512_VNNI (vpdpbusd on zmm)
bool hw_has_avx_vnni();     // AVX2 + FMA and AVX-VNNI (vpdpbusd on ymm, VEX encoded)
Isa hw_isa();

// The level kernels should use: hw_isa() capped by ONNXMINI_ISA.
Isa active_isa();

// Physical cores this process may run on (distinct (package, core) pairs of
// the CPUs in its affinity mask, from /sys/devices/system/cpu), as
// onnxruntime counts them for intra_op_num_threads = 0: SMT siblings share
// one core's FMA units, so a second thread on them buys little for these
// kernels. Falls back to the affinity mask's CPU count (then to
// std::thread::hardware_concurrency) when the topology cannot be read.
int physical_cores();

// "avx512", "avx2" or "portable".
const char* isa_name(Isa isa);
inline const char* active_isa_name() { return isa_name(active_isa()); }

}  // namespace cpu
}  // namespace onnxmini
