// A vector that keeps up to N elements inside itself and moves them all to the heap only when
// it outgrows them. A NIC's tables and queues hold a few entries each; kept inline, a node's
// state sits in a few adjacent cache lines instead of a dozen separate allocations, which is what
// a simulation of thousands of nodes, each touched once per event, spends its time waiting for.
//
// The elements are contiguous either way (data(), spans), and data_ points at them wherever they
// are, so reading an element costs what it costs in a std::vector: no test of where they live.
// A spilled vector keeps its heap storage until clear(). Slots past size() hold
// default-constructed or moved-from values, so T must be default-constructible and movable.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <utility>

namespace nicsim {

template <typename T, std::size_t N>
class SmallVector {
public:
    SmallVector() = default;
    template <typename It>
    SmallVector(It first, It last) {
        assign(first, last);
    }
    SmallVector(const SmallVector& other) { assign(other.begin(), other.end()); }
    SmallVector(SmallVector&& other) noexcept { take(other); }
    SmallVector& operator=(const SmallVector& other) {
        if (this != &other) assign(other.begin(), other.end());
        return *this;
    }
    SmallVector& operator=(SmallVector&& other) noexcept {
        if (this != &other) {
            clear();
            take(other);
        }
        return *this;
    }

    std::size_t size() const { return size_; }
    bool empty() const { return size_ == 0; }
    T* data() { return data_; }
    const T* data() const { return data_; }
    T* begin() { return data_; }
    T* end() { return data_ + size_; }
    const T* begin() const { return data_; }
    const T* end() const { return data_ + size_; }
    T& operator[](std::size_t i) { return data_[i]; }
    const T& operator[](std::size_t i) const { return data_[i]; }
    T& back() { return data_[size_ - 1]; }

    template <typename... Args>
    T& emplace_back(Args&&... args) {
        if (size_ == capacity_) grow(size_ + 1);
        return data_[size_++] = T(std::forward<Args>(args)...);
    }
    void push_back(T item) { emplace_back(std::move(item)); }
    void pop_back() { data_[--size_] = T(); }
    // Empties the vector, back to its inline slots.
    void clear() {
        for (std::size_t i = 0; i < std::min<std::size_t>(size_, N); ++i) inline_[i] = T();
        heap_.reset();
        data_ = inline_.data();
        size_ = 0;
        capacity_ = N;
    }
    template <typename It>
    void assign(It first, It last) {
        clear();
        for (; first != last; ++first) emplace_back(*first);
    }
    // Grows by default-constructed elements (the slots past size() hold them: see pop_back()).
    void resize(std::size_t n) {
        if (n > capacity_) grow(n);
        for (std::size_t i = n; i < size_; ++i) data_[i] = T();
        size_ = static_cast<std::uint32_t>(n);
    }

private:
    // Moves the elements to a heap block of at least `capacity` slots (twice the current one).
    void grow(std::size_t capacity) {
        capacity = std::max<std::size_t>({capacity, 2 * std::size_t{capacity_}, 4});
        auto bigger = std::make_unique<T[]>(capacity);
        std::move(data_, data_ + size_, bigger.get());
        if constexpr (N > 0) {
            if (!heap_) std::fill(inline_.begin(), inline_.begin() + size_, T());
        }
        heap_ = std::move(bigger);
        data_ = heap_.get();
        capacity_ = static_cast<std::uint32_t>(capacity);
    }
    // Takes `other`'s elements, leaving it empty; *this is empty and inline.
    void take(SmallVector& other) {
        if (other.heap_) {
            heap_ = std::move(other.heap_);
            data_ = heap_.get();
            capacity_ = other.capacity_;
        } else if constexpr (N > 0) {
            std::move(other.data_, other.data_ + other.size_, inline_.begin());
        }
        size_ = other.size_;
        other.clear();
    }

    // The pointer and sizes first: an inline vector's size and first elements share a cache
    // line with them.
    T* data_ = inline_.data();
    std::uint32_t size_ = 0;
    std::uint32_t capacity_ = N;
    std::unique_ptr<T[]> heap_;
    std::array<T, N> inline_{};
};

}  // namespace nicsim
