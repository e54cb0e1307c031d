// The contract between the runtime and a kernel. A kernel sees its inputs,
// its attributes and a few services (thread pool, GEMM engine); never the
// session or the graph.
//
// Control-flow kernels (If, Loop, Scan) get their bodies as `Subgraph` handles:
// they run a body with given inputs and read its outputs, in the scope of the
// node being executed, and never see the session, the graph or the executor.
//
// Life cycle: the factory runs once at session creation with a KernelInfo
// (attributes parsed, constant inputs visible for prepacking). Each run calls
//   prepare(ctx)  - check inputs, infer output shapes, allocate outputs
//                   (profiled as the node's fence_before), and
//   compute(ctx)  - the math (profiled as kernel_time).
// View ops (Reshape, Identity, ...) set their output in prepare and do nothing
// in compute. A kernel object is shared by concurrent runs: keep per-run state
// in the context, never in members (members are for what the factory computed).
#pragma once
#include <fmt/format.h>

#include <functional>
#include <initializer_list>
#include <memory>
#include <string>
#include <vector>

#include "core/attributes.h"
#include "core/kernel_stats.h"
#include "onnxmini/error.h"
#include "onnxmini/session.h"
#include "onnxmini/value.h"

namespace onnxmini {

class ThreadPool;
class KernelContext;
class ExecutionScope;  // the executor's frame of the running graph (runtime/executor.h)
namespace gemm {
class GemmEngine;
}

// A graph-valued attribute (If's then_branch, Loop's body, Scan's body), planned
// once at session creation. run() executes it within the scope of the node that
// `ctx` belongs to: names the body does not define resolve to the values of the
// enclosing graphs, read-only, nested to any depth. Inputs and outputs are by
// position (the body's declared graph inputs and outputs).
class Subgraph {
 public:
  virtual ~Subgraph() = default;
  virtual size_t num_inputs() const = 0;
  virtual size_t num_outputs() const = 0;
  virtual const std::string& input_name(size_t i) const = 0;
  virtual const std::string& output_name(size_t i) const = 0;
  // Declared element type of input i (Undefined when the body leaves it out).
  virtual DType input_dtype(size_t i) const = 0;
  // Declared type and shape of output i (Loop/Scan size empty scan outputs from it).
  virtual const ValueInfo& output_info(size_t i) const = 0;
  virtual void run(KernelContext& ctx, const std::vector<Value>& inputs, std::vector<Value>& outputs) const = 0;
};

// What the factory sees at session creation.
struct KernelInfo {
  std::string name;     // node name (may be empty)
  std::string op_type;  // "Conv"
  std::string domain;   // "" for ai.onnx
  int opset = 0;        // opset version imported for the node's domain
  Attributes attrs;
  size_t num_inputs = 0;   // including empty (absent optional) slots
  size_t num_outputs = 0;
  std::vector<bool> input_present;   // false for an empty input name
  std::vector<bool> output_present;
  std::vector<const Tensor*> constant_inputs;  // initializer or Constant value; nullptr otherwise
  std::vector<DType> input_dtypes;  // dtype when known before running (declared or constant), else Undefined
  GemmBackend gemm = GemmBackend::Builtin;
  KernelMode mode = KernelMode::Fast;
  // The session's memory caps in bytes (SessionOptions, 0 there resolved to the machine's
  // memory): outputs and scratch are checked against them before allocating.
  int64_t max_tensor_bytes = INT64_MAX;
  int64_t max_intermediate_bytes = INT64_MAX;
  // Graph-valued attributes by name, planned by the runtime; outlive the kernel.
  std::vector<std::pair<std::string, const Subgraph*>> subgraphs;

  // The body in graph attribute `attr`; fails naming the node when it has none.
  const Subgraph& subgraph(const std::string& attr) const;
  const Tensor* constant_input(size_t i) const { return i < constant_inputs.size() ? constant_inputs[i] : nullptr; }
  bool has_input(size_t i) const { return i < input_present.size() && input_present[i]; }
  // Session-creation dtype check: fails (NotImplemented) when input i's dtype is
  // known statically and not in `allowed`. Unknown dtypes are checked at run time.
  void require_dtype(size_t i, std::initializer_list<DType> allowed) const;
  // "Conv 'n9'" - the prefix of every error about this node.
  std::string label() const;
  template <typename... Args>
  [[noreturn]] void fail(fmt::format_string<Args...> f, Args&&... args) const {
    throw Error(ErrorCode::InvalidModel, label() + ": " + fmt::format(f, std::forward<Args>(args)...));
  }
  template <typename... Args>
  [[noreturn]] void unsupported(fmt::format_string<Args...> f, Args&&... args) const {
    throw Error(ErrorCode::NotImplemented, label() + ": " + fmt::format(f, std::forward<Args>(args)...));
  }
};


// The per-run view of one node: its inputs, its outputs, services.
class KernelContext {
 public:
  using Allocator = std::function<Tensor(DType, const Shape&)>;
  using BoundOutput = std::function<Tensor(size_t output_index, DType, const Shape&)>;

