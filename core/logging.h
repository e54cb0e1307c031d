// Logging facade over spdlog with onnxruntime's severities (docs/logging.md).
//
//   ONNXMINI_LOG(log, Info, "thread pool: {} threads", n);
//   ONNXMINI_VLOG(log, 0, "node '{}' -> kernel {}", name, kernel);
//
// A Logger has a tag (what its lines show: a session's logid, or "onnxmini")
// and a threshold. The macros test the threshold first, so a message whose
// level is off costs one integer compare: its arguments are not evaluated and
// nothing is formatted. Every logger writes to the same process-wide outputs:
// stderr, one line per message ("2025-01-31 12:00:00.123456 [W:session-1] text"),
// plus the sinks of any live LogCapture (tests).
#pragma once
#include <fmt/format.h>

#include <atomic>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "onnxmini/logging.h"

namespace spdlog {
class logger;
}

namespace onnxmini {

class Logger {
 public:
  // severity 0..4 and verbosity >= 0 (InvalidArgument otherwise, naming `tag`).
  Logger(std::string tag, int severity, int verbosity);
  ~Logger();
  Logger(const Logger&) = delete;
  Logger& operator=(const Logger&) = delete;

  // One compare each: the level's key against the threshold (see rank() in logging.cc).
  bool enabled(LogSeverity s) const { return static_cast<int>(s) >= threshold_.load(std::memory_order_relaxed); }
  bool verbose_enabled(int verbosity) const { return -verbosity >= threshold_.load(std::memory_order_relaxed); }

  // Formats and writes unconditionally; call through the macros.
  template <typename... Args>
  void log(LogSeverity s, fmt::format_string<Args...> format, Args&&... args) const {
    write(s, fmt::vformat(format, fmt::make_format_args(args...)));
  }
  void write(LogSeverity s, std::string_view message) const;

  void set_levels(int severity, int verbosity);  // throws like the constructor
  int severity() const { return severity_.load(std::memory_order_relaxed); }
  int verbosity() const { return verbosity_.load(std::memory_order_relaxed); }
  const std::string& tag() const { return tag_; }

 private:
  std::string tag_;
  std::atomic<int> severity_{2}, verbosity_{0};
  std::atomic<int> threshold_{2};
  std::shared_ptr<spdlog::logger> out_;
};

// The process default logger, tag "onnxmini": messages that belong to no
// session, and the levels of sessions created with log_severity_level -1.
Logger& default_logger();

// One message as a LogCapture sees it.
struct LogRecord {
  LogSeverity severity = LogSeverity::Info;
  std::string tag, message;
};

// Test hook: while alive, every message written by any logger is also recorded
// here. By default stderr is muted meanwhile so verbose tests stay quiet.
class LogCapture {
 public:
  explicit LogCapture(bool mute_stderr = true);
  ~LogCapture();
  LogCapture(const LogCapture&) = delete;
  LogCapture& operator=(const LogCapture&) = delete;

  std::vector<LogRecord> records() const;
  // Records whose message contains `text` (and whose tag is `tag` when not empty).
  size_t count(std::string_view text, std::string_view tag = {}) const;
  void clear();

  class Sink;

 private:
  std::shared_ptr<Sink> sink_;
  bool muted_;
};

}  // namespace onnxmini

#define ONNXMINI_LOG(logger, severity, ...)                                                  \
  do {                                                                                       \
    const ::onnxmini::Logger& onnxmini_logger_ = (logger);                                   \
    if (onnxmini_logger_.enabled(::onnxmini::LogSeverity::severity))                         \
      onnxmini_logger_.log(::onnxmini::LogSeverity::severity, __VA_ARGS__);                  \
  } while (0)

// A verbose message of `verbosity` (0 the most important): shown at severity 0
// when verbosity <= the logger's verbosity level.
#define ONNXMINI_VLOG(logger, verbosity, ...)                                                \
  do {                                                                                       \
    const ::onnxmini::Logger& onnxmini_logger_ = (logger);                                   \
    if (onnxmini_logger_.verbose_enabled(verbosity))                                         \
      onnxmini_logger_.log(::onnxmini::LogSeverity::Verbose, __VA_ARGS__);                   \
  } while (0)
