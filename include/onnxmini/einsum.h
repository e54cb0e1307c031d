// Einsum: evaluate, plan, explain and export einsum equations (see docs/einsum.md).
//
//   Tensor y = onnxmini::einsum("bsnh,btnh->bnts", {a, b});
//   EinsumPlanInfo plan = onnxmini::einsum_plan("bsnh,btnh->bnts", {{20,20,20,20}, {20,20,20,20}});
//   std::cout << plan.text;
//   std::string model = onnxmini::einsum_decompose("bsnh,btnh->bnts", shapes, EinsumOptimize::Cost, 13);
//
// The Einsum operator of ONNX models runs the same planner (cost model) through the kernel.
#pragma once
#include "onnxmini/export.h"
#include <functional>
#include <string>
#include <vector>

#include "onnxmini/session.h"
#include "onnxmini/tensor.h"

ONNXMINI_API_BEGIN
namespace onnxmini {

// none: no search (first-appearance letter order, left-to-right contraction);
// cost: the cost model picks the plan (default);
// time: the best plans by cost are timed on random data of the real shapes, the fastest wins.
enum class EinsumOptimize { None, Cost, Time };
const char* to_string(EinsumOptimize o);
EinsumOptimize einsum_optimize_from_string(const std::string& s);  // "none", "cost", "time"; throws InvalidArgument

struct EinsumOptions {
  EinsumOptimize optimize = EinsumOptimize::Cost;
  int threads = 1;                       // intra-op threads (0: one per physical core)
  GemmBackend gemm = GemmBackend::Builtin;
  KernelMode kernels = KernelMode::Fast; // Reference: the plain nested-loop einsum
  // optimize=time: called as plans are timed, (0, total) first and (total, total) last;
  // the CLI draws a progress bar with it. Each plan's time is also logged (info, docs/logging.md).
  std::function<void(size_t timed, size_t total)> progress;
  int time_candidates = 24;              // optimize=time: how many plans (best by cost) are timed
};

struct EinsumStepInfo {
  std::string kind;  // "gemm", "copy", "sum", "product", "zero"
  std::string text;  // "gemm out[bnts] <- in1[btnh] x in0[bsnh] batch 400 x (M 20 N 20 K 20) B^T"
  double flops = 0, bytes_copied = 0, estimated_us = 0;
};

struct EinsumCandidate {  // one plan timed by optimize=time
  std::string letter_order, contraction_order, summary;
  double estimated_us = 0, measured_us = 0;
};

struct EinsumPlanInfo {
  std::string equation, canonical, letter_order, contraction_order, optimizer;
  std::vector<Shape> input_shapes;
  Shape output_shape;
  std::vector<EinsumStepInfo> steps;
  double flops = 0, bytes_copied = 0, estimated_us = 0;
  double measured_us = -1;                  // optimize=time: the chosen plan's time
  std::vector<EinsumCandidate> candidates;  // optimize=time: every timed plan, fastest first
  std::string summary;                      // one line (what the profiler shows)
  std::string text;                         // multi-line description (what the CLI prints)
};

// Output shape of `equation` for operands of `shapes`; throws InvalidArgument with the
// position in the equation when they do not fit.
Shape einsum_output_shape(const std::string& equation, const std::vector<Shape>& shapes);

// The plan used for (equation, shapes); plans are cached per (equation, shapes).
EinsumPlanInfo einsum_plan(const std::string& equation, const std::vector<Shape>& shapes,
                           const EinsumOptions& options = {});

// Evaluates the equation (float32, float64, int32, int64; all operands of one dtype).
Tensor einsum(const std::string& equation, const std::vector<Tensor>& operands, const EinsumOptions& options = {});

// The plan as an ONNX model of simple operators (Reshape, Transpose, MatMul, Mul,
// ReduceSum, Unsqueeze), inputs "in0", "in1", ..., output "out". opset 7..21;
// from opset 13 ReduceSum/Unsqueeze take their axes as an input. Returns the bytes.
std::string einsum_decompose(const std::string& equation, const std::vector<Shape>& shapes,
                             EinsumOptimize optimize = EinsumOptimize::Cost, int opset = 13,
                             DType dtype = DType::Float32);

// A model holding one Einsum node (opset >= 12), for running the kernel through a Session.
std::string einsum_model(const std::string& equation, const std::vector<Shape>& shapes, int opset = 13,
                         DType dtype = DType::Float32);

}  // namespace onnxmini
ONNXMINI_API_END
