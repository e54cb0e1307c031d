// Session::explain's inputs from a profile (`onnxmini run --explain`).
//
// Session::explain(observed) takes, per node event name, the node's *present tensor
// inputs in order* (absent optional inputs and non-tensor values skipped, exactly
// as a profile's input_type_shape lists them); a node whose list does not match its
// present inputs falls back to what is known at load (constants, declared shapes).
#pragma once
#include <map>
#include <string>
#include <vector>

#include "onnxmini/session.h"

ONNXMINI_API_BEGIN
namespace onnxmini {

// `observed` for Session::explain from a profile trace written by a session of the
// same model and options: each node's input_type_shape in its first kernel_time
// event (a body node's first execution). Throws naming the file when it cannot be read.
std::map<std::string, std::vector<ExplainInput>> observed_inputs(const std::string& trace_path);

}  // namespace onnxmini
ONNXMINI_API_END
