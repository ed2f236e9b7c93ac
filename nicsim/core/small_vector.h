// A vector that keeps up to N elements inside itself and moves them all to the heap only when
// it outgrows them. A NIC's tables and queues hold a few entries each; kept inline, a node's
// state sits in a few adjacent cache lines instead of a dozen separate allocations, which is what
// a simulation of thousands of nodes, each touched once per event, spends its time waiting for.
//
// The elements are contiguous either way (data(), spans). Inline slots past size() hold
// default-constructed or moved-from values, so T must be default-constructible and movable.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace nicsim {

template <typename T, std::size_t N>
class SmallVector {
public:
    SmallVector() = default;
    template <typename It>
    SmallVector(It first, It last) {
        assign(first, last);
    }

    std::size_t size() const { return spilled_ ? heap_.size() : size_; }
    bool empty() const { return size() == 0; }
    T* data() { return spilled_ ? heap_.data() : inline_.data(); }
    const T* data() const { return spilled_ ? heap_.data() : inline_.data(); }
    T* begin() { return data(); }
    T* end() { return data() + size(); }
    const T* begin() const { return data(); }
    const T* end() const { return data() + size(); }
    T& operator[](std::size_t i) { return data()[i]; }
    const T& operator[](std::size_t i) const { return data()[i]; }
    T& back() { return data()[size() - 1]; }

    template <typename... Args>
    T& emplace_back(Args&&... args) {
        if (!spilled_ && size_ < N) return inline_[size_++] = T(std::forward<Args>(args)...);
        if (!spilled_) spill(N + 1);
        return heap_.emplace_back(std::forward<Args>(args)...);
    }
    void push_back(T item) { emplace_back(std::move(item)); }
    void pop_back() {
        if (spilled_) {
            heap_.pop_back();
        } else {
            inline_[--size_] = T();
        }
    }
    void clear() {
        if (spilled_) heap_.clear();
        spilled_ = false;
        for (std::size_t i = 0; i < size_; ++i) inline_[i] = T();
        size_ = 0;
    }
    template <typename It>
    void assign(It first, It last) {
        clear();
        for (; first != last; ++first) emplace_back(*first);
    }
    // Grows by default-constructed elements.
    void resize(std::size_t n) {
        if (!spilled_ && n <= N) {
            size_ = static_cast<std::uint32_t>(n);
            return;
        }
        if (!spilled_) spill(n);
        heap_.resize(n);
    }

private:
    // Once spilled, the heap holds every element until clear().
    void spill(std::size_t capacity) {
        heap_.reserve(std::max(capacity, 2 * N));
        for (std::size_t i = 0; i < size_; ++i) heap_.push_back(std::exchange(inline_[i], T()));
        size_ = 0;
        spilled_ = true;
    }

    // The sizes first and the heap's vector last: an inline vector's size and first elements
    // share a cache line, and the vector is only read once spilled.
    std::uint32_t size_ = 0;  // elements inline, while not spilled
    bool spilled_ = false;
    std::array<T, N> inline_{};
    std::vector<T> heap_;
};

}  // namespace nicsim
