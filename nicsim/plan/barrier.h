// Planner: barrier schedules.
//
// plan/ holds pure functions from (rank, group size, ...) to a schedule: no I/O, no clocks, no
// NIC state, so every schedule is unit-tested exhaustively. A barrier schedule is a list of
// steps; at each step a rank first sends one token to every rank in `send_to`, then waits for a
// token from every rank in `recv_from`, then moves to the next step. Step numbers are global
// (the same index means the same step on every rank), so a token carries its step and may arrive
// before its receiver gets there.
#pragma once

#include <span>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace nicsim::plan {

struct BarrierStep {
    std::vector<Rank> send_to;
    std::vector<Rank> recv_from;

    friend bool operator==(const BarrierStep&, const BarrierStep&) = default;
};

using BarrierSchedule = std::vector<BarrierStep>;

// A step waits for at most this many tokens: the NIC tracks a step's arrivals in one 64-bit word.
constexpr std::size_t kMaxBarrierSenders = 64;

struct BarrierAlgorithm {
    std::string_view name;
    std::string_view description;
    BarrierSchedule (*plan)(Rank rank, Rank size);
};

// The table of barrier algorithms; index 0 is the default.
std::span<const BarrierAlgorithm> barrier_algorithms();

// The barrier over nodes (barrier_nodes.cc) for `rank`: ranks whose node_of (by rank) is the same
// share a node, led by its first rank in `order`. Every member signals its leader, the leaders
// run `algorithm` among themselves (numbered by their order), and each leader releases its
// members: only leaders cross between nodes. With one node, one rank per node, or a node of
// more than kMaxBarrierSenders + 1 ranks, algorithm.plan(rank, size).
BarrierSchedule node_barrier(const BarrierAlgorithm& algorithm, Rank rank,
                             std::span<const Rank> order, std::span<const int> node_of);

// ceil(log2(size)) for size >= 1.
int ceil_log2(Rank size);

}  // namespace nicsim::plan
