// Planner: a group's ranks by node, for the schedules over nodes (tree_nodes.cc, barrier_nodes.cc,
// allgather_nodes.cc).
#pragma once

#include <span>
#include <vector>

#include "core/status.h"

namespace nicsim::plan {

// The ranks of `order` grouped by node_of (indexed by rank; ranks with the same number share a
// node): the nodes in order of their first rank in `order`, each node's ranks in `order`'s order.
std::vector<std::vector<Rank>> ranks_by_node(std::span<const Rank> order,
                                             std::span<const int> node_of);

// The index in `nodes` of the node holding `rank`.
std::size_t node_holding(const std::vector<std::vector<Rank>>& nodes, Rank rank);

}  // namespace nicsim::plan
