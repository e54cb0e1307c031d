// What LSTM, GRU and RNN (every opset) share: attribute parsing, input
// validation, the layout-aware view of one run (RnnProblem), and the two
// implementations of the recurrence:
//   rnn_reference - plain loops over (direction, step, batch, unit) with any
//                   activation; the oracle of the tests (KernelMode::Reference);
//   rnn_fast      - one GEMM for the input projection of the whole sequence,
//                   per step one recurrent GEMM plus a fused SIMD gate pass
//                   (rnn_gates.h; SIMD for the default activations).
//
// Gate order in W / R / B (ONNX): LSTM i o f c, GRU z r h, RNN one gate.
#pragma once
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "kernels/kernel.h"

namespace onnxmini {
namespace gemm {
class GemmEngine;
class PackedB;
}  // namespace gemm
namespace rnn {

struct GateKernels;

enum class Cell { Lstm, Gru, Rnn };
enum class Direction { Forward, Reverse, Bidirectional };

enum class ActKind {
  Relu,
  Tanh,
  Sigmoid,
  Affine,
  LeakyRelu,
  ThresholdedRelu,
  ScaledTanh,
  HardSigmoid,
  Elu,
  Softsign,
  Softplus
};

struct Activation {
  ActKind kind = ActKind::Tanh;
  float alpha = 0, beta = 0;
  float operator()(float x) const;
};

// Gates per hidden unit (4, 3, 1) and activations per direction (3, 2, 1).
int gates_of(Cell cell);
int activations_of(Cell cell);
const char* cell_name(Cell cell);

struct Attrs {
  Cell cell = Cell::Lstm;
  Direction direction = Direction::Forward;
  int num_dir = 1;
  int64_t hidden = -1;           // -1: not given, taken from R
  std::vector<Activation> acts;  // activations_of(cell) per direction, num_dir of them
  float clip = 0;                // used when has_clip
  bool has_clip = false;
  bool input_forget = false;         // LSTM
  bool linear_before_reset = false;  // GRU
  int layout = 0;                    // 0: [seq, batch, ...]; 1: [batch, seq, ...]
  // f = Sigmoid, g = Tanh, h = Tanh (RNN: Tanh) on every direction: the fast path's activations.
  bool default_activations = true;
};

// Parses and checks the attributes; fails naming the node.
Attrs parse_attrs(const KernelInfo& info, Cell cell);

// One validated run. Pointers may be null where the input is absent or the
// output not wanted. All float32, row-major as ONNX lays them out.
struct Problem {
  const Attrs* attrs = nullptr;
  int64_t seq = 0, batch = 0, input = 0, hidden = 0;
  const float* x = nullptr;       // layout 0: [seq, batch, input]; 1: [batch, seq, input]
  const float* w = nullptr;       // [num_dir, G*hidden, input]
  const float* r = nullptr;       // [num_dir, G*hidden, hidden]
  const float* b = nullptr;       // [num_dir, 2*G*hidden] (Wb then Rb) or null
  const int32_t* lens = nullptr;  // [batch] or null (every sequence is seq long)
  const float* h0 = nullptr;      // layout 0: [num_dir, batch, hidden]; 1: [batch, num_dir, hidden]
  const float* c0 = nullptr;      // LSTM, laid out like h0
  const float* p = nullptr;       // LSTM peepholes [num_dir, 3*hidden] (i o f)
  float* y = nullptr;             // layout 0: [seq, num_dir, batch, hidden]; 1: [batch, seq, num_dir, hidden]
  float* yh = nullptr;            // laid out like h0
  float* yc = nullptr;

  int num_dir() const { return attrs->num_dir; }
  int gates() const { return gates_of(attrs->cell); }
  int64_t len(int64_t b) const { return lens ? lens[b] : seq; }
  // Row of X (and of the input projection) holding time t of batch entry b.
  int64_t x_row(int64_t t, int64_t b) const { return attrs->layout == 0 ? t * batch + b : b * seq + t; }
  // Offset of Y[t, d, b, :] (layout 0) / Y[b, t, d, :] (layout 1).
  int64_t y_offset(int64_t t, int d, int64_t b) const {
    return (attrs->layout == 0 ? (t * num_dir() + d) * batch + b : (b * seq + t) * num_dir() + d) * hidden;
  }
  // Offset of the state (initial_h, Y_h, ...) of direction d, batch entry b.
  int64_t state_offset(int d, int64_t b) const {
    return (attrs->layout == 0 ? d * batch + b : b * num_dir() + d) * hidden;
  }
  // Time index of step s of direction d for batch entry b (reverse starts at its own last valid step).
  int64_t time_of(int64_t s, int d, int64_t b) const {
    const bool reverse =
        attrs->direction == Direction::Reverse || (attrs->direction == Direction::Bidirectional && d == 1);
    return reverse ? len(b) - 1 - s : s;
  }
};

// The straightforward recurrence, any activation. Writes every non-null output.
void rnn_reference(const Problem& p);

// For one batch row on several threads (rnn_fast.cc, "unit slices"), R is also cut by hidden
// unit: slice i holds every gate's rows of units [u0[i], u0[i + 1]), gate-major, packed as the
// B of [rows, H] x [H, G * U]; `r[d * count + i]` for direction d. Packed on first use per slice
// count, for LSTM and RNN cells.
struct UnitSlices {
  int count = 0;
  std::vector<int64_t> u0;  // count + 1 bounds
  std::vector<std::shared_ptr<gemm::PackedB>> r;
};

// The B operands of the fast path's GEMMs packed once, for constant W and R
// (per direction: W_d^T; R_d^T, or for GRU without linear_before_reset its z/r
// rows in `r` and R_h in `rh`). Null entries mean "pack per call".
struct PackedWeights {
  std::vector<std::shared_ptr<gemm::PackedB>> w, r, rh;
  // The slices of R (`r_data`, [num_dir, G*H, H]) for `count` threads; thread-safe.
  const UnitSlices& unit_slices(const gemm::GemmEngine& engine, const Attrs& a, const float* r_data, int64_t H,
                                int count) const;

 private:
  mutable std::mutex mu_;
  mutable std::vector<std::unique_ptr<UnitSlices>> slices_;  // one per count asked for
};
// Packs constant W and R for `engine`; null when their shapes do not fit the
// attributes (prepare reports that).
std::shared_ptr<const PackedWeights> pack_weights(const gemm::GemmEngine& engine, const Attrs& a, const Tensor& w,
                                                  const Tensor& r);

// Floats of workspace rnn_fast needs.
int64_t fast_workspace_floats(const Problem& p);
// GEMM + fused gate kernels (SIMD for the default activations, scalar rows for others).
// `packed` (may be null) must come from pack_weights with the same engine and weights.
void rnn_fast(const Problem& p, const GateKernels& k, const gemm::GemmEngine& engine, ThreadPool* pool,
              float* workspace, const PackedWeights* packed = nullptr);

// The LSTM / GRU / RNN kernel of every opset.
std::unique_ptr<Kernel> make_kernel(const KernelInfo& info, Cell cell);

}  // namespace rnn
}  // namespace onnxmini