  // `inputs`, `outputs`, `allocator` and `bound` must outlive the context (the executor's locals).
  // `scope` is the executor's frame of the running graph (null outside an executor).
  KernelContext(const KernelInfo& info, const std::vector<const Value*>& inputs, std::vector<Value>& outputs,
                const Allocator& allocator, ThreadPool* pool, const gemm::GemmEngine* gemm, const BoundOutput& bound,
                ExecutionScope* scope = nullptr)
      : info_(info),
        inputs_(inputs),
        outputs_(outputs),
        allocator_(allocator),
        pool_(pool),
        gemm_(gemm),
        bound_(bound),
        scope_(scope) {}

  const KernelInfo& info() const { return info_; }
  const Attributes& attrs() const { return info_.attrs; }

  size_t num_inputs() const { return inputs_.size(); }
  bool has_input(size_t i) const { return i < inputs_.size() && inputs_[i] != nullptr && !inputs_[i]->is_none(); }
  // The i-th input as a tensor; fails naming the node when absent or not a tensor.
  const Tensor& input(size_t i) const;
  const Value& input_value(size_t i) const;

  size_t num_outputs() const { return outputs_.size(); }
  bool output_wanted(size_t i) const { return i < info_.output_present.size() && info_.output_present[i]; }
  // Allocates output i (from the run's buffer pool, or the bound user buffer).
  Tensor& allocate_output(size_t i, DType dtype, const Shape& shape);
  // Sets output i to an existing value (a view of an input, a sequence, a map).
  void set_output(size_t i, Value value);
  Tensor& output(size_t i);
  const Value& output_value(size_t i) const { return outputs_.at(i); }
  // A scratch tensor from the run's pool, released when the caller drops it.
  Tensor scratch(DType dtype, const Shape& shape);
  // Fails naming the node, `what`, the shape and the size when a tensor of `shape`
  // would overflow int64 or exceed max_tensor_bytes: for kernels that want to refuse
  // a bomb before looping or building a shape (allocate_output / scratch check too).
  void check_tensor_size(DType dtype, const Shape& shape, const char* what) const;
  // The same for `count` elements of `dtype` (Range, sequences), before the shape exists.
  void check_element_count(DType dtype, int64_t count, const char* what) const;

  ThreadPool* threads() const { return pool_; }
  const gemm::GemmEngine& gemm() const { return *gemm_; }
  bool reference_mode() const { return info_.mode == KernelMode::Reference; }
  KernelStats& stats() { return stats_; }
  // For Subgraph::run: where the running node's values live.
  ExecutionScope* scope() const { return scope_; }
  const Allocator& allocator() const { return allocator_; }

  template <typename... Args>
  [[noreturn]] void fail(fmt::format_string<Args...> f, Args&&... args) const {
    throw Error(ErrorCode::RuntimeError, info_.label() + ": " + fmt::format(f, std::forward<Args>(args)...));
  }
  template <typename... Args>
  [[noreturn]] void unsupported(fmt::format_string<Args...> f, Args&&... args) const {
    throw Error(ErrorCode::NotImplemented, info_.label() + ": " + fmt::format(f, std::forward<Args>(args)...));
  }

 private:
  const KernelInfo& info_;
  const std::vector<const Value*>& inputs_;
  std::vector<Value>& outputs_;
  const Allocator& allocator_;
  ThreadPool* pool_;
  const gemm::GemmEngine* gemm_;
  const BoundOutput& bound_;
  ExecutionScope* scope_;
  KernelStats stats_;
};

// What a kernel will do for given input shapes, without running it
// (`onnxmini run --explain`): the variant its compute() would report in
// KernelStats, the ISA and the blocking. Static strings, like KernelStats.
struct KernelPlan {
  // The only path of a kernel that makes no choice: the runtime shows the kernel name.
  static constexpr const char* kOnlyPath = "";
  const char* variant = kOnlyPath;  // nullptr: chosen at run time (depends on what is not known yet)
  const char* isa = "portable";
  std::string blocking;  // tile sizes / cache blocks, "" when the kernel has none
  static KernelPlan at_run_time() {
    KernelPlan p;
    p.variant = nullptr;
    return p;
  }
};

class Kernel {
 public:
  virtual ~Kernel() = default;
  virtual void prepare(KernelContext& ctx) = 0;
  virtual void compute(KernelContext& ctx) = 0;
  // The plan for inputs of these shapes (input_shapes[i] null: unknown, or absent).
  // Kernels that choose a path override it; the default is the single path. May
  // throw (bad shapes): the caller reports the node as chosen at run time.
  virtual KernelPlan describe(const KernelInfo& info, const std::vector<const Shape*>& input_shapes) const {
    (void)info, (void)input_shapes;
    return {};
  }
};

}  // namespace onnxmini
