// Chain: position p sends to p + 1; Bhoedjang et al.'s "linear chain", Kesavan and Panda's
// linear tree.
//
// The slowest tree for one packet (n - 1 steps) and the fastest for long messages: every node
// sends each packet once, so packets leave the root one per step (the k = 1 k-binomial tree).
#include "plan/tree.h"

namespace nicsim::plan {

Tree chain_tree(Rank n) {
    std::vector<std::vector<Rank>> children(n);
    for (Rank p = 0; p + 1 < n; ++p) children[p] = {p + 1};
    return tree_from_children(0, std::move(children));
}

}  // namespace nicsim::plan
