#include "plan/nodes.h"

#include <algorithm>

namespace nicsim::plan {

std::vector<std::vector<Rank>> ranks_by_node(std::span<const Rank> order,
                                             std::span<const int> node_of) {
    std::vector<std::vector<Rank>> nodes;
    std::vector<int> ids;  // node numbers, by index in `nodes`
    for (const Rank r : order) {
        const auto i = static_cast<std::size_t>(std::find(ids.begin(), ids.end(), node_of[r]) -
                                                ids.begin());
        if (i == ids.size()) {
            ids.push_back(node_of[r]);
            nodes.emplace_back();
        }
        nodes[i].push_back(r);
    }
    return nodes;
}

std::size_t node_holding(const std::vector<std::vector<Rank>>& nodes, Rank rank) {
    std::size_t i = 0;
    while (i < nodes.size() && std::find(nodes[i].begin(), nodes[i].end(), rank) == nodes[i].end())
        ++i;
    return i;
}

}  // namespace nicsim::plan
