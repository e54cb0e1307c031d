// The blocked pooling routines (nchwc_pool_impl.h) compiled for Avx2 (the build gives
// *_avx2.cc its flags): the 16-lane loops vectorise to full-width registers.
#include "kernels/nn/nchwc_pool_impl.h"

namespace onnxmini {
namespace nn {

const NchwcPoolKernels& nchwc_pool_kernels_avx2() {
  static const NchwcPoolKernels k = nchwc_pool_detail::make_table(cpu::Isa::Avx2);
  return k;
}

}  // namespace nn
}  // namespace onnxmini
