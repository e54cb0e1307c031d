// onnxmini._onnxmini: the C++ side of the Python package. Public API only
// (include/onnxmini/). The Python classes in onnxmini/ wrap these objects.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <map>

#include "convert.h"
#include "einsum_bindings.h"
#include "profile_bindings.h"
#include "run_options_bindings.h"
#include "onnxmini/onnxmini.h"

namespace py = pybind11;
using namespace onnxmini;
using onnxmini_py::tensor_from_array;
using onnxmini_py::value_to_python;

namespace {

// ---- exceptions: onnxruntime's classes (onnxruntime_pybind11_state), all subclasses of
// OnnxMiniError(RuntimeError); one per ErrorCode, plus those no onnxmini error maps to
// (kept so `except onnxruntime_pybind11_state.X` code runs after swapping the import).
PyObject* g_base = nullptr;
PyObject* g_invalid_protobuf = nullptr;
std::map<ErrorCode, PyObject*> g_errors;

PyObject* new_error_class(py::module_& m, const char* name, PyObject* parent) {
  py::object cls = py::reinterpret_steal<py::object>(
      PyErr_NewException((std::string("onnxmini.") + name).c_str(), parent, nullptr));
  m.attr(name) = cls;
  return cls.release().ptr();  // the module keeps a reference too; never freed
}

void register_errors(py::module_& m) {
  static py::exception<Error> base(m, "OnnxMiniError", PyExc_RuntimeError);
  g_base = base.ptr();
  const std::pair<ErrorCode, const char*> names[] = {
      {ErrorCode::InvalidModel, "InvalidGraph"},       {ErrorCode::NotImplemented, "NotImplemented"},
      {ErrorCode::InvalidArgument, "InvalidArgument"}, {ErrorCode::RuntimeError, "RuntimeException"},
      {ErrorCode::IoError, "NoSuchFile"},              {ErrorCode::Terminated, "Fail"}};
  for (const auto& [code, name] : names) g_errors[code] = new_error_class(m, name, g_base);
  // onnxruntime raises INVALID_PROTOBUF for bytes that do not parse: a kind of InvalidGraph here.
  g_invalid_protobuf = new_error_class(m, "InvalidProtobuf", g_errors[ErrorCode::InvalidModel]);
  for (const char* unused : {"NoModel", "EngineError", "ModelLoaded", "EPFail"}) new_error_class(m, unused, g_base);
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const Error& e) {
      auto it = g_errors.find(e.code());
      PyObject* cls = it != g_errors.end() ? it->second : g_base;
      // The loader's one message for bytes protobuf cannot parse (runtime/model_loader.cc).
      if (e.code() == ErrorCode::InvalidModel &&
          std::string_view(e.what()).rfind("not a valid ONNX model: protobuf parsing failed", 0) == 0)
        cls = g_invalid_protobuf;
      PyErr_SetString(cls, e.what());
    }
  });
}

// ---- feeds and binding
using Feeds = std::vector<std::pair<std::string, Value>>;

// Sequence and optional inputs are read by the input's declared type (lists, None).
Feeds feeds_from_dict(const Session& session, const py::dict& feed) {
  Feeds feeds;
  feeds.reserve(feed.size());
  for (auto item : feed) {
    std::string name = py::str(item.first).cast<std::string>();
    std::string type;
    for (const auto& in : session.inputs())
      if (in.name == name) type = in.type;
    feeds.emplace_back(name, onnxmini_py::value_from_python(item.second, type, "input '" + name + "'"));
  }
  return feeds;
}

std::vector<std::string> names_from(const py::object& obj) {
  std::vector<std::string> names;
  if (obj.is_none()) return names;
  for (py::handle h : obj) names.push_back(py::str(h).cast<std::string>());
  return names;
}

// What session.io_binding() returns: inputs and outputs bound by name.
struct IOBinding {
  Feeds inputs;
  struct Output {
    std::string name;
    Tensor tensor;     // undefined: allocated by the run
    py::object array;  // the user's array when bound
  };
  std::vector<Output> outputs;
  std::vector<Value> results;  // of the last run, one per output

