// Limits every fuzz target sets before its first input, so that the fuzzer reports
// crashes, sanitizer findings and hangs of onnxmini, not the legitimate size of a
// model: onnxmini's own memory budget (core/system_memory.h reads
// ONNXMINI_MEMORY_LIMIT) is kept well under libFuzzer's -rss_limit_mb, which
// scripts/fuzz.sh sets to 2048.
#pragma once
#include <cstdlib>

#include "onnxmini/logging.h"

namespace onnxmini_fuzz {

inline void set_limits() {
  setenv("ONNXMINI_MEMORY_LIMIT", "536870912", /*overwrite=*/0);  // 512 MiB
  // Errors only: a warning per input (an unused initializer, say) floods the fuzzer's log.
  onnxmini::set_default_log_severity(onnxmini::LogSeverity::Error);
}

}  // namespace onnxmini_fuzz
