#include "plan/tree.h"

#include <algorithm>
#include <array>
#include <functional>

namespace nicsim::plan {

std::span<const TreeShape> tree_shapes() {
    static constexpr std::array<TreeShape, 5> table{{
        {"binomial",
         "node p sends to p + 2^j below its lowest set bit, largest first; ceil(log2 n) steps",
         false, [](Rank n, int) { return binomial_tree(n); }},
        {"binary", "complete binary tree numbered breadth-first: node p sends to 2p + 1, 2p + 2",
         false, [](Rank n, int) { return binary_tree(n); }},
        {"chain", "node p sends to p + 1; n - 1 steps, then one packet per step", false,
         [](Rank n, int) { return chain_tree(n); }},
        {"flat", "the root sends to every other node; n - 1 steps, every other node a leaf", false,
         [](Rank n, int) { return flat_tree(n); }},
        {"kbinomial",
         "binomial tree with at most k children per node (Kesavan and Panda); "
         "best k: optimal_k(n, m)",
         true, kbinomial_tree},
    }};
    return table;
}

const TreeShape* find_tree_shape(std::string_view name) {
    const auto table = tree_shapes();
    const auto it = std::find_if(table.begin(), table.end(),
                                 [name](const TreeShape& shape) { return shape.name == name; });
    return it == table.end() ? nullptr : &*it;
}

Tree tree_from_children(Rank root, std::vector<std::vector<Rank>> children) {
    const auto n = static_cast<Rank>(children.size());
    Tree tree{root, std::vector<Rank>(n, -1), std::move(children)};
    for (Rank p = 0; p < tree.size(); ++p) {
        for (Rank c : tree.children[p]) tree.parent[c] = p;
    }
    return tree;
}

Tree relabel(const Tree& tree, std::span<const Rank> order) {
    std::vector<std::vector<Rank>> children(tree.size());
    for (Rank p = 0; p < tree.size(); ++p) {
        for (Rank c : tree.children[p]) children[order[p]].push_back(order[c]);
    }
    return tree_from_children(order[tree.root], std::move(children));
}

std::vector<Rank> preorder(const Tree& tree) {
    std::vector<Rank> out;
    out.reserve(static_cast<std::size_t>(tree.size()));
    std::vector<Rank> stack{tree.root};
    while (!stack.empty()) {
        const Rank p = stack.back();
        stack.pop_back();
        out.push_back(p);
        std::vector<Rank> children = tree.children[p];
        std::sort(children.begin(), children.end(), std::greater<>());  // smallest on top
        stack.insert(stack.end(), children.begin(), children.end());
    }
    return out;
}

Tree lay_along(const Tree& tree, std::span<const Rank> list) {
    const std::vector<Rank> visit = preorder(tree);
    std::vector<Rank> at(visit.size());
    for (std::size_t i = 0; i < visit.size(); ++i) at[static_cast<std::size_t>(visit[i])] = list[i];
    return relabel(tree, at);
}

int depth(const Tree& tree) {
    // Breadth-first, one level at a time.
    int levels = 0;
    std::vector<Rank> level{tree.root};
    std::vector<Rank> next;
    for (;;) {
        next.clear();
        for (Rank p : level) {
            next.insert(next.end(), tree.children[p].begin(), tree.children[p].end());
        }
        if (next.empty()) return levels;
        level.swap(next);
        ++levels;
    }
}

}  // namespace nicsim::plan
