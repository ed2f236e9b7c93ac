// A map from ranks to small dense indices: open addressing over a power-of-two table with a
// multiplicative hash. The NIC looks its peers up once or twice per packet, and std::unordered_map
// (a division and a pointer chase per lookup) was a fifth of a simulation's time.
#pragma once

#include <cstdint>
#include <vector>

#include "core/status.h"

namespace nicsim {

class RankIndex {
public:
    static constexpr std::uint32_t kNone = ~std::uint32_t{0};

    std::uint32_t find(Rank rank) const {
        if (slots_.empty()) return kNone;
        for (std::size_t i = slot(rank);; i = (i + 1) & (slots_.size() - 1)) {
            if (slots_[i].index == kNone) return kNone;
            if (slots_[i].rank == rank) return slots_[i].index;
        }
    }

    // Adds `rank` with the next index (size() before the call); the rank must be new.
    std::uint32_t insert(Rank rank) {
        if (2 * (size_ + 1) > slots_.size()) grow();
        place(rank, size_);
        return size_++;
    }

    std::uint32_t size() const { return size_; }

private:
    struct Slot {
        Rank rank = 0;
        std::uint32_t index = kNone;
    };

    std::size_t slot(Rank rank) const {
        return static_cast<std::size_t>((static_cast<std::uint32_t>(rank) * 0x9e3779b1u) >> shift_);
    }
    void place(Rank rank, std::uint32_t index) {
        std::size_t i = slot(rank);
        while (slots_[i].index != kNone) i = (i + 1) & (slots_.size() - 1);
        slots_[i] = {rank, index};
    }
    void grow() {
        std::vector<Slot> old = std::move(slots_);
        slots_.assign(old.empty() ? 8 : 2 * old.size(), Slot{});
        shift_ = 32;
        for (std::size_t n = slots_.size(); n > 1; n >>= 1) --shift_;
        for (const Slot& s : old) {
            if (s.index != kNone) place(s.rank, s.index);
        }
    }

    std::vector<Slot> slots_;
    int shift_ = 32;
    std::uint32_t size_ = 0;
};

}  // namespace nicsim
