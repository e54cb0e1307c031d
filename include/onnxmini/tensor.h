// Tensor: dtype + shape + a shared, 64-byte aligned buffer. Copies of a Tensor
// share the buffer (like numpy views); Reshape/Flatten/Squeeze/Unsqueeze/Identity
// produce views. Data is always dense, row-major (C order), starting at offset().
#pragma once
#include "onnxmini/export.h"
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "onnxmini/dtype.h"
#include "onnxmini/error.h"

ONNXMINI_API_BEGIN
namespace onnxmini {

using Shape = std::vector<int64_t>;

// Number of elements; throws InvalidArgument on a negative dim or on overflow.
int64_t shape_numel(const Shape& shape);
// "1x3x224x224" ("scalar" for rank 0).
std::string shape_to_string(const Shape& shape);

// A block of memory. Owning buffers come from allocate(); wrap() borrows memory
// that someone else owns (numpy arrays, user buffers) and keeps its owner alive.
class Buffer {
 public:
  static constexpr size_t kAlignment = 64;
  // Uninitialized (but, for String, default-constructed) storage for `bytes` bytes.
  static std::shared_ptr<Buffer> allocate(size_t bytes);
  static std::shared_ptr<Buffer> allocate_strings(size_t count);
  static std::shared_ptr<Buffer> wrap(void* data, size_t bytes, std::shared_ptr<void> keep_alive);
  // What a buffer does when it dies: `fn(owner, data, words)`, with `owner` the object
  // behind the weak pointer if it still lives (else null). A plain function and three
  // words, not a closure, so that making one allocates nothing: the run's buffer pool
  // makes one per intermediate tensor.
  struct Release {
    void (*fn)(void* owner, void* data, const uint64_t* words) = nullptr;
    std::weak_ptr<void> owner;
    uint64_t words[3] = {0, 0, 0};
  };
  // Buffer over `data` whose release runs `release`; `keep_alive` is held until then.
  static std::shared_ptr<Buffer> with_release(void* data, size_t bytes, Release release,
                                              std::shared_ptr<void> keep_alive = nullptr);
  ~Buffer();
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  void* data() const { return data_; }
  size_t size() const { return bytes_; }

 private:
  struct Private {};  // make_shared (one allocation for buffer and count) without a public constructor

 public:
  explicit Buffer(Private) {}

 private:
  void* data_ = nullptr;
  size_t bytes_ = 0;
  Release release_;
  std::shared_ptr<void> keep_alive_;
};

class Tensor {
 public:
  Tensor() = default;
  // Allocates an uninitialized tensor (strings are empty).
  Tensor(DType dtype, Shape shape);
  // A tensor over an existing buffer starting at byte `offset`.
  Tensor(DType dtype, Shape shape, std::shared_ptr<Buffer> buffer, size_t offset = 0);
  // Borrow external memory (no copy); `keep_alive` is held as long as any view lives.
  static Tensor wrap(DType dtype, Shape shape, void* data, std::shared_ptr<void> keep_alive = nullptr);

  template <typename T>
  static Tensor from_vector(Shape shape, const std::vector<T>& values);
  template <typename T>
  static Tensor scalar(T value) {
    return from_vector<T>({}, std::vector<T>{value});
  }

  bool defined() const { return dtype_ != DType::Undefined; }
  DType dtype() const { return dtype_; }
  const Shape& shape() const { return shape_; }
  int64_t dim(size_t i) const { return shape_.at(i); }
  size_t rank() const { return shape_.size(); }
  int64_t numel() const { return numel_; }
  size_t nbytes() const { return static_cast<size_t>(numel_) * dtype_size(dtype_); }

  const void* raw() const { return buffer_ ? static_cast<const char*>(buffer_->data()) + offset_ : nullptr; }
  void* raw_mut() const { return buffer_ ? static_cast<char*>(buffer_->data()) + offset_ : nullptr; }
  template <typename T>
  const T* data() const {
    check_type(dtype_of<T>::value);
    return static_cast<const T*>(raw());
  }
  template <typename T>
  T* mutable_data() const {
    check_type(dtype_of<T>::value);
    return static_cast<T*>(raw_mut());
  }
  const std::shared_ptr<Buffer>& buffer() const { return buffer_; }
  size_t offset() const { return offset_; }

  // Same data, new shape (numel must match). No copy.
  Tensor view(Shape shape) const;
  // Deep copy into a fresh buffer.
  Tensor clone() const;
  // Element i converted to double (numeric and bool only); for printing and tests.
  double get_as_double(int64_t i) const;
  std::vector<int64_t> to_int64_vector() const;  // integer tensors only

 private:
  void check_type(DType requested) const;
  DType dtype_ = DType::Undefined;
  Shape shape_;
  int64_t numel_ = 0;
  std::shared_ptr<Buffer> buffer_;
  size_t offset_ = 0;
};

template <typename T>
Tensor Tensor::from_vector(Shape shape, const std::vector<T>& values) {
  Tensor t(dtype_of<T>::value, std::move(shape));
  if (static_cast<int64_t>(values.size()) != t.numel())
    throw Error(ErrorCode::InvalidArgument, "Tensor::from_vector: " + std::to_string(values.size()) +
                                                " values for shape " + shape_to_string(t.shape()));
  T* out = t.mutable_data<T>();
  for (size_t i = 0; i < values.size(); ++i) out[i] = values[i];
  return t;
}

}  // namespace onnxmini
ONNXMINI_API_END
