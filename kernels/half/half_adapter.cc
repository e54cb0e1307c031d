#include "kernels/half/half_adapter.h"

#include <deque>
#include <map>
#include <utility>

#include "core/thread_pool.h"
#include "kernels/simd/half_rows.h"

namespace onnxmini {
namespace half {
namespace {

// Ops whose float32 kernel computes a half tensor: every float-typed output has
// the type of the float inputs (T in -> T out), so "widen, compute, round once"
// is the op's float16 semantics with float32 intermediates, which is also what
// onnxruntime's CPU kernels do for float16 (MLFloat16 -> float math).
// Ops that handle half natively (element-wise math, Where, Clip, Resize, Pad,
// LayerNormalization, Attention, the data-movement ops) are not listed.
using OpKey = std::pair<std::string, std::string>;  // (domain, op type)

// Outputs whose type is not the op's T: {output, input} = the output takes that
// input's own type (BatchNormalization's running mean / var: T2, the type of
// input_mean), input -1 = always float32 (onnxruntime's type U: the statistics of
// the fused normalizations). Every other float32 output is rounded to the type
// of the first half input.
using Float32Outputs = std::vector<std::pair<size_t, int>>;
constexpr int kStaysFloat32 = -1;

const std::map<OpKey, Float32Outputs>& adapted_ops() {
  static const std::map<OpKey, Float32Outputs> ops = [] {
    std::map<OpKey, Float32Outputs> m;
    for (const char* op : {
             // linear algebra and convolution
             "Conv", "ConvTranspose", "MatMul", "Gemm", "Einsum",
             // pools
             "MaxPool", "AveragePool", "GlobalAveragePool", "GlobalMaxPool", "MaxRoiPool",
             // softmax family
             "Softmax", "LogSoftmax",
             // reductions
             "ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1", "ReduceL2",
             "ReduceLogSum", "ReduceLogSumExp", "ReduceSumSquare", "ArgMax", "ArgMin", "TopK",
             // normalization (GroupNormalization, LpNormalization, MeanVarianceNormalization, LpPool,
             // Hardmax, CumSum handle half themselves)
             "BatchNormalization", "InstanceNormalization",
             // recurrent
             "RNN", "GRU", "LSTM",
             // T in -> T out ops whose kernels come from the other op branches of issue #13
             // (losses, Det): listed so they take half inputs once merged
             "Det", "NegativeLogLikelihoodLoss", "SoftmaxCrossEntropyLoss",
         })
      m[{"", op}] = {};
    m[{"", "BatchNormalization"}] = {{1, 3}, {2, 4}};  // training mode: running mean / var are T2
    // onnxruntime's fused transformer ops (kernels/nn/transformer_fused.cc)
    m[{"com.microsoft", "SkipLayerNormalization"}] = {{1, kStaysFloat32}, {2, kStaysFloat32}};
    m[{"com.microsoft", "SkipSimplifiedLayerNormalization"}] = {{1, kStaysFloat32}, {2, kStaysFloat32}};
    m[{"com.microsoft", "BiasGelu"}] = {};
    m[{"com.microsoft", "FastGelu"}] = {};
    m[{"", "SimplifiedLayerNormalization"}] = {{1, kStaysFloat32}};
    return m;
  }();
  return ops;
}

// n elements of half type `t` <-> float32, split across the pool for large tensors
// (memory bound: chunks of 64K elements keep every thread streaming).
void widen(DType t, const uint16_t* src, float* dst, int64_t n, ThreadPool* pool) {
  constexpr int64_t kGrain = 1 << 16;
  if (!pool || n < 2 * kGrain) return simd::widen_half_row(t, src, dst, n);
  pool->parallel_for(n, kGrain, [&](int64_t b, int64_t e) { simd::widen_half_row(t, src + b, dst + b, e - b); });
}
void narrow(DType t, const float* src, uint16_t* dst, int64_t n, ThreadPool* pool) {
  constexpr int64_t kGrain = 1 << 16;
  if (!pool || n < 2 * kGrain) return simd::narrow_half_row(t, src, dst, n);
  pool->parallel_for(n, kGrain, [&](int64_t b, int64_t e) { simd::narrow_half_row(t, src + b, dst + b, e - b); });
}

Tensor widened_copy(const Tensor& t) {
  Tensor w(DType::Float32, t.shape());
  simd::widen_half_row(t.dtype(), static_cast<const uint16_t*>(t.raw()), static_cast<float*>(w.raw_mut()), t.numel());
  return w;
}

// Wraps the float32 kernel of one node. The inner kernel was created from a
// KernelInfo whose half dtypes read Float32 and whose half constants are the
// widened copies held here (created once, shared by concurrent runs).
class HalfAdapterKernel final : public Kernel {
 public:
  HalfAdapterKernel(const KernelInfo& info, const KernelFactory& factory, Float32Outputs float32_outputs)
      : info_(info), float32_outputs_(std::move(float32_outputs)) {
    for (size_t i = 0; i < info_.constant_inputs.size(); ++i) {
      const Tensor* c = info_.constant_inputs[i];
      if (!c || !simd::is_half_dtype(c->dtype())) continue;
      widened_.push_back({i, Value(widened_copy(*c))});
      info_.constant_inputs[i] = &widened_.back().second.tensor();
    }
    for (DType& d : info_.input_dtypes)
      if (simd::is_half_dtype(d)) d = DType::Float32;
    inner_ = factory(info_);
  }

