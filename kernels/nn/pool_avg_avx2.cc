// avgpool2d_separable's plane function compiled for AVX2 + FMA (see pool_avg_impl.h).
#include "kernels/nn/pool_avg_impl.h"

namespace onnxmini {
namespace nn {

const AvgPoolKernels& avgpool_kernels_avx2() {
  static const AvgPoolKernels k{cpu::Isa::Avx2, avg_plane_dispatch};
  return k;
}

}  // namespace nn
}  // namespace onnxmini
