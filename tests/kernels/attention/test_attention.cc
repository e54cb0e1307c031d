// Attention (kernels/attention): the fused kernel (every ISA this machine
// has, 4 threads; both the flash-style path and the short-sequence path
// (attention_short.cc) wherever the latter applies) against the reference
// kernel (double, KernelMode::Reference)
// over shapes and options: 3-D / 4-D, MHA / GQA / MQA, sequence lengths
// longer than a key block (kKeyBlock = 64) and than a task's query block,
// causal with and without a past cache, bool / float masks of every rank,
// short masks, softcap, scale, nonpad_kv_seqlen, the opset-25 window, every
// qk_matmul_output mode, float16 / bfloat16 storage. Plus shape errors.
//
// Tolerance (float32 math in the fused kernel vs double): a score
// s = scale * sum_d q_d k_d carries an error of at most D * eps32 * scale *
// sum|q_d k_d| <= D^2 * eps32 * scale * max|q| max|k|; softmax turns an
// absolute score error e into a relative probability error <= 2e, and
// P . V adds Ltot * eps32 relative, so |dY| <= max|v| * (2 e + Ltot * eps32)
// (exp's own error, ~2 eps32 relative, is inside the margin). Stored
// float16 / bfloat16 outputs add one rounding of the result: 2^-11 / 2^-8
// relative, and both kernels round, so 2 units of that. The short path
// computes the same float32 sums (GEMM order, one softmax over the whole row
// instead of per 64-key block), inside the same bound.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "core/cpu_features.h"
#include "kernels/attention/attention_lanes.h"
#include "kernels/attention/attention_short.h"
#include "tests/common/node_runner.h"
#include "tests/common/op_test_util.h"

