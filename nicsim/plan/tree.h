// Planner: multicast trees.
//
// A multicast forwards along a tree: each node sends to its children in order, its NIC forwarding
// every packet as it arrives (Kesavan and Panda's FPFS). Every shape here is built over positions
// 0..n-1 of an ordering of the group with the source at position 0, and every subtree covers a
// contiguous range of positions, so on an ordering in which consecutive nodes are close in the
// network (ordering.h) different subtrees use different parts of it. relabel() then turns positions
// into ranks. Shapes are chosen by name from tree_shapes().
//
//   binomial, n = 8               kbinomial, n = 7, k = 2: s = 3 steps, N(2,2) = 4, N(1,2) = 2
//        0                            0
//     /  |  \                       /   \         0 sends to 3, which covers [3, 7) in 2 steps,
//    4   2   1                     3     1       then to 1, which covers [1, 3) in 1 step
//   / \  |                        / \    |
//  6   5 3                        5   4   2
//  |                              |
//  7                              6
#pragma once

#include <span>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace nicsim::plan {

// A multicast tree. Built over positions 0..n-1 of an ordering of the group with the root at
// position 0; relabel() turns it into ranks.
struct Tree {
    Rank root = 0;
    std::vector<Rank> parent;                 // parent[root] == -1
    std::vector<std::vector<Rank>> children;  // in the order the node sends to them

    Rank size() const { return static_cast<Rank>(parent.size()); }
};

struct TreeShape {
    std::string_view name;
    std::string_view description;
    bool takes_k;                  // only kbinomial
    Tree (*build)(Rank n, int k);  // k ignored unless takes_k; n >= 1
};

// The table of tree shapes; index 0 (binomial) is the default.
std::span<const TreeShape> tree_shapes();

// nullptr when no shape has this name.
const TreeShape* find_tree_shape(std::string_view name);

Tree binomial_tree(Rank n);          // tree_binomial.cc
Tree binary_tree(Rank n);            // tree_binary.cc
Tree chain_tree(Rank n);             // tree_chain.cc
Tree flat_tree(Rank n);              // tree_flat.cc
Tree kbinomial_tree(Rank n, int k);  // tree_kbinomial.cc, k >= 1

// The tree with these children lists (in sending order), the parents filled in. The builders and
// relabel() end here.
Tree tree_from_children(Rank root, std::vector<std::vector<Rank>> children);

// The tree with position p renamed order[p] (order is a permutation of 0..n-1); root = order[0].
Tree relabel(const Tree& tree, std::span<const Rank> order);

// The positions in depth-first pre-order, each node's children in ascending position. The
// identity for a tree whose subtrees are runs of positions already (binomial, chain, flat,
// k-binomial), not for the breadth-first binary tree.
std::vector<Rank> preorder(const Tree& tree);

// The tree with the i-th position of its pre-order renamed list[i] (list is a permutation of
// 0..n-1): the root is list[0] and every subtree is a run of the list.
Tree lay_along(const Tree& tree, std::span<const Rank> list);

// The tree over nodes (tree_nodes.cc): ranks whose node_of (by rank) is the same share a node.
// The first rank of each node in `list` (list[0], the root, for its own) leads it; the leaders
// form a tree of `shape` over the nodes in the order of their leaders in the list, and each
// leader serves its node with a tree of `shape` over the node's ranks in list order, after its
// sends to other nodes. So a broadcast crosses between nodes once per node. With one node, or
// one rank per node, it is lay_along(shape.build(n, k), list).
Tree node_tree(const TreeShape& shape, int k, std::span<const Rank> list,
               std::span<const int> node_of);

// Levels below the root (0 for n == 1).
int depth(const Tree& tree);

}  // namespace nicsim::plan
