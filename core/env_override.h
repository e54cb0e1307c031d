// Three-way switches that tests and benchmarks set from the environment (read once, when a
// kernel file's statics start): "1" forces a path on, "0" off, anything else or unset
// leaves the measured rule. Each kernel keeps its own enum and setter for tests.
#pragma once
#include <cstdlib>
#include <cstring>

namespace onnxmini {

// `on` for "1", `off` for "0", else `rule`, from environment variable `name`.
template <class E>
E env_override(const char* name, E rule, E off, E on) {
  const char* e = std::getenv(name);
  if (e && std::strcmp(e, "1") == 0) return on;
  if (e && std::strcmp(e, "0") == 0) return off;
  return rule;
}

}  // namespace onnxmini
