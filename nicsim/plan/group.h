// Planner: the binomial group topology (Yu et al. §4.1.1).
//
// A NIC cannot afford the whole membership of a large group, let alone a state per peer. Over a
// binomial tree every pair of ranks that talk directly is a power of two apart, and a binomial
// tree rooted at any rank (relative ranks, modulo the group size) uses only these distances. So a
// rank keeps 2 * ceil(log2 N) entries: the ranks 2^k after it and 2^k before it on the ring of
// ranks, k = 0 .. ceil(log2 N) - 1. Below, N = 6 and rank 5:
//
//   k   2^k   up[k] = (5 + 2^k) mod 6   down[k] = (5 - 2^k) mod 6
//   0    1    0                          4
//   1    2    1                          3
//   2    4    3                          1
//
// up[k] are the rank's children and down[k] its parents in the binomial trees of all roots; every
// allgather schedule (allgather.h) but flat's names only these peers, so the NIC needs no other
// rank table.
// The same rank may appear twice (N = 2: up[0] == down[0]), which is cheaper than deduplicating.
#pragma once

#include <vector>

#include "core/status.h"

namespace nicsim::plan {

// What a rank's NIC keeps of its group.
struct Group {
    std::vector<Rank> up;    // up[k] = (rank + 2^k) mod size
    std::vector<Rank> down;  // down[k] = (rank - 2^k) mod size

    friend bool operator==(const Group&, const Group&) = default;
};

// The group topology of `rank` in a group of `size` >= 1: ceil(log2 size) entries each way.
Group binomial_group(Rank rank, Rank size);

}  // namespace nicsim::plan
