// A barrier over nodes (barrier.h, node_barrier()): the network crossed only by the nodes' first
// ranks.
//
//   step 0        1 .. L                              L + 1
//   gather        the algorithm among the leaders     release
//   member ─▶ leader    leader ◀─▶ leader              leader ─▶ member
#include "plan/barrier.h"
#include "plan/nodes.h"

namespace nicsim::plan {

BarrierSchedule node_barrier(const BarrierAlgorithm& algorithm, Rank rank,
                             std::span<const Rank> order, std::span<const int> node_of) {
    const auto size = static_cast<Rank>(order.size());
    // The nodes in order of their first rank in `order`, which leads each.
    const std::vector<std::vector<Rank>> nodes = ranks_by_node(order, node_of);
    const std::size_t mine = node_holding(nodes, rank);
    const auto count = static_cast<Rank>(nodes.size());
    bool fits = true;  // a leader hears from every member in one step
    for (const auto& node : nodes) fits = fits && node.size() - 1 <= kMaxBarrierSenders;
    if (count == 1 || count == size || !fits) return algorithm.plan(rank, size);

    const std::vector<Rank>& node = nodes[mine];
    const bool leader = node.front() == rank;
    BarrierSchedule among = algorithm.plan(leader ? static_cast<Rank>(mine) : 0, count);
    BarrierSchedule steps(among.size() + 2);
    if (!leader) {
        steps.front().send_to = {node.front()};
        steps.back().recv_from = {node.front()};
        return steps;
    }
    steps.front().recv_from.assign(node.begin() + 1, node.end());
    for (std::size_t s = 0; s < among.size(); ++s) {
        for (const Rank i : among[s].send_to) steps[s + 1].send_to.push_back(nodes[i].front());
        for (const Rank i : among[s].recv_from) steps[s + 1].recv_from.push_back(nodes[i].front());
    }
    steps.back().send_to.assign(node.begin() + 1, node.end());
    return steps;
}

}  // namespace nicsim::plan
