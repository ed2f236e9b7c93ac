// Simulated time: integer picoseconds, so that sums are exact and runs repeat bit for bit.
#pragma once

#include <cstdint>

namespace nicsim::sim {

using Time = std::uint64_t;

constexpr Time kPicosPerMicro = 1'000'000;

constexpr Time from_us(double us) { return static_cast<Time>(us * kPicosPerMicro + 0.5); }
constexpr double to_us(Time t) { return static_cast<double>(t) / kPicosPerMicro; }

// Time to move `bytes` at `mb_per_s` (10^6 bytes per second); 0 when the bandwidth is 0, which
// the model uses for "not modeled".
constexpr Time transfer_time(std::uint64_t bytes, double mb_per_s) {
    return mb_per_s <= 0 ? 0 : static_cast<Time>(static_cast<double>(bytes) * 1e6 / mb_per_s + 0.5);
}

}  // namespace nicsim::sim
