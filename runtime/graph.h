// The in-memory graph after loading: values are numbered, nodes refer to value
// ids, Constant nodes are folded into constants, and the execution order is fixed.
#pragma once
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/attributes.h"
#include "onnxmini/session.h"
#include "onnxmini/tensor.h"

namespace onnxmini {

struct Graph;

struct GraphNode {
  std::string name;       // as in the model (may be empty)
  std::string op_type;
  std::string domain;     // "" for ai.onnx
  int opset = 0;          // the model's opset import for `domain`
  int index = 0;          // position in the model's node list (onnxruntime's node_index)
  std::vector<int> inputs;   // value ids, -1 for an empty (absent optional) input
  std::vector<int> outputs;  // value ids, -1 for an empty output
  Attributes attrs;
  // Graph-valued attributes (If/Loop/Scan bodies) by attribute name.
  std::vector<std::pair<std::string, std::shared_ptr<const Graph>>> subgraphs;
  // Values of this graph that the subgraphs read from their enclosing scope
  // (onnxruntime's implicit inputs): kept alive until the node has run, and
  // edges for the execution order.
  std::vector<int> implicit_inputs;
};

struct Graph {
  int64_t ir_version = 0;
  std::string producer_name, producer_version, graph_name, doc_string;
  // ModelProto's domain, model_version and metadata_props; the main graph's doc_string.
  std::string domain, graph_doc_string;
  int64_t model_version = 0;
  std::vector<std::pair<std::string, std::string>> metadata_props;
  std::vector<std::pair<std::string, int64_t>> opsets;  // as imported, "" = ai.onnx

  std::vector<std::string> value_names;                 // by value id
  std::unordered_map<std::string, int> value_ids;

  std::vector<GraphNode> nodes;  // in execution order (Constant nodes removed)
  std::vector<ValueInfo> inputs;   // graph inputs that are not initializers
  std::vector<int> input_ids;
  std::vector<ValueInfo> outputs;
  std::vector<int> output_ids;
  // Subgraphs only: values this graph reads from its enclosing graph by name
  // (the enclosing graph always has a value of the same name: its own or, for
  // deeper nesting, one it reads from its own enclosing graph in turn).
  std::vector<int> outer_ids;

  // Initializers and folded Constant outputs, by value id.
  std::map<int, Tensor> constants;
  // Initializers that are also graph inputs: feeds may replace them, so kernels
  // must not treat them as constant.
  std::map<int, ValueInfo> overridable;

  // Element types declared in the model (graph inputs/outputs, value_info) or
  // known from constants, by value id.
  std::unordered_map<int, DType> known_dtypes;

  // Declarations kept for the optimizer and the model writer (runtime/model_writer.h):
  // the serialized onnx.TypeProto of every declared value (graph inputs, outputs,
  // value_info), the model's value_info entries in order, and their parsed form
  // (shapes the optimizer may use: a fixed declared shape makes Shape(x) a constant).
  std::unordered_map<int, std::string> declared_types;
  std::vector<int> value_info_ids;
  std::unordered_map<int, ValueInfo> value_infos;

  int value_id(const std::string& name) const {
    auto it = value_ids.find(name);
    return it == value_ids.end() ? -1 : it->second;
  }
};

// Parses and validates a serialized ModelProto. `base_dir` resolves external data.
Graph load_graph(const void* data, size_t size, const std::string& base_dir);

// Reads a whole file, with clear errors for a missing or empty file.
std::string read_model_file(const std::string& path);

}  // namespace onnxmini
