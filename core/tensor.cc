#include "onnxmini/tensor.h"

#include <cstdlib>
#include <cstring>
#include <limits>
#include <new>

#include "core/float16.h"
#include "core/minifloat.h"
#include "core/system_memory.h"

namespace onnxmini {

int64_t shape_numel(const Shape& shape) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0) throw Error(ErrorCode::InvalidArgument, "negative dimension " + std::to_string(d) + " in shape " + shape_to_string(shape));
    if (d != 0 && n > std::numeric_limits<int64_t>::max() / d)
      throw Error(ErrorCode::InvalidArgument, "shape " + shape_to_string(shape) + " has too many elements");
    n *= d;
  }
  return n;
}

std::string shape_to_string(const Shape& shape) {
  if (shape.empty()) return "scalar";
  std::string s;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) s += "x";
    s += std::to_string(shape[i]);
  }
  return s;
}

// ---- Buffer ----

namespace {
void free_block(void*, void* data, const uint64_t*) { std::free(data); }
void free_strings(void*, void* data, const uint64_t* words) {
  auto* strs = static_cast<std::string*>(data);
  for (uint64_t i = 0; i < words[0]; ++i) strs[i].~basic_string();
  std::free(data);
}
}  // namespace

std::shared_ptr<Buffer> Buffer::allocate(size_t bytes) {
  size_t rounded = (bytes + kAlignment - 1) / kAlignment * kAlignment;
  if (rounded == 0) rounded = kAlignment;
  void* p = std::aligned_alloc(kAlignment, rounded);
  if (!p) throw Error(ErrorCode::RuntimeError, "out of memory allocating " + std::to_string(bytes) + " bytes");
  Release release;
  release.fn = free_block;
  return with_release(p, bytes, std::move(release));
}

std::shared_ptr<Buffer> Buffer::allocate_strings(size_t count) {
  auto b = allocate(count * sizeof(std::string));
  auto* s = static_cast<std::string*>(b->data_);
  for (size_t i = 0; i < count; ++i) new (s + i) std::string();
  b->release_.fn = free_strings;
  b->release_.words[0] = count;
  return b;
}

std::shared_ptr<Buffer> Buffer::wrap(void* data, size_t bytes, std::shared_ptr<void> keep_alive) {
  return with_release(data, bytes, Release(), std::move(keep_alive));
}

std::shared_ptr<Buffer> Buffer::with_release(void* data, size_t bytes, Release release,
                                             std::shared_ptr<void> keep_alive) {
  auto b = std::make_shared<Buffer>(Private{});
  b->data_ = data;
  b->bytes_ = bytes;
  b->release_ = std::move(release);
  b->keep_alive_ = std::move(keep_alive);
  return b;
}

Buffer::~Buffer() {
  if (!release_.fn) return;
  std::shared_ptr<void> owner = release_.owner.lock();
  release_.fn(owner.get(), data_, release_.words);
}

// ---- Tensor ----

Tensor::Tensor(DType dtype, Shape shape) : dtype_(dtype), shape_(std::move(shape)) {
  if (dtype_size(dtype) == 0) throw Error(ErrorCode::InvalidArgument, "cannot create a tensor of dtype code " + std::to_string(static_cast<int>(dtype)));
  numel_ = shape_numel(shape_);
  // Last line of defence for tensors made outside a session's checked allocator
  // (constant folding, helpers): a request above the memory onnxmini may assume
  // cannot succeed, so it fails here, before the allocator (core/system_memory.h).
  const int64_t limit = memory_limit_bytes();
  if (static_cast<uint64_t>(numel_) > static_cast<uint64_t>(limit) / dtype_size(dtype))
    throw Error(ErrorCode::InvalidArgument,
                "tensor of shape " + shape_to_string(shape_) + " (" + dtype_name(dtype) + ") needs more than the " +
                    std::to_string(limit) + " bytes of memory onnxmini may use (physical memory, or ONNXMINI_MEMORY_LIMIT)");
  buffer_ = dtype == DType::String ? Buffer::allocate_strings(numel_) : Buffer::allocate(nbytes());
}

Tensor::Tensor(DType dtype, Shape shape, std::shared_ptr<Buffer> buffer, size_t offset)
    : dtype_(dtype), shape_(std::move(shape)), buffer_(std::move(buffer)), offset_(offset) {
  numel_ = shape_numel(shape_);
  // nbytes() and offset + nbytes() must not wrap before they are compared with the buffer.
  const size_t esize = dtype_size(dtype_);
  if (esize && static_cast<uint64_t>(numel_) > (std::numeric_limits<uint64_t>::max() - offset_) / esize)
    throw Error(ErrorCode::InvalidArgument, "tensor of shape " + shape_to_string(shape_) + " does not fit its buffer");
  if (buffer_ && offset_ + nbytes() > buffer_->size())
    throw Error(ErrorCode::InvalidArgument, "tensor of shape " + shape_to_string(shape_) + " does not fit its buffer");
}

