// Algorithm 2 of seed 003 (§5.3): the greedy hardware-based multicast tree.
//
// Each step takes, out of the pending groups in the planners' order (largest, then highest root
// switch, first), as many as there are nodes with the message. While the overlap checks object,
// it takes the first way out only: for a backward overlap the split of the right group, for a
// forward overlap the split of the smallest group at or above the level it was found. The pieces
// take their place in the order, and a piece that falls beyond the number of sources waits for
// a later step. The cost grows with the depth of the tree and the number of splits, not with the
// number of combinations.
#include <algorithm>

#include "plan/hwtree.h"
#include "plan/hwtree_search.h"

namespace nicsim::plan {

HwTree greedy_hw_tree(const FatTree& net, Rank source, std::span<const NodeRange> groups) {
    HwTree tree{source, {}};
    std::vector<NodeRange> sources{{source, source}};
    std::vector<NodeRange> pending(groups.begin(), groups.end());
    std::sort(pending.begin(), pending.end(), [](NodeRange a, NodeRange b) { return a.lo < b.lo; });
    while (!pending.empty()) {
        std::vector<NodeRange> candidates = pending;
        for (;;) {
            sort_groups(net, candidates);
            const auto take = static_cast<std::size_t>(
                std::min<std::int64_t>(node_count(sources), static_cast<std::int64_t>(candidates.size())));
            candidates.resize(take);
            const Check check = check_combination(net, sources, candidates);
            if (check.backward) {
                candidates = split_right(net, check.by_position, *check.backward);
            } else if (check.forward_level >= 0) {
                candidates = split_forward(net, candidates,
                                           forward_splits(net, candidates, check.forward_level).front());
            } else {
                tree.steps.push_back(*check.step);
                pending = subtract(pending, check.by_position);
                sources = merge(sources, check.by_position);
                break;
            }
        }
    }
    return tree;
}

}  // namespace nicsim::plan
