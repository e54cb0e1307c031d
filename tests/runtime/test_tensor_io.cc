// .npy and .pb tensor files (runtime/tensor_io.cc): round trips and a bad file.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "onnxmini/onnxmini.h"
#include "tests/common/model_builder.h"

using namespace onnxmini;
using onnxmini::test::error_message;

TEST(TensorIo, NpyAndPbRoundTrip) {
  auto dir = std::filesystem::temp_directory_path();
  std::string npy = (dir / "onnxmini_t.npy").string(), pb = (dir / "onnxmini_t.pb").string();
  Tensor t = Tensor::from_vector<float>({2, 3}, {1, 2, 3, 4, 5, 6.5f});
  write_npy(npy, t);
  Tensor a = read_npy(npy);
  EXPECT_EQ(a.shape(), t.shape());
  EXPECT_EQ(a.data<float>()[5], 6.5f);
  write_tensor_pb(pb, Tensor::from_vector<int64_t>({3}, {1, -2, 3}), "idx");
  std::string name;
  Tensor b = read_tensor_pb(pb, &name);
  EXPECT_EQ(name, "idx");
  EXPECT_EQ(b.to_int64_vector(), (std::vector<int64_t>{1, -2, 3}));
  {
    std::ofstream f(npy, std::ios::binary);
    f << "garbage";
  }
  EXPECT_NE(error_message([&] { read_npy(npy); }).find("is not a .npy file"), std::string::npos);
  std::filesystem::remove(npy);
  std::filesystem::remove(pb);
}