Tensor Tensor::wrap(DType dtype, Shape shape, void* data, std::shared_ptr<void> keep_alive) {
  const int64_t n = shape_numel(shape);
  const size_t esize = dtype_size(dtype);
  if (esize && static_cast<uint64_t>(n) > std::numeric_limits<uint64_t>::max() / esize)
    throw Error(ErrorCode::InvalidArgument, "cannot wrap a tensor of shape " + shape_to_string(shape) + ": its byte size overflows");
  return Tensor(dtype, std::move(shape), Buffer::wrap(data, static_cast<size_t>(n) * esize, std::move(keep_alive)), 0);
}

Tensor Tensor::view(Shape shape) const {
  if (shape_numel(shape) != numel_)
    throw Error(ErrorCode::InvalidArgument, "cannot view a tensor of shape " + shape_to_string(shape_) + " as " + shape_to_string(shape));
  return Tensor(dtype_, std::move(shape), buffer_, offset_);
}

Tensor Tensor::clone() const {
  Tensor t(dtype_, shape_);
  if (dtype_ == DType::String) {
    const auto* src = static_cast<const std::string*>(raw());
    auto* dst = static_cast<std::string*>(t.raw_mut());
    for (int64_t i = 0; i < numel_; ++i) dst[i] = src[i];
  } else if (nbytes()) {
    std::memcpy(t.raw_mut(), raw(), nbytes());
  }
  return t;
}

void Tensor::check_type(DType requested) const {
  if (requested != dtype_)
    throw Error(ErrorCode::InvalidArgument, std::string("tensor holds ") + dtype_name(dtype_) + ", accessed as " + dtype_name(requested));
}

double Tensor::get_as_double(int64_t i) const {
  const void* p = raw();
  switch (dtype_) {
    case DType::Float32: return static_cast<const float*>(p)[i];
    case DType::Float64: return static_cast<const double*>(p)[i];
    case DType::Int8: return static_cast<const int8_t*>(p)[i];
    case DType::UInt8: return static_cast<const uint8_t*>(p)[i];
    case DType::Int16: return static_cast<const int16_t*>(p)[i];
    case DType::UInt16: return static_cast<const uint16_t*>(p)[i];
    case DType::Int32: return static_cast<const int32_t*>(p)[i];
    case DType::UInt32: return static_cast<const uint32_t*>(p)[i];
    case DType::Int64: return static_cast<double>(static_cast<const int64_t*>(p)[i]);
    case DType::UInt64: return static_cast<double>(static_cast<const uint64_t*>(p)[i]);
    case DType::Bool: return static_cast<const bool*>(p)[i] ? 1.0 : 0.0;
    case DType::Float16: return half_to_float(static_cast<const uint16_t*>(p)[i]);
    case DType::BFloat16: return bfloat16_to_float(static_cast<const uint16_t*>(p)[i]);
    case DType::Int4: return int4_value(static_cast<const uint8_t*>(p)[i]);
    case DType::UInt4: return uint4_value(static_cast<const uint8_t*>(p)[i]);
    case DType::Int2: return int2_value(static_cast<const uint8_t*>(p)[i]);
    case DType::UInt2: return uint2_value(static_cast<const uint8_t*>(p)[i]);
    case DType::Float8E8M0: return e8m0_to_float(static_cast<const uint8_t*>(p)[i]);
    default:
      if (const MiniFloatFormat* f = minifloat_format(dtype_))
        return minifloat_to_float(static_cast<const uint8_t*>(p)[i], *f);
      throw Error(ErrorCode::InvalidArgument, std::string("cannot read ") + dtype_name(dtype_) + " as a number");
  }
}

std::vector<int64_t> Tensor::to_int64_vector() const {
  std::vector<int64_t> out(static_cast<size_t>(numel_));
  if (dtype_ == DType::Int64) {
    const int64_t* p = data<int64_t>();
    out.assign(p, p + numel_);
  } else if (dtype_ == DType::Int32) {
    const int32_t* p = data<int32_t>();
    for (int64_t i = 0; i < numel_; ++i) out[i] = p[i];
  } else {
    throw Error(ErrorCode::InvalidArgument, std::string("expected an int32 or int64 tensor, got ") + dtype_name(dtype_));
  }
  return out;
}

}  // namespace onnxmini
