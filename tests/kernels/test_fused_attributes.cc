// kernels/fused_attributes.h: the names through which the graph fusion pass and
// the Conv / Gemm kernels agree on fused work.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "kernels/fused_attributes.h"

using namespace onnxmini;

TEST(FusedAttributes, EveryActivationRoundTripsThroughItsOpName) {
  using K = FusedActivationKind;
  std::set<std::string> names;
  for (K a : {K::Relu, K::Clip, K::Sigmoid, K::PRelu}) {
    const std::string name = fused_activation_name(a);
    EXPECT_FALSE(name.empty());
    EXPECT_TRUE(names.insert(name).second) << name << " is used twice";
    EXPECT_EQ(fused_activation_from_name(name), a) << name;
  }
  EXPECT_EQ(fused_activation_from_name("Tanh"), K::None);
  EXPECT_EQ(fused_activation_from_name("relu"), K::None);  // op types are case-sensitive
  EXPECT_STREQ(fused_activation_name(K::None), "");
}

TEST(FusedAttributes, NamesAreDistinctAndPrivate) {
  const std::set<std::string> names = {fused_attr::kActivation, fused_attr::kActivationParams, fused_attr::kAddends,
                                       fused_attr::kInputScale, fused_attr::kInputShift};
  EXPECT_EQ(names.size(), 5u);
  for (const std::string& n : names) EXPECT_EQ(n[0], '_') << n << " could clash with an ONNX attribute";
}
