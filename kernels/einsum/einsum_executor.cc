// The plan interpreter. Data layout: every slot is a dense buffer; steps read
// and write them through LoopNests (sizes + per-tensor strides, innermost last,
// contiguous loops already merged by the planner) or through batched GEMM with
// leading dimensions and batch strides, so operands are read in place (tiny
// products take the engine's small-matrix route, gemm_engine/small_gemm.h).
// Threads: loop nests split their leading loops along which the output moves
// (no two threads write one element); GEMM steps split the outer batch loops,
// or hand the pool to the engine when there is a single batched call or the
// whole step is under ~1 MFLOP.
#include "kernels/einsum/einsum_executor.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "kernels/gemm_engine/gemm.h"
#include "core/thread_pool.h"

namespace onnxmini {
namespace einsum_impl {

namespace {

enum class Op { Copy, Accumulate, Multiply, MultiplyAccumulate };

// The innermost loop: len elements, strides s0 (out), s1 (in0), s2 (in1).
template <typename T, Op op>
inline void inner_loop(T* o, const T* a, const T* b, int64_t len, int64_t s0, int64_t s1, int64_t s2) {
  if (op == Op::Copy) {
    if (s0 == 1 && s1 == 1) std::memcpy(o, a, sizeof(T) * len);
    else for (int64_t i = 0; i < len; ++i) o[i * s0] = a[i * s1];
  } else if (op == Op::Accumulate) {
    if (s0 == 0) {  // reduce a run into one element: 4 partial sums so the compiler can vectorise
      T acc[4] = {0, 0, 0, 0};
      int64_t i = 0;
      if (s1 == 1) for (; i + 4 <= len; i += 4) for (int j = 0; j < 4; ++j) acc[j] += a[i + j];
      for (; i < len; ++i) acc[0] += a[i * s1];
      *o += (acc[0] + acc[1]) + (acc[2] + acc[3]);
    } else if (s0 == 1 && s1 == 1) {
      for (int64_t i = 0; i < len; ++i) o[i] += a[i];
    } else {
      for (int64_t i = 0; i < len; ++i) o[i * s0] += a[i * s1];
    }
  } else {
    constexpr bool acc_out = op == Op::MultiplyAccumulate;
    if (s0 == 0) {  // dot product
      T acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
      int64_t i = 0;
      if (s1 == 1 && s2 == 1) for (; i + 8 <= len; i += 8) for (int j = 0; j < 8; ++j) acc[j] += a[i + j] * b[i + j];
      for (; i < len; ++i) acc[0] += a[i * s1] * b[i * s2];
      const T sum = ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
      *o = acc_out ? *o + sum : sum;
    } else if (s0 == 1 && s1 == 1 && s2 == 1) {
      for (int64_t i = 0; i < len; ++i) o[i] = (acc_out ? o[i] : T(0)) + a[i] * b[i];
    } else if (s0 == 1 && s1 == 1 && s2 == 0) {
      const T bv = *b;
      for (int64_t i = 0; i < len; ++i) o[i] = (acc_out ? o[i] : T(0)) + a[i] * bv;
    } else if (s0 == 1 && s1 == 0 && s2 == 1) {
      const T av = *a;
      for (int64_t i = 0; i < len; ++i) o[i] = (acc_out ? o[i] : T(0)) + av * b[i];
    } else {
      for (int64_t i = 0; i < len; ++i) o[i * s0] = (acc_out ? o[i * s0] : T(0)) + a[i * s1] * b[i * s2];
    }
  }
}

// Walks a loop nest. The leading parallel_depth() loops are flattened and split across threads.
template <typename T, Op op>
void run_nest(const LoopNest& n, T* out, const T* in0, const T* in1, ThreadPool* pool) {
  const size_t D = n.size.size();
  if (D == 0) return inner_loop<T, op>(out, in0, in1, 1, 0, 0, 0);
  const size_t pd = n.parallel_depth();
  int64_t par = 1;
  for (size_t d = 0; d < pd; ++d) par *= n.size[d];
  const int64_t inner = n.size[D - 1];
  int64_t rows_per_task = 1;  // work of one parallel index, for the grain
  for (size_t d = pd; d < D; ++d) rows_per_task *= n.size[d];
  const int64_t grain = std::max<int64_t>(1, 32768 / std::max<int64_t>(1, rows_per_task));
  parallel_for(pool, par, grain, [&](int64_t p0, int64_t p1) {
    std::vector<int64_t> idx(D, 0);
    for (int64_t p = p0; p < p1; ++p) {
      // offsets of the parallel index
      int64_t off[3] = {0, 0, 0}, rem = p;
      for (size_t d = pd; d-- > 0;) {
        const int64_t i = rem % n.size[d];
        rem /= n.size[d];
        for (int t = 0; t < 3; ++t) off[t] += i * n.stride[t][d];
      }
      // odometer over loops pd .. D-2; innermost handled by inner_loop
      std::fill(idx.begin(), idx.end(), 0);
      int64_t o[3] = {off[0], off[1], off[2]};
      for (;;) {
        inner_loop<T, op>(out + o[0], in0 + o[1], in1 ? in1 + o[2] : nullptr, inner, n.stride[0][D - 1],
                          n.stride[1][D - 1], n.stride[2][D - 1]);
        bool done = true;
        for (size_t d = D - 1; d > pd;) {  // advance loops D-2 .. pd
          --d;
          if (++idx[d] < n.size[d]) {
            for (int t = 0; t < 3; ++t) o[t] += n.stride[t][d];
            done = false;
            break;
          }
          for (int t = 0; t < 3; ++t) o[t] -= (n.size[d] - 1) * n.stride[t][d];
          idx[d] = 0;
        }
        if (done) break;
      }
    }
  });
}

// Batched GEMM with the outer batch loops of the step; float32 via sgemm_batched, float64 via dgemm.
template <typename T>
void run_gemm(const Step& s, T* c, const T* a, const T* b, ThreadPool* pool, const gemm::GemmEngine& engine) {
  const GemmShape& g = s.gemm;
  const LoopNest& outer = g.outer;
  const int64_t items = outer.elements();
  auto one_call = [&](int64_t item, ThreadPool* inner_pool) {
    int64_t off[3] = {0, 0, 0}, rem = item;  // [0] c, [1] a, [2] b
    for (size_t d = outer.size.size(); d-- > 0;) {
      const int64_t i = rem % outer.size[d];
      rem /= outer.size[d];
      for (int t = 0; t < 3; ++t) off[t] += i * outer.stride[t][d];
    }
    if constexpr (std::is_same<T, float>::value) {
      gemm::SgemmArgs args;
      args.trans_a = g.trans_a, args.trans_b = g.trans_b;
      args.M = g.M, args.N = g.N, args.K = g.K;
      args.A = a + off[1], args.lda = g.lda;
      args.B = b + off[2], args.ldb = g.ldb;
      args.C = c + off[0], args.ldc = g.ldc;
      gemm::BatchStrides bs;
      bs.a = g.inner_stride[0], bs.b = g.inner_stride[1], bs.c = g.inner_stride[2];
      // Even a batch of one goes through sgemm_batched: the builtin engine's small-matrix
      // route (no packing) lives there, and for other shapes it is plain sgemm.
      engine.sgemm_batched(args, g.inner_batch, bs, inner_pool);
    } else {
      for (int64_t i = 0; i < g.inner_batch; ++i) {
        gemm::DgemmArgs args;
        args.trans_a = g.trans_a, args.trans_b = g.trans_b;
        args.M = g.M, args.N = g.N, args.K = g.K;
        args.A = a + off[1] + i * g.inner_stride[0], args.lda = g.lda;
        args.B = b + off[2] + i * g.inner_stride[1], args.ldb = g.ldb;
        args.C = c + off[0] + i * g.inner_stride[2], args.ldc = g.ldc;
        engine.dgemm(args, inner_pool);
      }
    }
  };
  // Below ~1 MFLOP in all, handing items to threads costs more than it saves (24 attention
  // products of 8 x 8 x 64 in 2 items: 3.7 us on 2 threads, 3.3 us on one): the items run
  // here, each with the pool, and the engine decides (its small route splits a batch only
  // into tasks of >= 128K flops).
  const double total_flops = 2.0 * static_cast<double>(g.M) * g.N * g.K * g.inner_batch * items;
  if (items == 1 || total_flops < 1e6) {
    for (int64_t i = 0; i < items; ++i) one_call(i, pool);
    return;
  }
  parallel_for(pool, items, 1, [&](int64_t i0, int64_t i1) {
    for (int64_t i = i0; i < i1; ++i) one_call(i, nullptr);
  });
}

template <typename T>
void run_plan(const Plan& plan, const std::vector<const Tensor*>& operands, Tensor& output, const ScratchAllocator& scratch,
              ThreadPool* pool, const gemm::GemmEngine& engine) {
  const size_t nslots = plan.slots.size();
  std::vector<Tensor> temps(nslots);
  std::vector<T*> base(nslots, nullptr);
  for (size_t i = 0; i < plan.num_inputs(); ++i) base[i] = const_cast<T*>(operands[i]->data<T>());
  base[plan.output_slot()] = output.mutable_data<T>();
  // Last step reading each scratch slot, so its buffer goes back to the pool early.
  std::vector<int> last_use(nslots, -1);
  for (size_t k = 0; k < plan.steps.size(); ++k) {
    if (plan.steps[k].in0 >= 0) last_use[plan.steps[k].in0] = static_cast<int>(k);
    if (plan.steps[k].in1 >= 0) last_use[plan.steps[k].in1] = static_cast<int>(k);
  }
  for (size_t k = 0; k < plan.steps.size(); ++k) {
    const Step& s = plan.steps[k];
    if (!base[s.out]) {
      temps[s.out] = scratch(dtype_of<T>::value, {plan.slots[s.out].elements});
      base[s.out] = temps[s.out].mutable_data<T>();
    }
    T* out = base[s.out];
    const T* a = s.in0 >= 0 ? base[s.in0] : nullptr;
    const T* b = s.in1 >= 0 ? base[s.in1] : nullptr;
    const int64_t out_elems = plan.slots[s.out].elements;
    switch (s.kind) {
      case StepKind::Zero: std::fill(out, out + out_elems, T(0)); break;
      case StepKind::Copy: run_nest<T, Op::Copy>(s.loops, out, a, nullptr, pool); break;
      case StepKind::Sum:
        std::fill(out, out + out_elems, T(0));
        run_nest<T, Op::Accumulate>(s.loops, out, a, nullptr, pool);
        break;
      case StepKind::Gemm:
        if constexpr (!std::is_integral<T>::value) {
          run_gemm<T>(s, out, a, b, pool, engine);
          break;
        }
        [[fallthrough]];  // integers: the same product as plain loops
      case StepKind::Product:
        if (s.reduced.empty() && s.k.empty()) {
          run_nest<T, Op::Multiply>(s.loops, out, a, b, pool);
        } else {
          std::fill(out, out + out_elems, T(0));
          run_nest<T, Op::MultiplyAccumulate>(s.loops, out, a, b, pool);
        }
        break;
    }
    for (int in : {s.in0, s.in1})
      if (in > plan.output_slot() && last_use[in] == static_cast<int>(k)) {
        temps[in] = Tensor();
        base[in] = nullptr;
      }
  }
}

}  // namespace

bool einsum_dtype_supported(DType t) {
  return t == DType::Float32 || t == DType::Float64 || t == DType::Int32 || t == DType::Int64;
}

void execute_plan(const Plan& plan, const std::vector<const Tensor*>& operands, Tensor& output,
                  const ScratchAllocator& scratch, ThreadPool* pool, const gemm::GemmEngine& engine) {
  switch (output.dtype()) {
    case DType::Float32: return run_plan<float>(plan, operands, output, scratch, pool, engine);
    case DType::Float64: return run_plan<double>(plan, operands, output, scratch, pool, engine);
    case DType::Int32: return run_plan<int32_t>(plan, operands, output, scratch, pool, engine);
    case DType::Int64: return run_plan<int64_t>(plan, operands, output, scratch, pool, engine);
    default:
      throw Error(ErrorCode::NotImplemented, fmt::format("einsum: dtype {} is not supported", dtype_name(output.dtype())));
  }
}

}  // namespace einsum_impl
}  // namespace onnxmini
