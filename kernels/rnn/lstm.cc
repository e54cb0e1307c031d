// LSTM, every opset (1, 7, 14 with layout, 22): the shared recurrence kernel of
// rnn_common.h with the LSTM cell (reference math in rnn_reference.cc, fast path
// in rnn_fast.cc and the gate kernels of rnn_gates.h).
#include "kernels/registry.h"
#include "kernels/rnn/rnn_common.h"

namespace onnxmini {
namespace {

std::unique_ptr<Kernel> make_lstm(const KernelInfo& info) { return rnn::make_kernel(info, rnn::Cell::Lstm); }

}  // namespace

ONNXMINI_REGISTER_KERNEL("lstm", "", "LSTM", 1, INT_MAX, make_lstm);

}  // namespace onnxmini

ONNXMINI_KERNEL_FILE(rnn_lstm);
