// LinearAttention and CausalConvWithState (opset 27, kernels/attention): the fast
// paths (float32 rows, 4 threads, every ISA's float16 conversions) against the
// reference paths (double accumulation), on shapes the node tests do not cover
// (GQA groups of 3, long sequences, per-key-dim decay, float16 / bfloat16), and the
// errors. The ONNX node tests (pip set) check both against onnx's reference outputs.
//
// Tolerance: per token the state gains k v^T terms and is read by a dot product of
// dk terms; over T tokens the float32 sums carry a relative error of about
// (T + dk) * eps32 of the magnitudes involved (|q|,|k|,|v| <= 1, decay <= 1):
// atol = rtol = 4 * (T + dk) * eps32, plus two units of the output rounding for
// float16 / bfloat16 outputs.
#include <gtest/gtest.h>

#include <cmath>

#include "core/cpu_features.h"
#include "kernels/attention/attention_lanes.h"
#include "tests/common/node_runner.h"
#include "tests/common/op_test_util.h"

namespace onnxmini {
namespace test {
namespace {

const double kEps32 = std::ldexp(1.0, -23);

std::vector<cpu::Isa> isas() {
  std::vector<cpu::Isa> v{cpu::Isa::Portable};
  if (cpu::hw_has_avx2_fma()) v.push_back(cpu::Isa::Avx2);
  if (cpu::hw_has_avx512()) v.push_back(cpu::Isa::Avx512);
  return v;
}
struct IsaScope {
  explicit IsaScope(cpu::Isa isa) { attention::set_attention_isa_for_tests(isa); }
  ~IsaScope() { attention::set_attention_isa_for_tests(cpu::active_isa()); }
};
double storage_rounding(DType t) {
  return t == DType::Float16 ? 2 * std::ldexp(1.0, -11) : t == DType::BFloat16 ? 2 * std::ldexp(1.0, -8) : 0.0;
}

TEST(LinearAttention, FastMatchesReference) {
  struct C {
    const char* rule;
    int64_t B, T, hq, hkv, dk, dv;
    bool per_dim_decay, past;
  };
  const std::vector<C> cases = {{"linear", 1, 5, 2, 2, 4, 3, false, false},
                                {"gated", 2, 33, 6, 2, 8, 5, true, true},
                                {"delta", 1, 17, 3, 1, 16, 16, false, true},
                                {"gated_delta", 2, 64, 6, 2, 32, 16, false, true},
                                {"gated_delta", 1, 1, 4, 4, 8, 8, true, true}};
  for (DType t : {DType::Float32, DType::Float16, DType::BFloat16})
    for (const C& c : cases) {
      const std::string rule = c.rule;
      std::vector<Tensor> in{random_values(t, {c.B, c.T, c.hq * c.dk}, 1, -1, 1),
                             random_values(t, {c.B, c.T, c.hkv * c.dk}, 2, -0.3, 0.3),
                             random_values(t, {c.B, c.T, c.hkv * c.dv}, 3, -1, 1),
                             c.past ? random_values(t, {c.B, c.hkv, c.dk, c.dv}, 4, -1, 1) : Tensor(), Tensor(), Tensor()};
      if (rule == "gated" || rule == "gated_delta")
        in[4] = random_values(t, {c.B, c.T, c.per_dim_decay ? c.hkv * c.dk : c.hkv}, 5, -0.5, 0);
      if (rule == "delta" || rule == "gated_delta") in[5] = random_values(t, {c.B, c.T, c.hkv}, 6, 0, 1);
      auto attrs = [&](NodeBuilder& n) {
        n.attr("q_num_heads", c.hq).attr("kv_num_heads", c.hkv).attr("update_rule", rule);
      };
      const auto ref = run_node("LinearAttention", 27, in, attrs, 2, KernelMode::Reference);
      const double tol = 4 * (c.T + c.dk) * kEps32 + storage_rounding(t);
      for (cpu::Isa isa : isas()) {
        IsaScope scope(isa);
        const auto fast = run_node("LinearAttention", 27, in, attrs, 2, KernelMode::Fast, 4);
        EXPECT_TRUE(tensors_near(fast[0], ref[0], tol, tol)) << rule << " " << dtype_name(t) << " " << cpu::isa_name(isa);
        EXPECT_TRUE(tensors_near(fast[1], ref[1], tol, tol)) << rule << " state " << dtype_name(t);
      }
    }
}

// GQA: query head h reads kv head h / (q_num_heads / kv_num_heads). Query heads 0 and 1
// share kv head 0 (groups of 3), so giving head 1 head 0's query repeats its output exactly.
TEST(LinearAttention, GroupedQueryHeadsShareTheirKvHead) {
  const int64_t T = 4, dk = 4, dv = 3;
  Tensor q = random_values(DType::Float32, {1, T, 6 * dk}, 7, -1, 1);
  for (int64_t i = 0; i < T; ++i)
    for (int64_t d = 0; d < dk; ++d) q.mutable_data<float>()[(i * 6 + 1) * dk + d] = q.data<float>()[(i * 6 + 0) * dk + d];
  const std::vector<Tensor> in{q, random_values(DType::Float32, {1, T, 2 * dk}, 8, -1, 1),
                               random_values(DType::Float32, {1, T, 2 * dv}, 9, -1, 1)};
  const auto out = run_node("LinearAttention", 27, in, [](NodeBuilder& n) {
    n.attr("q_num_heads", int64_t{6}).attr("kv_num_heads", int64_t{2}).attr("update_rule", std::string("linear"));
  }, 2, KernelMode::Fast);
  for (int64_t i = 0; i < T; ++i)
    for (int64_t m = 0; m < dv; ++m)
      EXPECT_EQ(out[0].data<float>()[(i * 6 + 1) * dv + m], out[0].data<float>()[(i * 6 + 0) * dv + m]);
}

TEST(LinearAttention, Errors) {
  const Tensor q = random_values(DType::Float32, {1, 2, 8}, 1), k = q, v = q;
  auto err = [&](const std::vector<Tensor>& in, const std::string& rule, int64_t hq, int64_t hkv) {
    return node_error("LinearAttention", 27, in, [&](NodeBuilder& n) {
      n.attr("q_num_heads", hq).attr("kv_num_heads", hkv).attr("update_rule", rule);
    }, 2);
  };
  EXPECT_NE(err({q, k, v}, "gated", 2, 2).find("LinearAttention 'n1': update_rule 'gated' requires the decay input"),
            std::string::npos);
  EXPECT_NE(err({q, k, v, Tensor(), Tensor(), random_values(DType::Float32, {1, 2, 2}, 2)}, "linear", 2, 2)
                .find("update_rule 'linear' forbids the beta input"),
            std::string::npos);
  EXPECT_NE(err({q, k, v}, "linear", 3, 2).find("q_num_heads 3 must be a positive multiple of kv_num_heads 2"),
            std::string::npos);
  EXPECT_NE(err({q, k, v}, "fast", 2, 2).find("update_rule must be linear, gated, delta or gated_delta, got 'fast'"),
            std::string::npos);
  EXPECT_NE(err({q, k, v, random_values(DType::Float32, {1, 2, 4, 5}, 3)}, "linear", 2, 2)
                .find("past_state is float 1x2x4x5, expected a float type of shape (1, 2, 4, 4)"),
            std::string::npos);
}

TEST(CausalConvWithState, FastMatchesReference) {
  struct C {
    int64_t B, C, L, K;
    bool bias, past;
    const char* act;
  };
  const std::vector<C> cases = {{1, 1, 1, 1, false, false, "none"}, {2, 5, 17, 4, true, true, "silu"},
                                {3, 64, 200, 4, true, false, "swish"}, {1, 8, 1, 3, false, true, "none"}};
  for (DType t : {DType::Float32, DType::Float16, DType::BFloat16})
    for (const C& c : cases) {
      const std::vector<Tensor> in{random_values(t, {c.B, c.C, c.L}, 1, -2, 2), random_values(t, {c.C, 1, c.K}, 2, -1, 1),
                                   c.bias ? random_values(t, {c.C}, 3, -1, 1) : Tensor(),
                                   c.past ? random_values(t, {c.B, c.C, c.K - 1}, 4, -2, 2) : Tensor()};
      auto attrs = [&](NodeBuilder& n) { n.attr("activation", std::string(c.act)); };
      const auto ref = run_node("CausalConvWithState", 27, in, attrs, 2, KernelMode::Reference);
      const double tol = 4 * (c.K + 2) * kEps32 * 4 + storage_rounding(t);  // K products of |w x| <= 2
      for (cpu::Isa isa : isas()) {
        IsaScope scope(isa);
        const auto fast = run_node("CausalConvWithState", 27, in, attrs, 2, KernelMode::Fast, 4);
        EXPECT_TRUE(tensors_near(fast[0], ref[0], tol, tol)) << dtype_name(t) << " K=" << c.K;
        EXPECT_TRUE(tensors_near(fast[1], ref[1], 0, 0)) << "present_state is a copy";
      }
    }
}

TEST(CausalConvWithState, Errors) {
  const Tensor x = random_values(DType::Float32, {1, 3, 5}, 1);
  auto err = [&](const std::vector<Tensor>& in, const char* act = "none") {
    return node_error("CausalConvWithState", 27, in, [&](NodeBuilder& n) { n.attr("activation", std::string(act)); }, 2);
  };
  EXPECT_NE(err({x, random_values(DType::Float32, {3, 2, 4}, 2)})
                .find("CausalConvWithState 'n1': weight is float 3x2x4, expected float (3, 1, k >= 1)"),
            std::string::npos);
  EXPECT_NE(err({x, random_values(DType::Float32, {3, 1, 4}, 2), Tensor(), random_values(DType::Float32, {1, 3, 2}, 3)})
                .find("past_state is float 1x3x2, expected float (1, 3, 3)"),
            std::string::npos);
  EXPECT_NE(err({x, random_values(DType::Float32, {3, 1, 4}, 2)}, "gelu")
                .find("activation must be 'none', 'silu' or 'swish', got 'gelu'"),
            std::string::npos);
}

}  // namespace
}  // namespace test
}  // namespace onnxmini
