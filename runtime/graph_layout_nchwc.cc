// The nchwc_layout rule (graph_layout_nchwc.h).
#include "runtime/graph_layout_nchwc.h"

#include <atomic>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "core/cpu_features.h"
#include "kernels/fused_attributes.h"
#include "kernels/nn/nchwc_conv.h"

namespace onnxmini {
namespace {

constexpr int64_t kBlock = 16;
// The cost rule for a region (measured on an Intel Xeon and an AMD EPYC: docs/performance.md
// "Blocked layout (NCHW16c)", benchmarks/results/nchwc_*.csv). Per layer, NchwcConv's dense and
// pointwise paths run about as fast as conv2d_lanes / the 1x1 GEMM on AVX-512 (0.8-1.27x, the
// large-channel 1x1 layers below 1) and faster on AVX2 (median 1.26x); its depthwise path is
// where the layout pays most (1.07-2.2x: no padded plane copies, full vectors on small planes).
// (Measured before NchwcConv's Winograd variant: since 2026-12-07 its 3x3 stride-1 layers with
// more than 16 channels run 1.2-1.85x faster than its direct kernel on the Zen 5's AVX-512,
// kernels/nn.md. The region rule below was not re-measured with it; lone layers were, see
// kLoneWinogradIntensity.)
// Whole models: regions of dense / pointwise Convs only (YOLOv8n, YOLOX) read 0.98-1.02x on
// the Xeon's AVX-512 (parity), 1.01-1.10x on the EPYC's AVX-512 and 1.05-1.11x on the AVX2
// path, so they are blocked on every ISA; those with depthwise layers (MobileNetV3, PP-LCNet,
// ESNet) 0-22% faster. A region needing many reorders for few Convs (ppocr_mobile_v2_cls, cut
// by its SqueezeExcite nodes into 3-Conv pieces with 2-3 reorders each) was 3-9% slower. So a
// region pays with at least kNchwcMinConvs Convs and at most kMaxReordersPerConv reorders per Conv.
constexpr int kNchwcMinConvs = 2;
constexpr double kMaxReordersPerConv = 0.5;
// A region of one dense Conv (a lone layer) pays when its flops per element it reorders
// (conv_intensity: 2 K^2 Cin Cout / (Cin s^2 + Cout), whatever the image size) reach this.
// Measured on the AMD EPYC (Zen 5, AVX-512, 1 thread, single-Conv models, rule off / on):
// 96 -> 96 3x3 (intensity 864) 1.17x, 192 -> 384 3x3 s2 (1152) 1.32x, 64 -> 256 3x3 (922)
// 1.24x, 256 -> 64 3x3 (921) 1.21x, 64 -> 64 3x3 (576) 1.15x; lost or even below: 16 -> 32
// 3x3 s2 (96) 0.95x, 96 -> 24 3x3 (345) 0.80x, 128 -> 128 1x1 (128) 0.84x, 480 -> 480 1x1
// (480) 1.00x; every lone depthwise layer lost (0.55-0.90x: intensity 2 K^2 / (s^2 + 1) <= 25),
// so its NCHW kernels keep it. 1x1 Convs stay out of this rule: the wide ones sit on 1x1
// images (SE / classifier heads: 512 -> 1280 on 1x1 read 0.93x blocked, the GEMV path wins),
// though 768 -> 384 on 13x13 gained 1.08x. Nor do kernels of one row or column (1xK, Kx1): they
// are 1-D convolutions on images one pixel wide or high, where the blocked kernel's pixel strips
// stay empty (magika's 256 -> 512 5x1 layer on 512x1, intensity 1707, read 0.35x blocked). Not
// measured on the Xeon, where NchwcConv and conv2d_lanes were about even per layer: there a
// lone layer's reorders, under 1/500 of its flops, cost at most a few percent.
constexpr double kLoneConvIntensity = 500;
// A lone 3x3 stride-1 layer that NchwcConv runs as Winograd F(2x2, 3x3) (its channels pay:
// nn::nchwc_winograd_channels_pay) does 2.25x fewer multiplications blocked than conv2d_lanes
// does, so it pays from a lower intensity. Measured on the AMD EPYC (Zen 5), one Conv + Relu,
// blocked / NCHW time at 1 and 2 threads (benchmarks/bench_nchwc_lone.py, CSVs
// nchwc_lone_epyc_zen5_*; docs/performance.md "Lone layers and Winograd"). AVX-512: 128 -> 32 on
// 20x20 (intensity 461) 2.41x / 2.03x, 48 -> 48 on 52x52 (432) 2.10x / 1.46x, 64 -> 32 on 40x40
// (384) 2.01x / 1.55x, 96 -> 24 on 80x80 (346) 1.25x / 1.29x, 32 -> 32 on 56x56 (288) 1.60x /
// 1.25x, 24 -> 48 on 52x52 (288) 1.34x / 1.36x, 48 -> 24 on 52x52 (288) 1.27x / 1.18x; below:
// 24 -> 24 on 104x104 (216) 0.85x / 0.81x, 32 -> 16 on 80x80 (192) 1.05x / 1.04x. The AVX2 path
// (same machine, capped) gained with at least 32 output channels (32 -> 32 1.15x / 1.07x,
// 48 -> 48 1.21x / 1.11x, 128 -> 32 1.46x / 1.07x; 32 -> 64 on 28x28 1.11x / 0.90x) and lost
// with fewer (96 -> 24 0.79x / 0.78x, 48 -> 24 0.88x / 1.00x, 32 -> 16 0.68x / 0.71x): its
// Winograd GEMM strips cover one output block, and 24 channels pad to 32. Not measured on an
// AVX2-only machine or on the Xeon.
constexpr double kLoneWinogradIntensity = 250;
constexpr int64_t kLoneWinogradMinChannelsAvx2 = 32;
// Channel padding: a Conv whose padded input or output channel count exceeds the true one
// by more than this factor does that much useless work (3 -> 16 input channels: 5.3x).
constexpr double kMaxPaddingFactor = 1.5;

std::atomic<int> g_override{-1};  // -1: the environment decides
std::atomic<bool> g_cost_rule{true};  // tests: false keeps every region with a Conv

// ONNXMINI_NCHWC, read once: "0" turns the rule off, "all" blocks every region with a Conv (the
// cost rule off, for measuring what it leaves out: benchmarks/bench_nchwc_lone.py); unset or
// another value: the rule.
enum class EnvMode { Off, Rule, All };
EnvMode env_mode() {
  static const EnvMode mode = [] {
    const char* e = std::getenv("ONNXMINI_NCHWC");
    if (e && std::strcmp(e, "0") == 0) return EnvMode::Off;
    if (e && std::strcmp(e, "all") == 0) return EnvMode::All;
    return EnvMode::Rule;
  }();
  return mode;
}

bool layout_enabled() {
  const int o = g_override.load(std::memory_order_relaxed);
  if (o >= 0) return o != 0;
  return env_mode() != EnvMode::Off;
}

bool cost_rule_on() { return g_cost_rule.load(std::memory_order_relaxed) && env_mode() != EnvMode::All; }

int64_t blocks(int64_t c) { return (c + kBlock - 1) / kBlock; }
bool little_padding(int64_t c) { return c > 0 && static_cast<double>(blocks(c) * kBlock) <= kMaxPaddingFactor * c; }

enum class Kind { None, Conv, Unary, Binary, Concat, Split, Pool, GlobalPool, Resize, SqueezeExcite };

const std::set<std::string>& unary_ops() {
  static const std::set<std::string> ops{"Relu", "LeakyRelu", "Sigmoid", "Tanh", "HardSigmoid", "HardSwish",
                                         "Clip", "Elu",       "Softplus", "Gelu", "Neg",         "Abs"};
  return ops;
}

struct LayoutPass {
  RuleContext& ctx;
  Graph& g;
  std::vector<Kind> kind;              // per node
  std::vector<bool> blocked;           // per node: runs on blocked data
  std::vector<int64_t> channels;       // per value id: true channel count of a blocked value, else -1
  std::vector<int> producer;           // per value id: node index, or -1
  std::vector<std::vector<int>> readers;  // per value id: nodes reading it (inputs or implicit inputs)
  std::vector<bool> graph_output;      // per value id

