// Attribute parsing, input validation and the kernel object shared by LSTM,
// GRU and RNN (see rnn_common.h). Every check names the node and the bad
// shape or value.
#include "kernels/rnn/rnn_common.h"

#include <algorithm>
#include <cctype>
#include <cmath>

#include "core/checked_math.h"
#include "kernels/gemm_engine/gemm.h"
#include "kernels/rnn/rnn_gates.h"

namespace onnxmini {
namespace rnn {

namespace {

struct ActSpec {
  const char* name;  // lower case
  ActKind kind;
  bool uses_alpha, uses_beta;
  float alpha, beta;  // defaults (those of the stand-alone ONNX ops)
};
constexpr ActSpec kActs[] = {
    {"relu", ActKind::Relu, false, false, 0, 0},
    {"tanh", ActKind::Tanh, false, false, 0, 0},
    {"sigmoid", ActKind::Sigmoid, false, false, 0, 0},
    {"affine", ActKind::Affine, true, true, 1.0f, 0.0f},
    {"leakyrelu", ActKind::LeakyRelu, true, false, 0.01f, 0},
    {"thresholdedrelu", ActKind::ThresholdedRelu, true, false, 1.0f, 0},
    {"scaledtanh", ActKind::ScaledTanh, true, true, 1.0f, 1.0f},
    {"hardsigmoid", ActKind::HardSigmoid, true, true, 0.2f, 0.5f},
    {"elu", ActKind::Elu, true, false, 1.0f, 0},
    {"softsign", ActKind::Softsign, false, false, 0, 0},
    {"softplus", ActKind::Softplus, false, false, 0, 0},
};

std::string lower(std::string s) {
  for (char& ch : s) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return s;
}

}  // namespace

float Activation::operator()(float x) const {
  switch (kind) {
    case ActKind::Relu: return x > 0 ? x : 0.0f;
    case ActKind::Tanh: return std::tanh(x);
    case ActKind::Sigmoid: return 1.0f / (1.0f + std::exp(-x));
    case ActKind::Affine: return alpha * x + beta;
    case ActKind::LeakyRelu: return x >= 0 ? x : alpha * x;
    case ActKind::ThresholdedRelu: return x > alpha ? x : 0.0f;
    case ActKind::ScaledTanh: return alpha * std::tanh(beta * x);
    case ActKind::HardSigmoid: return std::min(1.0f, std::max(0.0f, alpha * x + beta));
    case ActKind::Elu: return x >= 0 ? x : alpha * (std::exp(x) - 1.0f);
    case ActKind::Softsign: return x / (1.0f + std::fabs(x));
    case ActKind::Softplus: return x > 20.0f ? x : std::log1p(std::exp(x));
  }
  return x;
}

int gates_of(Cell cell) { return cell == Cell::Lstm ? 4 : cell == Cell::Gru ? 3 : 1; }
int activations_of(Cell cell) { return cell == Cell::Lstm ? 3 : cell == Cell::Gru ? 2 : 1; }
const char* cell_name(Cell cell) { return cell == Cell::Lstm ? "LSTM" : cell == Cell::Gru ? "GRU" : "RNN"; }

Attrs parse_attrs(const KernelInfo& info, Cell cell) {
  Attrs a;
  a.cell = cell;
  const std::string dir = info.attrs.get_string("direction", "forward");
  if (dir == "forward")
    a.direction = Direction::Forward;
  else if (dir == "reverse")
    a.direction = Direction::Reverse;
  else if (dir == "bidirectional")
    a.direction = Direction::Bidirectional;
  else
    info.fail("direction '{}' is not one of forward, reverse, bidirectional", dir);
  a.num_dir = a.direction == Direction::Bidirectional ? 2 : 1;
  a.hidden = info.attrs.get_int("hidden_size", -1);
  if (info.attrs.has("hidden_size") && a.hidden < 1) info.fail("hidden_size must be >= 1, got {}", a.hidden);
  a.has_clip = info.attrs.has("clip");
  a.clip = info.attrs.get_float("clip", 0.0f);
  if (a.has_clip && !(a.clip > 0)) info.fail("clip must be a positive threshold, got {}", a.clip);
  a.input_forget = info.attrs.get_int("input_forget", 0) != 0;
  a.linear_before_reset = info.attrs.get_int("linear_before_reset", 0) != 0;
  a.layout = static_cast<int>(info.attrs.get_int("layout", 0));
  if (a.layout != 0 && a.layout != 1) info.fail("layout must be 0 or 1, got {}", a.layout);

  const int per_dir = activations_of(cell);
  static const std::vector<std::string> kLstm = {"Sigmoid", "Tanh", "Tanh"}, kGru = {"Sigmoid", "Tanh"},
                                        kRnn = {"Tanh", "Tanh"};
  std::vector<std::string> names = info.attrs.get_strings("activations", {});
  if (names.empty()) {
    const auto& d = cell == Cell::Lstm ? kLstm : cell == Cell::Gru ? kGru : kRnn;
    names.assign(d.begin(), d.begin() + per_dir);
  }
  // One direction's list serves both directions. RNN's schema default lists [Tanh, Tanh]
  // (one per direction) even for one direction: the extra entry is ignored.
  const size_t want = static_cast<size_t>(per_dir * a.num_dir);
  if (names.size() == static_cast<size_t>(per_dir) && a.num_dir == 2) {
    const std::vector<std::string> one = names;
    names.insert(names.end(), one.begin(), one.end());
  } else if (cell == Cell::Rnn && a.num_dir == 1 && names.size() == 2) {
    names.resize(1);
  }
  if (names.size() != want)
    info.fail("activations has {} entries; {} direction(s) of {} need {}", names.size(), a.num_dir, cell_name(cell),
              want);
  // activation_alpha / activation_beta are consumed in order by the activations that take them.
  const std::vector<float> alphas = info.attrs.get_floats("activation_alpha", {}),
                           betas = info.attrs.get_floats("activation_beta", {});
  size_t next_alpha = 0, next_beta = 0;
  for (const std::string& name : names) {
    const std::string key = lower(name);
    const ActSpec* spec = nullptr;
    for (const ActSpec& s : kActs)
      if (key == s.name) spec = &s;
    if (!spec)
      info.fail(
          "unknown activation '{}' (want Relu, Tanh, Sigmoid, Affine, LeakyRelu, ThresholdedRelu, "
          "ScaledTanh, HardSigmoid, Elu, Softsign or Softplus)",
          name);
    Activation act{spec->kind, spec->alpha, spec->beta};
    if (spec->uses_alpha && next_alpha < alphas.size()) act.alpha = alphas[next_alpha++];
    if (spec->uses_beta && next_beta < betas.size()) act.beta = betas[next_beta++];
    a.acts.push_back(act);
  }
  for (int d = 0; d < a.num_dir; ++d)
    for (int k = 0; k < per_dir; ++k) {
      const ActKind want = cell == Cell::Rnn || k > 0 ? ActKind::Tanh : ActKind::Sigmoid;
      if (a.acts[d * per_dir + k].kind != want) a.default_activations = false;
    }
  return a;
}

namespace {

class RnnKernel : public Kernel {
 public:
  RnnKernel(const KernelInfo& info, Cell cell) : attrs_(parse_attrs(info, cell)) {
    for (size_t i : {size_t(0), size_t(1), size_t(2), size_t(3), size_t(5), size_t(6), size_t(7)})
      if (i < info.num_inputs) info.require_dtype(i, {DType::Float32});
    info.require_dtype(4, {DType::Int32});
    const Tensor *w = info.constant_input(1), *r = info.constant_input(2);
    if (w && r && info.mode == KernelMode::Fast)
      packed_ = pack_weights(gemm::engine(info.gemm, info.mode), attrs_, *w, *r);
  }

