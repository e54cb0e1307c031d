#include "onnxmini/value.h"

namespace onnxmini {

const Tensor& Value::tensor() const {
  if (auto* t = std::get_if<Tensor>(&v_)) return *t;
  throw Error(ErrorCode::InvalidArgument, "value is a " + type_string() + ", not a tensor");
}

const std::vector<Value>& Value::sequence_items() const {
  if (auto* s = std::get_if<std::shared_ptr<const std::vector<Value>>>(&v_)) return **s;
  throw Error(ErrorCode::InvalidArgument, "value is a " + type_string() + ", not a sequence");
}

const Map& Value::map_value() const {
  if (auto* m = std::get_if<std::shared_ptr<const Map>>(&v_)) return **m;
  throw Error(ErrorCode::InvalidArgument, "value is a " + type_string() + ", not a map");
}

bool Value::has_element() const {
  auto* o = std::get_if<OptionalSlot>(&v_);
  return o && o->element;
}

const Value& Value::optional_element() const {
  auto* o = std::get_if<OptionalSlot>(&v_);
  if (!o) throw Error(ErrorCode::InvalidArgument, "value is a " + type_string() + ", not an optional");
  if (!o->element) throw Error(ErrorCode::InvalidArgument, "the optional is empty");
  return *o->element;
}

std::string Value::type_string() const {
  switch (kind()) {
    case Kind::None: return "none";
    case Kind::Tensor: return std::string("tensor(") + dtype_name(tensor().dtype()) + ")";
    case Kind::Sequence: {
      const auto& items = sequence_items();
      return "seq(" + (items.empty() ? std::string("?") : items.front().type_string()) + ")";
    }
    case Kind::Map: {
      const Map& m = map_value();
      return std::string("map(") + dtype_name(m.keys.dtype()) + ",tensor(" + dtype_name(m.values.dtype()) + "))";
    }
    case Kind::Optional: return "optional(" + (has_element() ? optional_element().type_string() : "?") + ")";
  }
  return "?";
}

}  // namespace onnxmini
