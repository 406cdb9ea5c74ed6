#pragma once
// Owning handles for backend memory: a typed buffer, and a bump arena for the activations of one
// batch shape (reset per step, grown only when a larger shape arrives).
#include <cstddef>
#include <cstdint>
#include <utility>

#include "kernels/backend.h"

namespace attn {

template <typename T>
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  DeviceBuffer(Backend& backend, std::size_t count) { resize(backend, count); }
  ~DeviceBuffer() { release(); }
  DeviceBuffer(DeviceBuffer&& o) noexcept { *this = std::move(o); }
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    if (this != &o) {
      release();
      backend_ = std::exchange(o.backend_, nullptr);
      data_ = std::exchange(o.data_, nullptr);
      size_ = std::exchange(o.size_, 0);
    }
    return *this;
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  // Reallocates only when growing; contents are not preserved.
  void resize(Backend& backend, std::size_t count) {
    if (backend_ == &backend && count <= capacity_) {
      size_ = count;
      return;
    }
    release();
    backend_ = &backend;
    data_ = static_cast<T*>(backend.allocate(count * sizeof(T)));
    size_ = capacity_ = count;
  }
  void release() {
    if (backend_ && data_) backend_->deallocate(data_);
    data_ = nullptr;
    size_ = capacity_ = 0;
  }

  T* data() { return data_; }
  const T* data() const { return data_; }
  std::size_t size() const { return size_; }
  std::size_t bytes() const { return size_ * sizeof(T); }

 private:
  Backend* backend_ = nullptr;
  T* data_ = nullptr;
  std::size_t size_ = 0, capacity_ = 0;
};

// Hands out 64-byte aligned slices of one allocation. A layout pass that asks for more than the
// arena holds gets null pointers and sets `short_by`; the caller grows the arena and lays out again.
class Arena {
 public:
  void reset() { used_ = 0; }
  template <typename T>
  T* take(std::size_t count) {
    const std::size_t bytes = (count * sizeof(T) + 63) / 64 * 64;
    const std::size_t at = used_;
    used_ += bytes;
    if (used_ > storage_.size()) return nullptr;
    return reinterpret_cast<T*>(storage_.data() + at);
  }
  bool fits() const { return used_ <= storage_.size(); }
  std::size_t used() const { return used_; }
  std::size_t capacity() const { return storage_.size(); }
  void reserve(Backend& backend, std::size_t bytes) { storage_.resize(backend, bytes); }

 private:
  DeviceBuffer<std::byte> storage_;
  std::size_t used_ = 0;
};

}  // namespace attn
