// GRU, every opset (1, 7, 14 with layout, 22): the shared recurrence kernel of
// rnn_common.h with the GRU cell (reference math in rnn_reference.cc, fast path
// in rnn_fast.cc and the gate kernels of rnn_gates.h).
#include "kernels/registry.h"
#include "kernels/rnn/rnn_common.h"

namespace onnxmini {
namespace {

std::unique_ptr<Kernel> make_gru(const KernelInfo& info) { return rnn::make_kernel(info, rnn::Cell::Gru); }

}  // namespace

ONNXMINI_REGISTER_KERNEL("gru", "", "GRU", 1, INT_MAX, make_gru);

}  // namespace onnxmini

ONNXMINI_KERNEL_FILE(rnn_gru);
