// Tensor storage, views, dtypes, float16 conversion (core/).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>

#include "onnxmini/onnxmini.h"
#include "core/float16.h"
#include "tests/common/model_builder.h"

using namespace onnxmini;
using onnxmini::test::error_message;

TEST(Tensor, StorageIsAlignedAndViewsShareIt) {
  Tensor t(DType::Float32, {3, 5});
  EXPECT_EQ(reinterpret_cast<uintptr_t>(t.raw()) % 64, 0u);
  Tensor v = t.view({15});
  EXPECT_EQ(v.raw(), t.raw());
  t.mutable_data<float>()[7] = 42.f;
  EXPECT_EQ(v.data<float>()[7], 42.f);
  Tensor c = t.clone();
  EXPECT_NE(c.raw(), t.raw());
  EXPECT_EQ(c.data<float>()[7], 42.f);
  EXPECT_NE(error_message([&] { t.view({4, 4}); }).find("cannot view a tensor of shape 3x5 as 4x4"), std::string::npos);
}

// Buffer::Release: the function runs once, when the last view goes, with the owner while it
// lives and null once it is gone; its words and the keep-alive arrive intact.
namespace {
struct ReleaseLog {
  int calls = 0;
  void* owner = nullptr;
  void* data = nullptr;
  uint64_t words[3] = {0, 0, 0};
};
ReleaseLog g_release_log;
void log_release(void* owner, void* data, const uint64_t* words) {
  ++g_release_log.calls;
  g_release_log.owner = owner;
  g_release_log.data = data;
  std::copy(words, words + 3, g_release_log.words);
}
}  // namespace

TEST(Buffer, ReleaseRunsOnceWithItsOwnerWhileItLives) {
  for (bool owner_alive : {true, false}) {
    g_release_log = {};
    auto owner = std::make_shared<int>(7);
    auto keep = std::make_shared<int>(3);
    float storage[4] = {0, 1, 2, 3};
    Buffer::Release r;
    r.fn = log_release;
    r.owner = owner;
    r.words[0] = 11, r.words[1] = 22, r.words[2] = 33;
    Tensor t(DType::Float32, {4}, Buffer::with_release(storage, sizeof(storage), r, keep));
    Tensor view = t.view({2, 2});
    t = Tensor();
    EXPECT_EQ(g_release_log.calls, 0);
    EXPECT_EQ(keep.use_count(), 2);  // held by the buffer
    void* owner_ptr = owner.get();
    if (!owner_alive) owner.reset();
    view = Tensor();
    EXPECT_EQ(g_release_log.calls, 1);
    EXPECT_EQ(g_release_log.owner, owner_alive ? owner_ptr : nullptr);
    EXPECT_EQ(g_release_log.data, static_cast<void*>(storage));
    EXPECT_EQ(g_release_log.words[0], 11u);
    EXPECT_EQ(g_release_log.words[2], 33u);
    EXPECT_EQ(keep.use_count(), 1);  // released with the buffer
  }
}

TEST(Buffer, StringsAreDestroyedWithTheirBuffer) {
  // Long strings own heap memory: a missed destructor shows as a leak under ASan.
  Tensor t(DType::String, {3});
  auto* s = t.mutable_data<std::string>();
  for (int i = 0; i < 3; ++i) s[i] = std::string(100, static_cast<char>('a' + i));
  Tensor copy = t;
  t = Tensor();
  EXPECT_EQ(copy.data<std::string>()[2], std::string(100, 'c'));
}

TEST(Tensor, TypeChecksAndAbsurdShapes) {
  Tensor t(DType::Int64, {2});
  EXPECT_NE(error_message([&] { t.data<float>(); }).find("tensor holds int64, accessed as float"), std::string::npos);
  EXPECT_NE(error_message([] { Tensor(DType::Float32, {int64_t(1) << 40, int64_t(1) << 40}); }).find("too many elements"),
            std::string::npos);
  EXPECT_NE(error_message([] { Tensor(DType::Float32, {-3}); }).find("negative dimension"), std::string::npos);
  Tensor s = Tensor::from_vector<std::string>({2}, {"a", "bb"});
  EXPECT_EQ(s.clone().data<std::string>()[1], "bb");
}

TEST(Tensor, DtypeNamesRoundTrip) {
  for (int code = 1; code <= 16; ++code) {
    DType d = static_cast<DType>(code);
    EXPECT_EQ(dtype_from_name(dtype_name(d)), d) << code;
  }
  EXPECT_EQ(dtype_from_name("float32"), DType::Float32);
  EXPECT_EQ(dtype_from_name("nonsense"), DType::Undefined);
}

TEST(Float16, ConversionsRoundTrip) {
  for (float f : {0.f, -0.f, 1.f, -2.5f, 65504.f, 6.1035156e-05f, 5.9604645e-08f, 0.333251953125f})
    EXPECT_EQ(half_to_float(float_to_half(f)), f) << f;
  EXPECT_EQ(float_to_half(1e6f), 0x7c00);  // overflow to inf
  EXPECT_TRUE(std::isnan(half_to_float(float_to_half(NAN))));
  EXPECT_EQ(bfloat16_to_float(float_to_bfloat16(3.0f)), 3.0f);
  EXPECT_EQ(float_to_bfloat16(1.00390625f), 0x3f80);  // ties to even
}
