// Binary tree (FM/MC's multicast tree; Bhoedjang et al. §5.2 compares it with LFC's), numbered
// breadth-first: position p sends to 2p + 1, then 2p + 2. The tree is complete: for n = 61,
// 6 levels with 30 nodes on the last.
//
// Bhoedjang et al. does not say how its binary trees are numbered, and for all-to-all multicast the
// numbering matters: every sender's tree is this one with the positions rotated, and a
// numbering in which each node sends first to the next position (p + 1) makes those edges a
// ring over all the nodes in every tree, a true credit deadlock, so nearly every multicast
// recovers. Numbered breadth-first the binary trees recover less often and with fewer packets
// than binomial ones, as Bhoedjang et al. Table 1 reports. (A real job's trees are renumbered so
// that every subtree is a run of positions: Agent::tree, plan::lay_along.)
#include "plan/tree.h"

namespace nicsim::plan {

Tree binary_tree(Rank n) {
    std::vector<std::vector<Rank>> children(n);
    for (Rank p = 0; p < n; ++p) {
        for (const Rank c : {2 * p + 1, 2 * p + 2}) {
            if (c < n) children[p].push_back(c);
        }
    }
    return tree_from_children(0, std::move(children));
}

}  // namespace nicsim::plan
