// Turning a graph node into its kernel: the registry lookup (with the
// "unsupported op" error that names the node, op, domain and opset) and the
// KernelInfo a kernel is created from. Shared by the session and by constant
// folding, so both see a node the same way.
#pragma once
#include <memory>

#include "kernels/kernel.h"
#include "kernels/registry.h"
#include "runtime/graph.h"

namespace onnxmini {

// The registration for `node`; throws NotImplemented naming node, op, domain and opset.
const KernelRegistration& find_kernel(const GraphNode& node);

// The KernelInfo of `node`: attributes, present inputs/outputs, the constant
// inputs (initializers that feeds cannot replace), known dtypes, and the
// session's GEMM backend and kernel mode.
KernelInfo make_kernel_info(const Graph& g, const GraphNode& node, const SessionOptions& options);

// reg.factory(info), with creation errors prefixed by the node's label.
std::unique_ptr<Kernel> create_kernel(const KernelRegistration& reg, const KernelInfo& info);

}  // namespace onnxmini
