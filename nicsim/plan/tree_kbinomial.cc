// k-binomial tree on an ordering (Kesavan and Panda §4.3.2, Fig. 11).
//
// The node at lo with s steps left covers [lo, hi). In its i-th step (i = 1..min(k, s)) it sends to
// the node N(s-i, k) places from the right end of what is still uncovered, which covers that tail
// in the s - i steps it has left; the uncovered range then ends there:
//
//   lo                        c2             c1                          hi
//   [x . . . . . . . . . . . [. . N(s-2,k) . [. . . . N(s-1,k) . . . . . )
//    step 1: lo -> c1, step 2: lo -> c2, ... up to k children
//
// With s = L1 = kbinomial_steps(n, k) the tails cover the range, as n <= N(s, k) = 1 + N(s-1, k)
// + ... + N(s-k, k) (Lemma 1), so every node is reached by step L1. When n < N(s, k) the first
// tails are full and the last ones short or missing: a node may have fewer than k children.
#include <algorithm>

#include "plan/kbinomial.h"
#include "plan/tree.h"

namespace nicsim::plan {

namespace {

struct Range {
    Rank lo, hi;
    int steps;
};

}  // namespace

Tree kbinomial_tree(Rank n, int k) {
    std::vector<std::vector<Rank>> children(n);
    std::vector<Range> pending{{0, n, kbinomial_steps(n, k)}};
    while (!pending.empty()) {
        auto [lo, hi, steps] = pending.back();
        pending.pop_back();
        for (int i = 1; i <= std::min(k, steps) && hi - lo > 1; ++i) {
            const auto tail =
                std::min<std::uint64_t>(kbinomial_coverage(steps - i, k), hi - lo - 1);
            const Rank c = hi - static_cast<Rank>(tail);
            children[lo].push_back(c);
            pending.push_back({c, hi, steps - i});
            hi = c;
        }
    }
    return tree_from_children(0, std::move(children));
}

}  // namespace nicsim::plan
