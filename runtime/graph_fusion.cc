// Graph fusions (see graph_fusion.h). Each pattern is one short function over
// the node list; fused-away nodes are marked and removed at the end, so the
// execution order of the remaining nodes is unchanged (a fused node produces
// its final value earlier than before, never later, so the order stays valid).
#include "runtime/graph_fusion.h"

#include <fmt/format.h>

#include <cfloat>
#include <cmath>

#include "core/logging.h"
#include "kernels/fused_attributes.h"
#include "runtime/graph_pass.h"

namespace onnxmini {
namespace {

struct Pass : FusionPass {
  explicit Pass(RuleContext& c) : FusionPass(c) {}
  ~Pass() { compact(); }

  // Records one rewrite: `rule` is the pattern's name, `nodes` the nodes it touched.
  void applied(const char* rule, std::string nodes) { ctx.applied(rule, std::move(nodes)); }

  static std::string label(const GraphNode& n) { return fmt::format("{} '{}'", n.op_type, n.name); }

  bool is_conv(const GraphNode& n) const {
    return n.domain.empty() && n.op_type == "Conv" && n.outputs.size() == 1 && constant_f32(n.inputs.at(1));
  }
  // A Gemm known to run in float32 (constant float B, or A declared float).
  bool is_gemm_f32(const GraphNode& n) const {
    if (!n.domain.empty() || n.op_type != "Gemm" || n.inputs.size() < 2 || n.outputs.size() != 1) return false;
    auto a = g.known_dtypes.find(n.inputs[0]);
    return constant_f32(n.inputs[1]) || (a != g.known_dtypes.end() && a->second == DType::Float32);
  }
  static bool has_gemm_fusion(const GraphNode& n) {
    return n.attrs.has(fused_attr::kActivation) || n.attrs.has(fused_attr::kAddends);
  }
  // Add with numpy broadcasting (opset >= 7; older Adds broadcast by `axis`).
  static bool plain_add(const GraphNode& n) {
    return n.domain.empty() && n.op_type == "Add" && n.opset >= 7 && n.inputs.size() == 2 && n.outputs.size() == 1 &&
           n.inputs[0] >= 0 && n.inputs[1] >= 0;
  }

  static bool plain_bn(const GraphNode& n) {
    if (!n.domain.empty() || n.op_type != "BatchNormalization" || n.inputs.size() != 5) return false;
    if (n.attrs.get_int("training_mode", 0) != 0) return false;
    for (size_t i = 1; i < n.outputs.size(); ++i)
      if (n.outputs[i] >= 0) return false;  // running mean / var requested
    return true;
  }

  // BN's per-channel scale = gamma / sqrt(var + eps) and shift = beta - mean * scale.
  bool bn_affine(const GraphNode& bn, std::vector<float>& scale, std::vector<float>& shift) const {
    const Tensor *gamma = constant_f32(bn.inputs[1]), *beta = constant_f32(bn.inputs[2]);
    const Tensor *mean = constant_f32(bn.inputs[3]), *var = constant_f32(bn.inputs[4]);
    if (!gamma || !beta || !mean || !var) return false;
    const int64_t C = gamma->numel();
    if (gamma->rank() != 1 || beta->numel() != C || mean->numel() != C || var->numel() != C) return false;
    const double eps = bn.attrs.get_float("epsilon", 1e-5f);
    scale.resize(C), shift.resize(C);
    for (int64_t c = 0; c < C; ++c) {
      const double s = gamma->data<float>()[c] / std::sqrt(static_cast<double>(var->data<float>()[c]) + eps);
      scale[c] = static_cast<float>(s);
      shift[c] = static_cast<float>(beta->data<float>()[c] - mean->data<float>()[c] * s);
    }
    return true;
  }


  // Conv -> BN: W'[m] = W[m] * s[m], B'[m] = (B[m] - mean[m]) * s[m] + beta[m].
  void conv_bn() {
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      GraphNode& conv = g.nodes[i];
      // (Not over a fused residual Z: BN would have to scale Z too.)
      if (removed[i] || !is_conv(conv) || conv.attrs.has(fused_attr::kActivation) || conv.inputs.size() > 3) continue;
      const int j = sole_consumer(conv.outputs[0]);
      if (j < 0 || !plain_bn(g.nodes[j]) || g.nodes[j].inputs[0] != conv.outputs[0]) continue;
      std::vector<float> s, t;
      const Tensor& w = *constant_f32(conv.inputs[1]);
      const int64_t M = w.dim(0);
      if (!bn_affine(g.nodes[j], s, t) || static_cast<int64_t>(s.size()) != M) continue;
      const Tensor* b = conv.inputs.size() > 2 ? constant_f32(conv.inputs[2]) : nullptr;
      if (conv.inputs.size() > 2 && conv.inputs[2] >= 0 && (!b || b->numel() != M)) continue;
      Tensor w2 = w.clone(), b2(DType::Float32, {M});
      const int64_t per = w.numel() / M;
      float* wd = w2.mutable_data<float>();
      for (int64_t m = 0; m < M; ++m) {
        for (int64_t k = 0; k < per; ++k) wd[m * per + k] *= s[m];
        b2.mutable_data<float>()[m] = (b ? b->data<float>()[m] : 0.0f) * s[m] + t[m];
      }
      conv.inputs.resize(3);
      conv.inputs[1] = add_constant(conv.name + "_bn_folded_W", std::move(w2));
      conv.inputs[2] = add_constant(conv.name + "_bn_folded_B", std::move(b2));
      conv.outputs[0] = g.nodes[j].outputs[0];
      removed[j] = true;
      applied("conv_bn", label(conv) + " + " + label(g.nodes[j]) + " (folded into weights)");
      count_uses();
    }
  }

