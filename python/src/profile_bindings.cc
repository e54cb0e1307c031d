// The public trace analysis (include/onnxmini/profile.h) as the submodule
// onnxmini._onnxmini.profile. summary() and compare() return the very Table the
// CLI renders (`onnxmini profile summary|compare`), with its title lines, so
// onnxmini.profiling builds its DataFrames from the CLI's columns and cells.
#include "profile_bindings.h"

#include <pybind11/stl.h>

#include "onnxmini/profile.h"

namespace onnxmini_py {

namespace py = pybind11;
namespace prof = onnxmini::profile;

namespace {

// A table and the lines the CLI prints above it in text and Markdown.
struct TitledTable {
  prof::Table table;
  std::vector<std::string> title;
};

TitledTable summary(const prof::Trace& trace, const std::string& by, int skip_runs, int top) {
  prof::SummaryOptions o;
  o.by = prof::group_by_from_string(by);
  o.skip_runs = skip_runs;
  o.top = top;
  const prof::Summary s = prof::summarize(trace, o);
  return {prof::summary_table(s), prof::summary_title(s)};
}

TitledTable compare(const prof::Trace& base, const prof::Trace& other, const std::string& by, int skip_runs) {
  prof::CompareOptions o;
  o.by = prof::group_by_from_string(by);
  o.skip_runs = skip_runs;
  const prof::Comparison c = prof::compare(base, other, o);
  return {prof::comparison_table(c), prof::comparison_title(c)};
}

}  // namespace

void bind_profile(py::module_& m) {
  py::module_ p = m.def_submodule("profile", "Trace analysis of include/onnxmini/profile.h (onnxmini profile ...).");

  py::class_<prof::Trace>(p, "Trace", "The kernel events of a profile trace (onnxmini's or onnxruntime's).")
      .def_readonly("path", &prof::Trace::path)
      .def_readonly("num_runs", &prof::Trace::num_runs)
      .def_readonly("subgraph_executions", &prof::Trace::subgraph_executions,
                    "Body executions (If branch, Loop iteration, Scan step): Execute events that are not runs.")
      .def_readonly("run_us", &prof::Trace::run_us)
      .def_property_readonly("num_kernel_events", [](const prof::Trace& t) { return t.kernels.size(); })
      .def("__repr__", [](const prof::Trace& t) {
        return "<onnxmini profile trace '" + t.path + "': " + std::to_string(t.kernels.size()) + " kernel events, " +
               std::to_string(t.num_runs) + " runs>";
      });
  p.def("read_trace", &prof::read_trace, py::arg("path"), "Reads a trace file (raises NoSuchFile / InvalidArgument).");
  p.def("parse_trace", &prof::parse_trace, py::arg("text"), py::arg("path") = "<string>",
        "Parses trace JSON text; `path` names it in errors.");

  py::class_<TitledTable>(p, "Table", "A result table: the CLI's columns, cells as the CLI prints them.")
      .def_property_readonly("columns", [](const TitledTable& t) { return t.table.columns; })
      .def_property_readonly("numeric", [](const TitledTable& t) { return t.table.numeric; })
      .def_property_readonly("rows", [](const TitledTable& t) { return t.table.rows; })
      .def_property_readonly("title", [](const TitledTable& t) { return t.title; })
      .def(
          "render",
          [](const TitledTable& t, const std::string& format) {
            return t.table.render(prof::format_from_string(format), t.title);
          },
          py::arg("format") = "text", "The CLI's output: text, csv, json or markdown.");

  p.def("summary", &summary, py::arg("trace"), py::arg("by") = "op", py::arg("skip_runs") = 0, py::arg("top") = 0,
        "`onnxmini profile summary`: by 'op', 'node' or 'shape'; top 0 keeps every row.");
  p.def("compare", &compare, py::arg("base"), py::arg("other"), py::arg("by") = "shape", py::arg("skip_runs") = 0,
        "`onnxmini profile compare BASE OTHER`: by 'shape', 'node' or 'op'.");
}

}  // namespace onnxmini_py
