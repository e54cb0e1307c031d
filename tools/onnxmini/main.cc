// onnxmini: run, inspect and profile ONNX models. Every error is one line on
// stderr and a non-zero exit code.
#include <cstdio>
#include <exception>
#include <string>

#include "onnxmini/error.h"
#include "onnxmini/logging.h"
#include "tools/onnxmini/commands.h"

namespace onnxmini_cli {
std::vector<Command>& commands() {
  static std::vector<Command> list;
  return list;
}

namespace {
// --log-level sets the severity; -v means verbose, and each further v raises the verbosity.
void set_log_levels(int verbose, const std::string& log_level) {
  if (!log_level.empty()) onnxmini::set_default_log_severity(onnxmini::log_severity_from_string(log_level));
  if (verbose > 0) {
    if (log_level.empty()) onnxmini::set_default_log_severity(onnxmini::LogSeverity::Verbose);
    onnxmini::set_default_log_verbosity(verbose - 1);
  }
}
}  // namespace
}  // namespace onnxmini_cli

int main(int argc, char** argv) {
  using namespace onnxmini_cli;
  CLI::App app{"onnxmini: a mini ONNX inference runtime with a built-in profiler"};
  app.require_subcommand(1);
  // Global logging options (docs/logging.md), accepted before or after the command.
  app.fallthrough();
  int verbose = 0;
  std::string log_level;
  app.add_flag("-v,--verbose", verbose,
               "log verbose messages (kernel per node, rewrites, ...) to stderr; repeat (-vv) for more detail");
  app.add_option("--log-level", log_level, "verbose, info, warning (default), error, fatal, or 0-4");
  std::vector<std::pair<CLI::App*, std::function<int()>>> runners;
  for (auto& c : commands()) {
    size_t before = app.get_subcommands({}).size();
    auto runner = c.setup(app);
    auto subs = app.get_subcommands({});
    if (subs.size() > before) runners.emplace_back(subs.back(), std::move(runner));
  }
  if (argc > 1 && argv[1][0] != '-') {
    std::string names;
    bool known = false;
    for (auto& [sub, run] : runners) {
      names += (names.empty() ? "" : ", ") + sub->get_name();
      known = known || sub->get_name() == argv[1];
    }
    if (!known) {
      std::fprintf(stderr, "onnxmini: error: unknown command '%s' (expected one of: %s)\n", argv[1], names.c_str());
      return 2;
    }
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "onnxmini: error: %s\n", e.what());
    return 2;
  }
  try {
    set_log_levels(verbose, log_level);
    for (auto& [sub, run] : runners)
      if (sub->parsed()) return run();
  } catch (const onnxmini::Error& e) {
    std::fprintf(stderr, "onnxmini: error: %s\n", e.what());
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "onnxmini: error: %s\n", e.what());
    return 1;
  }
  return 0;
}