  // BN -> Conv: the Conv applies BN's affine to each input channel while copying X.
  void bn_conv() {
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      const GraphNode& bn = g.nodes[i];
      if (removed[i] || !plain_bn(bn) || bn.outputs.empty()) continue;
      const int j = sole_consumer(bn.outputs[0]);
      if (j < 0) continue;
      GraphNode& conv = g.nodes[j];
      if (!is_conv(conv) || conv.inputs[0] != bn.outputs[0] || conv.attrs.has(fused_attr::kInputScale)) continue;
      std::vector<float> s, t;
      const Tensor& w = *constant_f32(conv.inputs[1]);
      const int64_t group = conv.attrs.get_int("group", 1);
      if (!bn_affine(bn, s, t) || w.rank() < 3 || static_cast<int64_t>(s.size()) != w.dim(1) * group) continue;
      conv.attrs.set(fused_attr::kInputScale, s);
      conv.attrs.set(fused_attr::kInputShift, t);
      conv.inputs[0] = bn.inputs[0];
      removed[i] = true;
      applied("bn_conv", label(bn) + " + " + label(conv) + " (input affine)");
      count_uses();
    }
  }

  // The activation node as (kind, params) for a producer with `channels`
  // output channels (PRelu only for Conv: channel = axis 1 of a rank-`rank` output).
  bool activation(const GraphNode& a, int64_t channels, size_t rank, FusedActivationKind& kind,
                  std::vector<float>& params) {
    if (!a.domain.empty() || a.outputs.size() != 1) return false;
    kind = fused_activation_from_name(a.op_type);
    params.clear();
    if (kind == FusedActivationKind::Relu || kind == FusedActivationKind::Sigmoid ||
        kind == FusedActivationKind::HardSwish)
      return a.inputs.size() == 1;
    if (kind == FusedActivationKind::HardSigmoid) {
      params = {a.attrs.get_float("alpha", 0.2f), a.attrs.get_float("beta", 0.5f)};
      return a.inputs.size() == 1;
    }
    // Gelu (opset 20, or the opset-20 node the gelu*_before_opset20 rules make): the erf or
    // the tanh form, by its `approximate`.
    if (kind == FusedActivationKind::Gelu) {
      const std::string approx = a.attrs.get_string("approximate", "none");
      if (approx == "tanh") kind = FusedActivationKind::GeluTanh;
      return a.opset >= 20 && a.inputs.size() == 1 && (approx == "none" || approx == "tanh");
    }
    // The Swish op (opset 24) is x * sigmoid(alpha * x): alpha is the one parameter (none when 1).
    if (kind == FusedActivationKind::Swish) {
      const float alpha = a.attrs.get_float("alpha", 1.0f);
      if (alpha != 1.0f) params = {alpha};
      return a.inputs.size() == 1;
    }
    if (kind == FusedActivationKind::Clip) {
      float lo = -FLT_MAX, hi = FLT_MAX;
      if (a.opset < 11) {
        lo = a.attrs.get_float("min", lo), hi = a.attrs.get_float("max", hi);
      } else {
        for (size_t k = 1; k < a.inputs.size() && k < 3; ++k) {
          if (a.inputs[k] < 0) continue;
          const Tensor* v = constant_f32(a.inputs[k]);
          if (!v || v->numel() != 1) return false;
          (k == 1 ? lo : hi) = v->data<float>()[0];
        }
      }
      params = {lo, hi};
      return true;
    }
    if (kind == FusedActivationKind::PRelu && channels > 0 && a.inputs.size() == 2)
      return per_channel_values(a.inputs[1], rank, channels, params);
    return false;
  }

