// Bad LSTM / GRU / RNN nodes: each error names the node and the bad shape or value.
#include <gtest/gtest.h>

#include "tests/common/node_runner.h"

namespace onnxmini {
namespace test {
namespace {

// The message contains `part` (shown in full when it does not).
#define EXPECT_HAS(msg, part)                          \
  do {                                                 \
    const std::string m_ = (msg);                      \
    EXPECT_NE(m_.find(part), std::string::npos) << m_; \
  } while (0)

Tensor zeros(const Shape& s) { return random_tensor(DType::Float32, s, 1, 0.0, 0.0); }
Tensor i32(const std::vector<int32_t>& v) { return Tensor::from_vector<int32_t>({static_cast<int64_t>(v.size())}, v); }

// An LSTM (seq 2, batch 3, input 4, hidden 5) with its inputs in slots X W R B lens h0 c0 P.
struct Lstm {
  std::vector<Tensor> in = {zeros({2, 3, 4}), zeros({1, 20, 4}), zeros({1, 20, 5})};
  std::string direction = "forward";
  std::vector<std::string> activations;
  Lstm& set(size_t i, Tensor t) {
    if (in.size() <= i) in.resize(i + 1);
    in[i] = std::move(t);
    return *this;
  }
  std::string error(const std::string& op = "LSTM") const {
    return node_error(
        op, 14, in,
        [&](NodeBuilder& n) {
          n.attr("hidden_size", int64_t{5}).attr("direction", direction);
          if (!activations.empty()) n.attr("activations", activations);
        },
        op == "LSTM" ? 3 : 2);
  }
};

TEST(RnnErrors, WeightShapes) {
  std::string e = Lstm().set(1, zeros({1, 16, 4})).error();
  EXPECT_HAS(e, "LSTM 'n1'");
  EXPECT_HAS(e, "W has shape 1x16x4");
  EXPECT_HAS(e, "need 1x20x4");
  e = Lstm().set(1, zeros({1, 20, 3})).error();
  EXPECT_HAS(e, "W has shape 1x20x3");
  e = Lstm().set(2, zeros({1, 20, 4})).error();
  EXPECT_HAS(e, "R has shape 1x20x4");
  EXPECT_HAS(e, "hidden_size 5 need 1x20x5");
  // GRU has three gates: an LSTM-shaped W is wrong.
  e = Lstm().set(2, zeros({1, 15, 5})).error("GRU");
  EXPECT_HAS(e, "GRU 'n1': W has shape 1x20x4");
  EXPECT_HAS(e, "need 1x15x4");
}

TEST(RnnErrors, DirectionsDisagree) {
  Lstm l;
  l.direction = "bidirectional";
  const std::string e = l.error();
  EXPECT_HAS(e, "R has shape 1x20x5 but direction 'bidirectional'");
  EXPECT_HAS(e, "need 2x20x5");
  l.direction = "sideways";
  EXPECT_HAS(l.error(), "direction 'sideways' is not one of");
}

TEST(RnnErrors, OptionalInputShapes) {
  EXPECT_HAS(Lstm().set(3, zeros({1, 20})).error(), "LSTM 'n1': B has shape 1x20, expected 1x40");
  EXPECT_HAS(Lstm().set(5, zeros({1, 2, 5})).error(), "initial_h has shape 1x2x5, expected 1x3x5");
  EXPECT_HAS(Lstm().set(6, zeros({1, 3, 4})).error(), "initial_c has shape 1x3x4, expected 1x3x5");
  EXPECT_HAS(Lstm().set(7, zeros({1, 15, 1})).error(), "P has shape 1x15x1, expected 1x15");
  EXPECT_HAS(Lstm().set(0, zeros({2, 3})).error(), "X must be 3-D");
}

TEST(RnnErrors, SequenceLens) {
  EXPECT_HAS(Lstm().set(4, i32({2, 3, 1})).error(), "sequence_lens[1] = 3 is outside [0, seq_length = 2]");
  EXPECT_HAS(Lstm().set(4, i32({2, -1, 1})).error(), "sequence_lens[1] = -1");
  EXPECT_HAS(Lstm().set(4, i32({2, 2})).error(), "sequence_lens has shape 2 but batch_size is 3");
}

TEST(RnnErrors, Activations) {
  Lstm l;
  l.activations = {"Sigmoid", "Tanh", "Swish"};
  EXPECT_HAS(l.error(), "LSTM 'n1': unknown activation 'Swish'");
  l.activations = {"Sigmoid", "Tanh"};
  EXPECT_HAS(l.error(), "activations has 2 entries; 1 direction(s) of LSTM need 3");
}

// The opset-1 and opset-7 LSTM are the same math.
TEST(RnnOpsets, Lstm1MatchesLstm7) {
  const std::vector<Tensor> in = {random_tensor(DType::Float32, {3, 2, 4}, 1),
                                  random_tensor(DType::Float32, {1, 12, 4}, 2),
                                  random_tensor(DType::Float32, {1, 12, 3}, 3)};
  auto attrs = [](NodeBuilder& n) { n.attr("hidden_size", int64_t{3}); };
  for (KernelMode mode : {KernelMode::Fast, KernelMode::Reference}) {
    const auto a = run_node("LSTM", 1, in, attrs, 3, mode), b = run_node("LSTM", 7, in, attrs, 3, mode);
    for (size_t i = 0; i < 3; ++i) EXPECT_TRUE(tensors_near(a[i], b[i], 0, 0)) << i;
  }
}

}  // namespace
}  // namespace test
}  // namespace onnxmini
