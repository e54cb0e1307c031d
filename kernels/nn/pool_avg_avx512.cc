// avgpool2d_separable's plane function compiled for AVX-512 (F/BW/DQ/VL) (see pool_avg_impl.h).
#include "kernels/nn/pool_avg_impl.h"

namespace onnxmini {
namespace nn {

const AvgPoolKernels& avgpool_kernels_avx512() {
  static const AvgPoolKernels k{cpu::Isa::Avx512, avg_plane_dispatch};
  return k;
}

}  // namespace nn
}  // namespace onnxmini