  // Which activations a rule takes: those onnxruntime's FusedConv saves (Relu, Sigmoid,
  // Clip), PRelu (Conv only), the others (HardSigmoid, HardSwish, Swish), Gelu (either
  // form; Conv only: its own rule runs after the gelu*_before_opset20 rules that make
  // the node), or all but PRelu (Gemm).
  enum class ActSet { FusedConv, PRelu, Extra, Gelu, AllButPRelu };
  static bool in_set(FusedActivationKind k, ActSet set) {
    using K = FusedActivationKind;
    const bool extra = k == K::HardSigmoid || k == K::HardSwish || k == K::Swish;
    switch (set) {
      case ActSet::FusedConv: return k == K::Relu || k == K::Sigmoid || k == K::Clip;
      case ActSet::PRelu: return k == K::PRelu;
      case ActSet::Extra: return extra;
      case ActSet::Gelu: return k == K::Gelu || k == K::GeluTanh;
      case ActSet::AllButPRelu: return k != K::PRelu && k != K::None;
    }
    return false;
  }

  // A one-element float32 constant of rank <= 1 (a higher rank could broadcast a Mul's
  // output up to more dimensions than its other input has): its value, else false.
  bool scalar_f32(int id, float& v) const {
    const Tensor* t = constant_f32(id);
    if (!t || t->numel() != 1 || t->rank() > 1) return false;
    v = t->data<float>()[0];
    return true;
  }

