// A FIFO queue in one circular array that doubles when full: the NIC's queues, without
// std::deque's block map and separately allocated blocks, so a queue's live entries share a few
// cache lines however long the run.
#pragma once

#include <cstddef>
#include <utility>
#include <vector>

namespace nicsim {

template <typename T>
class Ring {
public:
    bool empty() const { return size_ == 0; }
    std::size_t size() const { return size_; }
    T& front() { return items_[head_]; }
    const T& front() const { return items_[head_]; }

    void push_back(T item) {
        if (size_ == items_.size()) grow();
        items_[(head_ + size_) & (items_.size() - 1)] = std::move(item);
        ++size_;
    }
    void pop_front() {
        head_ = (head_ + 1) & (items_.size() - 1);
        --size_;
    }

private:
    void grow() {
        std::vector<T> bigger(items_.empty() ? 8 : 2 * items_.size());
        for (std::size_t i = 0; i < size_; ++i) {
            bigger[i] = std::move(items_[(head_ + i) & (items_.size() - 1)]);
        }
        items_ = std::move(bigger);
        head_ = 0;
    }

    std::vector<T> items_;  // a power-of-two number of slots
    std::size_t head_ = 0;
    std::size_t size_ = 0;
};

}  // namespace nicsim
