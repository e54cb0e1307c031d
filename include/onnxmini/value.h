// Value: what flows along a graph edge. Mostly tensors, but ai.onnx.ml's ZipMap
// produces a sequence of maps, so the executor carries those too.
#pragma once
#include "onnxmini/export.h"
#include <memory>
#include <variant>
#include <vector>

#include "onnxmini/tensor.h"

ONNXMINI_API_BEGIN
namespace onnxmini {

class Value;

// A map with scalar keys (int64 or string) and scalar values, stored as two 1-D
// tensors of equal length, in insertion order.
struct Map {
  Tensor keys;
  Tensor values;
};

class Value {
 public:
  enum class Kind { None, Tensor, Sequence, Map };

  Value() = default;
  Value(Tensor t) : v_(std::move(t)) {}  // NOLINT: implicit on purpose
  static Value sequence(std::vector<Value> items) {
    Value v;
    v.v_ = std::make_shared<const std::vector<Value>>(std::move(items));
    return v;
  }
  static Value map(Map m) {
    Value v;
    v.v_ = std::make_shared<const Map>(std::move(m));
    return v;
  }

  Kind kind() const { return static_cast<Kind>(v_.index()); }
  bool is_none() const { return kind() == Kind::None; }
  bool is_tensor() const { return kind() == Kind::Tensor; }
  bool is_sequence() const { return kind() == Kind::Sequence; }
  bool is_map() const { return kind() == Kind::Map; }

  const Tensor& tensor() const;
  const std::vector<Value>& sequence_items() const;
  const Map& map_value() const;
  // "tensor(float)", "seq(map(int64,tensor(float)))", ... as ONNX writes types.
  std::string type_string() const;

 private:
  std::variant<std::monostate, Tensor, std::shared_ptr<const std::vector<Value>>, std::shared_ptr<const Map>> v_;
};

}  // namespace onnxmini
ONNXMINI_API_END
