// spdlog behind the Logger facade: one dist_sink shared by every logger (stderr
// plus any LogCapture), one spdlog::logger per Logger so each line carries its
// tag as the logger name.
#include "core/logging.h"

#include <spdlog/logger.h>
#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/base_sink.h>
#include <spdlog/sinks/dist_sink.h>
#include <spdlog/sinks/stdout_sinks.h>

#include <algorithm>
#include <cctype>
#include <mutex>

#include "onnxmini/error.h"

namespace onnxmini {
namespace {

// Verbose -> trace, Fatal -> critical; the letter printed comes from SeverityLetter.
spdlog::level::level_enum to_spdlog(LogSeverity s) {
  switch (s) {
    case LogSeverity::Verbose: return spdlog::level::trace;
    case LogSeverity::Info: return spdlog::level::info;
    case LogSeverity::Warning: return spdlog::level::warn;
    case LogSeverity::Error: return spdlog::level::err;
    case LogSeverity::Fatal: return spdlog::level::critical;
  }
  return spdlog::level::critical;
}

LogSeverity from_spdlog(spdlog::level::level_enum l) {
  switch (l) {
    case spdlog::level::trace:
    case spdlog::level::debug: return LogSeverity::Verbose;
    case spdlog::level::info: return LogSeverity::Info;
    case spdlog::level::warn: return LogSeverity::Warning;
    case spdlog::level::err: return LogSeverity::Error;
    default: return LogSeverity::Fatal;
  }
}

// %* in the pattern: V, I, W, E or F (spdlog's own short names would say T and C).
class SeverityLetter : public spdlog::custom_flag_formatter {
 public:
  void format(const spdlog::details::log_msg& msg, const std::tm&, spdlog::memory_buf_t& dest) override {
    static constexpr char kLetters[] = "VIWEF";
    dest.push_back(kLetters[static_cast<int>(from_spdlog(msg.level))]);
  }
  std::unique_ptr<custom_flag_formatter> clone() const override { return std::make_unique<SeverityLetter>(); }
};

// The outputs every Logger writes to. Never destroyed: sessions may log while
// static objects are torn down (a profile written from a destructor).
struct Outputs {
  std::shared_ptr<spdlog::sinks::dist_sink_mt> all = std::make_shared<spdlog::sinks::dist_sink_mt>();
  std::shared_ptr<spdlog::sinks::stderr_sink_mt> stderr_sink = std::make_shared<spdlog::sinks::stderr_sink_mt>();
  std::mutex mu;
  int mutes = 0;  // live LogCaptures that mute stderr

  Outputs() {
    auto formatter = std::make_unique<spdlog::pattern_formatter>();
    formatter->add_flag<SeverityLetter>('*').set_pattern("%Y-%m-%d %H:%M:%S.%f [%*:%n] %v");
    stderr_sink->set_formatter(std::move(formatter));
    all->add_sink(stderr_sink);
  }
  void mute(bool on) {
    std::lock_guard<std::mutex> lk(mu);
    mutes += on ? 1 : -1;
    stderr_sink->set_level(mutes > 0 ? spdlog::level::off : spdlog::level::trace);
  }
};

Outputs& outputs() {
  static Outputs* o = new Outputs();
  return *o;
}

void check_levels(const std::string& tag, int severity, int verbosity) {
  if (severity < 0 || severity > 4)
    throw Error(ErrorCode::InvalidArgument,
                fmt::format("logger '{}': log severity level {} is not 0 (verbose) .. 4 (fatal)", tag, severity));
  if (verbosity < 0)
    throw Error(ErrorCode::InvalidArgument, fmt::format("logger '{}': log verbosity level {} is negative", tag, verbosity));
}

}  // namespace

Logger::Logger(std::string tag, int severity, int verbosity) : tag_(std::move(tag)) {
  set_levels(severity, verbosity);
  out_ = std::make_shared<spdlog::logger>(tag_, outputs().all);
  out_->set_level(spdlog::level::trace);  // filtering is ours (threshold_); the stderr sink flushes each line
}

Logger::~Logger() = default;

// Message key vs threshold: Info..Fatal have keys 1..4 and a verbose message of
// verbosity v has key -v. At severity s > 0 the threshold is s; at severity 0 it
// is -verbosity, so verbose messages pass exactly when v <= verbosity.
void Logger::set_levels(int severity, int verbosity) {
  check_levels(tag_, severity, verbosity);
  severity_.store(severity, std::memory_order_relaxed);
  verbosity_.store(verbosity, std::memory_order_relaxed);
  threshold_.store(severity > 0 ? severity : -verbosity, std::memory_order_relaxed);
}

void Logger::write(LogSeverity s, std::string_view message) const {
  out_->log(to_spdlog(s), spdlog::string_view_t(message.data(), message.size()));
}

Logger& default_logger() {
  static Logger* l = new Logger("onnxmini", static_cast<int>(LogSeverity::Warning), 0);
  return *l;
}

class LogCapture::Sink : public spdlog::sinks::base_sink<std::mutex> {
 public:
  std::vector<LogRecord> copy() {
    std::lock_guard<std::mutex> lk(mutex_);
    return records_;
  }
  void clear() {
    std::lock_guard<std::mutex> lk(mutex_);
    records_.clear();
  }

 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override {
    records_.push_back({from_spdlog(msg.level), std::string(msg.logger_name.data(), msg.logger_name.size()),
                        std::string(msg.payload.data(), msg.payload.size())});
  }
  void flush_() override {}

 private:
  std::vector<LogRecord> records_;
};

LogCapture::LogCapture(bool mute_stderr) : sink_(std::make_shared<Sink>()), muted_(mute_stderr) {
  outputs().all->add_sink(sink_);
  if (muted_) outputs().mute(true);
}

LogCapture::~LogCapture() {
  outputs().all->remove_sink(sink_);
  if (muted_) outputs().mute(false);
}

std::vector<LogRecord> LogCapture::records() const { return sink_->copy(); }

size_t LogCapture::count(std::string_view text, std::string_view tag) const {
  size_t n = 0;
  for (const LogRecord& r : sink_->copy())
    if (r.message.find(text) != std::string::npos && (tag.empty() || r.tag == tag)) ++n;
  return n;
}

void LogCapture::clear() { sink_->clear(); }

// Public API (include/onnxmini/logging.h).

void set_default_log_severity(int severity) {
  default_logger().set_levels(severity, default_logger().verbosity());
}
int default_log_severity() { return default_logger().severity(); }

void set_default_log_verbosity(int verbosity) {
  default_logger().set_levels(default_logger().severity(), verbosity);
}
int default_log_verbosity() { return default_logger().verbosity(); }

const char* log_severity_name(int severity) {
  static const char* const kNames[] = {"verbose", "info", "warning", "error", "fatal"};
  return severity >= 0 && severity <= 4 ? kNames[severity] : "?";
}

int log_severity_from_string(const std::string& text) {
  std::string lower = text;
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  for (int s = 0; s <= 4; ++s)
    if (lower == log_severity_name(s) || lower == std::to_string(s)) return s;
  throw Error(ErrorCode::InvalidArgument,
              fmt::format("log level '{}': expected verbose, info, warning, error, fatal or 0..4", text));
}

}  // namespace onnxmini
