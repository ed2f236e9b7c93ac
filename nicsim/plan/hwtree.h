// Planner: hardware-based multicast trees on a fat tree (Coll et al. §4-5).
//
// Quadrics hardware multicast reaches only a range of adjacent nodes. When the nodes of a
// multicast are not adjacent (a faulty node, a fragmented allocation) a hardware-based tree
// still uses it: the source multicasts to one group of adjacent destinations, then every node
// that has the message multicasts to another group, and so on. A tree is a list of steps; the
// multicasts of a step run in parallel, so no two of them may share a link:
//
//   16 nodes, 1 and 6 faulty, source 8 (Coll et al. Fig. 4):
//     groups [0,0] [2,5] [7,15]
//     step 1: 8 -> [7,15]
//     step 2: 8 -> [0,0], 7 -> [2,5]      (one source per group; the links are disjoint)
//
// Two checks keep the multicasts of a step apart; splitting groups removes what they find:
//   backward routing overlap (Eq. 1): two groups' broadcast trees share a descending link;
//   forward routing overlap (Eq. 2-3): the sources cannot climb to the groups' root switches on
//   disjoint links, counted as capabilities (root switches the sources reach in parallel per
//   level) against needs (root switches the groups need per level).
//
// Two planners search for the tree with the fewest steps (hwtree_optimal.cc: Algorithm 1,
// backtracking, optimal within its search; hwtree_greedy.cc: Algorithm 2, its first branch only).
// Both start from the groups sorted by size and root-switch level, largest first.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "plan/fattree.h"

namespace nicsim::plan {

struct HwMulticast {
    Rank source = 0;
    NodeRange dest;
    friend bool operator==(const HwMulticast&, const HwMulticast&) = default;
};

// The multicasts of one step, in parallel.
using HwStep = std::vector<HwMulticast>;

struct HwTree {
    Rank source = 0;
    std::vector<HwStep> steps;
    int depth() const { return static_cast<int>(steps.size()); }
};

// The groups of adjacent destination nodes: the maximal runs of nodes of 0..nodes-1 that are not
// in `faulty`, in node order. The source's own run is a group too: a multicast may include its
// sender (Coll et al. Fig. 4 sends from 8 to [7,15]).
std::vector<NodeRange> live_groups(Rank nodes, std::span<const Rank> faulty);

// Coll et al. §5.3's order: more nodes first; at equal size the higher root switch first (it can
// reach more in the next step); then by position, so the order is total.
void sort_groups(const FatTree& net, std::vector<NodeRange>& groups);

// --- routing overlaps (hwtree_overlap.cc) ------------------------------------------------------

// Eq. 1: [x,x'] and [y,y'] both use two or more links of the broadcast tree at level l, and share
// one of them.
bool backward_overlap(const FatTree& net, NodeRange a, NodeRange b, int level);

// The first backward overlap met walking `by_position` (disjoint groups in node order) from left
// to right, each group against those before it: the two groups (indexes) and the highest level
// at which they overlap.
struct BackwardOverlap {
    std::size_t left;
    std::size_t right;
    int level;
};
std::optional<BackwardOverlap> first_backward_overlap(const FatTree& net,
                                                      std::span<const NodeRange> by_position);

// The two ways §5.2.1 removes that overlap: split the right group (first) or the left group where
// it enters the shared block, so that the piece inside that block no longer spans two links.
// Fig. 4: [2,5] [7,15] at level 1 gives right [2,5] [7,7] [8,15] and left [2,3] [4,5] [7,15].
std::vector<NodeRange> split_right(const FatTree& net, std::span<const NodeRange> by_position,
                                   const BackwardOverlap& overlap);
std::vector<NodeRange> split_left(const FatTree& net, std::span<const NodeRange> by_position,
                                  const BackwardOverlap& overlap);

// Counts per switch level, index = level (Coll et al. writes them highest level first).
using LevelCounts = std::vector<std::int64_t>;

// Capabilities of the nodes in `sources` (disjoint ranges): c[l] root switches at level l they
// can reach in parallel. A climb to a root switch at level >= m leaves its block of k^m nodes on
// the broadcast tree's one link up from that block, so at most B_m (the blocks of k^m nodes that
// hold a source) reach level m or higher: c[top] = B_top, c[m] = B_m - B_(m+1), c[0] = the rest.
// Fig. 5: nodes {0, 2} of 16 give c = (1, 1).
LevelCounts capabilities(const FatTree& net, std::span<const NodeRange> sources);
// Needs: n[l] groups whose root switch is at level l.
LevelCounts needs(const FatTree& net, std::span<const NodeRange> groups);
// Eq. 2: d[top] = c - n at the top; below, what is left over above carries down.
LevelCounts differences(const LevelCounts& capabilities, const LevelCounts& needs);
// Eq. 3: the highest level with d[l] < 0 (a forward routing overlap), or -1.
int forward_overlap_level(const LevelCounts& differences);

// §5.2.2's split: `group` cut at the block boundaries of its root level, so every piece has its
// root switch at a lower level. Fig. 5: [3,7] gives [3,3] [4,7]; [9,12] gives [9,11] [12,12].
std::vector<NodeRange> split_lower(const FatTree& net, NodeRange group);

// --- building a tree (hwtree.cc) ---------------------------------------------------------------

// Which source sends to which group, once `groups` passed both checks against `sources`: groups
// by root level, highest first, each from a source whose blocks below that level no earlier
// group climbs out of. Empty if no assignment keeps the climbs apart (never, when Eq. 3 found no
// overlap). Sources and groups are disjoint sets of nodes.
std::optional<HwStep> assign_sources(const FatTree& net, std::span<const NodeRange> sources,
                                     std::span<const NodeRange> groups);

// `pending` (disjoint, node order) without the nodes of `reached`, in node order.
std::vector<NodeRange> subtract(std::span<const NodeRange> pending,
                                std::span<const NodeRange> reached);
// `a` and `b` (each disjoint) merged into disjoint, non-adjacent ranges in node order.
std::vector<NodeRange> merge(std::span<const NodeRange> a, std::span<const NodeRange> b);

// Algorithm 2 (hwtree_greedy.cc). `groups` are the destinations, disjoint; the source may lie in
// one of them or outside them all. Every node of every group is reached.
HwTree greedy_hw_tree(const FatTree& net, Rank source, std::span<const NodeRange> groups);

// Algorithm 1 (hwtree_optimal.cc), starting from the greedy tree as the best so far. It gives up
// after `max_calls` recursive calls, returning the best tree found with decided = false.
struct OptimalSearch {
    HwTree tree;
    bool decided = true;
    std::uint64_t calls = 0;
};
OptimalSearch optimal_hw_tree(const FatTree& net, Rank source, std::span<const NodeRange> groups,
                              std::uint64_t max_calls);

// The planners by name, for `nicsim hwtree --planner`: index 0 is the default.
struct HwTreePlanner {
    std::string_view name;
    std::string_view description;
};
std::span<const HwTreePlanner> hw_tree_planners();

}  // namespace nicsim::plan
