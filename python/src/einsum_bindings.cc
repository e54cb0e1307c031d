// The einsum API of include/onnxmini/einsum.h as the submodule onnxmini._onnxmini.einsum.
// onnxmini/_einsum.py adds the numpy-style signature (optimize=True/False, progress=True,
// out=) and the dataclasses; this file only converts and releases the GIL.
//
// Call overhead matters (einsum on 8x8 matrices is a few microseconds of work), so the
// operands are wrapped without copies (convert.h), the dtype check is one pass here, and
// the option strings are parsed in C++ rather than through Python dictionaries.
#include "einsum_bindings.h"

#include <pybind11/stl.h>

#include <exception>
#include <memory>

#include "convert.h"
#include "onnxmini/einsum.h"
#include "onnxmini/onnxmini.h"

namespace onnxmini_py {

namespace py = pybind11;
using namespace onnxmini;

namespace {

bool einsum_dtype(DType t) {
  return t == DType::Float32 || t == DType::Float64 || t == DType::Int32 || t == DType::Int64;
}

// Thrown through the C++ planner when the Python progress callable raised; the Python
// error itself waits in ProgressBridge::error until the GIL is held again.
struct PythonCallbackFailed : std::exception {
  const char* what() const noexcept override { return "einsum progress callback raised"; }
};

// Wraps a Python progress callable for EinsumOptions::progress. The planner calls it on
// the calling thread with the GIL released; it takes the GIL, calls Python, and turns a
// Python exception (KeyboardInterrupt included: signals are checked here too) into
// PythonCallbackFailed so that timing stops.
struct ProgressBridge {
  py::object callable;
  std::unique_ptr<py::error_already_set> error;

