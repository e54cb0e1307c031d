// The remaining error cases of the layout / indexing / reduction kernels: each
// bad input must give an onnxmini::Error naming the node and the value.
#include "tests/common/node_runner.h"

namespace onnxmini {
namespace test {
namespace {

struct ErrorCase {
  const char* label;
  std::string op;
  int opset;
  std::vector<Tensor> inputs;
  AttrSetter attrs;
  size_t outputs;
  std::string expected;  // a substring of the message
};

TEST(KernelInputErrors, EachCaseNamesNodeAndValue) {
  const Tensor x23 = iota_tensor(DType::Float32, {2, 3});
  const std::vector<ErrorCase> cases = {
      {"concat dtype", "Concat", 13, {x23, iota_tensor(DType::Int64, {2, 3})}, [](NodeBuilder& n) { n.attr("axis", int64_t{0}); }, 1,
       "Concat 'n1': input 1 is int64, input 0 is float"},
      {"concat rank", "Concat", 13, {x23, iota_tensor(DType::Float32, {6})}, [](NodeBuilder& n) { n.attr("axis", int64_t{0}); }, 1,
       "Concat 'n1': input 1 has rank 1 (shape 6), input 0 has rank 2"},
      {"split count", "Split", 13, {x23, i64({1, 1, 1})}, [](NodeBuilder& n) { n.attr("axis", int64_t{1}); }, 2,
       "Split 'n1': split [1,1,1] has 3 entries for 2 outputs"},
      {"split negative", "Split", 13, {x23, i64({4, -1})}, [](NodeBuilder& n) { n.attr("axis", int64_t{1}); }, 2,
       "Split 'n1': split [4,-1] has a negative size -1"},
      {"split num_outputs", "Split", 18, {x23}, [](NodeBuilder& n) { n.attr("num_outputs", int64_t{3}); }, 2,
       "Split 'n1': num_outputs is 3 but the node has 2 outputs"},
      {"slice lengths", "Slice", 13, {x23, i64({0, 0}), i64({1})}, nullptr, 1, "Slice 'n1': starts has 2 entries, ends has 1"},
      {"slice repeated axis", "Slice", 13, {x23, i64({0, 0}), i64({1, 1}), i64({1, -1})}, nullptr, 1,
       "Slice 'n1': axis -1 appears more than once in axes [1,-1]"},
      {"gather index dtype", "Gather", 13, {x23, Tensor::from_vector<float>({1}, {0})}, nullptr, 1,
       "Gather 'n1': indices must be int32 or int64, got float"},
      {"gather scalar data", "Gather", 13, {Tensor::scalar<float>(1), i64({0})}, nullptr, 1,
       "Gather 'n1': data must have rank >= 1"},
      {"gatherelements shape", "GatherElements", 13, {x23, Tensor::from_vector<int64_t>({3, 1}, {0, 0, 0})},
       [](NodeBuilder& n) { n.attr("axis", int64_t{1}); }, 1,
       "GatherElements 'n1': indices shape 3x1 exceeds data shape 2x3 on dimension 0"},
      {"expand negative", "Expand", 13, {x23, i64({-1, 3})}, nullptr, 1, "Expand 'n1': shape [-1,3] has a negative dimension"},
      {"expand dtype", "Expand", 13, {x23, Tensor::from_vector<int32_t>({2}, {2, 3})}, nullptr, 1,
       "Expand 'n1': shape must be int64, got int32"},
      {"pad edge on empty axis", "Pad", 13, {Tensor(DType::Float32, {0, 2}), i64({1, 0, 0, 0})},
       [](NodeBuilder& n) { n.attr("mode", "edge"); }, 1, "Pad 'n1': cannot pad axis 0 of size 0 in a non-constant mode"},
      {"pad value dtype", "Pad", 13, {x23, i64({0, 0, 0, 1}), Tensor::scalar<double>(1)}, nullptr, 1,
       "Pad 'n1': constant_value is double, data is float"},
      {"range scalar", "Range", 11, {i64({0, 1}), Tensor::scalar<int64_t>(3), Tensor::scalar<int64_t>(1)}, nullptr, 1,
       "Range 'n1': input 0 must be a scalar, got shape 2"},
      {"range dtypes", "Range", 11, {Tensor::scalar<int64_t>(0), Tensor::scalar<int32_t>(3), Tensor::scalar<int64_t>(1)}, nullptr, 1,
       "Range 'n1': input 1 is int32, start is int64"},
      {"topk negative k", "TopK", 11, {x23, i64({-1})}, nullptr, 2, "TopK 'n1': k is -1, must be >= 0"},
      {"topk k dtype", "TopK", 11, {x23, Tensor::from_vector<int32_t>({1}, {1})}, nullptr, 2,
       "TopK 'n1': K must be an int64 tensor with one element, got int32 1"},
      {"reduce axes dtype", "ReduceMax", 18, {x23, Tensor::from_vector<int32_t>({1}, {0})}, nullptr, 1,
       "ReduceMax 'n1': axes must be int64, got int32"},
      {"argmax scalar", "ArgMax", 13, {Tensor::scalar<float>(1)}, nullptr, 1, "ArgMax 'n1': input must have rank >= 1"},
      {"constantofshape value", "ConstantOfShape", 20, {i64({2})},
       [](NodeBuilder& n) { n.attr("value", Tensor::from_vector<float>({2}, {1, 2})); }, 1,
       "ConstantOfShape 'n1': attribute 'value' must hold one element, got shape 2"},
      {"transpose perm range", "Transpose", 13, {x23}, [](NodeBuilder& n) { n.attr("perm", std::vector<int64_t>{0, 2}); }, 1,
       "Transpose 'n1': invalid perm [0,2] for rank 2"},
  };
  for (const ErrorCase& c : cases) {
    const std::string msg = node_error(c.op, c.opset, c.inputs, c.attrs, c.outputs);
    EXPECT_NE(msg.find(c.expected), std::string::npos) << c.label << ": got \"" << msg << "\"";
  }
}

}  // namespace
}  // namespace test
}  // namespace onnxmini
