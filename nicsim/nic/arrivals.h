// Which of a collective's expected packets have arrived: a bit each, plus a count (Yu et al. §5.2).
//
// The count answers "is everything here?" on every arrival at the cost of one comparison; the
// bits are read only to tell a duplicate from a new packet and, when packets are overdue, to find
// the ones to ask for again. Yu et al. keeps one bit per peer, 32 integers for 1024 NICs; here a
// bit stands for one packet, so a block cut into several packets takes several bits.
#pragma once

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>

#include "core/small_vector.h"

namespace nicsim::nic {

class Arrivals {
public:
    Arrivals() = default;  // expects nothing
    // Packets 0 .. expected - 1, none arrived yet.
    explicit Arrivals(std::size_t expected) : expected_(expected) {
        words_.resize((expected + kWordBits - 1) / kWordBits);
    }

    // Back to none arrived.
    void clear() {
        std::fill(words_.begin(), words_.end(), 0);
        count_ = 0;
    }

    // Records the arrival of packet i < expected(): true when it is new, false for a duplicate.
    bool record(std::size_t i) {
        const std::uint32_t bit = std::uint32_t{1} << (i % kWordBits);
        std::uint32_t& word = words_[i / kWordBits];
        if (word & bit) return false;
        word |= bit;
        ++count_;
        return true;
    }

    bool has(std::size_t i) const { return (words_[i / kWordBits] >> (i % kWordBits)) & 1; }

    // The first packet at or after i that has not arrived; expected() when there is none.
    std::size_t next_missing(std::size_t i) const {
        while (i < expected_) {
            const std::uint32_t missing = ~words_[i / kWordBits] >> (i % kWordBits);
            if (missing != 0) return std::min(i + std::countr_zero(missing), expected_);
            i += kWordBits - i % kWordBits;
        }
        return expected_;
    }

    std::size_t count() const { return count_; }
    std::size_t expected() const { return expected_; }
    bool complete() const { return count_ == expected_; }

private:
    static constexpr std::size_t kWordBits = 32;

    SmallVector<std::uint32_t, 2> words_;  // 64 packets without an allocation
    std::size_t expected_ = 0;
    std::size_t count_ = 0;
};

}  // namespace nicsim::nic