  explicit LayoutPass(RuleContext& c) : ctx(c), g(c.g) {}

  const Tensor* constant_f32(int id) const {
    if (id < 0 || g.overridable.count(id)) return nullptr;
    auto it = g.constants.find(id);
    return it == g.constants.end() || it->second.dtype() != DType::Float32 ? nullptr : &it->second;
  }
  const Tensor* constant_i64(int id) const {
    if (id < 0 || g.overridable.count(id)) return nullptr;
    auto it = g.constants.find(id);
    return it == g.constants.end() || it->second.dtype() != DType::Int64 ? nullptr : &it->second;
  }
  int64_t ch(int id) const { return id >= 0 && id < static_cast<int>(channels.size()) ? channels[id] : -1; }

  void index_values() {
    const size_t nv = g.value_names.size();
    producer.assign(nv, -1);
    readers.assign(nv, {});
    graph_output.assign(nv, false);
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      for (int o : g.nodes[i].outputs)
        if (o >= 0) producer[o] = static_cast<int>(i);
      for (int in : g.nodes[i].inputs)
        if (in >= 0) readers[in].push_back(static_cast<int>(i));
      for (int in : g.nodes[i].implicit_inputs) readers[in].push_back(static_cast<int>(i));
    }
    for (int o : g.output_ids) graph_output[o] = true;
  }

