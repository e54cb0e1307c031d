// TensorScatter (opset 24): the KV-cache update, against a direct transcription of
// the spec's pseudocode (index by index), in linear and circular mode, and its errors.
#include "tests/common/op_test_util.h"

namespace onnxmini {
namespace test {
namespace {

// present[prefix, (w[b] + s) (mod max), rest] = update[prefix, s, rest], elsewhere past.
Tensor expected_scatter(const Tensor& past, const Tensor& update, const std::vector<int64_t>& writes, int64_t axis,
                        bool circular) {
  Tensor out = past.clone();
  std::vector<int64_t> idx(update.rank());
  for (int64_t i = 0; i < update.numel(); ++i) {
    int64_t rest = i;
    for (int64_t d = static_cast<int64_t>(update.rank()) - 1; d >= 0; --d) {
      idx[d] = rest % update.dim(d);
      rest /= update.dim(d);
    }
    int64_t pos = (writes.empty() ? 0 : writes[idx[0]]) + idx[axis];
    if (circular) pos %= past.dim(axis);
    int64_t flat = 0;
    for (size_t d = 0; d < past.rank(); ++d) flat = flat * past.dim(d) + (static_cast<int64_t>(d) == axis ? pos : idx[d]);
    out.mutable_data<float>()[flat] = update.data<float>()[i];
  }
  return out;
}

TEST(TensorScatter, LinearAndCircularMatchThePseudocode) {
  const Tensor past = random_values(DType::Float32, {2, 3, 6, 4}, 1);
  const Tensor update = random_values(DType::Float32, {2, 3, 3, 4}, 2);
  const Tensor writes = Tensor::from_vector<int64_t>({2}, {0, 3});
  EXPECT_TRUE(tensors_near(run_op(24, "TensorScatter", {past, update, writes}),
                           expected_scatter(past, update, {0, 3}, 2, false), 0, 0));
  const Tensor wrap = Tensor::from_vector<int64_t>({2}, {5, 4});  // 5,6,7 -> 5,0,1 and 4,5,0
  EXPECT_TRUE(tensors_near(run_op(24, "TensorScatter", {past, update, wrap},
                                  [](NodeBuilder& n) { n.attr("mode", std::string("circular")); }),
                           expected_scatter(past, update, {5, 4}, 2, true), 0, 0));
  // Sequence axis 1 of a rank-3 cache, no write_indices (all zero).
  const Tensor past3 = random_values(DType::Float32, {2, 5, 3}, 3);
  const Tensor upd3 = random_values(DType::Float32, {2, 2, 3}, 4);
  EXPECT_TRUE(tensors_near(run_op(24, "TensorScatter", {past3, upd3}, [](NodeBuilder& n) { n.attr("axis", int64_t{1}); }),
                           expected_scatter(past3, upd3, {}, 1, false), 0, 0));
}

TEST(TensorScatter, ErrorsNameTheNodeAndValue) {
  const Tensor past = random_values(DType::Float32, {2, 4, 3}, 5);
  const Tensor update = random_values(DType::Float32, {2, 2, 3}, 6);
  EXPECT_NE(op_error(24, "TensorScatter", {past, update, Tensor::from_vector<int64_t>({2}, {0, 3})},
                     [](NodeBuilder& n) { n.attr("axis", int64_t{1}); })
                .find("TensorScatter 'n1': write_indices[1] = 3 + sequence length 2 exceeds max_sequence_length 4"),
            std::string::npos);
  EXPECT_NE(op_error(24, "TensorScatter", {past, update, Tensor::from_vector<int64_t>({2}, {0, INT64_MIN})},
                     [](NodeBuilder& n) { n.attr("axis", int64_t{1}); })
                .find("write_indices[1] = -9223372036854775808 is outside [0, 4)"),
            std::string::npos);
  EXPECT_NE(op_error(24, "TensorScatter", {past, random_values(DType::Float32, {2, 5, 3}, 7)},
                     [](NodeBuilder& n) { n.attr("axis", int64_t{1}); })
                .find("longer than max_sequence_length"),
            std::string::npos);
  EXPECT_NE(op_error(24, "TensorScatter", {past, update}, [](NodeBuilder& n) { n.attr("axis", int64_t{0}); })
                .find("batch axis"),
            std::string::npos);
  EXPECT_NE(op_error(24, "TensorScatter", {past, update}, [](NodeBuilder& n) { n.attr("mode", std::string("ring")); })
                .find("mode must be 'linear' or 'circular', got 'ring'"),
            std::string::npos);
}

}  // namespace
}  // namespace test
}  // namespace onnxmini
