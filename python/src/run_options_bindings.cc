#include "run_options_bindings.h"

#include <pybind11/stl.h>

namespace py = pybind11;

namespace onnxmini_py {

void bind_run_options(py::module_& m) {
  py::class_<PyRunOptions>(m, "RunOptions", R"doc(
Options of one InferenceSession.run, as onnxruntime.RunOptions.

logid (the run's tag in its log line), log_severity_level (0 or 1: one summary line per run
through the session's logger; -1, the default, or 2..4: none), log_verbosity_level, terminate (set to True from another thread to
stop the runs using these options before their next node, Loop/Scan/If bodies included:
they raise Fail "Exiting due to terminate flag being set to true."),
only_execute_path_to_fetches (accepted; onnxmini runs every node), add_run_config_entry /
get_run_config_entry (entries are kept; none changes a run).)doc",
                            py::dynamic_attr())
      .def(py::init<>())
      .def_property(
          "logid", [](const PyRunOptions& o) { return o.run_tag; },
          [](PyRunOptions& o, const std::string& s) { o.run_tag = s; })
      .def_property(
          "log_severity_level", [](const PyRunOptions& o) { return o.run_log_severity_level; },
          [](PyRunOptions& o, int v) {
            if (v < -1 || v > 4)
              throw onnxmini::Error(onnxmini::ErrorCode::InvalidArgument,
                                    "RunOptions.log_severity_level must be -1 (the session's) or 0..4, got " +
                                        std::to_string(v));
            o.run_log_severity_level = v;
          })
      .def_property(
          "log_verbosity_level", [](const PyRunOptions& o) { return o.run_log_verbosity_level; },
          [](PyRunOptions& o, int v) { o.run_log_verbosity_level = v; })
      .def_property(
          "terminate", [](const PyRunOptions& o) { return o.terminate.load(); },
          [](PyRunOptions& o, bool v) { o.terminate.store(v); })
      .def_readwrite("only_execute_path_to_fetches", &PyRunOptions::only_execute_path_to_fetches)
      .def(
          "add_run_config_entry",
          [](PyRunOptions& o, const std::string& key, const std::string& value) { o.config[key] = value; },
          py::arg("key"), py::arg("value"))
      .def(
          "get_run_config_entry",
          [](const PyRunOptions& o, const std::string& key) {
            auto it = o.config.find(key);
            if (it == o.config.end())
              // A plain RuntimeError, as onnxruntime's.
              throw std::runtime_error("RunOptions does not have configuration with key: " + key);
            return it->second;
          },
          py::arg("key"))
      .def("_config_entries", [](const PyRunOptions& o) { return o.config; });
}

}  // namespace onnxmini_py