  KernelPlan describe(const KernelInfo& info, const std::vector<const Shape*>&) const override {
    if (attrs_.default_activations) return KernelPlan{"rnn_gemm_simd_gates", cpu::isa_name(gate_kernels().isa), ""};
    return KernelPlan{"rnn_gemm_scalar_gates", gemm::engine(info.gemm, info.mode).sgemm_path(gemm::SgemmArgs{}, false).isa,
                      ""};
  }

  void prepare(KernelContext& ctx) override {
    const Attrs& a = attrs_;
    const int G = gates_of(a.cell), nd = a.num_dir;
    const Tensor& x = float_input(ctx, 0, "X");
    if (x.rank() != 3)
      ctx.fail("X must be 3-D ({}), got shape {}",
               a.layout == 0 ? "[seq_length, batch_size, input_size]" : "[batch_size, seq_length, input_size]",
               shape_to_string(x.shape()));
    const int64_t seq = a.layout == 0 ? x.dim(0) : x.dim(1), batch = a.layout == 0 ? x.dim(1) : x.dim(0), in = x.dim(2);
    const Tensor& r = float_input(ctx, 2, "R");
    if (r.rank() != 3)
      ctx.fail("R must be 3-D [num_directions, {}*hidden_size, hidden_size], got shape {}", G,
               shape_to_string(r.shape()));
    const int64_t H = a.hidden > 0 ? a.hidden : r.dim(2);
    // hidden_size comes from the model (or R's dim): the gate-row counts below must not wrap.
    if (!try_mul(2 * G, H) || !try_mul(3, H))
      ctx.fail("hidden_size {} is too large: {} gates x 2 x hidden_size overflows int64", H, G);
    if (r.dim(0) != nd || r.dim(1) != G * H || r.dim(2) != H)
      ctx.fail("R has shape {} but direction '{}' and hidden_size {} need {}", shape_to_string(r.shape()), dir_name(),
               H, shape_to_string({nd, G * H, H}));
    const Tensor& w = float_input(ctx, 1, "W");
    if (w.rank() != 3 || w.dim(0) != nd || w.dim(1) != G * H || w.dim(2) != in)
      ctx.fail("W has shape {} but direction '{}', hidden_size {} and input size {} need {}",
               shape_to_string(w.shape()), dir_name(), H, in, shape_to_string({nd, G * H, in}));
    expect_shape(ctx, 3, "B", {nd, 2 * G * H});
    if (ctx.has_input(4)) {
      const Tensor& lens = ctx.input(4);
      if (lens.dtype() != DType::Int32) ctx.fail("sequence_lens must be int32, got {}", dtype_name(lens.dtype()));
      if (lens.shape() != Shape{batch})
        ctx.fail("sequence_lens has shape {} but batch_size is {}", shape_to_string(lens.shape()), batch);
      for (int64_t b = 0; b < batch; ++b) {
        const int32_t v = lens.data<int32_t>()[b];
        if (v < 0 || v > seq) ctx.fail("sequence_lens[{}] = {} is outside [0, seq_length = {}]", b, v, seq);
      }
    }
    const Shape state = a.layout == 0 ? Shape{nd, batch, H} : Shape{batch, nd, H};
    expect_shape(ctx, 5, "initial_h", state);
    if (a.cell == Cell::Lstm) {
      expect_shape(ctx, 6, "initial_c", state);
      expect_shape(ctx, 7, "P", {nd, 3 * H});
    }
    if (ctx.output_wanted(0))
      ctx.allocate_output(0, DType::Float32, a.layout == 0 ? Shape{seq, nd, batch, H} : Shape{batch, seq, nd, H});
    if (ctx.output_wanted(1)) ctx.allocate_output(1, DType::Float32, state);
    if (a.cell == Cell::Lstm && ctx.output_wanted(2)) ctx.allocate_output(2, DType::Float32, state);
  }

