// Comparisons (Equal, Less, Greater, LessOrEqual, GreaterOrEqual -> bool),
// logical ops on bool (And, Or, Xor), and integer bit ops (BitShift,
// BitwiseAnd/Or/Xor), all with numpy broadcasting through BinaryKernel.
// Data layout: dense row-major; the output is one byte per bool.
// float16/bfloat16 compare as float (exactly: the conversion is lossless).
#include <string>
#include <type_traits>

#include "kernels/elementwise/binary_kernel.h"
#include "kernels/registry.h"

namespace onnxmini {
namespace ew {
namespace {

struct CompareDefaults : BinaryOpDefaults {
  template <class T> using Out = bool;
};

struct EqualOp : CompareDefaults {
  using Types = concat_t<NumericTypes, BoolTypes, TypeList<std::string>>;  // string since opset 19
  explicit EqualOp(const KernelInfo&) {}
  template <class C> bool operator()(const C& a, const C& b) const { return a == b; }
};
struct LessOp : CompareDefaults {
  using Types = NumericTypes;
  explicit LessOp(const KernelInfo&) {}
  template <class C> bool operator()(C a, C b) const { return a < b; }
};
struct GreaterOp : CompareDefaults {
  using Types = NumericTypes;
  explicit GreaterOp(const KernelInfo&) {}
  template <class C> bool operator()(C a, C b) const { return a > b; }
};
struct LessOrEqualOp : CompareDefaults {
  using Types = NumericTypes;
  explicit LessOrEqualOp(const KernelInfo&) {}
  template <class C> bool operator()(C a, C b) const { return a <= b; }
};
struct GreaterOrEqualOp : CompareDefaults {
  using Types = NumericTypes;
  explicit GreaterOrEqualOp(const KernelInfo&) {}
  template <class C> bool operator()(C a, C b) const { return a >= b; }
};

struct AndOp : BinaryOpDefaults {
  using Types = BoolTypes;
  explicit AndOp(const KernelInfo&) {}
  bool operator()(bool a, bool b) const { return a && b; }
};
struct OrOp : BinaryOpDefaults {
  using Types = BoolTypes;
  explicit OrOp(const KernelInfo&) {}
  bool operator()(bool a, bool b) const { return a || b; }
};
struct XorOp : BinaryOpDefaults {
  using Types = BoolTypes;
  explicit XorOp(const KernelInfo&) {}
  bool operator()(bool a, bool b) const { return a != b; }
};

// BitShift on every integer type (signed ones since the opset 28 schema;
// accepted at every opset). A shift by a negative amount or by the type's width
// or more (undefined in C++) gives what the sign extension alone gives: -1 for a
// right shift of a negative X, 0 otherwise. Signed right shifts are arithmetic;
// signed left shifts run on the unsigned bit pattern, so bits moved past the
// sign bit are dropped instead of overflowing.
struct BitShiftOp : BinaryOpDefaults {
  using Types = IntTypes;
  static constexpr const char* kNameA = "X";
  static constexpr const char* kNameB = "Y";
  explicit BitShiftOp(const KernelInfo& info) {
    const std::string dir = info.attrs.get_string("direction");
    if (dir != "LEFT" && dir != "RIGHT") info.fail("direction must be LEFT or RIGHT, got '{}'", dir);
    left = dir == "LEFT";
  }
  template <class C> C operator()(C a, C b) const {
    using U = std::make_unsigned_t<C>;
    if (b < 0 || static_cast<U>(b) >= sizeof(C) * 8) return !left && a < 0 ? C(-1) : C(0);
    if (left) return static_cast<C>(static_cast<U>(static_cast<U>(a) << b));
    return static_cast<C>(a >> b);  // arithmetic for signed C (gcc, clang; guaranteed from C++20)
  }
  bool left = true;
};

struct BitwiseAndOp : BinaryOpDefaults {
  using Types = IntTypes;
  explicit BitwiseAndOp(const KernelInfo&) {}
  template <class C> C operator()(C a, C b) const { return static_cast<C>(a & b); }
};
struct BitwiseOrOp : BinaryOpDefaults {
  using Types = IntTypes;
  explicit BitwiseOrOp(const KernelInfo&) {}
  template <class C> C operator()(C a, C b) const { return static_cast<C>(a | b); }
};
struct BitwiseXorOp : BinaryOpDefaults {
  using Types = IntTypes;
  explicit BitwiseXorOp(const KernelInfo&) {}
  template <class C> C operator()(C a, C b) const { return static_cast<C>(a ^ b); }
};

}  // namespace

// Opset 1 broadcasts with broadcast=1 only (legacy rule in BinaryKernel); later
// versions widened type lists (Equal: bool/float in 11, string in 19).
ONNXMINI_REGISTER_KERNEL("compare_logic", "", "Equal", 1, INT_MAX, make_binary<EqualOp>);
ONNXMINI_REGISTER_KERNEL("compare_logic", "", "Less", 1, INT_MAX, make_binary<LessOp>);
ONNXMINI_REGISTER_KERNEL("compare_logic", "", "Greater", 1, INT_MAX, make_binary<GreaterOp>);
ONNXMINI_REGISTER_KERNEL("compare_logic", "", "LessOrEqual", 12, INT_MAX, make_binary<LessOrEqualOp>);
ONNXMINI_REGISTER_KERNEL("compare_logic", "", "GreaterOrEqual", 12, INT_MAX, make_binary<GreaterOrEqualOp>);
ONNXMINI_REGISTER_KERNEL("compare_logic", "", "And", 1, INT_MAX, make_binary<AndOp>);
ONNXMINI_REGISTER_KERNEL("compare_logic", "", "Or", 1, INT_MAX, make_binary<OrOp>);
ONNXMINI_REGISTER_KERNEL("compare_logic", "", "Xor", 1, INT_MAX, make_binary<XorOp>);
ONNXMINI_REGISTER_KERNEL("compare_logic", "", "BitShift", 11, INT_MAX, make_binary<BitShiftOp>);
ONNXMINI_REGISTER_KERNEL("compare_logic", "", "BitwiseAnd", 18, INT_MAX, make_binary<BitwiseAndOp>);
ONNXMINI_REGISTER_KERNEL("compare_logic", "", "BitwiseOr", 18, INT_MAX, make_binary<BitwiseOrOp>);
ONNXMINI_REGISTER_KERNEL("compare_logic", "", "BitwiseXor", 18, INT_MAX, make_binary<BitwiseXorOp>);

}  // namespace ew
}  // namespace onnxmini

ONNXMINI_KERNEL_FILE(elementwise_compare_logic);
