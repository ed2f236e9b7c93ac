// Simulator: a small seeded random-number generator.
//
// Every object that draws random numbers owns one of these, seeded from the run's seed and its
// own identity, so a run's output depends only on its inputs, not on the order objects draw in or
// on the standard library (std::uniform_int_distribution differs between implementations).
#pragma once

#include <cstdint>

namespace nicsim::sim {

class Rng {
public:
    // `stream` tells apart objects that share the run's seed.
    explicit Rng(std::uint64_t seed, std::uint64_t stream = 0) {
        std::uint64_t x = seed ^ (stream * 0x9e3779b97f4a7c15ULL);
        for (auto& word : s_) word = splitmix64(x);
    }

    // xoshiro256**: uniform 64-bit words.
    std::uint64_t next() {
        const std::uint64_t result = rotl(s_[1] * 5, 7) * 9;
        const std::uint64_t t = s_[1] << 17;
        s_[2] ^= s_[0];
        s_[3] ^= s_[1];
        s_[1] ^= s_[2];
        s_[0] ^= s_[3];
        s_[2] ^= t;
        s_[3] = rotl(s_[3], 45);
        return result;
    }

    // Uniform in [0, n) for n >= 1 (Lemire's multiply-shift; the bias is below 2^-32 for the
    // sizes a simulation draws).
    std::uint64_t below(std::uint64_t n) {
        return static_cast<std::uint64_t>((static_cast<unsigned __int128>(next()) * n) >> 64);
    }

    // Uniform in [0, 1).
    double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

private:
    static std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
    static std::uint64_t splitmix64(std::uint64_t& x) {
        std::uint64_t z = (x += 0x9e3779b97f4a7c15ULL);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
        return z ^ (z >> 31);
    }

    std::uint64_t s_[4];
};

}  // namespace nicsim::sim
