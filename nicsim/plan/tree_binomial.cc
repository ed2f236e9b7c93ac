// Binomial spanning tree: Bhoedjang et al.'s default multicast tree, Kesavan and Panda's
// binomial tree.
//
// Position p sends to p + 2^j for every 2^j below p's lowest set bit (every j for the root) with
// p + 2^j < n, largest first. The subtree of p + 2^j is then [p + 2^j, p + 2^(j+1)), so the
// largest subtree is served first, every node is reached in ceil(log2 n) steps, and a node's
// level is the number of bits set in its position. For n a power of two this is the k-binomial
// tree with k >= log2 n.
#include <bit>

#include "plan/tree.h"

namespace nicsim::plan {

Tree binomial_tree(Rank n) {
    std::vector<std::vector<Rank>> children(n);
    for (Rank p = 0; p < n; ++p) {
        // Strides below p's lowest set bit; for the root, every power of two below n.
        const Rank top =
            p == 0 ? static_cast<Rank>(std::bit_floor(static_cast<unsigned>(n - 1))) : (p & -p) / 2;
        for (Rank d = top; d >= 1; d /= 2) {
            if (p + d < n) children[p].push_back(p + d);
        }
    }
    return tree_from_children(0, std::move(children));
}

}  // namespace nicsim::plan
