// Random trees for the tests of multicast over arbitrary trees (deadlock recovery, all-to-all).
#pragma once

#include <utility>
#include <vector>

#include "plan/tree.h"
#include "sim/rng.h"

namespace nicsim::test {

// A random tree over `n` nodes rooted at `root`: each node in a random order hangs below a
// random node placed before it.
inline plan::Tree random_tree(Rank n, Rank root, sim::Rng& rng) {
    std::vector<Rank> order;
    for (Rank v = 0; v < n; ++v) {
        if (v != root) order.push_back(v);
    }
    for (std::size_t i = order.size(); i > 1; --i) std::swap(order[i - 1], order[rng.below(i)]);
    order.insert(order.begin(), root);
    plan::Tree t;
    t.root = root;
    t.parent.assign(static_cast<std::size_t>(n), -1);
    t.children.resize(static_cast<std::size_t>(n));
    for (std::size_t i = 1; i < order.size(); ++i) {
        const Rank parent = order[rng.below(i)];
        t.parent[order[i]] = parent;
        t.children[parent].push_back(order[i]);
    }
    return t;
}

}  // namespace nicsim::test
