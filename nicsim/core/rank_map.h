// A map from ranks to values, built for the packet path: values sit in one vector in the order
// their ranks were added, so a value also has a dense index that callers can keep instead of
// looking the rank up again. A map of up to kScan ranks is searched by scanning its ranks (one
// cache line); a larger one through an open-addressing table with a multiplicative hash. Adding
// a rank may move the values: pointers and references last until the next get(), indices for
// the map's lifetime. The first N ranks and values are kept inline (core/small_vector.h).
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <utility>
#include <vector>

#include "core/small_vector.h"
#include "core/status.h"

namespace nicsim {

template <typename T, std::size_t N = 0>
class RankMap {
public:
    static constexpr std::uint32_t kAbsent = ~std::uint32_t{0};

    // The index of `rank`'s value, or kAbsent.
    std::uint32_t index(Rank rank) const {
        if (const std::size_t n = keys_.size(); n <= kScan) {
            const Rank* keys = keys_.data();
            for (std::uint32_t i = 0; i < n; ++i) {
                if (keys[i] == rank) return i;
            }
            return kAbsent;
        }
        const std::vector<std::uint32_t>& slots = table_->slots;
        for (std::size_t s = slot(rank);; s = (s + 1) & (slots.size() - 1)) {
            if (slots[s] == kAbsent || keys_[slots[s]] == rank) return slots[s];
        }
    }

    T* find(Rank rank) {
        const std::uint32_t i = index(rank);
        return i == kAbsent ? nullptr : &values_[i];
    }
    const T* find(Rank rank) const {
        const std::uint32_t i = index(rank);
        return i == kAbsent ? nullptr : &values_[i];
    }

    // The index of `rank`'s value, made from `args` the first time.
    template <typename... Args>
    std::uint32_t add(Rank rank, Args&&... args) {
        if (const std::uint32_t i = index(rank); i != kAbsent) return i;
        const auto i = static_cast<std::uint32_t>(keys_.size());
        keys_.push_back(rank);
        values_.emplace_back(std::forward<Args>(args)...);
        if (keys_.size() > kScan) {
            if (!table_ || 2 * keys_.size() > table_->slots.size()) {
                rehash();
            } else {
                place(i);
            }
        }
        return i;
    }
    template <typename... Args>
    T& get(Rank rank, Args&&... args) {
        return values_[add(rank, std::forward<Args>(args)...)];
    }

    T& operator[](std::uint32_t i) { return values_[i]; }
    const T& operator[](std::uint32_t i) const { return values_[i]; }
    std::size_t size() const { return keys_.size(); }
    // The ranks present, in the order they were added (the order of their indices).
    std::span<const Rank> keys() const { return keys_; }

private:
    static constexpr std::size_t kScan = 8;

    // The open-addressing table of a map past kScan ranks, behind one pointer: most maps never
    // need one, and a node's maps sit in its hot cache lines.
    struct Table {
        std::vector<std::uint32_t> slots;  // indices into keys_ and values_
        int shift = 32;
    };

    std::size_t slot(Rank rank) const {
        return static_cast<std::size_t>((static_cast<std::uint32_t>(rank) * 0x9e3779b1u) >>
                                        table_->shift);
    }
    void place(std::uint32_t i) {
        std::vector<std::uint32_t>& slots = table_->slots;
        std::size_t s = slot(keys_[i]);
        while (slots[s] != kAbsent) s = (s + 1) & (slots.size() - 1);
        slots[s] = i;
    }
    void rehash() {
        if (!table_) table_ = std::make_unique<Table>();
        std::size_t n = 16;
        while (n < 2 * keys_.size()) n *= 2;
        table_->slots.assign(n, kAbsent);
        table_->shift = 32;
        for (; n > 1; n >>= 1) --table_->shift;
        for (std::uint32_t i = 0; i < keys_.size(); ++i) place(i);
    }

    SmallVector<Rank, N> keys_;
    SmallVector<T, N> values_;
    std::unique_ptr<Table> table_;  // once past kScan ranks
};

}  // namespace nicsim
