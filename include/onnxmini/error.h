// One exception type for every error the library reports. Messages are meant to
// be shown to a user as they are: they name the model part (node, input,
// initializer) and the offending value.
#pragma once
#include "onnxmini/export.h"
#include <stdexcept>
#include <string>

ONNXMINI_API_BEGIN
namespace onnxmini {

enum class ErrorCode {
  InvalidModel,     // the model file or graph is malformed
  NotImplemented,   // an op, dtype or attribute value this runtime does not support
  InvalidArgument,  // a bad feed, option or API argument
  RuntimeError,     // a failure while running (e.g. an index out of range in the data)
  IoError,          // a file could not be read or written
  Terminated,       // a run stopped by RunOptions::terminate (onnxruntime's FAIL status)
};

class Error : public std::runtime_error {
 public:
  Error(ErrorCode code, const std::string& message) : std::runtime_error(message), code_(code) {}
  ErrorCode code() const { return code_; }

 private:
  ErrorCode code_;
};

}  // namespace onnxmini
ONNXMINI_API_END