  void bind_input(const std::string& name, py::handle array) {
    Tensor t = tensor_from_array(array, "bound input '" + name + "'", /*allow_copy=*/false);
    for (auto& [n, v] : inputs)
      if (n == name) {
        v = Value(t);
        return;
      }
    inputs.emplace_back(name, Value(t));
  }
  void bind_output(const std::string& name, py::object array) {
    Output o{name, Tensor(), py::none()};
    if (!array.is_none()) {
      o.tensor = tensor_from_array(array, "bound output '" + name + "'", /*allow_copy=*/false, /*writable=*/true);
      o.array = array;
    }
    results.clear();
    for (auto& existing : outputs)
      if (existing.name == name) {
        existing = std::move(o);
        return;
      }
    outputs.push_back(std::move(o));
  }
  py::list get_outputs() const {
    py::list out;
    for (size_t i = 0; i < results.size() && i < outputs.size(); ++i)
      out.append(outputs[i].tensor.defined() ? outputs[i].array : value_to_python(results[i]));
    return out;
  }
};

// SessionOptions as Python sees it: the C++ options plus onnxruntime's session config
// entries (every key is kept, for get_session_config_entry and pickling; the keys
// onnxmini acts on also set their option).
struct PySessionOptions : SessionOptions {
  std::map<std::string, std::string> config;

  void add_config_entry(const std::string& key, const std::string& value) {
    if (key == "session.intra_op.allow_spinning") {
      if (value != "0" && value != "1")
        throw py::value_error("session.intra_op.allow_spinning must be '0' or '1', got '" + value + "'");
      intra_op_allow_spinning = value == "1";
    }
    if (key == "onnxmini.allow_unknown_opsets") {  // onnxmini's own key (docs/reliability.md)
      if (value != "0" && value != "1")
        throw py::value_error("onnxmini.allow_unknown_opsets must be '0' or '1', got '" + value + "'");
      allow_unknown_opsets = value == "1";
    }
    config[key] = value;
  }
};

py::object dim_to_python(const Dim& d) {
  if (d.value >= 0) return py::int_(d.value);
  if (!d.param.empty()) return py::str(d.param);
  return py::none();
}

}  // namespace

