// Runs the onnxmini CLI built in this tree (ONNXMINI_CLI_PATH) and captures its
// exit code, stdout and stderr: the one helper the CLI tests share.
#pragma once
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace onnxmini::test {

struct CliResult {
  int exit_code;
  std::string out, err;
};

// env: assignments put before the command ("ONNXMINI_NCHWC=all"), or "".
inline CliResult run_cli(const std::string& args, const std::string& env = "") {
  namespace fs = std::filesystem;
  static int calls = 0;  // distinct capture files for each call of this process
  const std::string stem = "onnxmini_cli_" + std::to_string(::getpid()) + "_" + std::to_string(++calls);
  const fs::path out = fs::temp_directory_path() / (stem + ".out");
  const fs::path err = fs::temp_directory_path() / (stem + ".err");
  const int status =
      std::system((env + (env.empty() ? "" : " ") + std::string(ONNXMINI_CLI_PATH) + " " + args + " >" + out.string() + " 2>" + err.string()).c_str());
  auto slurp = [](const fs::path& p) {
    std::ifstream f(p);
    std::stringstream ss;
    ss << f.rdbuf();
    return ss.str();
  };
  CliResult r{WIFEXITED(status) ? WEXITSTATUS(status) : -1, slurp(out), slurp(err)};
  fs::remove(out);
  fs::remove(err);
  return r;
}

}  // namespace onnxmini::test
