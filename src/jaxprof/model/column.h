// A growable array of trivially copyable values for the event columns. Unlike std::vector it
// does not zero what it allocates (every slot is written by the importer anyway) and it asks for
// transparent huge pages: millions of events then cost a few dozen page faults, not tens of
// thousands.
#pragma once

#include <cstddef>
#include <cstring>
#include <new>
#include <type_traits>

namespace jaxprof {

void* column_allocate(size_t bytes);
void column_free(void* p, size_t bytes);
// Hands the whole pages inside [p, p + bytes) of an allocation of `capacity` bytes back to the
// kernel (they read as zero when touched again); nothing for allocations too small to be mapped.
void column_discard(void* p, size_t bytes, size_t capacity);

template <typename T>
class Column {
  static_assert(std::is_trivially_copyable_v<T>);

 public:
  using value_type = T;
  Column() = default;
  Column(const Column&) = delete;
  Column& operator=(const Column&) = delete;
  Column(Column&& o) noexcept { swap(o); }
  Column& operator=(Column&& o) noexcept {
    swap(o);
    return *this;
  }
  ~Column() { release(); }

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  T* data() { return data_; }
  const T* data() const { return data_; }
  T& operator[](size_t i) { return data_[i]; }
  const T& operator[](size_t i) const { return data_[i]; }
  T* begin() { return data_; }
  T* end() { return data_ + size_; }
  const T* begin() const { return data_; }
  const T* end() const { return data_ + size_; }

  // Room for n values without moving (the pages are touched only when written).
  void reserve(size_t n) {
    if (n <= capacity_) return;
    T* fresh = static_cast<T*>(column_allocate(n * sizeof(T)));
    if (size_) std::memcpy(fresh, data_, size_ * sizeof(T));
    size_t size = size_;
    release();
    data_ = fresh;
    size_ = size;
    capacity_ = n;
  }

  // New slots are uninitialised unless `zero` is set.
  void resize(size_t n, bool zero = false) {
    reserve(n);
    if (zero && n > size_)
      std::memset(static_cast<void*>(data_ + size_), 0, (n - size_) * sizeof(T));
    size_ = n;
  }

  // Hands the memory of slots [begin, end) back (whole pages only): for values that will not be
  // read again, or only after being written again. Their values are unspecified until then.
  void discard(size_t begin, size_t end) {
    if (end > begin)
      column_discard(data_ + begin, (end - begin) * sizeof(T), capacity_ * sizeof(T));
  }

 private:
  void release() {
    if (data_) column_free(data_, capacity_ * sizeof(T));
    data_ = nullptr;
    size_ = capacity_ = 0;
  }
  void swap(Column& o) noexcept {
    std::swap(data_, o.data_);
    std::swap(size_, o.size_);
    std::swap(capacity_, o.capacity_);
  }
  T* data_ = nullptr;
  size_t size_ = 0;
  size_t capacity_ = 0;
};

}  // namespace jaxprof