PYBIND11_MODULE(_onnxmini, m) {
  m.doc() = "C++ core of onnxmini (pybind11). Use the classes exported by the onnxmini package.";
  register_errors(m);
  onnxmini_py::bind_profile(m);
  onnxmini_py::bind_einsum(m);
  onnxmini_py::bind_run_options(m);
  m.def(
      "_feed_data_address",
      [](py::handle array) {
        Tensor t = tensor_from_array(array, "input", /*allow_copy=*/true);
        return reinterpret_cast<uintptr_t>(t.raw());
      },
      "Test hook: address of the data a feed of `array` would read (equals array.ctypes.data when not copied).");

  m.def(
      "set_default_logger_severity", [](int severity) { set_default_log_severity(severity); }, py::arg("severity"),
      "Severity of the default logger, and of sessions whose log_severity_level is -1: 0 verbose, 1 info, "
      "2 warning (the initial level), 3 error, 4 fatal. Messages go to stderr.");
  m.def(
      "set_default_logger_verbosity", [](int verbosity) { set_default_log_verbosity(verbosity); },
      py::arg("verbosity"), "Verbose messages up to this verbosity are shown when the severity is 0 (initially 0).");

  py::class_<PySessionOptions>(m, "SessionOptions", R"doc(
Options of an InferenceSession, as onnxruntime.SessionOptions plus onnxmini's own.

The C++ defaults; onnxmini.SessionOptions (the Python subclass) sets onnxruntime's.
Attributes: enable_profiling, profile_file_prefix, intra_op_num_threads (default 1;
0 = one per hardware thread), intra_op_allow_spinning (default True), graph_optimization_level
(0 none: nodes as in the model; 1 basic; 2 extended; 3 layout; 99 all, the default; see docs/optimizer.md),
optimized_model_filepath (save the optimized graph there as ONNX), log_severity_level (0 verbose .. 4 fatal;
-1, the default: the default logger's), log_verbosity_level, logid, gemm ('builtin' | 'openblas' | 'eigen'), kernels
('fast' | 'reference'), profile_layout ('fences' | 'kernel'), profile_skip_runs,
profile_max_runs, profile_max_events, profile_memory_counters; onnxmini's limits (docs/reliability.md):
allow_unknown_opsets (default False: a model with a newer IR version or opset than this build knows is refused;
also the config entry 'onnxmini.allow_unknown_opsets' = '1'), max_tensor_bytes and max_intermediate_bytes
(bytes of one tensor / of a run's live intermediates; 0, the default: the machine's physical memory).)doc")
      .def(py::init<>())
      .def_readwrite("enable_profiling", &SessionOptions::enable_profiling)
      .def_readwrite("profile_file_prefix", &SessionOptions::profile_file_prefix)
      .def_readwrite("intra_op_num_threads", &SessionOptions::intra_op_num_threads)
      .def_readwrite("intra_op_allow_spinning", &SessionOptions::intra_op_allow_spinning)
      .def_readwrite("enable_mem_pattern", &SessionOptions::enable_mem_pattern)
      .def_readwrite("optimized_model_filepath", &SessionOptions::optimized_model_filepath)
      .def("add_session_config_entry", &PySessionOptions::add_config_entry, py::arg("key"), py::arg("value"))
      .def(
          "get_session_config_entry",
          [](const PySessionOptions& o, const std::string& key) {
            auto it = o.config.find(key);
            if (it == o.config.end())
              // A plain RuntimeError, as onnxruntime's.
              throw std::runtime_error("SessionOptions does not have configuration with key: " + key);
            return it->second;
          },
          py::arg("key"))
      .def("_config_entries", [](const PySessionOptions& o) { return o.config; })
      .def_property(
          "graph_optimization_level", [](const PySessionOptions& o) { return o.graph_optimization_level; },
          [](PySessionOptions& o, py::object v) { o.graph_optimization_level = py::int_(v).cast<int>(); })
      .def_readwrite("log_severity_level", &SessionOptions::log_severity_level)
      .def_readwrite("log_verbosity_level", &SessionOptions::log_verbosity_level)
      .def_readwrite("logid", &SessionOptions::logid)
      .def_property(
          "gemm", [](const PySessionOptions& o) { return std::string(to_string(o.gemm)); },
          [](PySessionOptions& o, const std::string& s) { o.gemm = gemm_backend_from_string(s); })
      .def_property(
          "kernels", [](const PySessionOptions& o) { return std::string(to_string(o.kernels)); },
          [](PySessionOptions& o, const std::string& s) { o.kernels = kernel_mode_from_string(s); })
      .def_property(
          "profile_layout",
          [](const PySessionOptions& o) { return std::string(o.profile_layout == ProfileLayout::Fences ? "fences" : "kernel"); },
          [](PySessionOptions& o, const std::string& s) {
            if (s == "fences") o.profile_layout = ProfileLayout::Fences;
            else if (s == "kernel") o.profile_layout = ProfileLayout::KernelOnly;
            else throw Error(ErrorCode::InvalidArgument, "profile_layout must be 'fences' or 'kernel', got '" + s + "'");
          })
      .def_readwrite("profile_skip_runs", &SessionOptions::profile_skip_runs)
      .def_readwrite("profile_max_runs", &SessionOptions::profile_max_runs)
      .def_readwrite("profile_max_events", &SessionOptions::profile_max_events)
      .def_readwrite("profile_memory_counters", &SessionOptions::profile_memory_counters)
      .def_readwrite("allow_unknown_opsets", &SessionOptions::allow_unknown_opsets)
      .def_readwrite("max_tensor_bytes", &SessionOptions::max_tensor_bytes)
      .def_readwrite("max_intermediate_bytes", &SessionOptions::max_intermediate_bytes);

  py::class_<ValueInfo>(m, "NodeArg", "A graph input or output, as onnxruntime.NodeArg: name, type, shape.")
      .def_property_readonly("name", [](const ValueInfo& v) { return v.name; })
      .def_property_readonly("type", [](const ValueInfo& v) { return v.type; })
      .def_property_readonly("shape",
                             [](const ValueInfo& v) -> py::object {
                               py::list dims;
                               for (const Dim& d : v.shape) dims.append(dim_to_python(d));
                               return std::move(dims);
                             },
                             "dims: int when fixed, str for a symbolic dim, None when unknown")
      .def("__repr__", [](const ValueInfo& v) {
        py::list dims;
        for (const Dim& d : v.shape) dims.append(dim_to_python(d));
        return "NodeArg(name='" + v.name + "', type='" + v.type + "', shape=" + py::repr(dims).cast<std::string>() + ")";
      });

  py::class_<IOBinding>(m, "IOBinding")
      .def(py::init<>())
      .def("bind_input", &IOBinding::bind_input, py::arg("name"), py::arg("array"))
      .def("bind_output", &IOBinding::bind_output, py::arg("name"), py::arg("array") = py::none())
      .def("get_outputs", &IOBinding::get_outputs)
      .def("clear_binding_inputs", [](IOBinding& b) { b.inputs.clear(); })
      .def("clear_binding_outputs", [](IOBinding& b) {
        b.outputs.clear();
        b.results.clear();
      });

  py::class_<Session>(m, "Session")
      .def_static(
          "load",
          [](const std::string& path, const PySessionOptions& o) {
            py::gil_scoped_release nogil;
            return Session::load(path, o);
          },
          py::arg("path"), py::arg("options"))
      .def_static(
          "load_bytes",
          [](const py::bytes& data, const PySessionOptions& o, const std::string& base_dir) {
            std::string_view bytes = data;
            py::gil_scoped_release nogil;
            return Session::load_from_bytes(bytes.data(), bytes.size(), o, base_dir);
          },
          py::arg("data"), py::arg("options"), py::arg("base_dir") = "")
      .def("inputs", &Session::inputs, py::return_value_policy::copy)
      .def("outputs", &Session::outputs, py::return_value_policy::copy)
      .def("overridable_initializers", &Session::overridable_initializers)
      .def(
          "run",
          [](Session& s, py::object output_names, py::dict feed, const onnxmini_py::PyRunOptions* run_options) {
            Feeds feeds = feeds_from_dict(s, feed);
            std::vector<std::string> names = names_from(output_names);
            std::vector<Value> outs;
            {
              py::gil_scoped_release nogil;
              outs = s.run(feeds, names, run_options);
            }
            py::list result;
            for (const Value& v : outs) result.append(value_to_python(v));
            return result;
          },
          py::arg("output_names"), py::arg("input_feed"), py::arg("run_options") = nullptr)
      .def(
          "run_with_iobinding",
          [](Session& s, IOBinding& b, const onnxmini_py::PyRunOptions* run_options) {
            std::vector<std::string> names;
            // The caller's options plus the bound outputs: a copy, so `terminate` is read
            // when the run starts (set during a run_with_iobinding, it stops the next one).
            RunOptions ro = run_options ? RunOptions(*run_options) : RunOptions();
            for (const auto& o : b.outputs) {
              names.push_back(o.name);
              if (o.tensor.defined()) ro.bound_outputs.emplace_back(o.name, o.tensor);
            }
            if (names.empty())
              for (const auto& info : s.outputs()) {
                names.push_back(info.name);
                b.outputs.push_back({info.name, Tensor(), py::none()});
              }
            std::vector<Value> outs;
            {
              py::gil_scoped_release nogil;
              outs = s.run(b.inputs, names, &ro);
            }
            b.results = std::move(outs);
          },
          py::arg("binding"), py::arg("run_options") = nullptr)
      .def("end_profiling", &Session::end_profiling)
      .def("profiling_start_time_ns", &Session::profiling_start_time_ns)
      .def("weight_bytes", &Session::weight_bytes)
      .def("graph_rewrites",
           [](const Session& s) {
             py::list out;
             for (const GraphRewrite& r : s.graph_rewrites()) out.append(py::make_tuple(r.rule, r.nodes));
             return out;
           })
      .def("describe", [](const Session& s) {
        ModelDescription d = s.describe();
        py::dict out;
        out["producer_name"] = d.producer_name;
        out["producer_version"] = d.producer_version;
        out["graph_name"] = d.graph_name;
        out["doc_string"] = d.doc_string;
        out["ir_version"] = d.ir_version;
        out["domain"] = d.domain;
        out["model_version"] = d.model_version;
        out["graph_doc_string"] = d.graph_doc_string;
        py::dict meta;
        for (const auto& [k, v] : d.metadata_props) meta[py::str(k)] = v;
        out["metadata_props"] = meta;
        out["opsets"] = d.opsets;
        py::list nodes;
        for (const auto& n : d.nodes) {
          py::dict nd;
          nd["name"] = n.name;
          nd["op_type"] = n.op_type;
          nd["domain"] = n.domain;
          nd["inputs"] = n.inputs;
          nd["outputs"] = n.outputs;
          nd["kernel"] = n.kernel;
          nodes.append(nd);
        }
        out["nodes"] = nodes;
        return out;
      });
}
