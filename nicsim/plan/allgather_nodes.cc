// An allgather over nodes (allgather.h, node_allgather()): the network crossed only by the
// nodes' first ranks, each carrying its whole node's blocks.
//
//   steps 0 .. G-1         G .. G+L-1                           G+L .. 2G+L-1
//   gather                 the algorithm among the leaders,     release
//   member j ─▶ leader      a node's blocks where it moved one    leader ─▶ member j: all but its own
//
// G is the most members (the leader aside) a node has: a step carries at most one transfer each
// way (nic/allgather_op.h), so a leader gathers from and releases to one member per step.
#include <algorithm>

#include "plan/allgather.h"

namespace nicsim::plan {

namespace {

// The origins listed, as ascending ranges that neither overlap nor touch.
std::vector<BlockRange> ranges_of(std::vector<Rank> origins) {
    std::sort(origins.begin(), origins.end());
    std::vector<BlockRange> ranges;
    for (const Rank o : origins) {
        if (!ranges.empty() && ranges.back().first + ranges.back().count == o) {
            ++ranges.back().count;
        } else {
            ranges.push_back({o, 1});
        }
    }
    return ranges;
}

}  // namespace

AllgatherSchedule node_allgather(const AllgatherAlgorithm& algorithm, Rank rank,
                                 std::span<const Rank> order, std::span<const int> node_of) {
    const auto size = static_cast<Rank>(order.size());
    std::vector<std::vector<Rank>> nodes;  // in order of their first rank in `order`
    std::vector<int> ids;
    std::size_t mine = 0;
    for (const Rank r : order) {
        std::size_t i = 0;
        while (i < ids.size() && ids[i] != node_of[r]) ++i;
        if (i == ids.size()) {
            ids.push_back(node_of[r]);
            nodes.emplace_back();
        }
        nodes[i].push_back(r);
        if (r == rank) mine = i;
    }
    const auto count = static_cast<Rank>(nodes.size());
    if (!algorithm.combines || count == 1 || count == size) return algorithm.plan(rank, size);

    std::size_t gather = 0;  // G
    for (const auto& node : nodes) gather = std::max(gather, node.size() - 1);
    const std::vector<Rank>& node = nodes[mine];
    const bool leader = node.front() == rank;
    const AllgatherSchedule among = algorithm.plan(leader ? static_cast<Rank>(mine) : 0, count);
    AllgatherSchedule steps(2 * gather + among.size());
    const std::size_t release = gather + among.size();
    if (!leader) {
        const auto j = static_cast<std::size_t>(std::find(node.begin(), node.end(), rank) -
                                                node.begin());
        steps[j - 1].sends.push_back({node.front(), {{rank, 1}}});
        std::vector<Rank> others;
        for (Rank o = 0; o < size; ++o) {
            if (o != rank) others.push_back(o);
        }
        steps[release + j - 1].recvs.push_back({node.front(), ranges_of(std::move(others))});
        return steps;
    }
    for (std::size_t j = 1; j < node.size(); ++j) {
        steps[j - 1].recvs.push_back({node[j], {{node[j], 1}}});
        std::vector<Rank> others;
        for (Rank o = 0; o < size; ++o) {
            if (o != node[j]) others.push_back(o);
        }
        steps[release + j - 1].sends.push_back({node[j], ranges_of(std::move(others))});
    }
    // A leader-level transfer of nodes' blocks: the origins of every node its ranges name.
    const auto lift = [&nodes](const Transfer& t) {
        std::vector<Rank> origins;
        for (const BlockRange& range : t.blocks) {
            for (Rank i = range.first; i < range.first + range.count; ++i) {
                origins.insert(origins.end(), nodes[i].begin(), nodes[i].end());
            }
        }
        return Transfer{nodes[t.peer].front(), ranges_of(std::move(origins))};
    };
    for (std::size_t s = 0; s < among.size(); ++s) {
        for (const Transfer& t : among[s].sends) steps[gather + s].sends.push_back(lift(t));
        for (const Transfer& t : among[s].recvs) steps[gather + s].recvs.push_back(lift(t));
    }
    return steps;
}

}  // namespace nicsim::plan
