// An allgather over nodes (allgather.h, node_allgather()): each block crosses into every other
// node once.
//
// Combining (rd): the nodes' first ranks lead, and only they cross between nodes, each carrying
// its whole node's blocks.
//
//   steps 0 .. G-1      G .. G+L-1                          G+L .. 2G+L-1
//   gather              the algorithm among the leaders,    release
//   member j ─▶ leader  a node's blocks where it moved one  leader ─▶ member j: all but its own
//
// G is the most members (the leader aside) a node has: a step carries at most one transfer each
// way (nic/allgather_op.h), so a leader gathers from and releases to one member per step.
//
// Hopping (ab): the members of every node cross in parallel, by columns. With S the fewest
// members a node has, column c < S is the c-th member of every node; it carries the blocks of
// its node's members at positions c, c + S, c + 2S, ... (a rank at a position p >= S gives its
// block to member p mod S first). The columns run the algorithm among the nodes, then each rank
// gives every other member of its node its own block and the other nodes' blocks it carried.
//
//   steps 0 .. F-1              F .. F+L-1                F+L .. F+L+M-2
//   fold in                     the algorithm, column by  spread
//   member c + iS ─▶ member c   column, among the nodes   member i ─▶ member i + t + 1 (mod node)
//
// F = ceil(most members / S) - 1, L the algorithm's steps on the node count, M the most members.
// The packets of a block still hop as they arrive: the algorithm's tree of its origin's node, then
// one hop inside each node. Every block crosses into each other node exactly once, and the
// crossings are spread over every rank, not one per node.
#include <algorithm>

#include "plan/allgather.h"
#include "plan/nodes.h"

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

using Nodes = std::vector<std::vector<Rank>>;

// The members of a node at positions column, column + stride, column + 2 stride, ...: a leader's
// whole node (0, 1), or what a column carries (c, S).
void add_column(std::vector<Rank>& to, const std::vector<Rank>& members, std::size_t column,
                std::size_t stride) {
    for (std::size_t p = column; p < members.size(); p += stride) to.push_back(members[p]);
}

// The node-level transfer `t` lifted to ranks: to the member `column` of node t.peer, carrying
// the blocks of each named node's members in that column (add_column()).
Transfer lift(const Transfer& t, const Nodes& nodes, std::size_t column, std::size_t stride) {
    std::vector<Rank> origins;
    for (const BlockRange& range : t.blocks) {
        for (Rank i = range.first; i < range.first + range.count; ++i)
            add_column(origins, nodes[i], column, stride);
    }
    return {nodes[t.peer][column], ranges_of(std::move(origins))};
}

AllgatherSchedule through_leaders(const AllgatherAlgorithm& algorithm, Rank rank, Rank size,
                                  const Nodes& nodes, std::size_t mine) {
    std::size_t gather = 0;  // G
    for (const auto& node : nodes) gather = std::max(gather, node.size() - 1);
    const std::vector<Rank>& node = nodes[mine];
    const bool leader = node.front() == rank;
    const auto count = static_cast<Rank>(nodes.size());
    const AllgatherSchedule among = algorithm.plan(leader ? static_cast<Rank>(mine) : 0, count);
    AllgatherSchedule steps(2 * gather + among.size());
    const std::size_t release = gather + among.size();
    const auto all_but = [size](Rank member) {
        std::vector<Rank> others;
        for (Rank o = 0; o < size; ++o) {
            if (o != member) others.push_back(o);
        }
        return ranges_of(std::move(others));
    };
    if (!leader) {
        const auto j = static_cast<std::size_t>(std::find(node.begin(), node.end(), rank) -
                                                node.begin());
        steps[j - 1].sends.push_back({node.front(), {{rank, 1}}});
        steps[release + j - 1].recvs.push_back({node.front(), all_but(rank)});
        return steps;
    }
    for (std::size_t j = 1; j < node.size(); ++j) {
        steps[j - 1].recvs.push_back({node[j], {{node[j], 1}}});
        steps[release + j - 1].sends.push_back({node[j], all_but(node[j])});
    }
    for (std::size_t s = 0; s < among.size(); ++s) {
        for (const Transfer& t : among[s].sends)
            steps[gather + s].sends.push_back(lift(t, nodes, 0, 1));
        for (const Transfer& t : among[s].recvs)
            steps[gather + s].recvs.push_back(lift(t, nodes, 0, 1));
    }
    return steps;
}

AllgatherSchedule by_columns(const AllgatherAlgorithm& algorithm, Rank rank, const Nodes& nodes,
                             std::size_t mine) {
    std::size_t fewest = nodes.front().size(), most = 0;  // S, M
    for (const auto& node : nodes) {
        fewest = std::min(fewest, node.size());
        most = std::max(most, node.size());
    }
    const std::size_t fold = (most + fewest - 1) / fewest - 1;  // F
    const std::vector<Rank>& node = nodes[mine];
    const auto position = static_cast<std::size_t>(std::find(node.begin(), node.end(), rank) -
                                                   node.begin());
    const std::size_t column = position % fewest;
    const auto count = static_cast<Rank>(nodes.size());
    const AllgatherSchedule among = algorithm.plan(static_cast<Rank>(mine), count);
    AllgatherSchedule steps(fold + among.size() + most - 1);

    if (position >= fewest) {
        steps[position / fewest - 1].sends.push_back({node[column], {{rank, 1}}});
    } else {
        for (std::size_t p = position + fewest; p < node.size(); p += fewest)
            steps[p / fewest - 1].recvs.push_back({node[p], {{node[p], 1}}});
        for (std::size_t s = 0; s < among.size(); ++s) {
            for (const Transfer& t : among[s].sends)
                steps[fold + s].sends.push_back(lift(t, nodes, column, fewest));
            for (const Transfer& t : among[s].recvs)
                steps[fold + s].recvs.push_back(lift(t, nodes, column, fewest));
        }
    }
    // Spreading: what member i gives member j of the same node. Its own block, unless j took it
    // when i folded in, and the other nodes' blocks of i's column if i carries one.
    const auto spread = [&](std::size_t i, std::size_t j) {
        std::vector<Rank> origins;
        if (!(i >= fewest && j == i % fewest)) origins.push_back(node[i]);
        for (std::size_t n = 0; i < fewest && n < nodes.size(); ++n) {
            if (n != mine) add_column(origins, nodes[n], i, fewest);
        }
        return ranges_of(std::move(origins));
    };
    const std::size_t first = fold + among.size();
    const std::size_t members = node.size();
    for (std::size_t t = 0; t + 1 < members; ++t) {
        const std::size_t to = (position + t + 1) % members;
        const std::size_t from = (position + members - t - 1) % members;
        if (auto blocks = spread(position, to); !blocks.empty())
            steps[first + t].sends.push_back({node[to], std::move(blocks)});
        if (auto blocks = spread(from, position); !blocks.empty())
            steps[first + t].recvs.push_back({node[from], std::move(blocks)});
    }
    return steps;
}

}  // namespace

AllgatherSchedule node_allgather(const AllgatherAlgorithm& algorithm, Rank rank,
                                 std::span<const Rank> order, std::span<const int> node_of) {
    const auto size = static_cast<Rank>(order.size());
    const Nodes nodes = ranks_by_node(order, node_of);
    const std::size_t mine = node_holding(nodes, rank);
    const auto count = static_cast<Rank>(nodes.size());
    if (count == 1 || count == size) return algorithm.plan(rank, size);
    return algorithm.combines ? through_leaders(algorithm, rank, size, nodes, mine)
                              : by_columns(algorithm, rank, nodes, mine);
}

}  // namespace nicsim::plan
