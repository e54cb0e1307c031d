// Logging levels (see docs/logging.md). The library writes its messages to
// stderr, one line each, through loggers with onnxruntime's severities:
//
//   onnxmini::set_default_log_severity(onnxmini::LogSeverity::Info);  // process-wide
//   onnxmini::SessionOptions opts;
//   opts.log_severity_level = 0;  // this session only: verbose (kernel per node, ...)
//
// A session's messages carry its tag (SessionOptions::logid, or "session-<n>");
// messages that belong to no session (einsum planning, ...) carry "onnxmini".
#pragma once
#include "onnxmini/export.h"
#include <string>

ONNXMINI_API_BEGIN
namespace onnxmini {

// onnxruntime's severities; a logger shows messages at or above its severity.
enum class LogSeverity : int { Verbose = 0, Info = 1, Warning = 2, Error = 3, Fatal = 4 };

// The default logger's severity (2, warning, until changed). Sessions whose
// SessionOptions::log_severity_level is -1 take it when they are created.
// Throws InvalidArgument outside 0..4.
void set_default_log_severity(int severity);
inline void set_default_log_severity(LogSeverity s) { set_default_log_severity(static_cast<int>(s)); }
int default_log_severity();

// Verbose messages of verbosity v are shown only at severity 0 and v <= this
// level (0 until changed). Throws InvalidArgument when negative.
void set_default_log_verbosity(int verbosity);
int default_log_verbosity();

// "verbose", "info", "warning", "error", "fatal" (any case) or "0".."4" -> 0..4;
// throws InvalidArgument naming the text otherwise.
int log_severity_from_string(const std::string& text);
// 0..4 -> "verbose" .. "fatal"; "?" otherwise.
const char* log_severity_name(int severity);

}  // namespace onnxmini
ONNXMINI_API_END