  // The output channel count of a Conv that NchwcConv takes and where the layout can pay, or -1.
  int64_t conv_channels(const GraphNode& n) const {
    if (!n.domain.empty() || n.op_type != "Conv" || n.outputs.size() != 1 || n.outputs[0] < 0 || n.inputs.size() < 2 ||
        n.inputs[0] < 0)
      return -1;
    if (n.attrs.has(fused_attr::kInputScale) || n.attrs.has(fused_attr::kInputShift)) return -1;
    const Tensor* w = constant_f32(n.inputs[1]);
    if (!w || w->rank() != 4) return -1;
    const int64_t M = w->dim(0), cg = w->dim(1), group = n.attrs.get_int("group", 1);
    if (n.inputs.size() > 2 && n.inputs[2] >= 0) {
      const Tensor* b = constant_f32(n.inputs[2]);
      if (!b || b->numel() != M) return -1;
    }
    const bool residual = n.attrs.get_int(fused_attr::kResidual, 0) != 0;
    if (n.inputs.size() > 4 || (n.inputs.size() == 4 && (!residual || n.inputs[3] < 0))) return -1;
    const bool depthwise = group > 1 && group == M && cg == 1;
    if (group != 1 && !depthwise) return -1;
    if (!little_padding(M) || (!depthwise && !little_padding(cg))) return -1;
    for (const char* a : {"strides", "dilations"})
      if (n.attrs.has(a) && n.attrs.get_ints(a).size() != 2) return -1;
    if (n.attrs.has("pads") && n.attrs.get_ints("pads").size() != 4) return -1;
    return M;
  }

  // Flops per element a one-Conv region reorders (its input in, its output out): 2 K^2 Cin Cout
  // OH OW / (Cin H W + Cout OH OW) = 2 K^2 Cin Cout / (Cin sh sw + Cout), independent of the
  // image size; 0 for a depthwise Conv or a kernel of one row or column (see kLoneConvIntensity).
  double conv_intensity(const GraphNode& n) const {
    const Tensor* w = constant_f32(n.inputs[1]);
    if (!w || w->rank() != 4 || n.attrs.get_int("group", 1) != 1 || w->dim(2) == 1 || w->dim(3) == 1) return 0;
    const std::vector<int64_t> st = n.attrs.get_ints("strides", {1, 1});
    const double cin = static_cast<double>(w->dim(1)), cout = static_cast<double>(w->dim(0));
    const double k2 = static_cast<double>(w->dim(2) * w->dim(3)), s2 = static_cast<double>(st[0] * st[1]);
    return 2 * k2 * cin * cout / (cin * s2 + cout);
  }