  // Swish written out, operand orders free:
  //   x -> Sigmoid(x) -> Mul(x, s)                  alpha = 1 (SiLU)
  //   x -> Mul(x, c) -> Sigmoid -> Mul(x, s)        alpha = c (QuickGelu: c = 1.702)
  // x read by exactly the two nodes that start and end the chain, each intermediate by
  // the next node only, c a one-element float32 constant. Returns the final Mul's index
  // (else -1); `inner` gets the nodes before it, `alpha` the slope.
  int swish_chain(int x, std::vector<int>& inner, float& alpha) const {
    inner.clear();
    alpha = 1.0f;
    if (x < 0 || uses[x] != 2) return -1;
    std::vector<int> readers;  // the live nodes reading x (Mul(x, x) counts once: no match)
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      const GraphNode& n = g.nodes[i];
      if (removed[i]) continue;
      for (int in : n.inputs)
        if (in == x) {
          readers.push_back(static_cast<int>(i));
          break;
        }
    }
    if (readers.size() != 2) return -1;
    auto plain = [&](int i, const char* op, size_t n_in) {
      const GraphNode& n = g.nodes[i];
      return n.domain.empty() && n.op_type == op && n.inputs.size() == n_in && n.outputs.size() == 1;
    };
    for (int head_at = 0; head_at < 2; ++head_at) {
      const int head = readers[head_at], tail = readers[1 - head_at];
      int sig = -1;
      float a = 1.0f;
      if (plain(head, "Sigmoid", 1)) {
        sig = head;
      } else if (plain(head, "Mul", 2)) {  // Mul(x, c): the scaled input of the Sigmoid
        const GraphNode& m = g.nodes[head];
        const int c = m.inputs[0] == x ? m.inputs[1] : m.inputs[0];
        if (c == x || !scalar_f32(c, a)) continue;
        sig = sole_consumer(m.outputs[0]);
        if (sig < 0 || !plain(sig, "Sigmoid", 1)) continue;
      } else {
        continue;
      }
      const int s = g.nodes[sig].outputs[0];
      if (uses[s] != 1 || !plain(tail, "Mul", 2)) continue;
      const GraphNode& mul = g.nodes[tail];
      if (!((mul.inputs[0] == x && mul.inputs[1] == s) || (mul.inputs[0] == s && mul.inputs[1] == x))) continue;
      if (head != sig) inner.push_back(head);
      inner.push_back(sig);
      alpha = a;
      return tail;
    }
    return -1;
  }

  // Sets the Swish activation (with its alpha when not 1) on producer `p`.
  static void set_swish(GraphNode& p, float alpha) {
    p.attrs.set(fused_attr::kActivation, std::string(fused_activation_name(FusedActivationKind::Swish)));
    if (alpha != 1.0f) p.attrs.set(fused_attr::kActivationParams, std::vector<float>{alpha});
  }

  std::string chain_label(const std::vector<int>& inner, int mul) const {
    std::string s;
    for (int i : inner) s += " + " + label(g.nodes[i]);
    return s + " + " + label(g.nodes[mul]);
  }

  // Conv (conv = true) / Gemm -> activation: the activation goes into the producer's epilogue.
  // `set`: which activations this rule fuses (ActSet).
  void producer_activation(bool conv, ActSet set) {
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      GraphNode& p = g.nodes[i];
      if (removed[i] || p.attrs.has(fused_attr::kActivation) || p.outputs.size() != 1) continue;
      int64_t channels = -1;
      size_t rank = 0;
      if (conv && is_conv(p)) {
        const Tensor& w = *constant_f32(p.inputs[1]);
        channels = w.dim(0), rank = w.rank();
      } else if (conv || !is_gemm_f32(p)) {
        continue;
      }
      const char* rule = !conv                    ? "gemm_activation"
                         : set == ActSet::PRelu     ? "conv_prelu"
                         : set == ActSet::Extra     ? "conv_activation_extra"
                         : set == ActSet::Gelu      ? "conv_gelu"
                                                    : "conv_activation";
      std::vector<int> inner;
      float alpha = 1.0f;
      const int mul = in_set(FusedActivationKind::Swish, set) ? swish_chain(p.outputs[0], inner, alpha) : -1;
      if (mul >= 0) {  // Mul(x, Sigmoid([alpha *] x)): SiLU / QuickGelu written out
        set_swish(p, alpha);
        p.outputs[0] = g.nodes[mul].outputs[0];
        for (int k : inner) removed[k] = true;
        removed[mul] = true;
        applied(rule, label(p) + chain_label(inner, mul));
        count_uses();
        continue;
      }
      const int j = sole_consumer(p.outputs[0]);
      if (j < 0 || g.nodes[j].inputs.empty() || g.nodes[j].inputs[0] != p.outputs[0]) continue;
      FusedActivationKind kind;
      std::vector<float> params;
      if (!activation(g.nodes[j], channels, rank, kind, params) || !in_set(kind, set)) continue;
      p.attrs.set(fused_attr::kActivation, std::string(fused_activation_name(kind)));
      if (!params.empty()) p.attrs.set(fused_attr::kActivationParams, params);
      p.outputs[0] = g.nodes[j].outputs[0];
      removed[j] = true;
      applied(rule, label(p) + " + " + label(g.nodes[j]));
      count_uses();
    }
  }

  // MatMul(A, B constant 2-D [K, N]) -> Add(bias constant [N]) [-> activation], A of any rank
  // (a transformer MLP's [B, S, K] x [K, N] + bias -> Gelu, which matmul_add_gemm leaves
  // alone as Gemm needs A 2-D): the bias becomes MatMul input 2 and the activation its
  // fused attribute, both applied in the epilogue of the one folded GEMM over B * S rows
  // (kernels/linalg/matmul.cc). The bias may be [1, .., 1, N] (jax2tf writes [1, 1, N]);
  // the kernel gives Y the leading 1s the Add's broadcast would.
  void matmul_bias_activation() {
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      GraphNode& mm = g.nodes[i];
      if (removed[i] || !mm.domain.empty() || mm.op_type != "MatMul" || mm.inputs.size() != 2 ||
          mm.outputs.size() != 1 || mm.attrs.has(fused_attr::kActivation))
        continue;
      const Tensor* b = constant_f32(mm.inputs[1]);
      const int j = sole_consumer(mm.outputs[0]);
      if (!b || b->rank() != 2 || j < 0 || !plain_add(g.nodes[j])) continue;
      const GraphNode& add = g.nodes[j];
      const int other = add.inputs[0] == mm.outputs[0] ? add.inputs[1] : add.inputs[0];
      const Tensor* bias = constant_f32(other);
      if (!bias || bias->rank() == 0 || bias->numel() != b->dim(1) || bias->shape().back() != b->dim(1)) continue;
      // No fusable activation after the Add (a residual Add, the logits, a second reader):
      // the bias alone goes into the epilogue, saving the Add's pass over Y.
      const int k = sole_consumer(add.outputs[0]);
      FusedActivationKind kind = FusedActivationKind::None;
      std::vector<float> params;
      const bool with_activation = k >= 0 && !g.nodes[k].inputs.empty() &&
                                   g.nodes[k].inputs[0] == add.outputs[0] &&
                                   activation(g.nodes[k], -1, 0, kind, params) && in_set(kind, ActSet::AllButPRelu);
      mm.inputs.push_back(other);
      std::vector<int> inner;
      float alpha = 1.0f;
      const int swish_mul = with_activation ? -1 : swish_chain(add.outputs[0], inner, alpha);
      if (swish_mul >= 0) {  // Mul(y, Sigmoid([alpha *] y)) after the bias: SiLU / QuickGelu
        set_swish(mm, alpha);
        mm.outputs[0] = g.nodes[swish_mul].outputs[0];
        removed[j] = true;
        for (int n : inner) removed[n] = true;
        removed[swish_mul] = true;
        applied("gemm_activation", label(mm) + " + " + label(add) + chain_label(inner, swish_mul) + " (MatMul epilogue)");
        count_uses();
        continue;
      }
      if (!with_activation) {
        mm.outputs[0] = add.outputs[0];
        removed[j] = true;
        applied("gemm_activation", label(mm) + " + " + label(add) + " (bias in the MatMul epilogue)");
        count_uses();
        continue;
      }
      mm.attrs.set(fused_attr::kActivation, std::string(fused_activation_name(kind)));
      if (!params.empty()) mm.attrs.set(fused_attr::kActivationParams, params);
      mm.outputs[0] = g.nodes[k].outputs[0];
      removed[j] = removed[k] = true;
      applied("gemm_activation", label(mm) + " + " + label(add) + " + " + label(g.nodes[k]) + " (MatMul epilogue)");
      count_uses();
    }
  }

  // Gemm -> Add(other) [-> Add(other2) ...]: the addends become extra inputs of the
  // Gemm (attribute fused_attr::kAddends = their count), applied in its epilogue when
  // they are row or column vectors (kernels/linalg/gemm.cc). The fused node
  // takes the last Add's place in the order, where every addend already exists.
  void gemm_add() {
    constexpr int64_t kMaxAddends = 4;
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      if (removed[i] || !is_gemm_f32(g.nodes[i]) || g.nodes[i].attrs.has(fused_attr::kActivation)) continue;
      size_t at = i;
      for (;;) {
        GraphNode& p = g.nodes[at];
        const int64_t count = p.attrs.get_int(fused_attr::kAddends, 0);
        const int j = sole_consumer(p.outputs[0]);
        if (count >= kMaxAddends || j < 0 || !plain_add(g.nodes[j])) break;
        const GraphNode& add = g.nodes[j];
        const int other = add.inputs[0] == p.outputs[0] ? add.inputs[1] : add.inputs[0];
        if (other == p.outputs[0]) break;  // Add(Y, Y)
        applied("gemm_add", label(p) + " + " + label(add) + " (addend in the epilogue)");
        GraphNode fused = std::move(p);
        removed[at] = true;
        if (fused.inputs.size() < 3) fused.inputs.resize(3, -1);  // C stays input 2 (maybe absent)
        fused.inputs.push_back(other);
        fused.attrs.set(fused_attr::kAddends, count + 1);
        fused.outputs[0] = add.outputs[0];
        g.nodes[j] = std::move(fused);
        at = static_cast<size_t>(j);
        count_uses();
      }
    }
  }

  // Gemm -> Reshape(Y, s) -> Add(., R) (Keras' Dense layer on [B, S, K]: Tensordot's MatMul on
  // [B*S, K], the Reshape back to [B, S, N], then the residual Add): the Reshape and the Add
  // go into the Gemm (fused_attr::kReshape, the shape s as the input after the one addend R).
  // The kernel reshapes Y, then adds R with broadcasting as the two nodes did; when R has
  // exactly the reshaped shape it is the GEMM epilogue's residual (one pass over Y). Any
  // Reshape qualifies: with R of Y's reshaped shape the flat orders agree. The Gemm carries
  // no activation or addends yet; the Reshape's output is read by the Add only, the Gemm's by
  // the Reshape only. The fused node takes the Add's place, where R and s exist.
  void gemm_reshape_residual() {
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      if (removed[i] || !is_gemm_f32(g.nodes[i]) || has_gemm_fusion(g.nodes[i])) continue;
      const int j = sole_consumer(g.nodes[i].outputs[0]);
      if (j < 0) continue;
      const GraphNode& rs = g.nodes[j];
      if (!rs.domain.empty() || rs.op_type != "Reshape" || rs.opset < 5 || rs.inputs.size() != 2 ||
          rs.outputs.size() != 1 || rs.inputs[0] != g.nodes[i].outputs[0] || rs.inputs[1] < 0)
        continue;
      const int k = sole_consumer(rs.outputs[0]);
      if (k < 0 || !plain_add(g.nodes[k])) continue;
      const GraphNode& add = g.nodes[k];
      const int r = add.inputs[0] == rs.outputs[0] ? add.inputs[1] : add.inputs[0];
      if (r == rs.outputs[0]) continue;  // Add(y, y)
      applied("gemm_reshape_residual", label(g.nodes[i]) + " + " + label(rs) + " + " + label(add) + " (residual in the epilogue)");
      GraphNode fused = std::move(g.nodes[i]);
      removed[i] = removed[j] = true;
      if (fused.inputs.size() < 3) fused.inputs.resize(3, -1);  // C stays input 2 (maybe absent)
      fused.inputs.push_back(r);
      fused.inputs.push_back(rs.inputs[1]);
      fused.attrs.set(fused_attr::kAddends, int64_t{1});
      fused.attrs.set(fused_attr::kReshape, int64_t{rs.attrs.get_int("allowzero", 0) != 0 ? 2 : 1});
      fused.outputs[0] = add.outputs[0];
      g.nodes[k] = std::move(fused);
      count_uses();
    }
  }

  // Concat(Gemm(X, W1, b1), Gemm(X, W2, b2), ..., axis=1) -> Gemm(X, [W1 W2 ...], [b1 b2 ...]):
  // one GEMM over the concatenated constant weights writes the concatenated
  // output directly (no Concat copy, one pass over X).
  void concat_gemms() {
    std::vector<int> producer(g.value_names.size(), -1);
    for (size_t i = 0; i < g.nodes.size(); ++i)
      if (!removed[i])
        for (int id : g.nodes[i].outputs)
          if (id >= 0) producer[id] = static_cast<int>(i);
    for (size_t c = 0; c < g.nodes.size(); ++c) {
      GraphNode& cat = g.nodes[c];
      if (removed[c] || !cat.domain.empty() || cat.op_type != "Concat" || cat.inputs.size() < 2) continue;
      const int64_t axis = cat.attrs.get_int("axis", 0);
      if (axis != 1 && axis != -1) continue;
      std::vector<int> gemms;
      for (int id : cat.inputs) {
        const int k = id >= 0 ? producer[id] : -1;
        if (k < 0 || uses[id] != 1 || !stackable(g.nodes[k], gemms.empty() ? nullptr : &g.nodes[gemms[0]])) break;
        gemms.push_back(k);
      }
      if (gemms.size() != cat.inputs.size()) continue;
      GraphNode fused = stack_gemms(gemms);
      fused.outputs[0] = cat.outputs[0];
      std::string what;
      for (int k : gemms) what += label(g.nodes[k]) + " + ", removed[k] = true;
      applied("concat_gemms", what + label(cat) + " (one GEMM over concatenated weights)");
      g.nodes[c] = std::move(fused);  // runs where the Concat ran: X and the weights exist there
      count_uses();
    }
  }

  // A plain float32 Gemm with constant 2-D B and a constant row-vector (or no) C,
  // matching `first` in A, attributes and K when given.
  bool stackable(const GraphNode& n, const GraphNode* first) const {
    if (!n.domain.empty() || n.op_type != "Gemm" || n.outputs.size() != 1 || has_gemm_fusion(n)) return false;
    const Tensor* b = n.inputs.size() > 1 ? constant_f32(n.inputs[1]) : nullptr;
    if (!b || b->rank() != 2) return false;
    const bool tb = n.attrs.get_int("transB", 0) != 0;
    const int64_t N = tb ? b->dim(0) : b->dim(1), K = tb ? b->dim(1) : b->dim(0);
    if (n.inputs.size() > 2 && n.inputs[2] >= 0) {
      const Tensor* cb = constant_f32(n.inputs[2]);
      if (!cb || !((cb->rank() == 1 && cb->dim(0) == N) || (cb->rank() == 2 && cb->dim(0) == 1 && cb->dim(1) == N)))
        return false;
    }
    if (!first) return true;
    const Tensor& b0 = *constant_f32(first->inputs[1]);
    const bool tb0 = first->attrs.get_int("transB", 0) != 0;
    return n.inputs[0] == first->inputs[0] && tb == tb0 && K == (tb0 ? b0.dim(1) : b0.dim(0)) &&
           n.attrs.get_int("transA", 0) == first->attrs.get_int("transA", 0) &&
           n.attrs.get_float("alpha", 1.0f) == first->attrs.get_float("alpha", 1.0f) &&
           n.attrs.get_float("beta", 1.0f) == first->attrs.get_float("beta", 1.0f);
  }

  // The Gemm over concatenated B (along N) and C (zeros where a Gemm had none).
  GraphNode stack_gemms(const std::vector<int>& gemms) {
    const GraphNode& first = g.nodes[gemms[0]];
    const bool tb = first.attrs.get_int("transB", 0) != 0;
    const int64_t K = tb ? constant_f32(first.inputs[1])->dim(1) : constant_f32(first.inputs[1])->dim(0);
    int64_t N = 0;
    bool any_c = false;
    for (int k : gemms) {
      const Tensor& b = *constant_f32(g.nodes[k].inputs[1]);
      N += tb ? b.dim(0) : b.dim(1);
      any_c = any_c || (g.nodes[k].inputs.size() > 2 && g.nodes[k].inputs[2] >= 0);
    }
    Tensor w(DType::Float32, tb ? Shape{N, K} : Shape{K, N}), bias(DType::Float32, {N});
    float* wd = w.mutable_data<float>();
    float* bd = bias.mutable_data<float>();
    int64_t n0 = 0;
    for (int k : gemms) {
      const GraphNode& n = g.nodes[k];
      const Tensor& b = *constant_f32(n.inputs[1]);
      const int64_t Ni = tb ? b.dim(0) : b.dim(1);
      const float* bs = b.data<float>();
      for (int64_t r = 0; r < (tb ? Ni : K); ++r)  // transB: rows n0.. of an N x K matrix; else columns of K x N
        for (int64_t q = 0; q < (tb ? K : Ni); ++q)
          (tb ? wd[(n0 + r) * K + q] : wd[r * N + n0 + q]) = bs[r * (tb ? K : Ni) + q];
      const Tensor* cb = n.inputs.size() > 2 && n.inputs[2] >= 0 ? constant_f32(n.inputs[2]) : nullptr;
      for (int64_t q = 0; q < Ni; ++q) bd[n0 + q] = cb ? cb->data<float>()[q] : 0.0f;
      n0 += Ni;
    }
    GraphNode fused = first;
    fused.inputs = {first.inputs[0], add_constant(first.name + "_stacked_B", std::move(w))};
    if (any_c) fused.inputs.push_back(add_constant(first.name + "_stacked_C", std::move(bias)));
    return fused;
  }

  // The rank of value `id` when the graph says it: a constant, a declared shape, or
  // the output of an op whose output is always 2-D (Gemm, Flatten); -1 otherwise.
  int64_t known_rank(int id) const {
    if (auto c = g.constants.find(id); c != g.constants.end() && !g.overridable.count(id)) return c->second.rank();
    for (size_t k = 0; k < g.input_ids.size(); ++k)
      if (g.input_ids[k] == id && g.inputs[k].has_shape) return static_cast<int64_t>(g.inputs[k].shape.size());
    if (auto v = g.value_infos.find(id); v != g.value_infos.end() && v->second.has_shape)
      return static_cast<int64_t>(v->second.shape.size());
    for (size_t k = 0; k < g.nodes.size(); ++k)
      if (!removed[k] && g.nodes[k].outputs.size() == 1 && g.nodes[k].outputs[0] == id && g.nodes[k].domain.empty() &&
          (g.nodes[k].op_type == "Gemm" || g.nodes[k].op_type == "Flatten"))
        return 2;
    // Reshape(x, constant 1-D shape): the rank is the shape's length (Keras' Tensordot
    // writes Reshape(x, [-1, K]) before its MatMul).
    for (size_t k = 0; k < g.nodes.size(); ++k) {
      const GraphNode& n = g.nodes[k];
      if (removed[k] || !n.domain.empty() || n.op_type != "Reshape" || n.opset < 5 || n.inputs.size() != 2 ||
          n.outputs.size() != 1 || n.outputs[0] != id)
        continue;
      const Tensor* s = constant(n.inputs[1]);
      return s && s->rank() == 1 ? s->numel() : -1;
    }
    return -1;
  }

  // MatMul(A, B) -> Add(C) with A known 2-D, B a 2-D float32 constant and C a float32
  // constant of shape [N], [1, N] or one element: Gemm(A, B, C) (plain ONNX, alpha = beta = 1).
  void matmul_add() {
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      GraphNode& mm = g.nodes[i];
      if (removed[i] || !mm.domain.empty() || mm.op_type != "MatMul" || mm.inputs.size() != 2 ||
          mm.outputs.size() != 1 || mm.opset < 9)
        continue;
      const Tensor* b = constant_f32(mm.inputs[1]);
      if (!b || b->rank() != 2 || known_rank(mm.inputs[0]) != 2) continue;
      const int j = sole_consumer(mm.outputs[0]);
      if (j < 0 || !plain_add(g.nodes[j])) continue;
      const GraphNode& add = g.nodes[j];
      const int other = add.inputs[0] == mm.outputs[0] ? add.inputs[1] : add.inputs[0];
      const Tensor* c = constant_f32(other);
      const int64_t N = b->dim(1);
      if (!c || !(c->numel() == 1 || (c->rank() == 1 && c->dim(0) == N) ||
                  (c->rank() == 2 && c->dim(0) == 1 && c->dim(1) == N)))
        continue;
      applied("matmul_add_gemm", label(mm) + " + " + label(add) + " (Gemm)");
      mm.op_type = "Gemm";
      mm.inputs.push_back(other);
      mm.outputs[0] = add.outputs[0];
      removed[j] = true;
      count_uses();
    }
  }

  // Whether value `id` is float32: declared or constant, or made by an op whose output has its
  // first input's type (walked back through producers; memoized per pass run).
  bool float32_value(int id, std::vector<int8_t>& memo) const {
    if (id < 0) return false;
    if (memo.empty()) memo.assign(g.value_names.size(), -1);
    if (memo[id] >= 0) return memo[id] == 1;
    memo[id] = 0;  // a cycle cannot occur; this also ends the walk on one
    auto dt = g.known_dtypes.find(id);
    if (dt != g.known_dtypes.end()) return (memo[id] = dt->second == DType::Float32) == 1;
    static const char* const kSameType[] = {"Conv", "PRelu", "Relu", "Sigmoid", "Tanh", "Clip", "LeakyRelu",
                                            "HardSigmoid", "HardSwish", "Add", "Sub", "Mul", "Div", "Gemm",
                                            "MatMul", "BatchNormalization", "MaxPool", "AveragePool",
                                            "GlobalAveragePool", "Concat", "Reshape", "Transpose", "Identity"};
    for (size_t k = 0; k < g.nodes.size(); ++k) {
      const GraphNode& p = g.nodes[k];
      if (removed[k] || !p.domain.empty() || p.outputs.empty() || p.outputs[0] != id || p.inputs.empty()) continue;
      for (const char* op : kSameType)
        if (p.op_type == op) return (memo[id] = float32_value(p.inputs[0], memo)) == 1;
      return false;
    }
    return false;
  }

  // The one axis a ReduceMean / ReduceMax reduces, >= 0, or -1 when it is not one known axis.
  int64_t single_reduced_axis(const GraphNode& n) const {
    std::vector<int64_t> axes;
    if (n.attrs.has("axes")) {
      axes = n.attrs.get_ints("axes");
    } else if (n.inputs.size() > 1 && n.inputs[1] >= 0) {
      auto c = g.constants.find(n.inputs[1]);
      if (c == g.constants.end() || g.overridable.count(n.inputs[1]) || c->second.dtype() != DType::Int64) return -1;
      axes.assign(c->second.data<int64_t>(), c->second.data<int64_t>() + c->second.numel());
    }
    if (axes.size() != 1) return -1;  // none (all axes, or no-op) or several
    if (axes[0] >= 0) return axes[0];
    const int64_t rank = known_rank(n.inputs[0]);
    return rank > 0 && axes[0] + rank >= 0 ? axes[0] + rank : -1;
  }

  // ReduceMean(X) and ReduceMax(X) over the same single axis with the same keepdims, X float32:
  // one ReduceMeanMax node (kernels/reduce/reduce_mean_max.cc) at the first one's place.
  void reduce_mean_max() {
    std::vector<int8_t> float32_memo;
    auto plain_reduce = [&](const GraphNode& n, const char* op) {
      return n.domain.empty() && n.op_type == op && n.outputs.size() == 1 && n.outputs[0] >= 0 && !n.inputs.empty() &&
             n.inputs[0] >= 0 && n.attrs.get_int("noop_with_empty_axes", 0) == 0;
    };
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      if (removed[i] || !plain_reduce(g.nodes[i], "ReduceMean")) continue;
      const int x = g.nodes[i].inputs[0];
      const int64_t axis = single_reduced_axis(g.nodes[i]);
      if (axis < 0 || !float32_value(x, float32_memo)) continue;
      const int64_t keep = g.nodes[i].attrs.get_int("keepdims", 1);
      for (size_t j = 0; j < g.nodes.size(); ++j) {
        const GraphNode& mx = g.nodes[j];
        if (removed[j] || j == i || !plain_reduce(mx, "ReduceMax") || mx.inputs[0] != x ||
            single_reduced_axis(mx) != axis || mx.attrs.get_int("keepdims", 1) != keep)
          continue;
        GraphNode fused = onnxmini_node(g.nodes[i], "ReduceMeanMax");
        fused.index = std::min(g.nodes[i].index, mx.index);
        fused.inputs = {x};
        fused.outputs = {g.nodes[i].outputs[0], mx.outputs[0]};
        fused.attrs.set("axis", axis);
        fused.attrs.set("keepdims", keep);
        applied("reduce_mean_max", label(g.nodes[i]) + " + " + label(mx) + " (one pass)");
        const size_t first = std::min(i, j);  // both outputs exist where the first was needed
        removed[i == first ? j : i] = true;
        g.nodes[first] = std::move(fused);
        count_uses();
        break;
      }
    }
  }

};

}  // namespace

