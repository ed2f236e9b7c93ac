// A broadcast tree over nodes: the network crossed once per node (tree.h, node_tree()).
//
//   nodes a: {0, 1, 2}, b: {3, 4}, c: {5, 6}; binomial shape, root 0
//
//   0 ──▶ 5 (c's first rank) ──▶ 6         the leaders 0, 3, 5 form a binomial tree over the
//   0 ──▶ 3 (b's first rank) ──▶ 4         nodes; each leader then serves its own node with a
//   0 ──▶ 2, 0 ──▶ 1                       binomial tree of its own, after the network sends
#include <numeric>

#include "plan/nodes.h"
#include "plan/tree.h"

namespace nicsim::plan {

namespace {

// The shape over `members` (members[0] at its root), as children lists appended in rank space.
void add_tree(const TreeShape& shape, int k, const std::vector<Rank>& members,
              std::vector<std::vector<Rank>>& children) {
    const auto n = static_cast<Rank>(members.size());
    if (n < 2) return;
    std::vector<Rank> positions(members.size());
    std::iota(positions.begin(), positions.end(), 0);
    const Tree t = lay_along(shape.build(n, k), positions);
    for (Rank p = 0; p < n; ++p) {
        for (const Rank c : t.children[p]) children[members[p]].push_back(members[c]);
    }
}

}  // namespace

Tree node_tree(const TreeShape& shape, int k, std::span<const Rank> list,
               std::span<const int> node_of) {
    // The nodes in order of their first rank in the list, each node's ranks in list order: the
    // root's node comes first and the root leads it.
    const std::vector<std::vector<Rank>> nodes = ranks_by_node(list, node_of);
    std::vector<std::vector<Rank>> children(list.size());
    std::vector<Rank> leaders;
    for (const auto& node : nodes) leaders.push_back(node.front());
    add_tree(shape, k, leaders, children);  // across the network first: it takes longest
    for (const auto& node : nodes) add_tree(shape, k, node, children);
    return tree_from_children(list[0], std::move(children));
}

}  // namespace nicsim::plan