  // A constant operand of a binary op that broadcasts per channel or as a scalar against a
  // blocked value of C channels: 1 (one element), 2 (one per channel), 0 (neither).
  int channel_constant(int id, int64_t C) const {
    const Tensor* t = constant_f32(id);
    if (!t) return 0;
    if (t->numel() == 1 && t->rank() <= 4) return 1;
    const Shape& s = t->shape();
    if (s.size() == 4 && s[0] == 1 && s[1] == C && s[2] == 1 && s[3] == 1) return 2;
    if (s.size() == 3 && s[0] == C && s[1] == 1 && s[2] == 1) return 2;
    return 0;
  }

  // Whether NchwcConv will run Conv `n` as Winograd F(2x2, 3x3) on this machine's ISA, as far
  // as the layout can tell before shapes are known (the output's size is not checked) and,
  // on AVX2 and portable, only with the output channels that paid there (kLoneWinogradIntensity).
  bool lone_winograd_pays(const GraphNode& n) const {
    const Tensor* w = constant_f32(n.inputs[1]);
    if (!w || w->rank() != 4 ||
        !nn::nchwc_winograd_shape(w->dim(2), w->dim(3), n.attrs.get_int("group", 1), n.attrs.get_ints("strides", {}),
                                  n.attrs.get_ints("dilations", {})))
      return false;
    const cpu::Isa isa = nn::nchwc_isa();
    return nn::nchwc_winograd_channels_pay(w->dim(1), w->dim(0), isa) &&
           (isa == cpu::Isa::Avx512 || w->dim(0) >= kLoneWinogradMinChannelsAvx2) &&
           conv_intensity(n) >= kLoneWinogradIntensity;
  }

  // Axis 1 of a 4-D value (1 or -3), from attribute `axis` (default `dflt`).
  static bool channel_axis(const GraphNode& n, int64_t dflt) {
    const int64_t axis = n.attrs.get_int("axis", dflt);
    return axis == 1 || axis == -3;
  }

  // The Split's part sizes along axis 1 of a value of C channels, or empty.
  std::vector<int64_t> split_sizes(const GraphNode& n, int64_t C) const {
    if (!channel_axis(n, 0)) return {};
    const size_t parts = n.outputs.size();
    std::vector<int64_t> sizes;
    if (n.attrs.has("split")) {
      sizes = n.attrs.get_ints("split");
    } else if (n.inputs.size() > 1 && n.inputs[1] >= 0) {
      const Tensor* s = constant_i64(n.inputs[1]);
      if (!s) return {};
      sizes.assign(s->data<int64_t>(), s->data<int64_t>() + s->numel());
    } else {
      if (parts == 0 || C % static_cast<int64_t>(parts) != 0) return {};
      sizes.assign(parts, C / static_cast<int64_t>(parts));
    }
    if (sizes.size() != parts || std::accumulate(sizes.begin(), sizes.end(), int64_t{0}) != C) return {};
    for (int64_t s : sizes)
      if (s <= 0 || s % kBlock != 0) return {};
    for (int o : n.outputs)
      if (o < 0) return {};
    return sizes;
  }

  // A 2-D MaxPool / AveragePool that NchwcMaxPool / NchwcAveragePool compute exactly: no
  // Indices output, 2 spatial axes in every window attribute.
  static bool window_pool_ok(const GraphNode& n) {
    if (n.op_type != "MaxPool" && n.op_type != "AveragePool") return false;
    if (n.outputs.empty() || n.outputs.size() > 2 || (n.outputs.size() == 2 && n.outputs[1] >= 0)) return false;
    if (n.inputs.size() != 1 || n.attrs.get_ints("kernel_shape", {}).size() != 2) return false;
    if (n.op_type == "MaxPool" && n.opset < 8) return false;  // MaxPool-1 has no ceil_mode / dilations
    for (const char* a : {"strides", "dilations"})
      if (n.attrs.has(a) && n.attrs.get_ints(a).size() != 2) return false;
    if (n.attrs.has("pads") && n.attrs.get_ints("pads").size() != 4) return false;
    if (n.attrs.get_int("storage_order", 0) != 0) return false;
    return true;
  }