namespace onnxmini {
namespace test {
namespace {

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

// Forces one path of the fused kernel for a scope (Auto restores the cost rule).
struct PathScope {
  explicit PathScope(attention::AttentionPath p) { attention::set_attention_path_for_tests(p); }
  ~PathScope() { attention::set_attention_path_for_tests(attention::AttentionPath::Auto); }
};

enum MaskKind { kNoMask, kBool2d, kFloat2d, kFloat3d, kFloat4d, kBool4d, kShortFloat, kBoolFullyMaskedRow };

struct Case {
  int64_t batch = 1, q_heads = 2, kv_heads = 2, q_len = 5, kv_len = 7, past = 0, d = 8, dv = 8;
  bool rank3 = false, causal = false;
  MaskKind mask = kNoMask;
  float softcap = 0, scale = 0;  // 0: attribute absent
  int qk_mode = -1;              // -1: no qk_matmul_output
  bool nonpad = false;
  int64_t left = -1, right = -1;  // opset 25 window
  DType dtype = DType::Float32;
  std::string name() const {
    std::ostringstream o;
    o << "B" << batch << " H" << q_heads << "/" << kv_heads << " L" << q_len << "x" << kv_len << " past" << past << " D"
      << d << "/" << dv << " rank" << (rank3 ? 3 : 4) << " causal" << causal << " mask" << int(mask) << " cap" << softcap
      << " scale" << scale << " qk" << qk_mode << " nonpad" << nonpad << " win" << left << "," << right << " "
      << dtype_name(dtype);
    return o.str();
  }
};

int opset_of(const Case& c) { return c.left >= 0 || c.right >= 0 ? 25 : c.nonpad ? 24 : 23; }

std::vector<Tensor> inputs_of(const Case& c, uint32_t seed) {
  const int64_t total = c.past + c.kv_len;
  auto qkv = [&](int64_t heads, int64_t len, int64_t hs, uint32_t s) {
    return random_values(c.dtype, c.rank3 ? Shape{c.batch, len, heads * hs} : Shape{c.batch, heads, len, hs}, s, -1, 1);
  };
  std::vector<Tensor> in{qkv(c.q_heads, c.q_len, c.d, seed), qkv(c.kv_heads, c.kv_len, c.d, seed + 1),
                         qkv(c.kv_heads, c.kv_len, c.dv, seed + 2)};
  Tensor mask;
  switch (c.mask) {
    case kNoMask: break;
    case kBool2d: mask = random_values(DType::Bool, {c.q_len, total}, seed + 3, 0, 1); break;
    case kFloat2d: mask = random_values(c.dtype, {c.q_len, total}, seed + 3, -2, 2); break;
    case kFloat3d: mask = random_values(c.dtype, {c.q_heads, 1, total}, seed + 3, -2, 2); break;
    case kFloat4d: mask = random_values(c.dtype, {c.batch, 1, c.q_len, total}, seed + 3, -2, 2); break;
    case kBool4d: mask = random_values(DType::Bool, {c.batch, c.q_heads, c.q_len, total}, seed + 3, 0, 1); break;
    case kShortFloat: mask = random_values(c.dtype, {1, c.q_len, std::max<int64_t>(1, total - 3)}, seed + 3, -2, 2); break;
    case kBoolFullyMaskedRow: {
      mask = random_values(DType::Bool, {c.q_len, total}, seed + 3, 0, 1);
      for (int64_t j = 0; j < total; ++j) mask.mutable_data<bool>()[j] = false;  // row 0 attends nothing
      break;
    }
  }
  in.push_back(mask);
  if (c.past > 0) {
    in.push_back(random_values(c.dtype, {c.batch, c.kv_heads, c.past, c.d}, seed + 4, -1, 1));
    in.push_back(random_values(c.dtype, {c.batch, c.kv_heads, c.past, c.dv}, seed + 5, -1, 1));
  } else {
    in.push_back(Tensor());
    in.push_back(Tensor());
  }
  if (c.nonpad) {
    std::vector<int64_t> np;
    for (int64_t b = 0; b < c.batch; ++b) np.push_back(std::max<int64_t>(0, total - 2 * b - 1));
    in.push_back(Tensor::from_vector<int64_t>({c.batch}, np));
  }
  while (!in.empty() && !in.back().defined()) in.pop_back();
  return in;
}

AttrSetter attrs_of(const Case& c) {
  return [c](NodeBuilder& n) {
    if (c.rank3) {
      n.attr("q_num_heads", c.q_heads);
      n.attr("kv_num_heads", c.kv_heads);
    }
    if (c.causal) n.attr("is_causal", int64_t{1});
    if (c.softcap > 0) n.attr("softcap", c.softcap);
    if (c.scale != 0) n.attr("scale", c.scale);
    if (c.qk_mode >= 0) n.attr("qk_matmul_output_mode", int64_t{c.qk_mode});
    if (c.left >= 0) n.attr("left_window_size", c.left);
    if (c.right >= 0) n.attr("right_window_size", c.right);
  };
}

// The bound of the header comment for inputs in [-1, 1].
double tolerance(const Case& c) {
  const double eps = std::ldexp(1.0, -23);
  const double scale = c.scale != 0 ? c.scale : 1.0 / std::sqrt(static_cast<double>(c.d));
  const double score_err = static_cast<double>(c.d) * c.d * eps * scale;
  double tol = 2 * score_err + (c.past + c.kv_len) * eps;
  if (c.dtype == DType::Float16) tol += 2 * std::ldexp(1.0, -11);
  if (c.dtype == DType::BFloat16) tol += 2 * std::ldexp(1.0, -8);
  return tol;
}

void check(const Case& c, uint32_t seed = 7) {
  const auto in = inputs_of(c, seed);
  const size_t outs = c.qk_mode >= 0 ? 4 : 3;
  const auto ref = run_node("Attention", opset_of(c), in, attrs_of(c), outs, KernelMode::Reference, 1);
  // The short path covers float32 without past cache or qk_matmul_output (else it is the flash path again).
  const bool short_ok = c.dtype == DType::Float32 && c.past == 0 && c.qk_mode < 0;
  for (auto path : {attention::AttentionPath::Flash, attention::AttentionPath::Short})
  for (cpu::Isa isa : isas()) {
    if (path == attention::AttentionPath::Short && !short_ok) continue;
    PathScope force(path);
    IsaScope scope(isa);
    const auto fast = run_node("Attention", opset_of(c), in, attrs_of(c), outs, KernelMode::Fast, 4);
    const char* path_name = path == attention::AttentionPath::Short ? "short" : "flash";
    EXPECT_TRUE(tensors_near(fast[0], ref[0], tolerance(c), 0)) << c.name() << " Y, " << cpu::isa_name(isa) << " "
                                                                << path_name;
    EXPECT_TRUE(tensors_near(fast[1], ref[1], 0, 0)) << c.name() << " present_key";
    EXPECT_TRUE(tensors_near(fast[2], ref[2], 0, 0)) << c.name() << " present_value";
    if (outs == 4) {
      // Scores (modes 0-2) are sums of D products scaled; mode 3 is a probability.
      const double qk_tol = c.qk_mode == 3 ? tolerance(c) : tolerance(c) * c.d;
      EXPECT_TRUE(tensors_near(fast[3], ref[3], qk_tol, 0)) << c.name() << " qk_matmul_output";
    }
  }
}

TEST(Attention, FastMatchesReferenceBasicShapes) {
  for (bool rank3 : {false, true})
    for (auto [hq, hkv] : {std::pair<int64_t, int64_t>{2, 2}, {4, 2}, {6, 1}}) {
      Case c;
      c.rank3 = rank3, c.q_heads = hq, c.kv_heads = hkv;
      check(c);
      c.causal = true;
      check(c);
    }
}

TEST(Attention, LongSequencesCrossKeyAndQueryBlocks) {
  for (int64_t lq : {1, 33, 70})
    for (int64_t lkv : {31, 63, 64, 65, 150}) {
      Case c;
      c.q_len = lq, c.kv_len = lkv, c.d = 64, c.dv = 64, c.q_heads = 4, c.kv_heads = 2;
      check(c);
      c.causal = true;
      check(c);
    }
}

TEST(Attention, HeadSizesAndValueSizeDiffer) {
  for (int64_t d : {1, 5, 16, 24, 80, 128})
    for (int64_t dv : {3, 16, 40, 65}) {
      Case c;
      c.d = d, c.dv = dv, c.kv_len = 40;
      check(c);
    }
}

TEST(Attention, CausalWithPastCache) {
  for (int64_t past : {1, 7, 40})
    for (int64_t lq : {1, 3}) {
      Case c;
      c.past = past, c.q_len = lq, c.kv_len = lq, c.causal = true, c.q_heads = 8, c.kv_heads = 2, c.d = 32, c.dv = 32;
      check(c);
      c.rank3 = true;
      check(c);
    }
}

TEST(Attention, Masks) {
  for (MaskKind m : {kBool2d, kFloat2d, kFloat3d, kFloat4d, kBool4d, kShortFloat, kBoolFullyMaskedRow})
    for (bool causal : {false, true}) {
      Case c;
      c.batch = 2, c.q_heads = 4, c.kv_heads = 2, c.q_len = 6, c.kv_len = 37, c.mask = m, c.causal = causal;
      check(c);
      c.past = 5;
      check(c);
    }
}

TEST(Attention, SoftcapScaleAndQkOutputModes) {
  for (int mode : {-1, 0, 1, 2, 3})
    for (float cap : {0.f, 2.5f}) {
      Case c;
      c.qk_mode = mode, c.softcap = cap, c.scale = 0.7f, c.mask = kFloat2d, c.causal = true, c.kv_len = 45;
      check(c);
      c.mask = kBoolFullyMaskedRow;
      check(c);
    }
}

TEST(Attention, NonpadKvSeqlenAndWindows) {
  Case c;
  c.batch = 3, c.q_len = 4, c.kv_len = 50, c.nonpad = true;
  check(c);
  c.causal = true;
  check(c);
  c.mask = kFloat4d;
  check(c);
  Case w;
  w.q_len = 40, w.kv_len = 40;
  for (auto [l, r] : {std::pair<int64_t, int64_t>{3, -1}, {-1, 2}, {5, 0}, {0, 0}}) {
    w.left = l, w.right = r;
    check(w);
    w.causal = !w.causal;
    check(w);
  }
}

TEST(Attention, HalfAndBfloat16Storage) {
  for (DType t : {DType::Float16, DType::BFloat16}) {
    Case c;
    c.dtype = t, c.q_heads = 4, c.kv_heads = 2, c.q_len = 9, c.kv_len = 40, c.d = 32, c.dv = 24, c.causal = true;
    check(c);
    c.mask = kFloat2d, c.past = 6, c.rank3 = true, c.qk_mode = 3;
    check(c);
  }
}

TEST(Attention, Float64RunsTheReferencePath) {
  Case c;
  c.dtype = DType::Float64, c.mask = kFloat2d, c.causal = true;
  check(c);
}

TEST(Attention, EmptySequences) {
  Case c;
  c.kv_len = 0;  // no keys: every row is fully masked, Y = 0
  check(c);
  Case q;
  q.q_len = 0;
  check(q);
  Case p;
  p.kv_len = 0, p.past = 3, p.causal = true, p.q_len = 2;  // only cached keys
  check(p);
}

TEST(Attention, ShapeErrorsNameTheNodeAndTheValues) {
  Case c;
  auto in = inputs_of(c, 1);
  in[1] = random_values(DType::Float32, {1, 2, 7, 6}, 1);  // head size 6 vs Q's 8
  EXPECT_NE(node_error("Attention", 23, in, attrs_of(c), 1).find("K head size 6 differs from Q head size 8"),
            std::string::npos);
  Case g;
  g.q_heads = 3, g.kv_heads = 2;
  EXPECT_NE(node_error("Attention", 23, inputs_of(g, 1), attrs_of(g), 1).find("q heads 3 is not a multiple of kv heads 2"),
            std::string::npos);
  Case r3;
  r3.rank3 = true;
  EXPECT_NE(node_error("Attention", 23, inputs_of(r3, 1), nullptr, 1).find("q_num_heads and kv_num_heads"),
            std::string::npos);
  Case m;
  m.mask = kFloat2d;
  auto mi = inputs_of(m, 1);
  mi[3] = random_values(DType::Float32, {4, 7}, 1);  // 4 rows for 5 queries
  const std::string e = node_error("Attention", 23, mi, attrs_of(m), 1);
  EXPECT_NE(e.find("Attention 'n1'"), std::string::npos) << e;
  EXPECT_NE(e.find("attn_mask has shape 4x7"), std::string::npos) << e;
}


// ---- the short-sequence path (attention_short.cc) ----

// Long rows forced through the short path (several row blocks, S wider than
// L1) and short rows forced through the flash path: both match the reference.
TEST(AttentionShort, EitherPathAtShortAndLongLengths) {
  for (int64_t lkv : {1, 15, 40, 257, 300, 700})
    for (bool rank3 : {false, true}) {
      Case c;
      c.q_heads = 6, c.kv_heads = 2, c.q_len = 37, c.kv_len = lkv, c.d = 15, c.dv = 20, c.rank3 = rank3;
      c.mask = kFloat3d;
      check(c);
      c.mask = kBool4d, c.causal = true, c.batch = 2;
      check(c);
    }
}

// ppocr_v4_rec's blocks (8 heads, 40 positions, head size 15, no mask) and
// BERT-like rows with a [1, 1, 1, S] padding mask, causal and softcapped.
TEST(AttentionShort, ModelShapesMasksSoftcapAndScale) {
  Case p;
  p.q_heads = 8, p.kv_heads = 8, p.q_len = 40, p.kv_len = 40, p.d = 15, p.dv = 15;
  check(p);
  Case b;
  b.q_heads = 4, b.kv_heads = 4, b.q_len = 32, b.kv_len = 32, b.d = 16, b.dv = 16, b.mask = kShortFloat;
  check(b);
  b.softcap = 1.5f, b.scale = 0.3f, b.causal = true;
  check(b);
  b.mask = kBoolFullyMaskedRow;
  check(b);
}

// Rows with no allowed key give Y = 0 on both paths (as the reference): a
// bool mask row all false, and whole batches with nonpad_kv_seqlen 0 (the
// short path's "no column left" branch).
TEST(AttentionShort, FullyMaskedRowsGiveZero) {
  Case c;
  c.batch = 3, c.q_len = 4, c.kv_len = 3, c.nonpad = true;  // nonpad = 2, 0, 0
  check(c);
  c.mask = kBoolFullyMaskedRow;
  const auto in = inputs_of(c, 3);
  for (auto path : {attention::AttentionPath::Flash, attention::AttentionPath::Short}) {
    PathScope force(path);
    const Tensor y = run_node("Attention", opset_of(c), in, attrs_of(c), 1, KernelMode::Fast, 2)[0];
    const float* yd = y.data<float>();
    for (int64_t h = 0; h < c.q_heads; ++h)
      for (int64_t d = 0; d < c.dv; ++d) EXPECT_EQ(yd[(h * c.q_len + 0) * c.dv + d], 0.f) << "batch 0 row 0";
    for (int64_t e = c.q_heads * c.q_len * c.dv; e < y.numel(); ++e) EXPECT_EQ(yd[e], 0.f) << "batches 1, 2";
  }
}

// The kernel_variant of the Attention node in a profiled fast run (4 threads).
std::string run_variant(const Case& c) {
  const auto in = inputs_of(c, 5);
  ModelBuilder mb(opset_of(c));
  std::vector<std::string> names;
  std::vector<std::pair<std::string, Tensor>> feeds;
  for (size_t i = 0; i < in.size(); ++i) {
    if (!in[i].defined()) {
      names.push_back("");
      continue;
    }
    names.push_back("in" + std::to_string(i));
    mb.input(names.back(), in[i].dtype(), in[i].shape());
    feeds.emplace_back(names.back(), in[i]);
  }
  std::vector<std::string> outs{"y"};
  if (c.qk_mode >= 0) outs = {"y", "", "", "qk"};
  NodeBuilder nb = mb.node("Attention", names, outs);
  nb.name("n1");
  attrs_of(c)(nb);
  mb.output("y");
  if (c.qk_mode >= 0) mb.output("qk");
  SessionOptions o = options_for(KernelMode::Fast, 4);
  o.enable_profiling = true;
  o.profile_file_prefix = ::testing::TempDir() + "attention_variant_profile_";
  auto s = mb.session(o);
  // What explain() says from the declared shapes must be what the run does.
  std::string planned;
  for (const auto& e : s->explain())
    if (e.op_type == "Attention") planned = e.variant;
  run_all(*s, feeds);
  const std::string file = s->end_profiling();
  std::ifstream f(file);
  std::stringstream ss;
  ss << f.rdbuf();
  std::remove(file.c_str());
  const std::string trace = ss.str(), key = "\"kernel_variant\" : \"";
  const size_t at = trace.find(key);
  if (at == std::string::npos) return "";
  const size_t b = at + key.size();
  const std::string ran = trace.substr(b, trace.find('"', b) - b);
  EXPECT_EQ(planned, ran) << c.name();
  return ran;
}

TEST(AttentionShort, VariantFollowsTheCostRule) {
  Case c;
  c.q_heads = 8, c.kv_heads = 8, c.q_len = 40, c.kv_len = 40, c.d = 15, c.dv = 15;
  EXPECT_EQ(run_variant(c), "attention_short") << "ppocr_v4_rec's blocks";
  c.kv_len = attention::kShortMaxKeys;
  EXPECT_EQ(run_variant(c), "attention_short") << "at the threshold";
  c.kv_len = attention::kShortMaxKeys + 1;
  EXPECT_EQ(run_variant(c), "attention_fused") << "above the threshold";
  Case past;
  past.past = 4, past.causal = true;
  EXPECT_EQ(run_variant(past), "attention_fused") << "past cache: flash path";
  Case half;
  half.dtype = DType::Float16;
  EXPECT_EQ(run_variant(half), "attention_fused") << "float16: flash path";
  Case qk;
  qk.qk_mode = 3;
  EXPECT_EQ(run_variant(qk), "attention_fused_with_scores") << "qk_matmul_output: flash path";
  PathScope force(attention::AttentionPath::Short);
  c.kv_len = 600;
  EXPECT_EQ(run_variant(c), "attention_short") << "forced";
}

}  // namespace
}  // namespace test
}  // namespace onnxmini
