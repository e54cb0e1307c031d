// Every kernel_time event names the path its kernel took (kernel_variant) and
// the instruction set of the code that ran (isa): for a small model with one
// node of each family that reports a choice, in fast and reference mode. The
// ISA follows ONNXMINI_ISA (CTest also runs the suite with ONNXMINI_ISA=portable,
// where every event must say "portable").
#include <gtest/gtest.h>

#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "core/cpu_features.h"
#include "tests/common/model_builder.h"
#include "tests/common/variety_model.h"
#include "tests/profiler/trace_checks.h"

using namespace onnxmini;
using namespace onnxmini::test;

namespace {

// name -> kernel_time args of one profiled run; level 0 by default so that every
// node of the model is one event.
std::map<std::string, nlohmann::json> kernel_args(KernelMode mode, int level = ORT_DISABLE_ALL) {
  SessionOptions o;
  o.enable_profiling = true;
  o.kernels = mode;
  o.graph_optimization_level = level;
  o.profile_file_prefix = ::testing::TempDir() + "variants_profile_";
  auto s = variety_model().session(o);
  run_all(*s, variety_feeds());
  const std::string path = s->end_profiling();
  const nlohmann::json events = nlohmann::json::parse(slurp(path));
  std::remove(path.c_str());
  std::map<std::string, nlohmann::json> out;
  for (const auto& e : events) {
    const std::string name = e["name"];
    if (ends_with(name, "_kernel_time")) out[name.substr(0, name.size() - 12)] = e["args"];
  }
  return out;
}

TEST(ProfilerVariants, EveryKernelEventNamesVariantAndIsa) {
  const auto args = kernel_args(KernelMode::Fast);
  ASSERT_EQ(args.size(), kVarietyNodes);
  const std::set<std::string> isas{"portable", "avx2", "avx512"};
  for (const auto& [node, a] : args) {
    ASSERT_TRUE(a.contains("kernel_variant")) << node;
    ASSERT_TRUE(a.contains("isa")) << node;
    EXPECT_FALSE(a["kernel_variant"].get<std::string>().empty()) << node;
    EXPECT_EQ(isas.count(a["isa"].get<std::string>()), 1u) << node << ": " << a["isa"];
  }
  // The variant names the path this call took.
  EXPECT_EQ(args.at("transpose")["kernel_variant"], cpu::active_isa() == cpu::Isa::Avx512 ? "transpose_simd_16x16"
                                                    : cpu::active_isa() == cpu::Isa::Avx2 ? "transpose_simd_8x8"
                                                                                          : "transpose_tiled_32x32");
  EXPECT_EQ(args.at("add")["kernel_variant"], cpu::active_isa() == cpu::Isa::Portable ? "binary_same_shape"
                                                                                      : "binary_same_shape_simd");
  EXPECT_EQ(args.at("reduce")["kernel_variant"], cpu::active_isa() == cpu::Isa::Portable ? "reduce_rows_pairwise"
                                                                                         : "reduce_short_rows_simd");
  // ArgMax over the last axis of [2,8,8]: 16 rows of 8, a whole number of SIMD groups.
  EXPECT_EQ(args.at("argmax")["kernel_variant"], cpu::active_isa() == cpu::Isa::Portable ? "arg_rows_scalar"
                                                                                         : "arg_rows_simd");
  EXPECT_EQ(args.at("matmul")["kernel_variant"], "matmul_folded+gemm_prepacked/builtin");
  EXPECT_EQ(args.at("relu")["kernel_variant"], "unary_loop");
  EXPECT_EQ(args.at("relu")["isa"], "portable");
  EXPECT_EQ(args.at("attention")["kernel_variant"], "attention_short");  // a few keys: the short-sequence path
  EXPECT_EQ(args.at("rmsnorm")["kernel_variant"], "rmsnorm_rows");
  // Gemm of [64,48] x [48,40] with a constant B: the prepacked panels.
  EXPECT_EQ(args.at("gemm")["kernel_variant"], "gemm_prepacked/builtin");
}

TEST(ProfilerVariants, OptimizedGraphEventsNameVariantAndIsa) {
  // The default level (all): Conv + Relu run as one Conv, ReduceMean + ReduceMax as
  // one ReduceMeanMax; their events name the fused kernel's path too.
  const auto args = kernel_args(KernelMode::Fast, ORT_ENABLE_ALL);
  ASSERT_LT(args.size(), kVarietyNodes);
  const std::set<std::string> isas{"portable", "avx2", "avx512"};
  bool mean_max = false;
  for (const auto& [node, a] : args) {
    ASSERT_TRUE(a.contains("kernel_variant")) << node;
    EXPECT_FALSE(a["kernel_variant"].get<std::string>().empty()) << node;
    EXPECT_EQ(isas.count(a.value("isa", "")), 1u) << node;
    if (a["op_name"] == "ReduceMeanMax") {
      mean_max = true;
      EXPECT_EQ(a["kernel_variant"], "reduce_mean_max_rows") << node;  // the last axis: contiguous rows
    }
  }
  EXPECT_TRUE(mean_max);
  EXPECT_EQ(args.count("relu"), 0u);  // fused into the Conv
}

TEST(ProfilerVariants, SimdKernelsReportTheActiveIsa) {
  // ONNXMINI_ISA caps cpu::active_isa(); the events follow it.
  const auto args = kernel_args(KernelMode::Fast);
  const std::string isa = cpu::active_isa_name();
  for (const char* node :
       {"transpose", "add", "softmax", "matmul", "sigmoid", "conv", "reduce", "argmax", "attention", "rmsnorm", "gemm"})
    EXPECT_EQ(args.at(node)["isa"], isa) << node;
}

TEST(ProfilerVariants, ReferenceKernelsArePortableReference) {
  const auto args = kernel_args(KernelMode::Reference);
  ASSERT_EQ(args.size(), kVarietyNodes);
  for (const auto& [node, a] : args) {
    EXPECT_EQ(a["kernel_variant"], "reference") << node;
    EXPECT_EQ(a["isa"], "portable") << node;
  }
}

}  // namespace