  // The H and W scales of a nearest Resize that NchwcResize computes exactly (constant scales
  // [1, 1, sh, sw], a coordinate mode it implements, no axes), or empty.
  std::vector<float> resize_scales(const GraphNode& n) const {
    if (n.op_type != "Resize" || n.opset < 11 || n.outputs.size() != 1 || n.inputs.size() < 3) return {};
    if (n.attrs.get_string("mode", "nearest") != "nearest" || n.attrs.has("axes")) return {};
    static const std::set<std::string> coords{"half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric",
                                              "tf_half_pixel_for_nearest"};
    if (!coords.count(n.attrs.get_string("coordinate_transformation_mode", "half_pixel"))) return {};
    static const std::set<std::string> nearest{"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"};
    if (!nearest.count(n.attrs.get_string("nearest_mode", "round_prefer_floor"))) return {};
    if (n.inputs.size() > 3 && n.inputs[3] >= 0) {  // sizes: only an empty one next to the scales
      const Tensor* sz = constant_i64(n.inputs[3]);
      if (!sz || sz->numel() != 0) return {};
    }
    const Tensor* s = constant_f32(n.inputs[2]);
    if (!s || s->numel() != 4) return {};
    const float* v = s->data<float>();
    if (v[0] != 1.0f || v[1] != 1.0f || !(v[2] > 0) || !(v[3] > 0) || !std::isfinite(v[2]) || !std::isfinite(v[3]))
      return {};
    return {v[2], v[3]};
  }

  // Step 1: in execution order, which nodes can run on blocked data given their inputs.
  void classify() {
    kind.assign(g.nodes.size(), Kind::None);
    blocked.assign(g.nodes.size(), false);
    channels.assign(g.value_names.size(), -1);
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      const GraphNode& n = g.nodes[i];
      if (!n.subgraphs.empty()) continue;
      if (const int64_t M = conv_channels(n); M > 0) {
        kind[i] = Kind::Conv, blocked[i] = true, channels[n.outputs[0]] = M;
        continue;
      }
      // The fused SqueezeExcite (runtime/graph_fusion_se.cc) of a blocked X: NchwcSqueezeExcite.
      if (n.domain == "ai.onnxmini" && n.op_type == "SqueezeExcite" && n.outputs.size() == 1 && n.outputs[0] >= 0 &&
          n.inputs.size() >= 4 && n.inputs[0] >= 0 && ch(n.inputs[0]) > 0) {
        kind[i] = Kind::SqueezeExcite, blocked[i] = true, channels[n.outputs[0]] = ch(n.inputs[0]);
        continue;
      }
      if (!n.domain.empty() || n.outputs.empty() || n.outputs[0] < 0 || n.inputs.empty()) continue;
      const int64_t C0 = ch(n.inputs[0]);
      if (unary_ops().count(n.op_type) && n.outputs.size() == 1 && C0 > 0) {
        kind[i] = Kind::Unary, blocked[i] = true, channels[n.outputs[0]] = C0;
      } else if ((n.op_type == "Add" || n.op_type == "Sub" || n.op_type == "Mul" || n.op_type == "Div") &&
                 n.inputs.size() == 2 && n.outputs.size() == 1 && n.opset >= 7) {
        const int a = n.inputs[0], b = n.inputs[1];
        const int64_t Ca = ch(a), Cb = ch(b);
        int64_t C = -1;
        if (Ca > 0 && Cb > 0 && Ca == Cb && n.op_type != "Div") C = Ca;
        else if (Ca > 0 && Cb < 0 && channel_constant(b, Ca)) C = Ca;
        else if (Cb > 0 && Ca < 0 && channel_constant(a, Cb) && n.op_type != "Div") C = Cb;
        if (C > 0) kind[i] = Kind::Binary, blocked[i] = true, channels[n.outputs[0]] = C;
      } else if (n.op_type == "Concat" && n.outputs.size() == 1 && channel_axis(n, 1)) {
        int64_t C = 0;
        for (int in : n.inputs) {
          const int64_t c = ch(in);
          if (c <= 0 || c % kBlock != 0) {
            C = -1;
            break;
          }
          C += c;
        }
        if (C > 0) kind[i] = Kind::Concat, blocked[i] = true, channels[n.outputs[0]] = C;
      } else if (C0 > 0 && window_pool_ok(n)) {
        kind[i] = Kind::Pool, blocked[i] = true, channels[n.outputs[0]] = C0;
      } else if (C0 > 0 && (n.op_type == "GlobalAveragePool" || n.op_type == "GlobalMaxPool") &&
                 n.outputs.size() == 1) {
        kind[i] = Kind::GlobalPool, blocked[i] = true, channels[n.outputs[0]] = C0;
      } else if (C0 > 0 && !resize_scales(n).empty()) {
        kind[i] = Kind::Resize, blocked[i] = true, channels[n.outputs[0]] = C0;
      } else if (n.op_type == "Split" && C0 > 0) {
        const std::vector<int64_t> sizes = split_sizes(n, C0);
        if (sizes.empty()) continue;
        kind[i] = Kind::Split, blocked[i] = true;
        for (size_t k = 0; k < sizes.size(); ++k) channels[n.outputs[k]] = sizes[k];
      }
    }
  }