void fuse_concat_gemms(RuleContext& ctx) { Pass(ctx).concat_gemms(); }
void fuse_matmul_add(RuleContext& ctx) { Pass(ctx).matmul_add(); }
void fuse_conv_bn(RuleContext& ctx) { Pass(ctx).conv_bn(); }
void fuse_gemm_add(RuleContext& ctx) { Pass(ctx).gemm_add(); }
void fuse_gemm_reshape_residual(RuleContext& ctx) { Pass(ctx).gemm_reshape_residual(); }
void fuse_bn_conv(RuleContext& ctx) { Pass(ctx).bn_conv(); }
void fuse_conv_activation(RuleContext& ctx) { Pass(ctx).producer_activation(true, Pass::ActSet::FusedConv); }
void fuse_conv_prelu(RuleContext& ctx) { Pass(ctx).producer_activation(true, Pass::ActSet::PRelu); }
void fuse_conv_activation_extra(RuleContext& ctx) { Pass(ctx).producer_activation(true, Pass::ActSet::Extra); }
void fuse_conv_gelu(RuleContext& ctx) { Pass(ctx).producer_activation(true, Pass::ActSet::Gelu); }
void fuse_reduce_mean_max(RuleContext& ctx) { Pass(ctx).reduce_mean_max(); }
void fuse_gemm_activation(RuleContext& ctx) {
  Pass p(ctx);
  p.producer_activation(false, Pass::ActSet::AllButPRelu);
  p.matmul_bias_activation();
}

}  // namespace onnxmini
