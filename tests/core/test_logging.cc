// The logging facade (core/logging.h): onnxruntime's severity and verbosity
// rules, the macros' laziness (a disabled level evaluates and formats nothing),
// the capture hook, the public default-logger API and the stderr line format.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <regex>

#include "core/logging.h"
#include "onnxmini/error.h"

namespace onnxmini {
namespace {

// Formatting this type counts how often it happened, so a test can see whether
// a disabled message was formatted.
struct Counted {
  int* formats;
};

}  // namespace
}  // namespace onnxmini

template <>
struct fmt::formatter<onnxmini::Counted> : fmt::formatter<int> {
  auto format(const onnxmini::Counted& c, format_context& ctx) const {
    ++*c.formats;
    return fmt::formatter<int>::format(*c.formats, ctx);
  }
};

namespace onnxmini {
namespace {

// Restores the default logger's levels after a test changes them.
struct DefaultLevels {
  int severity = default_log_severity(), verbosity = default_log_verbosity();
  ~DefaultLevels() {
    set_default_log_severity(severity);
    set_default_log_verbosity(verbosity);
  }
};

// Writes one message at every severity and verbosity 0..2; returns the records seen.
std::vector<LogRecord> log_all(int severity, int verbosity) {
  Logger log("levels", severity, verbosity);
  LogCapture cap;
  for (int v = 0; v <= 2; ++v) ONNXMINI_VLOG(log, v, "verbose {}", v);
  ONNXMINI_LOG(log, Info, "info");
  ONNXMINI_LOG(log, Warning, "warning");
  ONNXMINI_LOG(log, Error, "error");
  ONNXMINI_LOG(log, Fatal, "fatal");
  return cap.records();
}

std::string messages(const std::vector<LogRecord>& records) {
  std::string s;
  for (const auto& r : records) s += (s.empty() ? "" : ",") + r.message;
  return s;
}

TEST(Logging, SeverityHidesLowerLevels) {
  EXPECT_EQ(messages(log_all(1, 5)), "info,warning,error,fatal");
  EXPECT_EQ(messages(log_all(2, 5)), "warning,error,fatal");
  EXPECT_EQ(messages(log_all(3, 0)), "error,fatal");
  EXPECT_EQ(messages(log_all(4, 0)), "fatal");
}

TEST(Logging, VerboseMessagesNeedSeverityZeroAndVerbosityAtMostTheLevel) {
  EXPECT_EQ(messages(log_all(0, 0)), "verbose 0,info,warning,error,fatal");
  EXPECT_EQ(messages(log_all(0, 1)), "verbose 0,verbose 1,info,warning,error,fatal");
  EXPECT_EQ(messages(log_all(0, 2)), "verbose 0,verbose 1,verbose 2,info,warning,error,fatal");
}

TEST(Logging, RecordsCarrySeverityAndTag) {
  auto records = log_all(0, 0);
  ASSERT_EQ(records.size(), 5u);
  const LogSeverity expected[] = {LogSeverity::Verbose, LogSeverity::Info, LogSeverity::Warning, LogSeverity::Error,
                                  LogSeverity::Fatal};
  for (size_t i = 0; i < records.size(); ++i) {
    EXPECT_EQ(records[i].severity, expected[i]) << records[i].message;
    EXPECT_EQ(records[i].tag, "levels");
  }
}

TEST(Logging, DisabledLevelEvaluatesAndFormatsNothing) {
  Logger log("lazy", 2, 0);
  int formats = 0, calls = 0;
  auto argument = [&] {
    ++calls;
    return Counted{&formats};
  };
  LogCapture cap;
  ONNXMINI_LOG(log, Info, "{}", argument());
  ONNXMINI_VLOG(log, 0, "{}", argument());
  EXPECT_EQ(calls, 0);
  EXPECT_EQ(formats, 0);
  EXPECT_TRUE(cap.records().empty());
  ONNXMINI_LOG(log, Warning, "{}", argument());
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(formats, 1);
  EXPECT_EQ(cap.count("1", "lazy"), 1u);
}

TEST(Logging, LevelsChangeAtRunTime) {
  Logger log("change", 3, 0);
  EXPECT_FALSE(log.enabled(LogSeverity::Warning));
  log.set_levels(0, 1);
  EXPECT_TRUE(log.enabled(LogSeverity::Warning));
  EXPECT_TRUE(log.verbose_enabled(1));
  EXPECT_FALSE(log.verbose_enabled(2));
  EXPECT_THROW(log.set_levels(5, 0), Error);
  EXPECT_THROW(log.set_levels(2, -1), Error);
  EXPECT_THROW(Logger("bad", -1, 0), Error);
}

TEST(Logging, DefaultLoggerFollowsThePublicApi) {
  DefaultLevels restore;
  set_default_log_severity(LogSeverity::Error);
  EXPECT_EQ(default_log_severity(), 3);
  LogCapture cap;
  ONNXMINI_LOG(default_logger(), Warning, "hidden");
  ONNXMINI_LOG(default_logger(), Error, "shown");
  set_default_log_severity(0);
  set_default_log_verbosity(1);
  ONNXMINI_VLOG(default_logger(), 1, "detail");
  EXPECT_EQ(messages(cap.records()), "shown,detail");
  EXPECT_EQ(cap.records()[0].tag, "onnxmini");
  EXPECT_THROW(set_default_log_severity(5), Error);
  EXPECT_THROW(set_default_log_verbosity(-2), Error);
}

TEST(Logging, SeverityNamesParse) {
  EXPECT_EQ(log_severity_from_string("verbose"), 0);
  EXPECT_EQ(log_severity_from_string("INFO"), 1);
  EXPECT_EQ(log_severity_from_string("Warning"), 2);
  EXPECT_EQ(log_severity_from_string("error"), 3);
  EXPECT_EQ(log_severity_from_string("4"), 4);
  for (int s = 0; s <= 4; ++s) EXPECT_EQ(log_severity_from_string(log_severity_name(s)), s);
  try {
    log_severity_from_string("loud");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("'loud'"), std::string::npos) << e.what();
  }
}

TEST(Logging, CaptureSeesOnlyItsLifetimeAndClears) {
  Logger log("window", 1, 0);
  ONNXMINI_LOG(log, Error, "before");  // stderr only
  {
    LogCapture cap;
    ONNXMINI_LOG(log, Info, "during");
    EXPECT_EQ(cap.count("during"), 1u);
    EXPECT_EQ(cap.count("before"), 0u);
    cap.clear();
    EXPECT_TRUE(cap.records().empty());
  }
  LogCapture later;
  EXPECT_TRUE(later.records().empty());
}

// One line on stderr: "YYYY-MM-DD HH:MM:SS.ffffff [W:tag] message".
TEST(Logging, StderrLineFormat) {
  std::fflush(stderr);
  char path[] = "/tmp/onnxmini_log_XXXXXX";
  const int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  const int saved = dup(2);
  dup2(fd, 2);
  {
    Logger log("fmt-tag", 0, 0);
    ONNXMINI_LOG(log, Warning, "disk {} is {}% full", "sda", 93);
    ONNXMINI_VLOG(log, 0, "detail");
    ONNXMINI_LOG(log, Fatal, "end");
  }
  std::fflush(stderr);
  dup2(saved, 2);
  close(saved);
  std::FILE* f = std::fopen(path, "r");
  ASSERT_NE(f, nullptr);
  std::string text;
  char buf[512];
  while (std::fgets(buf, sizeof buf, f)) text += buf;
  std::fclose(f);
  close(fd);
  unlink(path);
  const std::string stamp = R"(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{6})";
  EXPECT_TRUE(std::regex_match(text, std::regex(stamp + R"( \[W:fmt-tag\] disk sda is 93% full\n)" + stamp +
                                                R"( \[V:fmt-tag\] detail\n)" + stamp + R"( \[F:fmt-tag\] end\n)")))
      << text;
}

}  // namespace
}  // namespace onnxmini