  bool read_by_blocked(int v) const {
    for (int r : readers[v])
      if (blocked[r]) return true;
    return false;
  }

  void unblock(size_t i) {
    blocked[i] = false;
    for (int o : g.nodes[i].outputs)
      if (o >= 0) channels[o] = -1;
  }

  // Moving node i out of the region needs a ReorderFromBlocked for each blocked input that
  // nothing else reads in NCHW, and saves one per output: true when that is a net loss (an Add
  // of two region values feeding a graph output stays blocked).
  bool trimming_adds_reorders(size_t i) const {
    const GraphNode& n = g.nodes[i];
    std::set<int> newly;
    for (int v : n.inputs) {
      if (ch(v) <= 0 || producer[v] < 0 || !blocked[producer[v]] || graph_output[v]) continue;
      bool other_nchw_reader = false;
      for (int r : readers[v]) other_nchw_reader = other_nchw_reader || (r != static_cast<int>(i) && !blocked[r]);
      if (!other_nchw_reader) newly.insert(v);
    }
    size_t outputs = 0;
    for (int o : n.outputs) outputs += o >= 0;
    return newly.size() > outputs;
  }

  // Step 2: non-Conv nodes whose outputs no blocked node reads run in NCHW (the reorder
  // moves in front of them), until nothing changes.
  void trim() {
    for (bool changed = true; changed;) {
      changed = false;
      for (size_t i = g.nodes.size(); i-- > 0;) {
        if (!blocked[i] || kind[i] == Kind::Conv) continue;
        bool read = false;
        for (int o : g.nodes[i].outputs) read = read || (o >= 0 && read_by_blocked(o));
        if (read || trimming_adds_reorders(i)) continue;
        unblock(i), changed = true;
      }
    }
  }

