// Per-node, per-run work counters a kernel may fill: the profiler turns them into
// the flops / bytes / kernel_variant / isa args of a node event. Plain numbers and
// static strings (no formatting per run), so the profiler and the runtime share
// them without either seeing a kernel.
#pragma once

namespace onnxmini {

struct KernelStats {
  double flops = 0;
  double bytes_read = 0;     // 0: the profiler uses the input sizes
  double bytes_written = 0;  // 0: the profiler uses the output sizes
  const char* variant = nullptr;  // e.g. "conv_im2col_gemm/builtin"; null: the runtime writes the kernel name
  const char* isa = nullptr;      // "avx512" | "avx2" | "portable" (cpu::isa_name); null: "portable" (no SIMD path)
};

}  // namespace onnxmini
