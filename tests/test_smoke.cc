#include <gtest/gtest.h>
#include "onnxmini/onnxmini.h"
TEST(Smoke, TensorShape) {
  onnxmini::Tensor t(onnxmini::DType::Float32, {2, 3});
  EXPECT_EQ(t.numel(), 6);
}
