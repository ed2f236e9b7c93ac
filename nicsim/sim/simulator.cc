#include "sim/simulator.h"

#include <cassert>
#include <utility>

namespace nicsim::sim {

void Simulator::schedule(Time at, EventHandler& handler, std::uint32_t kind, std::uint32_t arg) {
    assert(at >= now_);
    std::uint32_t slot;
    if (free_slots_.empty()) {
        slot = static_cast<std::uint32_t>(events_.size());
        assert(slot < (1u << kSlotBits));
        events_.push_back({&handler, kind, arg});
    } else {
        slot = free_slots_.back();
        free_slots_.pop_back();
        events_[slot] = {&handler, kind, arg};
    }
    heap_.push_back({at, next_order_++ << kSlotBits | slot});
    sift_up(heap_.size() - 1);
}

std::uint64_t Simulator::run() {
    const std::uint64_t start = events_run_;
    while (!heap_.empty()) {
        const Key top = heap_.front();
        heap_.front() = heap_.back();
        heap_.pop_back();
        if (!heap_.empty()) sift_down(0);
        const auto slot = static_cast<std::uint32_t>(top.order_slot & ((1u << kSlotBits) - 1));
        const Event e = events_[slot];
        free_slots_.push_back(slot);
        now_ = top.at;
        ++events_run_;
        e.handler->on_event(e.kind, e.arg);
    }
    return events_run_ - start;
}

void Simulator::sift_up(std::size_t i) {
    const Key k = heap_[i];
    while (i > 0) {
        const std::size_t parent = (i - 1) / 4;
        if (!(k < heap_[parent])) break;
        heap_[i] = heap_[parent];
        i = parent;
    }
    heap_[i] = k;
}

void Simulator::sift_down(std::size_t i) {
    const Key k = heap_[i];
    const std::size_t n = heap_.size();
    for (;;) {
        const std::size_t first = 4 * i + 1;
        if (first >= n) break;
        std::size_t best = first;
        const std::size_t last = first + 4 < n ? first + 4 : n;
        for (std::size_t c = first + 1; c < last; ++c) {
            if (heap_[c] < heap_[best]) best = c;
        }
        if (!(heap_[best] < k)) break;
        heap_[i] = heap_[best];
        i = best;
    }
    heap_[i] = k;
}

}  // namespace nicsim::sim