  // Step 3: connected regions; those that do not pay stay in NCHW (the rule: kNchwcMinConvs,
  // kMaxReordersPerConv above).
  void keep_paying_regions() {
    std::vector<int> parent(g.nodes.size());
    std::iota(parent.begin(), parent.end(), 0);
    auto find = [&](int x) {
      while (parent[x] != x) x = parent[x] = parent[parent[x]];
      return x;
    };
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      if (!blocked[i]) continue;
      for (int in : g.nodes[i].inputs)
        if (in >= 0 && producer[in] >= 0 && blocked[producer[in]] && ch(in) > 0)
          parent[find(static_cast<int>(i))] = find(producer[in]);
    }
    struct Region {
      int convs = 0;
      double lone_intensity = 0;  // the last Conv's flops per reordered element (a one-Conv region's)
      bool lone_winograd = false;  // the last Conv runs as Winograd and pays blocked (lone_winograd_pays)
      std::set<int> entries, exits;
    };
    std::vector<Region> regions(g.nodes.size());
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      if (!blocked[i]) continue;
      Region& r = regions[find(static_cast<int>(i))];
      const GraphNode& n = g.nodes[i];
      if (kind[i] == Kind::Conv) {
        ++r.convs;
        r.lone_intensity = conv_intensity(n);
        r.lone_winograd = lone_winograd_pays(n);
        for (size_t k : {size_t{0}, size_t{3}})
          if (k < n.inputs.size() && n.inputs[k] >= 0 && (producer[n.inputs[k]] < 0 || !blocked[producer[n.inputs[k]]]))
            r.entries.insert(n.inputs[k]);
      }
      for (int o : n.outputs) {
        if (o < 0) continue;
        bool outside = graph_output[o];
        for (int rd : readers[o]) outside = outside || !blocked[rd];
        if (outside) r.exits.insert(o);
      }
    }
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      if (!blocked[i]) continue;
      const Region& r = regions[find(static_cast<int>(i))];
      const double reorders = static_cast<double>(r.entries.size() + r.exits.size());
      const bool pays = !cost_rule_on()
                            ? r.convs >= 1
                            : (r.convs >= kNchwcMinConvs && reorders <= kMaxReordersPerConv * r.convs) ||
                                  (r.convs == 1 && reorders <= 2 &&
                                   (r.lone_intensity >= kLoneConvIntensity || r.lone_winograd));
      if (!pays) unblock(i);
    }
  }

  int add_value(const std::string& base) {
    std::string name = base;
    for (int k = 1; g.value_ids.count(name); ++k) name = fmt::format("{}_{}", base, k);
    const int id = static_cast<int>(g.value_names.size());
    g.value_names.push_back(name);
    g.value_ids[name] = id;
    g.known_dtypes[id] = DType::Float32;
    return id;
  }

  // A per-channel constant ([1, C, 1, 1] / [C, 1, 1]) as [1, Cb, 1, 1, 16], padding `pad`.
  int blocked_constant(int id, int64_t C, float pad) {
    const Tensor& t = g.constants.at(id);
    Tensor b(DType::Float32, {1, blocks(C), 1, 1, kBlock});
    float* d = b.mutable_data<float>();
    for (int64_t c = 0; c < blocks(C) * kBlock; ++c) d[c] = c < C ? t.data<float>()[c] : pad;
    const int nid = add_value(g.value_names[id] + "/nchwc");
    g.constants[nid] = std::move(b);
    return nid;
  }

  // `index`: the node it serves (onnxruntime's node_index of profile events).
  GraphNode reorder(const char* op, int in, int out, const std::string& name, int64_t C, int index) {
    GraphNode r;
    r.index = index;
    r.name = name;
    r.op_type = op;
    r.domain = "ai.onnxmini";
    r.opset = 1;
    r.inputs = {in};
    r.outputs = {out};
    if (C >= 0) r.attrs.set("channels", C);
    return r;
  }

  // Step 4: the rewrite. Blocked values get new ids; the original ids are produced by a
  // ReorderFromBlocked where something outside the region (or the graph's output) reads them.
  void rewrite() {
    const size_t nv = g.value_names.size();
    std::vector<int> blocked_id(nv, -1), entry_id(nv, -1);
    std::vector<int64_t> final_channels(nv, -1);
    for (size_t i = 0; i < g.nodes.size(); ++i)
      if (blocked[i])
        for (int o : g.nodes[i].outputs)
          if (o >= 0) {
            final_channels[o] = channels[o];
            blocked_id[o] = add_value(g.value_names[o] + "/nchwc");
          }
    auto needs_nchw = [&](int v) {
      if (graph_output[v]) return true;
      for (int r : readers[v])  // implicit (subgraph) uses too: nodes with bodies are never blocked
        if (!blocked[r]) return true;
      return false;
    };
    std::vector<GraphNode> out;
    int regions_nodes = 0, to_reorders = 0, from_reorders = 0;
    std::string convs;
    // The blocked form of value v read by node i (a Conv's X or Z may come from outside).
    int serving = 0;  // index of the node being rewritten
    auto blocked_input = [&](int v) {
      if (blocked_id[v] >= 0) return blocked_id[v];
      if (entry_id[v] < 0) {
        entry_id[v] = add_value(g.value_names[v] + "/nchwc_in");
        out.push_back(reorder("ReorderToBlocked", v, entry_id[v], g.value_names[v] + "/to_nchwc", -1, serving));
        ++to_reorders;
      }
      return entry_id[v];
    };
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      GraphNode n = std::move(g.nodes[i]);
      if (!blocked[i]) {
        out.push_back(std::move(n));
        continue;
      }
      ++regions_nodes;
      serving = n.index;
      switch (kind[i]) {
        case Kind::Conv:
          n.inputs[0] = blocked_input(n.inputs[0]);
          if (n.inputs.size() == 4) n.inputs[3] = blocked_input(n.inputs[3]);
          n.op_type = "NchwcConv";
          n.domain = "ai.onnxmini";
          n.opset = 1;
          n.attrs.set("channels", final_channels[n.outputs[0]]);
          convs += (convs.empty() ? "" : ", ") + fmt::format("'{}'", n.name);
          break;
        case Kind::Binary: {
          const int64_t C = final_channels[n.outputs[0]];
          for (int& in : n.inputs) {
            if (blocked_id[in] >= 0) in = blocked_id[in];
            else if (channel_constant(in, C) == 2) in = blocked_constant(in, C, n.op_type == "Div" ? 1.0f : 0.0f);
          }
          break;
        }
        case Kind::Split: {
          std::vector<int64_t> sizes = split_sizes(n, channels_of_input(n));
          for (int64_t& s : sizes) s /= kBlock;
          n.inputs[0] = blocked_id[n.inputs[0]];
          if (n.attrs.has("split")) {
            n.attrs.set("split", sizes);
          } else if (n.inputs.size() > 1 && n.inputs[1] >= 0) {
            Tensor t(DType::Int64, {static_cast<int64_t>(sizes.size())});
            std::copy(sizes.begin(), sizes.end(), t.mutable_data<int64_t>());
            const int sid = add_value(g.value_names[n.inputs[1]] + "/nchwc");
            g.known_dtypes[sid] = DType::Int64;
            g.constants[sid] = std::move(t);
            n.inputs[1] = sid;
          }
          n.attrs.set("axis", int64_t{1});
          break;
        }
        case Kind::SqueezeExcite:
        case Kind::Pool:
        case Kind::GlobalPool:
          n.inputs[0] = blocked_id[n.inputs[0]];
          n.outputs.resize(1);  // MaxPool's absent Indices
          n.op_type = "Nchwc" + n.op_type;
          n.domain = "ai.onnxmini";
          n.opset = 1;
          break;
        case Kind::Resize: {
          const std::vector<float> scales = resize_scales(n);
          n.inputs = {blocked_id[n.inputs[0]]};
          n.attrs.set("scales", scales);
          n.op_type = "NchwcResize";
          n.domain = "ai.onnxmini";
          n.opset = 1;
          break;
        }
        case Kind::Concat:
          n.attrs.set("axis", int64_t{1});
          [[fallthrough]];
        default:
          for (int& in : n.inputs)
            if (in >= 0 && blocked_id[in] >= 0) in = blocked_id[in];
      }
      std::vector<int> originals = n.outputs;
      for (int& o : n.outputs)
        if (o >= 0) o = blocked_id[o];
      out.push_back(std::move(n));
      for (int o : originals)
        if (o >= 0 && needs_nchw(o)) {
          out.push_back(reorder("ReorderFromBlocked", blocked_id[o], o, g.value_names[o] + "/from_nchwc",
                                final_channels[o], serving));
          ++from_reorders;
        }
    }
    g.nodes = std::move(out);
    if (regions_nodes > 0)
      ctx.applied("nchwc_layout", fmt::format("{} node(s) in NCHW16c (Convs {}), {} reorder(s) in, {} out",
                                              regions_nodes, convs, to_reorders, from_reorders));
  }

  int64_t channels_of_input(const GraphNode& n) const { return channels[n.inputs[0]]; }

  void run() {
    if (!layout_enabled()) return;
    index_values();
    classify();
    trim();
    keep_paying_regions();
    bool any = false;
    for (bool b : blocked) any = any || b;
    if (any) rewrite();
  }
};

}  // namespace

void apply_nchwc_layout(RuleContext& ctx) { LayoutPass(ctx).run(); }

void set_nchwc_layout_enabled_for_tests(bool on) { g_override.store(on ? 1 : 0, std::memory_order_relaxed); }
void reset_nchwc_layout_override() { g_override.store(-1, std::memory_order_relaxed); }
void set_nchwc_cost_rule_for_tests(bool on) { g_cost_rule.store(on, std::memory_order_relaxed); }

}  // namespace onnxmini
