// Value: what flows along a graph edge. Mostly tensors, but ai.onnx.ml's ZipMap
// produces a sequence of maps, the Sequence* ops sequences of tensors, and the
// Optional* ops optionals, so the executor carries those too.
//
// None vs an empty optional: a default Value (Kind::None) means "no value at
// all" (an absent optional input, an output not computed). An ONNX
// optional(T) is Kind::Optional whether or not it holds an element, so
// Value::optional() - an optional with no element - is a present value that
// OptionalHasElement answers false for, distinct from a missing input.
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
  enum class Kind { None, Tensor, Sequence, Map, Optional };  // the variant's order

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

  // An ONNX optional: empty (no argument, or a None element) or holding `element`
  // (a tensor or a sequence; an optional is never nested).
  static Value optional(Value element = Value()) {
    Value v;
    v.v_ = OptionalSlot{element.is_none() ? nullptr : std::make_shared<const Value>(std::move(element))};
    return v;
  }

  Kind kind() const { return static_cast<Kind>(v_.index()); }
  bool is_none() const { return kind() == Kind::None; }
  bool is_tensor() const { return kind() == Kind::Tensor; }
  bool is_sequence() const { return kind() == Kind::Sequence; }
  bool is_map() const { return kind() == Kind::Map; }
  bool is_optional() const { return kind() == Kind::Optional; }
  // An optional holding an element (false for an empty optional and for non-optionals).
  bool has_element() const;

  const Tensor& tensor() const;
  const std::vector<Value>& sequence_items() const;
  const Map& map_value() const;
  // The element of an optional; throws when this is not an optional or it is empty.
  const Value& optional_element() const;
  // "tensor(float)", "seq(map(int64,tensor(float)))", ... as ONNX writes types.
  std::string type_string() const;

 private:
  struct OptionalSlot {
    std::shared_ptr<const Value> element;  // null: an empty optional
  };
  std::variant<std::monostate, Tensor, std::shared_ptr<const std::vector<Value>>, std::shared_ptr<const Map>,
               OptionalSlot>
      v_;
};

}  // namespace onnxmini
ONNXMINI_API_END
