// Binary tree on contiguous ranges (FM/MC's multicast tree; seed 000 §5.2 compares it with LFC's).
//
// The node at lo covering [lo, hi) sends first to lo + 1, which covers the larger half of the
// other hi - lo - 1 positions, then to the start of the smaller half. The tree is complete: for
// n = 61, 6 levels with 30 nodes on the last.
#include "plan/tree.h"

namespace nicsim::plan {

namespace {

struct Range {
    Rank lo, hi;
};

}  // namespace

Tree binary_tree(Rank n) {
    std::vector<std::vector<Rank>> children(n);
    std::vector<Range> pending{{0, n}};
    while (!pending.empty()) {
        const auto [lo, hi] = pending.back();
        pending.pop_back();
        const Rank rest = hi - lo - 1;
        const Rank mid = lo + 1 + (rest + 1) / 2;
        if (rest >= 1) {
            children[lo].push_back(lo + 1);
            pending.push_back({lo + 1, mid});
        }
        if (mid < hi) {
            children[lo].push_back(mid);
            pending.push_back({mid, hi});
        }
    }
    return tree_from_children(0, std::move(children));
}

}  // namespace nicsim::plan