  void attach(EinsumOptions& o) {
    if (callable.is_none()) return;
    o.progress = [this](size_t done, size_t total) {
      py::gil_scoped_acquire gil;
      try {
        if (PyErr_CheckSignals() != 0) throw py::error_already_set();
        callable(done, total);
      } catch (py::error_already_set& e) {
        error = std::make_unique<py::error_already_set>(std::move(e));
        throw PythonCallbackFailed();
      }
    };
  }
  // With the GIL held, after the call: re-raise the callable's exception.
  void rethrow_if_failed() {
    if (error) {
      std::unique_ptr<py::error_already_set> e = std::move(error);
      throw std::move(*e);
    }
  }
};

EinsumOptions make_options(const std::string& optimize, int threads, const std::string& gemm,
                           const std::string& kernels, int time_candidates) {
  EinsumOptions o;
  o.optimize = einsum_optimize_from_string(optimize);
  if (threads < 0) throw py::value_error("einsum: threads must be >= 0 (0: one per hardware thread), got " + std::to_string(threads));
  o.threads = threads;
  o.gemm = gemm_backend_from_string(gemm);
  o.kernels = kernel_mode_from_string(kernels);
  if (time_candidates < 1) throw py::value_error("einsum: time_candidates must be >= 1, got " + std::to_string(time_candidates));
  o.time_candidates = time_candidates;
  return o;
}

std::vector<Shape> shapes_from(const py::sequence& shapes) {
  std::vector<Shape> out;
  out.reserve(shapes.size());
  for (py::handle s : shapes) {
    Shape shape;
    for (py::handle d : s) {
      const int64_t v = d.cast<int64_t>();
      if (v < 0) throw py::value_error("einsum: shape " + py::repr(s).cast<std::string>() + " has a negative dimension");
      shape.push_back(v);
    }
    out.push_back(std::move(shape));
  }
  return out;
}

py::tuple shape_to_python(const Shape& s) {
  py::tuple t(s.size());
  for (size_t i = 0; i < s.size(); ++i) t[i] = py::int_(s[i]);
  return t;
}

// The numpy dtype's name for messages ("int8", "float16", ">f4"); error paths only:
// str(dtype) runs Python code in numpy, microseconds.
std::string numpy_name(const py::array& a) { return py::str(a.dtype()).cast<std::string>(); }

py::object run_einsum(const std::string& equation, const py::sequence& operands, const std::string& optimize,
                      int threads, const std::string& gemm, const std::string& kernels, int time_candidates,
                      py::object progress) {
  const size_t n = operands.size();
  if (n == 0) throw py::value_error("einsum: at least one operand is needed");
  std::vector<Tensor> tensors;
  tensors.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    py::handle obj = operands[i];
    py::array a = py::isinstance<py::array>(obj) ? py::reinterpret_borrow<py::array>(obj) : py::array::ensure(obj);
    if (!a) throw py::type_error("einsum: operand " + std::to_string(i) + " is not an array");
    const DType dt = dtype_from_numpy(a.dtype());
    if (!einsum_dtype(dt))
      throw py::type_error("einsum: operand " + std::to_string(i) + " has dtype " + numpy_name(a) +
                           "; supported: float32, float64, int32, int64 (convert with .astype())");
    if (i > 0 && dt != tensors[0].dtype())
      throw py::type_error("einsum: operand " + std::to_string(i) + " has dtype " + numpy_name(a) + " but operand 0 has " +
                           numpy_name(py::array::ensure(operands[0])) +
                           "; all operands must have one dtype (convert with .astype() or pass dtype=)");
    // (a short name: it stays in std::string's inline buffer, no allocation per call)
    tensors.push_back(tensor_from_array(a, "operand " + std::to_string(i), /*allow_copy=*/true));
  }
  EinsumOptions o = make_options(optimize, threads, gemm, kernels, time_candidates);
  ProgressBridge bridge{std::move(progress), nullptr};
  bridge.attach(o);
  Tensor out;
  try {
    py::gil_scoped_release nogil;
    out = einsum(equation, tensors, o);
  } catch (const PythonCallbackFailed&) {
    bridge.rethrow_if_failed();
    throw;
  }
  return tensor_to_array(out);
}

py::dict plan_to_dict(const EinsumPlanInfo& p) {
  py::dict d;
  d["equation"] = p.equation;
  d["canonical"] = p.canonical;
  d["letter_order"] = p.letter_order;
  d["contraction_order"] = p.contraction_order;
  d["optimizer"] = p.optimizer;
  py::list shapes;
  for (const Shape& s : p.input_shapes) shapes.append(shape_to_python(s));
  d["input_shapes"] = shapes;
  d["output_shape"] = shape_to_python(p.output_shape);
  py::list steps;
  for (const auto& s : p.steps) {
    py::dict sd;
    sd["kind"] = s.kind;
    sd["text"] = s.text;
    sd["flops"] = s.flops;
    sd["bytes_copied"] = s.bytes_copied;
    sd["estimated_us"] = s.estimated_us;
    steps.append(sd);
  }
  d["steps"] = steps;
  d["flops"] = p.flops;
  d["bytes_copied"] = p.bytes_copied;
  d["estimated_us"] = p.estimated_us;
  d["measured_us"] = p.measured_us < 0 ? py::object(py::none()) : py::object(py::float_(p.measured_us));
  py::list candidates;
  for (const auto& c : p.candidates) {
    py::dict cd;
    cd["letter_order"] = c.letter_order;
    cd["contraction_order"] = c.contraction_order;
    cd["summary"] = c.summary;
    cd["estimated_us"] = c.estimated_us;
    cd["measured_us"] = c.measured_us;
    candidates.append(cd);
  }
  d["candidates"] = candidates;
  d["summary"] = p.summary;
  d["text"] = p.text;
  return d;
}

py::dict run_plan(const std::string& equation, const py::sequence& shapes, const std::string& optimize, int threads,
                  const std::string& gemm, int time_candidates, py::object progress) {
  const std::vector<Shape> s = shapes_from(shapes);
  EinsumOptions o = make_options(optimize, threads, gemm, "fast", time_candidates);
  ProgressBridge bridge{std::move(progress), nullptr};
  bridge.attach(o);
  EinsumPlanInfo info;
  try {
    py::gil_scoped_release nogil;
    info = einsum_plan(equation, s, o);
  } catch (const PythonCallbackFailed&) {
    bridge.rethrow_if_failed();
    throw;
  }
  return plan_to_dict(info);
}

py::bytes run_decompose(const std::string& equation, const py::sequence& shapes, const std::string& optimize, int opset,
                        const std::string& dtype) {
  const std::vector<Shape> s = shapes_from(shapes);
  const EinsumOptimize opt = einsum_optimize_from_string(optimize);
  const DType dt = dtype_from_name(dtype);
  if (!einsum_dtype(dt))
    throw py::type_error("einsum_decompose: dtype " + dtype + " is not supported; supported: float32, float64, int32, int64");
  std::string model;
  {
    py::gil_scoped_release nogil;
    model = einsum_decompose(equation, s, opt, opset, dt);
  }
  return py::bytes(model);
}

}  // namespace

void bind_einsum(py::module_& m) {
  py::module_ e = m.def_submodule("einsum", "include/onnxmini/einsum.h (use onnxmini.einsum, einsum_plan, einsum_decompose).");
  e.def("einsum", &run_einsum, py::arg("equation"), py::arg("operands"), py::arg("optimize") = "cost",
        py::arg("threads") = 1, py::arg("gemm") = "builtin", py::arg("kernels") = "fast", py::arg("time_candidates") = 24,
        py::arg("progress") = py::none(),
        "Evaluates the equation; operands: a sequence of arrays of one dtype (float32, float64, int32, int64).");
  e.def("plan", &run_plan, py::arg("equation"), py::arg("shapes"), py::arg("optimize") = "cost", py::arg("threads") = 1,
        py::arg("gemm") = "builtin", py::arg("time_candidates") = 24, py::arg("progress") = py::none(),
        "The plan (EinsumPlanInfo) as a dict.");
  e.def("decompose", &run_decompose, py::arg("equation"), py::arg("shapes"), py::arg("optimize") = "cost",
        py::arg("opset") = 13, py::arg("dtype") = "float32", "The plan as ONNX model bytes.");
  e.def(
      "output_shape",
      [](const std::string& equation, const py::sequence& shapes) {
        return shape_to_python(einsum_output_shape(equation, shapes_from(shapes)));
      },
      py::arg("equation"), py::arg("shapes"));
}

}  // namespace onnxmini_py
