#pragma once
// Non-owning views of int lists and a small inline vector for shapes.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <ostream>
#include <vector>

namespace ember {

/// A non-owning view of a contiguous list (libtorch's ArrayRef); binds `{2, 3}` and vectors.
template <class T>
class ArrayRef {
 public:
  constexpr ArrayRef() = default;
  constexpr ArrayRef(const T& one) : data_(&one), size_(1) {}
  constexpr ArrayRef(const T* data, size_t n) : data_(data), size_(n) {}
  constexpr ArrayRef(std::initializer_list<T> il) : data_(il.begin()), size_(il.size()) {}
  ArrayRef(const std::vector<T>& v) : data_(v.data()), size_(v.size()) {}
  template <
      class C, class = decltype(std::declval<const C&>().data() + std::declval<const C&>().size()),
      class = std::enable_if_t<std::is_same_v<
          std::remove_cv_t<std::remove_pointer_t<decltype(std::declval<const C&>().data())>>, T>>>
  ArrayRef(const C& c) : data_(c.data()), size_(c.size()) {}

  const T* begin() const { return data_; }
  const T* end() const { return data_ + size_; }
  const T* data() const { return data_; }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  const T& operator[](size_t i) const { return data_[i]; }
  const T& back() const { return data_[size_ - 1]; }
  std::vector<T> vec() const { return std::vector<T>(begin(), end()); }
  bool equals(ArrayRef other) const {
    return size_ == other.size_ && std::equal(begin(), end(), other.begin());
  }
  ArrayRef slice(size_t start, size_t n) const { return ArrayRef(data_ + start, n); }

 private:
  const T* data_ = nullptr;
  size_t size_ = 0;
};
using IntArrayRef = ArrayRef<int64_t>;

/// Shapes and strides: up to 6 dims inline, no heap allocation.
class DimVector {
 public:
  static constexpr size_t kInline = 6;
  DimVector() = default;
  explicit DimVector(size_t n, int64_t v = 0) { assign(n, v); }
  DimVector(IntArrayRef r) { assign(r.begin(), r.end()); }
  DimVector(std::initializer_list<int64_t> il) { assign(il.begin(), il.end()); }
  DimVector(const DimVector& o) { assign(o.begin(), o.end()); }
  DimVector& operator=(const DimVector& o) {
    if (this != &o) assign(o.begin(), o.end());
    return *this;
  }
  ~DimVector() {
    if (heap_) delete[] heap_;
  }

  int64_t* data() { return heap_ ? heap_ : inline_; }
  const int64_t* data() const { return heap_ ? heap_ : inline_; }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  int64_t* begin() { return data(); }
  int64_t* end() { return data() + size_; }
  const int64_t* begin() const { return data(); }
  const int64_t* end() const { return data() + size_; }
  int64_t& operator[](size_t i) { return data()[i]; }
  int64_t operator[](size_t i) const { return data()[i]; }
  int64_t& back() { return data()[size_ - 1]; }
  operator IntArrayRef() const { return IntArrayRef(data(), size_); }
  std::vector<int64_t> vec() const { return std::vector<int64_t>(begin(), end()); }

  void resize(size_t n, int64_t v = 0) {
    reserve(n);
    for (size_t i = size_; i < n; ++i) data()[i] = v;
    size_ = n;
  }
  void push_back(int64_t v) {
    reserve(size_ + 1);
    data()[size_++] = v;
  }
  void insert(size_t pos, int64_t v) {
    reserve(size_ + 1);
    int64_t* d = data();
    if (size_ > pos) std::memmove(d + pos + 1, d + pos, (size_ - pos) * sizeof(int64_t));
    d[pos] = v;
    ++size_;
  }
  void erase(size_t pos) {
    int64_t* d = data();
    std::memmove(d + pos, d + pos + 1, (size_ - pos - 1) * sizeof(int64_t));
    --size_;
  }
  void assign(size_t n, int64_t v) {
    size_ = 0;
    resize(n, v);
  }
  void assign(const int64_t* b, const int64_t* e) {
    size_t n = size_t(e - b);
    reserve(n);
    if (n) std::memmove(data(), b, n * sizeof(int64_t));
    size_ = n;
  }

 private:
  void reserve(size_t n) {
    if (n <= cap_) return;
    size_t cap = std::max(n, cap_ * 2);
    auto* h = new int64_t[cap];
    std::memcpy(h, data(), size_ * sizeof(int64_t));
    if (heap_) delete[] heap_;
    heap_ = h;
    cap_ = cap;
  }
  int64_t inline_[kInline];
  int64_t* heap_ = nullptr;
  size_t size_ = 0;
  size_t cap_ = kInline;
};

/// Formats a shape the way PyTorch's messages do: [2, 3].
inline std::ostream& operator<<(std::ostream& os, IntArrayRef r) {
  os << '[';
  for (size_t i = 0; i < r.size(); ++i) os << (i ? ", " : "") << r[i];
  return os << ']';
}
inline std::ostream& operator<<(std::ostream& os, const DimVector& v) {
  return os << IntArrayRef(v);
}

}  // namespace ember
