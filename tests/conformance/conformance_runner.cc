#include "conformance_runner.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "onnxmini/onnxmini.h"

namespace fs = std::filesystem;

namespace onnxmini {
namespace conformance {
namespace {

// Ops whose every output element is a copy of an input element (or a shape,
// an index or a fill value): no rounding, so the result must be exact.
const std::set<std::string> kMovesOrSelects = {
    "ArgMax", "ArgMin", "Concat", "ConstantOfShape", "Expand", "Flatten", "Gather", "GatherElements",
    "Identity", "Pad", "ReduceMax", "ReduceMin", "Reshape", "Shape", "Size", "Slice",
    "BitCast", "Compress", "EyeLike", "GatherND", "Hardmax", "NonZero", "OneHot", "ReverseSequence", "Trilu", "Unique",
    "Split", "Squeeze", "Tile", "TopK", "Transpose", "Unsqueeze"};
// Ops that accumulate (their rounding depends on the summation order) but whose
// results the layout/reduction kernels keep within rtol 1e-4, atol 1e-5.
// Ops that draw random numbers: a model holding one (Bernoulli, its expanded
// RandomUniformLike form, ...) cannot reproduce numpy's stream, so its outputs are
// compared by dtype and shape only (the distributions are tested in tests/kernels/random/).
const std::set<std::string> kRandomOps = {"RandomUniform", "RandomNormal", "RandomUniformLike", "RandomNormalLike",
                                          "Bernoulli", "Multinomial"};
const std::set<std::string> kAccumulates = {"Range", "ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp",
                                            "ReduceMean", "ReduceProd", "ReduceSum", "ReduceSumSquare"};

// Compares one output; appends to `why` and returns false on a mismatch.
bool outputs_match(const Tensor& got, const Tensor& want, const std::vector<Bound>& bounds, const std::string& label,
                   double& max_abs, std::string& why) {
  if (got.dtype() != want.dtype()) {
    why = fmt::format("{}: dtype {} vs expected {}", label, dtype_name(got.dtype()), dtype_name(want.dtype()));
    return false;
  }
  if (got.shape() != want.shape()) {
    why = fmt::format("{}: shape {} vs expected {}", label, shape_to_string(got.shape()), shape_to_string(want.shape()));
    return false;
  }
  if (got.dtype() == DType::String) {
    for (int64_t i = 0; i < got.numel(); ++i)
      if (got.data<std::string>()[i] != want.data<std::string>()[i]) {
        why = fmt::format("{}: string [{}] '{}' vs expected '{}'", label, i, got.data<std::string>()[i],
                          want.data<std::string>()[i]);
        return false;
      }
    return true;
  }
  const bool is_float = got.dtype() == DType::Float32 || got.dtype() == DType::Float64 ||
                        got.dtype() == DType::Float16 || got.dtype() == DType::BFloat16;
  // onnx's runner allows two bfloat16 ULPs: rtol = max(rtol, 2^-6).
  const bool bf16 = got.dtype() == DType::BFloat16;
  int64_t bad = 0, first_bad = -1;
  for (int64_t i = 0; i < got.numel(); ++i) {
    const double a = got.get_as_double(i), e = want.get_as_double(i);
    if (std::isnan(a) || std::isnan(e)) {
      if (std::isnan(a) != std::isnan(e)) {
        if (first_bad < 0) first_bad = i;
        ++bad;
      }
      continue;
    }
    if (a == e) continue;  // includes equal infinities
    const double err = std::fabs(a - e);
    // assert_allclose: |a - e| <= atol + rtol * |e| for every bound; integers and bools must be exact.
    double allowed = HUGE_VAL;
    for (const Bound& b : bounds)
      allowed = std::min(allowed, b.atol + (bf16 ? std::max(b.rtol, 1.0 / 64) : b.rtol) * std::fabs(e));
    const bool ok = is_float && std::isfinite(err) && err <= allowed;
    if (is_float && std::isfinite(err)) max_abs = std::max(max_abs, err);
    if (!ok) {
      if (first_bad < 0) first_bad = i;
      ++bad;
    }
  }
  if (bad == 0) return true;
  why = fmt::format("{}: {} of {} elements differ; first [{}] got {} expected {}", label, bad, got.numel(), first_bad,
                    got.get_as_double(first_bad), want.get_as_double(first_bad));
  return false;
}

// onnx wrote bfloat16 test tensors with data_type UINT16 (numpy has no bfloat16):
// the bits are bfloat16, so reinterpret them when the other side is bfloat16.
Tensor as_bfloat16_if(const Tensor& t, bool want_bf16) {
  if (!want_bf16 || t.dtype() != DType::UInt16) return t;
  return Tensor(DType::BFloat16, t.shape(), t.buffer(), t.offset());
}

// Compares a value of any kind: tensors element-wise, sequences item by item, optionals by presence then element.
bool values_match(const Value& got, const Value& want, const std::vector<Bound>& bounds, const std::string& label,
                  double& max_abs, std::string& why) {
  if (got.kind() != want.kind()) {
    why = fmt::format("{}: {} vs expected {}", label, got.type_string(), want.type_string());
    return false;
  }
  if (got.is_tensor())
    return outputs_match(got.tensor(), as_bfloat16_if(want.tensor(), got.tensor().dtype() == DType::BFloat16),
                         bounds, label, max_abs, why);
  if (got.is_sequence()) {
    const auto& g = got.sequence_items();
    const auto& w = want.sequence_items();
    if (g.size() != w.size()) {
      why = fmt::format("{}: sequence of {} items vs expected {}", label, g.size(), w.size());
      return false;
    }
    for (size_t i = 0; i < g.size(); ++i)
      if (!values_match(g[i], w[i], bounds, fmt::format("{}[{}]", label, i), max_abs, why)) return false;
    return true;
  }
  if (got.is_optional()) {
    if (got.has_element() != want.has_element()) {
      why = fmt::format("{}: {} vs expected {}", label, got.has_element() ? "an element" : "empty optional",
                        want.has_element() ? "an element" : "empty optional");
      return false;
    }
    return !got.has_element() ||
           values_match(got.optional_element(), want.optional_element(), bounds, label, max_abs, why);
  }
  why = label + ": cannot compare " + got.type_string();
  return false;
}

std::vector<fs::path> numbered(const fs::path& dir, const std::string& prefix) {
  std::vector<fs::path> files;
  for (int k = 0;; ++k) {
    fs::path p = dir / fmt::format("{}_{}.pb", prefix, k);
    if (!fs::exists(p)) break;
    files.push_back(p);
  }
  return files;
}

}  // namespace

std::string node_test_root() {
  const char* env = std::getenv("ONNXMINI_NODE_TESTS");
  return env && *env ? env : "/usr/share/libonnx-testdata/data/node";
}

std::string pip_node_test_root() {
  const char* env = std::getenv("ONNXMINI_PIP_NODE_TESTS");
  return env && *env ? env : ONNXMINI_PIP_NODE_TESTS_DIR;
}

std::vector<Bound> bounds_for(const std::string& op_type) {
  std::vector<Bound> bounds = {Bound{}};
  if (kMovesOrSelects.count(op_type)) bounds.push_back(Bound{0, 0});
  if (kAccumulates.count(op_type)) bounds.push_back(Bound{1e-4, 1e-5});
  return bounds;
}

CaseResult run_case(const std::string& folder, KernelMode mode) {
  CaseResult r;
  try {
    const std::string model = (fs::path(folder) / "model.onnx").string();
    SessionOptions opts;
    opts.intra_op_num_threads = 1;
    opts.kernels = mode;
    auto session = Session::load(model, opts);
    const ModelDescription described = describe_model(model);
    const std::vector<Bound> bounds =
        described.nodes.size() == 1 ? bounds_for(described.nodes[0].op_type) : std::vector<Bound>{Bound{}};
    const bool random = std::any_of(described.nodes.begin(), described.nodes.end(),
                                    [](const auto& n) { return kRandomOps.count(n.op_type) != 0; });
    std::vector<fs::path> sets;
    for (const auto& e : fs::directory_iterator(folder))
      if (e.is_directory() && e.path().filename().string().rfind("test_data_set_", 0) == 0) sets.push_back(e.path());
    std::sort(sets.begin(), sets.end());
    if (sets.empty()) throw Error(ErrorCode::InvalidArgument, "no test_data_set_* folder");
    for (const auto& set : sets) {
      std::vector<std::pair<std::string, Value>> feeds;
      const auto inputs = numbered(set, "input");
      for (size_t k = 0; k < inputs.size(); ++k) {
        // Input k is a TensorProto, SequenceProto or OptionalProto as the model's input k is typed.
        std::string name;
        const std::string type = k < session->inputs().size() ? session->inputs()[k].type : "";
        Value v = read_value_pb(inputs[k].string(), type, &name);
        if (name.empty() && k < session->inputs().size()) name = session->inputs()[k].name;
        if (v.is_tensor())
          for (const auto& in : session->inputs())
            if (in.name == name) v = as_bfloat16_if(v.tensor(), in.dtype == DType::BFloat16);
        feeds.emplace_back(name, std::move(v));
      }
      std::vector<Value> outs = session->run(feeds);
      const auto expected = numbered(set, "output");
      if (expected.size() != outs.size())
        throw Error(ErrorCode::RuntimeError,
                    fmt::format("{} outputs, expected {}", outs.size(), expected.size()));
      for (size_t k = 0; k < outs.size(); ++k) {
        const std::string label = fmt::format("{}/output_{}", set.filename().string(), k);
        std::string why;
        const std::string type = k < session->outputs().size() ? session->outputs()[k].type : "";
        const Value want = read_value_pb(expected[k].string(), type);
        if (random && outs[k].is_tensor() && want.is_tensor()) {
          const Tensor &g = outs[k].tensor(), &w = want.tensor();
          if (g.dtype() != w.dtype() || g.shape() != w.shape()) {
            r.message = fmt::format("{}: {} {} vs expected {} {} (random op: dtype and shape compared)", label,
                                    dtype_name(g.dtype()), shape_to_string(g.shape()), dtype_name(w.dtype()),
                                    shape_to_string(w.shape()));
            return r;
          }
          continue;
        }
        if (!values_match(outs[k], want, bounds, label, r.max_abs_error, why)) {
          r.message = why;
          return r;
        }
      }
    }
    r.passed = true;
  } catch (const std::exception& e) {
    r.message = e.what();
  }
  return r;
}

std::vector<ManifestEntry> read_manifest(const std::string& path) {
  std::ifstream f(path);
  if (!f) throw std::runtime_error("cannot open manifest " + path);
  std::vector<ManifestEntry> entries;
  std::string line;
  int lineno = 0;
  while (std::getline(f, line)) {
    ++lineno;
    const auto hash = line.find('#');
    if (hash != std::string::npos) line.erase(hash);
    std::istringstream ss(line);
    ManifestEntry e;
    std::string status;
    if (!(ss >> e.test)) continue;  // blank or comment
    if (!(ss >> status)) throw std::runtime_error(fmt::format("{}:{}: no status after '{}'", path, lineno, e.test));
    if (status == "pass") {
      e.pass = true;
    } else if (status == "skip:") {
      std::getline(ss, e.reason);
      e.reason.erase(0, e.reason.find_first_not_of(' '));
      if (e.reason.empty()) throw std::runtime_error(fmt::format("{}:{}: skip without a reason", path, lineno));
    } else {
      throw std::runtime_error(fmt::format("{}:{}: status '{}' is not 'pass' or 'skip: <reason>'", path, lineno, status));
    }
    entries.push_back(e);
  }
  return entries;
}

}  // namespace conformance
}  // namespace onnxmini
