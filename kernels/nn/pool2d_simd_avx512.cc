// The 2-D pool plane functions (average, max) compiled for AVX-512 (F/BW/DQ/VL) (see pool2d_simd_impl.h).
#include "kernels/nn/pool2d_simd_impl.h"

namespace onnxmini {
namespace nn {

const Pool2dKernels& pool2d_kernels_avx512() {
  static const Pool2dKernels k{cpu::Isa::Avx512, pool_plane_dispatch<SumOp>, pool_plane_dispatch<MaxOp>};
  return k;
}

}  // namespace nn
}  // namespace onnxmini
