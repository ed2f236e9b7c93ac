// Planner: an ordering of the nodes for the trees of tree.h.
//
// Every tree shape sends within contiguous ranges of positions, so it causes little contention
// when nodes consecutive in the ordering are close in the network (Kesavan and Panda §4.3.2). With
// up*/down* routing on an irregular network no ordering is contention-free (Kesavan and Panda
// points to its authors' partial ordered chains); the one here takes the simple route of walking
// the switches depth first, so a range of positions mostly stays under one subtree of switches.
#pragma once

#include <span>
#include <vector>

#include "core/status.h"

namespace nicsim::plan {

// The switch network as the planner sees it (the simulator's topologies produce this).
struct SwitchNetwork {
    std::vector<int> switch_of_node;  // node -> its switch
    std::vector<std::vector<int>>
        neighbours;  // switch -> adjacent switches (sorted, no duplicates)
};

// A minimal-contention ordering of the nodes (Kesavan and Panda §4.3.2): the switches in a
// depth-first preorder of the breadth-first spanning tree rooted at switch 0 (the up*/down* root;
// children visited in increasing switch id), the nodes of one switch together in increasing node
// id. Consecutive nodes of the order are then close in the network, so the contiguous ranges the
// trees are built on stay in separate parts of it. The network must be connected.
std::vector<Rank> switch_ordering(const SwitchNetwork& network);

// The order rotated so `root` comes first (a multicast's source is position 0); root must be in it.
// Broadcast trees are laid along it, by the agent in real jobs and in the model alike: every
// sender's tree is then the same tree turned, as LFC's all-to-all multicast has them.
std::vector<Rank> rotate_to(std::span<const Rank> order, Rank root);

}  // namespace nicsim::plan
