// RNN, every opset (1, 7, 14 with layout, 22): the shared recurrence kernel of
// rnn_common.h with the RNN cell (reference math in rnn_reference.cc, fast path
// in rnn_fast.cc and the gate kernels of rnn_gates.h).
#include "kernels/registry.h"
#include "kernels/rnn/rnn_common.h"

namespace onnxmini {
namespace {

std::unique_ptr<Kernel> make_rnn(const KernelInfo& info) { return rnn::make_kernel(info, rnn::Cell::Rnn); }

}  // namespace

ONNXMINI_REGISTER_KERNEL("rnn", "", "RNN", 1, INT_MAX, make_rnn);

}  // namespace onnxmini

ONNXMINI_KERNEL_FILE(rnn_rnn);
