// A map from ranks to values: open addressing over a power-of-two table with a multiplicative
// hash whose slots point straight at the values, kept in a deque (references stay valid as
// entries are added). The NIC
// looks its peers up once or twice per packet, and std::unordered_map (a division and a pointer
// chase per lookup) was a fifth of a simulation's time.
#pragma once

#include <cstdint>
#include <deque>
#include <utility>
#include <vector>

#include "core/status.h"

namespace nicsim {

template <typename T>
class RankMap {
public:
    T* find(Rank rank) const {
        if (slots_.empty()) return nullptr;
        for (std::size_t i = slot(rank);; i = (i + 1) & (slots_.size() - 1)) {
            if (slots_[i].value == nullptr || slots_[i].rank == rank) return slots_[i].value;
        }
    }

    // The value for `rank`, made from `args` the first time.
    template <typename... Args>
    T& get(Rank rank, Args&&... args) {
        if (T* value = find(rank)) return *value;
        if (2 * (keys_.size() + 1) > slots_.size()) grow();
        T& value = values_.emplace_back(std::forward<Args>(args)...);
        place(rank, &value);
        keys_.push_back(rank);
        return value;
    }

    // The ranks present, in the order they were added.
    const std::vector<Rank>& keys() const { return keys_; }

private:
    struct Slot {
        Rank rank = 0;
        T* value = nullptr;
    };

    std::size_t slot(Rank rank) const {
        return static_cast<std::size_t>((static_cast<std::uint32_t>(rank) * 0x9e3779b1u) >> shift_);
    }
    void place(Rank rank, T* value) {
        std::size_t i = slot(rank);
        while (slots_[i].value != nullptr) i = (i + 1) & (slots_.size() - 1);
        slots_[i] = {rank, value};
    }
    void grow() {
        std::vector<Slot> old = std::move(slots_);
        slots_.assign(old.empty() ? 8 : 2 * old.size(), Slot{});
        shift_ = 32;
        for (std::size_t n = slots_.size(); n > 1; n >>= 1) --shift_;
        for (const Slot& s : old) {
            if (s.value != nullptr) place(s.rank, s.value);
        }
    }

    std::vector<Slot> slots_;
    int shift_ = 32;
    std::vector<Rank> keys_;
    std::deque<T> values_;
};

}  // namespace nicsim
