#include "plan/ordering.h"

#include <algorithm>

namespace nicsim::plan {

std::vector<Rank> switch_ordering(const SwitchNetwork& network) {
    const int switches = static_cast<int>(network.neighbours.size());
    std::vector<Rank> order;
    if (switches == 0) return order;
    std::vector<std::vector<Rank>> nodes_of(switches);
    for (Rank node = 0; node < static_cast<Rank>(network.switch_of_node.size()); ++node) {
        nodes_of[network.switch_of_node[node]].push_back(node);
    }

    // Breadth first from switch 0: a switch's tree children are the neighbours it discovers, in
    // increasing id because the neighbour lists are sorted.
    std::vector<std::vector<int>> tree_children(switches);
    std::vector<bool> seen(switches, false);
    std::vector<int> queue{0};
    seen[0] = true;
    for (std::size_t head = 0; head < queue.size(); ++head) {
        for (int next : network.neighbours[queue[head]]) {
            if (seen[next]) continue;
            seen[next] = true;
            tree_children[queue[head]].push_back(next);
            queue.push_back(next);
        }
    }

    // Depth-first preorder of that tree; the stack holds children in reverse to pop them in order.
    std::vector<int> stack{0};
    while (!stack.empty()) {
        const int at = stack.back();
        stack.pop_back();
        order.insert(order.end(), nodes_of[at].begin(), nodes_of[at].end());
        stack.insert(stack.end(), tree_children[at].rbegin(), tree_children[at].rend());
    }
    return order;
}

std::vector<Rank> rotate_to(std::span<const Rank> order, Rank root) {
    std::vector<Rank> rotated(order.begin(), order.end());
    std::rotate(rotated.begin(), std::find(rotated.begin(), rotated.end(), root), rotated.end());
    return rotated;
}

}  // namespace nicsim::plan