  void prepare(KernelContext& ctx) override {
    if (half_type(ctx) == DType::Undefined) inner_->prepare(ctx);
    // A half run does all its work in compute: the widened inputs live there.
  }

  // A half run takes the float32 kernel's path on widened inputs (its stats are reported as they are).
  KernelPlan describe(const KernelInfo& info, const std::vector<const Shape*>& input_shapes) const override {
    KernelInfo wide = info;  // the caller's dtypes may be better known than at creation
    for (DType& d : wide.input_dtypes)
      if (simd::is_half_dtype(d)) d = DType::Float32;
    return inner_->describe(wide, input_shapes);
  }

  void compute(KernelContext& ctx) override {
    const DType t = half_type(ctx);
    if (t == DType::Undefined) return inner_->compute(ctx);
    run_widened(ctx, t);
  }

 private:
  // The half type of the first half input, Undefined when there is none.
  static DType half_type(const KernelContext& ctx) {
    for (size_t i = 0; i < ctx.num_inputs(); ++i) {
      if (!ctx.has_input(i)) continue;
      const Value& v = ctx.input_value(i);
      if (v.is_tensor() && simd::is_half_dtype(v.tensor().dtype())) return v.tensor().dtype();
    }
    return DType::Undefined;
  }

  const Value* widened_constant(size_t i) const {
    for (const auto& [index, value] : widened_)
      if (index == i) return &value;
    return nullptr;
  }

  void run_widened(KernelContext& ctx, DType t) const {
    const size_t n_in = ctx.num_inputs();
    std::vector<Value> widened_inputs(n_in);
    std::vector<const Value*> inputs(n_in, nullptr);
    for (size_t i = 0; i < n_in; ++i) {
      if (!ctx.has_input(i)) continue;
      if (const Value* w = widened_constant(i)) {
        inputs[i] = w;
        continue;
      }
      const Value& v = ctx.input_value(i);
      inputs[i] = &v;
      if (!v.is_tensor() || !simd::is_half_dtype(v.tensor().dtype())) continue;
      const Tensor& src = v.tensor();
      Tensor wide = ctx.scratch(DType::Float32, src.shape());
      widen(src.dtype(), static_cast<const uint16_t*>(src.raw()), static_cast<float*>(wide.raw_mut()), src.numel(),
            ctx.threads());
      widened_inputs[i] = Value(std::move(wide));
      inputs[i] = &widened_inputs[i];
    }

    std::vector<Value> outputs(ctx.num_outputs());
    static const KernelContext::BoundOutput kUnbound;
    KernelContext inner(info_, inputs, outputs, ctx.allocator(), ctx.threads(), &ctx.gemm(), kUnbound, ctx.scope());
    inner_->prepare(inner);
    inner_->compute(inner);
    ctx.stats() = inner.stats();

    for (size_t i = 0; i < outputs.size(); ++i) {
      if (outputs[i].is_none()) continue;
      DType out_type = t;
      for (const auto& [out, src] : float32_outputs_) {
        if (out != i) continue;
        const bool half_src = src != kStaysFloat32 && ctx.has_input(static_cast<size_t>(src)) &&
                              ctx.input_value(static_cast<size_t>(src)).is_tensor() &&
                              simd::is_half_dtype(ctx.input(static_cast<size_t>(src)).dtype());
        out_type = half_src ? ctx.input(static_cast<size_t>(src)).dtype() : DType::Float32;
      }
      if (out_type == DType::Float32 || !outputs[i].is_tensor() || outputs[i].tensor().dtype() != DType::Float32) {
        ctx.set_output(i, std::move(outputs[i]));
        continue;
      }
      const Tensor& wide = outputs[i].tensor();
      Tensor& out = ctx.allocate_output(i, out_type, wide.shape());
      narrow(out_type, static_cast<const float*>(wide.raw()), static_cast<uint16_t*>(out.raw_mut()), wide.numel(),
             ctx.threads());
    }
  }

  KernelInfo info_;
  Float32Outputs float32_outputs_;
  std::deque<std::pair<size_t, Value>> widened_;  // deque: pointers into it stay valid
  std::unique_ptr<Kernel> inner_;
};

}  // namespace

bool computed_in_float32(const std::string& domain, const std::string& op_type) {
  return adapted_ops().count({domain, op_type}) != 0;
}

KernelFactory adapt_for_half(const std::string& domain, const std::string& op_type, KernelFactory factory) {
  const auto it = adapted_ops().find({domain, op_type});
  if (it == adapted_ops().end()) return factory;
  return [factory = std::move(factory), keep = it->second](const KernelInfo& info) -> std::unique_ptr<Kernel> {
    return std::make_unique<HalfAdapterKernel>(info, factory, keep);
  };
}

}  // namespace half
}  // namespace onnxmini