  void compute(KernelContext& ctx) override {
    Problem p;
    p.attrs = &attrs_;
    const Tensor& x = ctx.input(0);
    p.seq = attrs_.layout == 0 ? x.dim(0) : x.dim(1);
    p.batch = attrs_.layout == 0 ? x.dim(1) : x.dim(0);
    p.input = x.dim(2);
    p.hidden = ctx.input(2).dim(2);
    p.x = x.data<float>();
    p.w = ctx.input(1).data<float>();
    p.r = ctx.input(2).data<float>();
    p.b = optional_data<float>(ctx, 3);
    p.lens = optional_data<int32_t>(ctx, 4);
    p.h0 = optional_data<float>(ctx, 5);
    if (attrs_.cell == Cell::Lstm) {
      p.c0 = optional_data<float>(ctx, 6);
      p.p = optional_data<float>(ctx, 7);
    }
    p.y = ctx.output_wanted(0) ? ctx.output(0).mutable_data<float>() : nullptr;
    p.yh = ctx.output_wanted(1) ? ctx.output(1).mutable_data<float>() : nullptr;
    p.yc = attrs_.cell == Cell::Lstm && ctx.output_wanted(2) ? ctx.output(2).mutable_data<float>() : nullptr;
    const int64_t GH = gates_of(attrs_.cell) * p.hidden;
    ctx.stats().flops = 2.0 * p.seq * p.batch * attrs_.num_dir * GH * (p.input + p.hidden);  // the two products
    ctx.stats().variant = ctx.reference_mode()              ? "rnn_reference"
                          : attrs_.default_activations ? "rnn_gemm_simd_gates"
                                                       : "rnn_gemm_scalar_gates";
    if (ctx.reference_mode()) {
      rnn_reference(p);
      return;
    }
    // The gates' ISA when they run vectorised, else the engine's (the products).
    ctx.stats().isa = attrs_.default_activations ? cpu::isa_name(gate_kernels().isa)
                                                 : ctx.gemm().sgemm_path(gemm::SgemmArgs{}, false).isa;
    Tensor ws = ctx.scratch(DType::Float32, {fast_workspace_floats(p)});
    rnn_fast(p, gate_kernels(), ctx.gemm(), ctx.threads(), ws.mutable_data<float>(), packed_.get());
  }

 private:
  const char* dir_name() const {
    return attrs_.direction == Direction::Forward   ? "forward"
           : attrs_.direction == Direction::Reverse ? "reverse"
                                                    : "bidirectional";
  }
  static const Tensor& float_input(const KernelContext& ctx, size_t i, const char* what) {
    const Tensor& t = ctx.input(i);
    if (t.dtype() != DType::Float32) ctx.unsupported("{} has dtype {} (float32 only)", what, dtype_name(t.dtype()));
    return t;
  }
  static void expect_shape(const KernelContext& ctx, size_t i, const char* what, const Shape& want) {
    if (!ctx.has_input(i)) return;
    const Tensor& t = float_input(ctx, i, what);
    if (t.shape() != want)
      ctx.fail("{} has shape {}, expected {}", what, shape_to_string(t.shape()), shape_to_string(want));
  }
  template <typename T>
  static const T* optional_data(const KernelContext& ctx, size_t i) {
    return ctx.has_input(i) ? ctx.input(i).data<T>() : nullptr;
  }
  Attrs attrs_;
  std::shared_ptr<const PackedWeights> packed_;  // constant W and R, packed for the fast path
};

}  // namespace

std::unique_ptr<Kernel> make_kernel(const KernelInfo& info, Cell cell) {
  return std::make_unique<RnnKernel>(info, cell);
}

}  // namespace rnn
}  // namespace onnxmini
