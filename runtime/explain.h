// Session::explain (`onnxmini run --explain`): each node's kernel asked, through
// Kernel::describe, which path it will take for the input shapes known before
// a run. Nothing runs and nothing is allocated in the kernels.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "onnxmini/session.h"
#include "runtime/execution_plan.h"

namespace onnxmini {

// `plan` is the main graph's; `threads` the session's intra-op pool size.
std::vector<KernelExplanation> explain_plan(const ExecutionPlan& plan, const SessionOptions& options, int threads,
                                            const std::map<std::string, std::vector<ExplainInput>>& observed);

}  // namespace onnxmini
