// onnxmini._onnxmini.RunOptions: include/onnxmini/session.h's RunOptions for Python,
// with onnxruntime's attribute names (logid, log_severity_level, terminate, ...).
#pragma once
#include <pybind11/pybind11.h>

#include <map>
#include <string>

#include "onnxmini/session.h"

namespace onnxmini_py {

// The C++ options plus what only the Python API has: onnxruntime's run config
// entries (kept and returned, none changes a run today) and its
// only_execute_path_to_fetches switch (onnxmini always runs every node).
struct PyRunOptions : onnxmini::RunOptions {
  std::map<std::string, std::string> config;
  bool only_execute_path_to_fetches = false;
};

void bind_run_options(pybind11::module_& m);

}  // namespace onnxmini_py
