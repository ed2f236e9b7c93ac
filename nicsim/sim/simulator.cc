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
    heap_.push_back(Key{at} << 64 | next_order_++ << kSlotBits | slot);
    sift_up(heap_.size() - 1);
}

std::uint64_t Simulator::run() {
    const std::uint64_t start = events_run_;
    while (!heap_.empty()) {
        const Key top = heap_.front();
        heap_.front() = heap_.back();
        heap_.pop_back();
        if (!heap_.empty()) sift_down(0);
        const auto slot = static_cast<std::uint32_t>(top & ((1u << kSlotBits) - 1));
        const Event e = events_[slot];
        free_slots_.push_back(slot);
        now_ = static_cast<Time>(top >> 64);
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
        if (first + 4 <= n) {  // the usual case: four children, picked without branches
            const std::size_t a = heap_[first + 1] < heap_[first] ? first + 1 : first;
            const std::size_t b = heap_[first + 3] < heap_[first + 2] ? first + 3 : first + 2;
            best = heap_[b] < heap_[a] ? b : a;
        } else {
            for (std::size_t c = first + 1; c < n; ++c) {
                if (heap_[c] < heap_[best]) best = c;
            }
        }
        if (!(heap_[best] < k)) break;
        heap_[i] = heap_[best];
        i = best;
    }
    heap_[i] = k;
}

}  // namespace nicsim::sim
