// The blocked pooling routines (nchwc_pool_impl.h) compiled for Avx512 (the build gives
// *_avx512.cc its flags): the 16-lane loops vectorise to full-width registers.
#include "kernels/nn/nchwc_pool_impl.h"

namespace onnxmini {
namespace nn {

const NchwcPoolKernels& nchwc_pool_kernels_avx512() {
  static const NchwcPoolKernels k = nchwc_pool_detail::make_table(cpu::Isa::Avx512);
  return k;
}

}  // namespace nn
}  // namespace onnxmini
