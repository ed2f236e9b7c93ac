#include "sim/simulator.h"

#include <algorithm>
#include <cassert>

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
    push(Key{at} << 64 | next_order_++ << kSlotBits | slot);
}

std::uint64_t Simulator::run() {
    const std::uint64_t start = events_run_;
    while (size_ != 0) {
        const Key top = pop();
        prefetch_next();
        const auto slot = static_cast<std::uint32_t>(top & ((1u << kSlotBits) - 1));
        const Event e = events_[slot];
        free_slots_.push_back(slot);
        now_ = static_cast<Time>(top >> 64);
        ++events_run_;
        e.handler->on_event(e.kind, e.arg);
    }
    return events_run_ - start;
}

void Simulator::push(Key k) {
    assert(k != kNoKey);
    std::size_t pos = size_++;
    if ((pos + 3) / 4 == groups_.size()) groups_.push_back({{kNoKey, kNoKey, kNoKey, kNoKey}});
    sift_up(pos, k);
}

void Simulator::sift_up(std::size_t pos, Key k) {
    while (pos > 0) {
        const std::size_t parent = (pos - 1) / 4;
        if (!(k < key(parent))) break;
        key(pos) = key(parent);
        pos = parent;
    }
    key(pos) = k;
}

// Takes out the root the bottom-up way: the hole left by the root follows the least child down
// to a leaf, which needs no comparison against the key that fills it, then the last key moves
// into the hole and up. The last key usually belongs near the bottom, so that costs little.
Simulator::Key Simulator::pop() {
    const Key top = key(0);
    const Key last = key(--size_);
    key(size_) = kNoKey;
    if (size_ == 0) return top;
    std::size_t pos = 0;
    while (4 * pos + 1 < size_) {
        // The least of the four children and its place, without branches (which would go
        // either way at random): keys are unique, so exactly one child equals the least.
        const Key* c = groups_[pos + 1].keys;
        const Key least = std::min(std::min(c[0], c[1]), std::min(c[2], c[3]));
        key(pos) = least;
        pos = 4 * pos + 1 + (c[1] == least) + 2 * (c[2] == least) + 3 * (c[3] == least);
    }
    sift_up(pos, last);
    return top;
}

void Simulator::prefetch_next() const {
    if (size_ == 0 || prefetch_bytes_ == 0) return;
    const auto slot = static_cast<std::uint32_t>(groups_[0].keys[3] & ((1u << kSlotBits) - 1));
    const auto* state = reinterpret_cast<const char*>(events_[slot].handler);
    for (std::size_t offset = 0; offset < prefetch_bytes_; offset += 64) {
        __builtin_prefetch(state + offset);
    }
}

}  // namespace nicsim::sim
