// Planner internals shared by the two hardware-tree searches (hwtree_greedy.cc,
// hwtree_optimal.cc): what the overlap checks make of one preselected combination of groups.
#pragma once

#include <optional>
#include <span>
#include <vector>

#include "plan/hwtree.h"

namespace nicsim::plan {

struct Check {
    std::vector<NodeRange> by_position;        // the combination in node order
    std::optional<BackwardOverlap> backward;   // checked first (§5.2: its splits are larger)
    int forward_level = -1;                    // Eq. 3's level, when there is no backward overlap
    std::optional<HwStep> step;                // the sources assigned, when neither check objects
};

Check check_combination(const FatTree& net, std::span<const NodeRange> sources,
                        std::span<const NodeRange> combination);

// For a forward overlap at `level`: the groups of the combination (in the planners' order) with
// their root switch at or above it, in the order the planners split them. Coll et al. leaves the
// choice open ("select a group"); we take the one the order ranks last first, the smallest,
// which keeps the large groups that reach most in the next step whole.
std::vector<std::size_t> forward_splits(const FatTree& net, std::span<const NodeRange> combination,
                                        int level);

// The combination with group `at` replaced by its split_lower() pieces.
std::vector<NodeRange> split_forward(const FatTree& net, std::span<const NodeRange> combination,
                                     std::size_t at);

// `list` with the group at `at` replaced by `pieces`.
std::vector<NodeRange> replace_group(std::span<const NodeRange> list, std::size_t at,
                                     const std::vector<NodeRange>& pieces);

// How many nodes the ranges hold.
std::int64_t node_count(std::span<const NodeRange> ranges);

}  // namespace nicsim::plan
