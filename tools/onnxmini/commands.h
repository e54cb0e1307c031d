// Subcommands register themselves here, so adding one is one new file.
#pragma once
#include <CLI/CLI.hpp>

#include <functional>
#include <string>
#include <vector>

namespace onnxmini_cli {

// Adds the subcommand to `app` and returns a function that runs it after parsing
// (returning the process exit code).
using CommandSetup = std::function<std::function<int()>(CLI::App& app)>;

struct Command {
  std::string name;
  CommandSetup setup;
};

std::vector<Command>& commands();

struct CommandRegistrar {
  CommandRegistrar(const std::string& name, CommandSetup setup) { commands().push_back({name, std::move(setup)}); }
};

}  // namespace onnxmini_cli
