// The switch ordering: a permutation of the nodes with each switch's nodes together, and on small
// hand-drawn networks exactly the depth-first walk of the breadth-first tree from switch 0.
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <set>
#include <string>
#include <vector>

#include "plan/ordering.h"

namespace nicsim::plan {
namespace {

// Links given as pairs; neighbour lists sorted as SwitchNetwork requires.
SwitchNetwork network_of(int switches, const std::vector<std::pair<int, int>>& links,
                         std::vector<int> switch_of_node) {
    SwitchNetwork network{std::move(switch_of_node), std::vector<std::vector<int>>(switches)};
    for (auto [a, b] : links) {
        network.neighbours[a].push_back(b);
        network.neighbours[b].push_back(a);
    }
    for (auto& n : network.neighbours) std::sort(n.begin(), n.end());
    return network;
}

// One node per switch, node i on switch i.
std::vector<int> one_node_each(int switches) {
    std::vector<int> nodes(switches);
    std::iota(nodes.begin(), nodes.end(), 0);
    return nodes;
}

SwitchNetwork mesh(int width, int height, std::vector<int> switch_of_node) {
    std::vector<std::pair<int, int>> links;
    for (int y = 0; y < height; ++y) {
        for (int x = 0; x < width; ++x) {
            if (x + 1 < width) links.push_back({y * width + x, y * width + x + 1});
            if (y + 1 < height) links.push_back({y * width + x, (y + 1) * width + x});
        }
    }
    return network_of(width * height, links, std::move(switch_of_node));
}

TEST(SwitchOrdering, LineOfThreeSwitches) {
    // 0 - 1 - 2, two nodes on each, numbered across the switches.
    const auto network = network_of(3, {{0, 1}, {1, 2}}, {2, 0, 1, 0, 2, 1});
    EXPECT_EQ(switch_ordering(network), (std::vector<Rank>{1, 3, 2, 5, 0, 4}));
}

TEST(SwitchOrdering, StarAroundSwitchTwo) {
    // Leaves 0, 1, 3 around switch 2: from the root 0 through the centre, then 1 before 3.
    const auto network = network_of(4, {{2, 0}, {2, 1}, {2, 3}}, {0, 1, 2, 3, 0, 1, 2, 3});
    EXPECT_EQ(switch_ordering(network), (std::vector<Rank>{0, 4, 2, 6, 1, 5, 3, 7}));
}

TEST(SwitchOrdering, StarAroundSwitchZero) {
    const auto network = network_of(5, {{0, 1}, {0, 2}, {0, 3}, {0, 4}}, {4, 3, 2, 1, 0});
    EXPECT_EQ(switch_ordering(network), (std::vector<Rank>{4, 3, 2, 1, 0}));
}

TEST(SwitchOrdering, WalksTheBreadthFirstTreeNotTheLinks) {
    // Triangle 0-1-2 with 3 hanging off 1. Breadth first, 0 reaches 1 and 2 itself; depth first
    // over the links would go 0, 1, 2 and reach 3 last.
    const auto network = network_of(4, {{0, 1}, {0, 2}, {1, 2}, {1, 3}}, one_node_each(4));
    EXPECT_EQ(switch_ordering(network), (std::vector<Rank>{0, 1, 3, 2}));
}

TEST(SwitchOrdering, ThreeByThreeMesh) {
    // 0 1 2    breadth-first tree from 0: 0 -> 1, 3; 1 -> 2, 4; 2 -> 5; 3 -> 6; 4 -> 7; 5 -> 8
    // 3 4 5
    // 6 7 8
    EXPECT_EQ(switch_ordering(mesh(3, 3, one_node_each(9))),
              (std::vector<Rank>{0, 1, 2, 5, 8, 4, 7, 3, 6}));
}

TEST(SwitchOrdering, SwitchesWithoutNodesAndNoSwitches) {
    EXPECT_EQ(switch_ordering(network_of(3, {{0, 1}, {1, 2}}, {2, 0, 2})),
              (std::vector<Rank>{1, 0, 2}));
    EXPECT_TRUE(switch_ordering(SwitchNetwork{}).empty());
}

struct NamedNetwork {
    std::string name;
    SwitchNetwork network;
};

std::vector<NamedNetwork> networks() {
    std::vector<NamedNetwork> all;
    for (int switches : {1, 2, 5, 16}) {
        for (int per_switch : {1, 3}) {
            // Nodes spread over the switches in a scrambled order.
            std::vector<int> nodes(switches * per_switch);
            for (int i = 0; i < static_cast<int>(nodes.size()); ++i) nodes[i] = (i * 7) % switches;
            std::vector<std::pair<int, int>> ring;
            for (int s = 0; s + 1 < switches; ++s) ring.push_back({s, s + 1});
            if (switches > 2) ring.push_back({switches - 1, 0});
            const std::string suffix = std::to_string(switches) + "x" + std::to_string(per_switch);
            all.push_back({"ring" + suffix, network_of(switches, ring, nodes)});
            std::vector<std::pair<int, int>> tree;  // switch s under (s - 1) / 3: a 3-ary tree
            for (int s = 1; s < switches; ++s) tree.push_back({(s - 1) / 3, s});
            all.push_back({"tree" + suffix, network_of(switches, tree, nodes)});
        }
    }
    std::vector<int> nodes(40);
    for (int i = 0; i < 40; ++i) nodes[i] = (i * 5) % 16;
    all.push_back({"mesh4x4", mesh(4, 4, nodes)});
    return all;
}

class SwitchOrderings : public testing::TestWithParam<NamedNetwork> {};

TEST_P(SwitchOrderings, IsAPermutationWithEachSwitchTogether) {
    const SwitchNetwork& network = GetParam().network;
    const auto order = switch_ordering(network);
    const int nodes = static_cast<int>(network.switch_of_node.size());
    ASSERT_EQ(static_cast<int>(order.size()), nodes);
    std::vector<Rank> sorted = order;
    std::sort(sorted.begin(), sorted.end());
    std::vector<Rank> all(nodes);
    std::iota(all.begin(), all.end(), 0);
    EXPECT_EQ(sorted, all);

    std::set<int> finished;  // switches whose run of nodes has ended
    for (int i = 0; i < nodes; ++i) {
        const int sw = network.switch_of_node[order[i]];
        EXPECT_EQ(finished.count(sw), 0u) << "switch " << sw << " again at position " << i;
        if (i > 0 && network.switch_of_node[order[i - 1]] == sw) {
            EXPECT_LT(order[i - 1], order[i]) << "switch " << sw;
        }
        if (i + 1 < nodes && network.switch_of_node[order[i + 1]] != sw) finished.insert(sw);
    }
    EXPECT_EQ(network.switch_of_node[order[0]], 0);
}

INSTANTIATE_TEST_SUITE_P(GeneratedNetworks, SwitchOrderings, testing::ValuesIn(networks()),
                         [](const auto& info) { return info.param.name; });

TEST(RotateTo, PutsTheRootFirstKeepingTheCycle) {
    const std::vector<Rank> order{1, 3, 2, 5, 0, 4};
    EXPECT_EQ(rotate_to(order, 5), (std::vector<Rank>{5, 0, 4, 1, 3, 2}));
    EXPECT_EQ(rotate_to(order, 4), (std::vector<Rank>{4, 1, 3, 2, 5, 0}));
    EXPECT_EQ(rotate_to(order, 1), order);
    EXPECT_EQ(rotate_to(std::vector<Rank>{7}, 7), std::vector<Rank>{7});
}

}  // namespace
}  // namespace nicsim::plan
