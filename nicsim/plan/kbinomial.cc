#include "plan/kbinomial.h"

#include <algorithm>
#include <array>

#include "plan/barrier.h"

namespace nicsim::plan {

namespace {

// Walks N(0, k), N(1, k), ... by N(s+1) = 2 N(s) - N(s-k), with N of a negative count 0: Lemma 1
// for s+1 minus Lemma 1 for s (both cases of the lemma are its second line with those zeros).
// Once saturated a value stays saturated, as N grows with s.
class CoverageWalk {
public:
    // For k >= 62, N(s, k) is 2^s up to the saturation at s = 62: k itself no longer matters.
    explicit CoverageWalk(int k) : k_(std::min(k, 62)) {}

    int steps() const { return s_; }
    std::uint64_t coverage() const { return history_[s_ % kHistory]; }

    void step() {
        const std::uint64_t dropped = s_ >= k_ ? history_[(s_ - k_) % kHistory] : 0;
        const std::uint64_t next = 2 * coverage() - dropped;  // < 2^63: coverage() <= 2^62
        ++s_;
        history_[s_ % kHistory] = std::min(next, kCoverageMax);
    }

private:
    static constexpr int kHistory = 64;  // N(s-k) .. N(s+1): k + 2 values
    int k_;
    int s_ = 0;
    std::array<std::uint64_t, kHistory> history_{1};
};

}  // namespace

std::uint64_t kbinomial_coverage(int s, int k) {
    // N(s, 1) = s + 1, which the walk would take s steps to reach.
    if (k == 1) return std::min(static_cast<std::uint64_t>(s) + 1, kCoverageMax);
    CoverageWalk walk(k);
    while (walk.steps() < s && walk.coverage() < kCoverageMax) walk.step();
    return walk.coverage();
}

int kbinomial_steps(Rank n, int k) {
    if (k == 1) return n - 1;  // N(s, 1) = s + 1, as above
    CoverageWalk walk(k);
    while (walk.coverage() < static_cast<std::uint64_t>(n)) walk.step();
    return walk.steps();
}

std::int64_t kbinomial_total_steps(Rank n, std::int64_t m, int k) {
    if (n == 1) return 0;  // no one to send to
    return kbinomial_steps(n, k) + (m - 1) * k;
}

int optimal_k(Rank n, std::int64_t m) {
    int best = 1;
    std::int64_t best_steps = kbinomial_total_steps(n, m, 1);
    for (int k = 2; k <= ceil_log2(n); ++k) {
        const std::int64_t steps = kbinomial_total_steps(n, m, k);
        if (steps <= best_steps) {  // a tie goes to the larger k: the first packet arrives sooner
            best = k;
            best_steps = steps;
        }
    }
    return best;
}

int optimal_k_timed(Rank n, std::int64_t m, double hop, double send) {
    int best = 1;
    double best_time = 0;
    for (int k = 1; k <= std::max(1, ceil_log2(n)); ++k) {
        const int l1 = kbinomial_steps(n, k);
        // The largest fanout in the tree: k, or L1 - 1 when the tree never needs a k-th child.
        const std::int64_t fanout = kbinomial_total_steps(n, 2, k) - l1;
        const double time =
            l1 * hop + static_cast<double>(m - 1) * static_cast<double>(fanout) * send;
        if (k == 1 || time <= best_time) {
            best = k;
            best_time = time;
        }
    }
    return best;
}

}  // namespace nicsim::plan
