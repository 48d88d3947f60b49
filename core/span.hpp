#pragma once
// A minimal non-owning view over contiguous memory (C++17 has no std::span).
#include <cstddef>
#include <vector>

namespace troupe {

template <class T>
class span {
 public:
  constexpr span() = default;
  constexpr span(T* data, std::size_t size) : data_(data), size_(size) {}
  template <class U>
  span(std::vector<U>& v) : data_(v.data()), size_(v.size()) {}
  template <class U>
  span(const std::vector<U>& v) : data_(v.data()), size_(v.size()) {}
  template <class U>
  constexpr span(span<U> other) : data_(other.data()), size_(other.size()) {}

  constexpr T* data() const { return data_; }
  constexpr std::size_t size() const { return size_; }
  constexpr bool empty() const { return size_ == 0; }
  constexpr T& operator[](std::size_t i) const { return data_[i]; }
  constexpr T* begin() const { return data_; }
  constexpr T* end() const { return data_ + size_; }
  constexpr span subspan(std::size_t offset, std::size_t count) const {
    return {data_ + offset, count};
  }

 private:
  T* data_ = nullptr;
  std::size_t size_ = 0;
};

}  // namespace troupe
