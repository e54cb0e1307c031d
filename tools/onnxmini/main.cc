// onnxmini: run, inspect and profile ONNX models. Every error is one line on
// stderr and a non-zero exit code.
#include <cstdio>
#include <exception>
#include <string>

#include "onnxmini/error.h"
#include "tools/onnxmini/commands.h"

namespace onnxmini_cli {
std::vector<Command>& commands() {
  static std::vector<Command> list;
  return list;
}
}  // namespace onnxmini_cli

int main(int argc, char** argv) {
  using namespace onnxmini_cli;
  CLI::App app{"onnxmini: a mini ONNX inference runtime with a built-in profiler"};
  app.require_subcommand(1);
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
