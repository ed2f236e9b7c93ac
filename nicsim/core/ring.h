// A FIFO queue in one circular array that doubles when full: the NIC's queues, without
// std::deque's block map and separately allocated blocks, so a queue's live entries share a few
// cache lines however long the run. The first N slots (a power of two, or 0) are inline: a short
// queue allocates nothing and sits next to the rest of its owner's state.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <utility>

#include "core/small_vector.h"

namespace nicsim {

template <typename T, std::size_t N = 0>
class Ring {
    static_assert((N & (N - 1)) == 0, "the inline slots must be a power of two");

public:
    Ring() { items_.resize(N); }

    bool empty() const { return size_ == 0; }
    std::size_t size() const { return size_; }
    T& front() { return items_[head_]; }
    const T& front() const { return items_[head_]; }
    T& back() { return (*this)[size_ - 1]; }
    // The i-th entry from the front, i < size().
    T& operator[](std::size_t i) { return items_[(head_ + i) & (items_.size() - 1)]; }
    const T& operator[](std::size_t i) const { return items_[(head_ + i) & (items_.size() - 1)]; }

    void push_back(T item) { append() = std::move(item); }
    // Adds an entry at the back and returns it to be filled in: a default-made T when T is not
    // trivially copyable (pop_front() resets what it removes), else whatever the slot last held.
    // Allocates only when the ring is full, so not right after reserve_one().
    T& append() {
        reserve_one();
        ++size_;
        return back();
    }
    void reserve_one() {
        if (size_ == items_.size()) grow();
    }
    // The slot stays in the ring; a T that owns memory is reset, so the ring does not keep it.
    void pop_front() {
        if constexpr (!std::is_trivially_copyable_v<T>) front() = T();
        head_ = (head_ + 1) & static_cast<std::uint32_t>(items_.size() - 1);
        --size_;
    }

private:
    void grow() {
        SmallVector<T, N> bigger;
        bigger.resize(items_.empty() ? 8 : 2 * items_.size());
        for (std::size_t i = 0; i < size_; ++i) {
            bigger[i] = std::move(items_[(head_ + i) & (items_.size() - 1)]);
        }
        items_ = std::move(bigger);
        head_ = 0;
    }

    std::uint32_t head_ = 0;
    std::uint32_t size_ = 0;
    SmallVector<T, N> items_;  // the slots: a power of two of them
};

}  // namespace nicsim
