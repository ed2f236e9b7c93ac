// A vector that keeps up to N elements inside itself and moves them all to the heap only when
// it outgrows them. A NIC's tables and queues hold a few entries each; kept inline, a node's
// state sits in a few adjacent cache lines instead of a dozen separate allocations, which is what
// a simulation of thousands of nodes, each touched once per event, spends its time waiting for.
//
// The elements are contiguous either way (data(), spans). The vector is its sizes, one pointer
// to heap storage (null while inline) and the inline slots: finding the elements costs a
// conditional move, and every vector in a node's hot state is 16 bytes more than its slots.
// A spilled vector keeps its heap storage until clear(). Slots past size() hold
// default-constructed or moved-from values (so that they hold no resources), or, for a trivially
// copyable T, whatever they held: T must be default-constructible and movable.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <type_traits>
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
    SmallVector(std::initializer_list<T> items) { assign(items.begin(), items.end()); }
    SmallVector(const SmallVector& other) {
        if constexpr (!kHolds) {  // inline trivially copyable elements: the slots at once
            if (!other.heap_) {
                inline_ = other.inline_;
                size_ = other.size_;
                return;
            }
        }
        assign(other.begin(), other.end());
    }
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
    T* data() { return heap_ ? heap_.get() : inline_.data(); }
    const T* data() const { return heap_ ? heap_.get() : inline_.data(); }
    T* begin() { return data(); }
    T* end() { return data() + size_; }
    const T* begin() const { return data(); }
    const T* end() const { return data() + size_; }
    T& operator[](std::size_t i) { return data()[i]; }
    const T& operator[](std::size_t i) const { return data()[i]; }
    T& front() { return data()[0]; }
    const T& front() const { return data()[0]; }
    T& back() { return data()[size_ - 1]; }

    friend bool operator==(const SmallVector& a, const SmallVector& b) {
        return std::equal(a.begin(), a.end(), b.begin(), b.end());
    }

    template <typename... Args>
    T& emplace_back(Args&&... args) {
        if (size_ == capacity_) grow(size_ + 1);
        return data()[size_++] = T(std::forward<Args>(args)...);
    }
    void push_back(T item) { emplace_back(std::move(item)); }
    void pop_back() {
        --size_;
        if constexpr (kHolds) data()[size_] = T();
    }
    // Empties the vector, back to its inline slots.
    void clear() {
        if constexpr (kHolds && N > 0) {  // (N == 0: no slots, whose loop GCC 12 misreads)
            for (std::size_t i = 0; i < std::min<std::size_t>(size_, N); ++i) inline_[i] = T();
        }
        heap_.reset();
        size_ = 0;
        capacity_ = N;
    }
    template <typename It>
    void assign(It first, It last) {
        clear();
        for (; first != last; ++first) emplace_back(*first);
    }
    // Grows by default-constructed elements (the slots past size() hold them: see pop_back(),
    // except for a trivially copyable T).
    void resize(std::size_t n) {
        if (n > capacity_) grow(n);
        if constexpr (kHolds) {
            for (std::size_t i = n; i < size_; ++i) data()[i] = T();
        } else {
            for (std::size_t i = size_; i < n; ++i) data()[i] = T();
        }
        size_ = static_cast<std::uint32_t>(n);
    }

private:
    // Whether an element may hold resources that a slot past size() must not keep.
    static constexpr bool kHolds = !std::is_trivially_copyable_v<T>;

    // Moves the elements to a heap block of at least `capacity` slots (twice the current one).
    void grow(std::size_t capacity) {
        capacity = std::max<std::size_t>({capacity, 2 * std::size_t{capacity_}, 4});
        auto bigger = std::make_unique<T[]>(capacity);
        std::move(begin(), end(), bigger.get());
        if constexpr (N > 0 && kHolds) {
            if (!heap_) {
                for (std::size_t i = 0; i < size_; ++i) inline_[i] = T();
            }
        }
        heap_ = std::move(bigger);
        capacity_ = static_cast<std::uint32_t>(capacity);
    }
    // Takes `other`'s elements, leaving it empty; *this is empty and inline.
    void take(SmallVector& other) {
        if (other.heap_) {
            heap_ = std::move(other.heap_);
            capacity_ = other.capacity_;
        } else if constexpr (N > 0) {
            std::move(other.begin(), other.end(), inline_.begin());
        }
        size_ = other.size_;
        other.clear();
    }

    // The sizes and the pointer first: an inline vector's size and first elements share a cache
    // line with them.
    std::uint32_t size_ = 0;
    std::uint32_t capacity_ = N;
    std::unique_ptr<T[]> heap_;  // the elements once spilled
    std::array<T, N> inline_{};
};

}  // namespace nicsim
