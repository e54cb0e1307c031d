// AlignedVector<T>: a std::vector whose data starts on a 64-byte boundary (one
// cache line, one zmm register).
//
// Why: kernels keep per-thread scratch (padded planes, transposed blocks) in
// thread_local vectors and read it with full-width vector loads. A plain
// std::vector<float> gets malloc's 16-byte alignment, so where its data begins
// depends on the heap's history: measured on a 256 x 50x38 5x5 depthwise layer
// (AMD EPYC Zen 5, AVX-512, 1 thread) the same kernel took 0.41 ms or 0.29 ms
// depending on whether another library had allocated first, because every zmm
// load of a misaligned block splits across two cache lines.
#pragma once
#include <cstddef>
#include <new>
#include <vector>

namespace onnxmini {

template <class T, std::size_t kAlign = 64>
struct AlignedAllocator {
  using value_type = T;
  template <class U>
  struct rebind {
    using other = AlignedAllocator<U, kAlign>;
  };
  AlignedAllocator() = default;
  template <class U>
  AlignedAllocator(const AlignedAllocator<U, kAlign>&) {}  // NOLINT: converting, as std::allocator
  T* allocate(std::size_t n) {
    return static_cast<T*>(::operator new(n * sizeof(T), std::align_val_t{kAlign}));
  }
  void deallocate(T* p, std::size_t) { ::operator delete(p, std::align_val_t{kAlign}); }
  template <class U>
  bool operator==(const AlignedAllocator<U, kAlign>&) const { return true; }
  template <class U>
  bool operator!=(const AlignedAllocator<U, kAlign>&) const { return false; }
};

template <class T>
using AlignedVector = std::vector<T, AlignedAllocator<T>>;

}  // namespace onnxmini
