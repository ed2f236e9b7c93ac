// Topologies: the crossbar, Bhoedjang et al.'s hypercube and Kesavan and Panda's irregular networks. Routes are
// read back link by link through link_name(), so these tests do not depend on how links are
// numbered; irregular routes are compared with a brute-force search over up*/down* routes.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <set>
#include <string>
#include <vector>

#include "sim/topology.h"

namespace nicsim::sim {
namespace {

std::string node(int n) {
    return "node" + std::to_string(n);
}
std::string sw(int s) {
    return "sw" + std::to_string(s);
}

// The switches the route from a to b visits, in order, after checking that its links join up
// from a to b and that switch_hops() agrees with it.
std::vector<int> visited_switches(const Topology& topology, int a, int b) {
    std::vector<LinkId> path;
    topology.route(a, b, path);
    std::vector<int> visited{topology.switch_of(a)};
    if (path.size() < 2) {
        ADD_FAILURE() << "route " << a << " -> " << b << " has " << path.size() << " links";
        return visited;
    }
    for (LinkId link : path) EXPECT_LT(link, topology.links());
    EXPECT_EQ(topology.link_name(path.front()), node(a) + ">" + sw(topology.switch_of(a)));
    EXPECT_EQ(topology.link_name(path.back()), sw(topology.switch_of(b)) + ">" + node(b));
    for (std::size_t i = 1; i + 1 < path.size(); ++i) {
        int from = -1;
        int to = -1;
        const std::string name = topology.link_name(path[i]);
        if (std::sscanf(name.c_str(), "sw%d>sw%d", &from, &to) != 2 || to < 0 ||
            to >= topology.switches()) {
            ADD_FAILURE() << "route " << a << " -> " << b << " crosses " << name;
            return visited;
        }
        EXPECT_EQ(from, visited.back()) << "route " << a << " -> " << b << " breaks at " << name;
        visited.push_back(to);
    }
    EXPECT_EQ(visited.back(), topology.switch_of(b)) << "route " << a << " -> " << b;
    EXPECT_EQ(topology.switch_hops(a, b), static_cast<int>(path.size()) - 1);
    return visited;
}

// Every link has its own name, and a switch-to-switch link exists exactly for each neighbour.
void expect_links_match_neighbours(const Topology& topology) {
    std::set<std::string> names;
    for (LinkId link = 0; link < topology.links(); ++link) names.insert(topology.link_name(link));
    EXPECT_EQ(names.size(), topology.links());
    std::size_t cables = 0;
    for (int s = 0; s < topology.switches(); ++s) {
        for (int v : topology.switch_neighbours()[s]) {
            EXPECT_TRUE(names.count(sw(s) + ">" + sw(v))) << sw(s) + ">" + sw(v);
            ++cables;
        }
    }
    EXPECT_EQ(topology.links(), 2 * static_cast<std::size_t>(topology.nodes()) + cables);
}

// --- crossbar -----------------------------------------------------------------------------------

class Crossbar : public testing::TestWithParam<int> {};

TEST_P(Crossbar, EveryRouteIsTheTwoNodesLinks) {
    const int nodes = GetParam();
    const Topology topology = Topology::crossbar(nodes);
    EXPECT_EQ(topology.kind(), "crossbar");
    EXPECT_EQ(topology.nodes(), nodes);
    EXPECT_EQ(topology.switches(), 1);
    EXPECT_EQ(topology.links(), 2 * static_cast<std::size_t>(nodes));
    EXPECT_EQ(topology.switch_neighbours(), std::vector<std::vector<int>>{{}});
    expect_links_match_neighbours(topology);
    std::vector<int> uses(topology.links(), 0);
    std::vector<LinkId> path;
    for (int a = 0; a < nodes; ++a) {
        for (int b = 0; b < nodes; ++b) {
            if (a == b) continue;
            path.clear();
            topology.route(a, b, path);
            ASSERT_EQ(path.size(), 2u) << a << " -> " << b;
            EXPECT_NE(path[0], path[1]);
            EXPECT_EQ(topology.link_name(path[0]), node(a) + ">sw0");
            EXPECT_EQ(topology.link_name(path[1]), "sw0>" + node(b));
            EXPECT_EQ(topology.switch_hops(a, b), 1);
            ++uses[path[0]];
            ++uses[path[1]];
        }
    }
    // Each node's two links carry exactly its own traffic: nodes - 1 routes out, nodes - 1 in.
    for (LinkId link = 0; link < topology.links(); ++link) EXPECT_EQ(uses[link], nodes - 1);
}

INSTANTIATE_TEST_SUITE_P(Sizes, Crossbar, testing::Values(1, 2, 3, 8, 64, 200));

TEST(Crossbar, LargestSize) {
    const Topology topology = Topology::crossbar(65536);
    std::vector<LinkId> path;
    topology.route(65535, 0, path);
    ASSERT_EQ(path.size(), 2u);
    EXPECT_EQ(topology.link_name(path[0]), "node65535>sw0");
    EXPECT_EQ(topology.link_name(path[1]), "sw0>node0");
}

// --- hypercube ----------------------------------------------------------------------------------

struct CubeCase {
    int nodes;
    int ports;
    int switches;
    int hosts_per_switch;
};

class Hypercube : public testing::TestWithParam<CubeCase> {};

TEST_P(Hypercube, ShapeAndECubeRoutes) {
    const CubeCase c = GetParam();
    std::string why;
    const auto topology = Topology::hypercube(c.nodes, c.ports, &why);
    ASSERT_TRUE(topology) << why;
    EXPECT_EQ(topology->kind(), "hypercube");
    EXPECT_EQ(topology->nodes(), c.nodes);
    ASSERT_EQ(topology->switches(), c.switches);
    const int dimensions = std::countr_zero(static_cast<unsigned>(c.switches));
    EXPECT_EQ(c.hosts_per_switch, c.ports - dimensions);
    for (int n = 0; n < c.nodes; ++n) EXPECT_EQ(topology->switch_of(n), n / c.hosts_per_switch);
    for (int s = 0; s < c.switches; ++s) {
        std::vector<int> expected;
        for (int k = 0; k < dimensions; ++k) expected.push_back(s ^ (1 << k));
        std::sort(expected.begin(), expected.end());
        EXPECT_EQ(topology->switch_neighbours()[s], expected) << "switch " << s;
    }
    expect_links_match_neighbours(*topology);

    for (int a = 0; a < c.nodes; ++a) {
        for (int b = 0; b < c.nodes; ++b) {
            if (a == b) continue;
            const int target = topology->switch_of(b);
            const auto visited = visited_switches(*topology, a, b);
            EXPECT_EQ(static_cast<int>(visited.size()) - 1,
                      std::popcount(static_cast<unsigned>(topology->switch_of(a) ^ target)));
            for (std::size_t i = 1; i < visited.size(); ++i) {
                const int differ = visited[i - 1] ^ target;
                ASSERT_EQ(visited[i], visited[i - 1] ^ (differ & -differ))
                    << a << " -> " << b << " hop " << i << " is not the lowest dimension";
            }
        }
    }
}

INSTANTIATE_TEST_SUITE_P(Sizes, Hypercube,
                         testing::Values(CubeCase{64, 8, 16, 4},  // Bhoedjang et al.'s cluster
                                         CubeCase{61, 8, 16, 4},  // its 61-processor runs
                                         CubeCase{128, 8, 64, 2}, CubeCase{1, 8, 1, 8},
                                         CubeCase{8, 8, 1, 8}, CubeCase{9, 8, 2, 7},
                                         CubeCase{100, 16, 8, 13}, CubeCase{1, 1, 1, 1}),
                         [](const auto& info) {
                             return "N" + std::to_string(info.param.nodes) + "_ports" +
                                    std::to_string(info.param.ports);
                         });

TEST(Hypercube, SaysWhyItCannot) {
    std::string why;
    EXPECT_FALSE(Topology::hypercube(129, 8, &why));
    EXPECT_EQ(why, "hypercube: 129 nodes do not fit on 8-port switches (at most 128)");
    EXPECT_FALSE(Topology::hypercube(0, 8, &why));
    EXPECT_EQ(why, "hypercube: need at least 1 node, got 0");
    EXPECT_FALSE(Topology::hypercube(-3, 8, &why));
    EXPECT_EQ(why, "hypercube: need at least 1 node, got -3");
    EXPECT_FALSE(Topology::hypercube(129, 8, nullptr));
}

TEST(Hypercube, NamesTheLinksOfARoute) {
    const auto topology = Topology::hypercube(64, 8, nullptr);
    ASSERT_TRUE(topology);
    std::vector<LinkId> path;
    topology->route(3, 61, path);  // switch 0 to switch 15: dimensions 0, 1, 2, 3 in turn
    std::vector<std::string> names;
    for (LinkId link : path) names.push_back(topology->link_name(link));
    EXPECT_EQ(names, (std::vector<std::string>{"node3>sw0", "sw0>sw1", "sw1>sw3", "sw3>sw7",
                                               "sw7>sw15", "sw15>node61"}));
}

// --- irregular ----------------------------------------------------------------------------------

// Up*/down* by brute force: levels from a breadth-first search from switch 0, and the length of
// the shortest legal route from every (switch, went_down) state to every switch.
class UpDown {
public:
    static constexpr int kNone = std::numeric_limits<int>::max();

    explicit UpDown(const std::vector<std::vector<int>>& neighbours)
        : n_(static_cast<int>(neighbours.size())),
          level_(n_, -1),
          remaining_(2 * static_cast<std::size_t>(n_) * n_) {
        std::vector<int> queue{0};
        level_[0] = 0;
        for (std::size_t head = 0; head < queue.size(); ++head) {
            for (int v : neighbours[queue[head]]) {
                if (level_[v] < 0) {
                    level_[v] = level_[queue[head]] + 1;
                    queue.push_back(v);
                }
            }
        }
        for (int start = 0; start < 2 * n_; ++start) {
            std::vector<int> distance(2 * n_, kNone);
            std::vector<int> states{start};
            distance[start] = 0;
            for (std::size_t head = 0; head < states.size(); ++head) {
                const int s = states[head] / 2;
                const bool went_down = states[head] % 2;
                for (int v : neighbours[s]) {
                    if (up(s, v) && went_down) continue;
                    const int next = 2 * v + !up(s, v);
                    if (distance[next] == kNone) {
                        distance[next] = distance[states[head]] + 1;
                        states.push_back(next);
                    }
                }
            }
            for (int t = 0; t < n_; ++t) {
                remaining_[start * static_cast<std::size_t>(n_) + t] =
                    std::min(distance[2 * t], distance[2 * t + 1]);
            }
        }
    }

    int level(int s) const { return level_[s]; }
    // Whether the link from s to v goes up.
    bool up(int s, int v) const { return std::pair(level_[v], v) < std::pair(level_[s], s); }
    // Links on a shortest legal route from state (s, went_down) to t; kNone when there is none.
    int remaining(int s, bool went_down, int t) const {
        return remaining_[(2 * s + went_down) * static_cast<std::size_t>(n_) + t];
    }

private:
    int n_;
    std::vector<int> level_;
    std::vector<int> remaining_;
};

// Every route between `nodes` is legal up*/down*, loop-free, and the shortest legal one, with
// ties going to the lower-numbered next switch.
void expect_up_down_routes(const Topology& topology, const std::vector<int>& nodes) {
    const UpDown updown(topology.switch_neighbours());
    for (int s = 0; s < topology.switches(); ++s) ASSERT_GE(updown.level(s), 0) << "unreachable";
    std::vector<int> seen(topology.switches(), -1);
    int route_number = 0;
    for (int a : nodes) {
        for (int b : nodes) {
            if (a == b) continue;
            const int target = topology.switch_of(b);
            const auto visited = visited_switches(topology, a, b);
            ++route_number;
            for (int v : visited) {
                ASSERT_NE(seen[v], route_number)
                    << a << " -> " << b << " visits " << sw(v) << " twice";
                seen[v] = route_number;
            }
            EXPECT_EQ(static_cast<int>(visited.size()) - 1,
                      updown.remaining(visited[0], false, target))
                << a << " -> " << b << " is not a shortest legal route";
            bool went_down = false;
            for (std::size_t i = 1; i < visited.size(); ++i) {
                const int s = visited[i - 1];
                ASSERT_FALSE(went_down && updown.up(s, visited[i]))
                    << a << " -> " << b << " goes up after going down, at hop " << i;
                // The lowest-numbered legal next switch one link nearer the target.
                const int left = updown.remaining(s, went_down, target);
                int expected = -1;
                for (int u : topology.switch_neighbours()[s]) {
                    if (went_down && updown.up(s, u)) continue;
                    if (updown.remaining(u, went_down || !updown.up(s, u), target) == left - 1) {
                        expected = u;
                        break;
                    }
                }
                ASSERT_EQ(visited[i], expected) << a << " -> " << b << " hop " << i;
                went_down = went_down || !updown.up(s, visited[i]);
            }
        }
    }
}

struct IrregularCase {
    int nodes;
    int ports;
    int hosts_per_switch;
    std::uint64_t seed;
    int switches;
};

class Irregular : public testing::TestWithParam<IrregularCase> {};

TEST_P(Irregular, ConnectedWithinPortBudgets) {
    const IrregularCase c = GetParam();
    std::string why;
    const auto topology = Topology::irregular(c.nodes, c.ports, c.hosts_per_switch, c.seed, &why);
    ASSERT_TRUE(topology) << why;
    EXPECT_EQ(topology->kind(), "irregular");
    EXPECT_EQ(topology->nodes(), c.nodes);
    ASSERT_EQ(topology->switches(), c.switches);
    std::vector<int> hosts(c.switches, 0);
    for (int n = 0; n < c.nodes; ++n) {
        EXPECT_EQ(topology->switch_of(n), n / c.hosts_per_switch);
        ++hosts[n / c.hosts_per_switch];
    }
    const auto& neighbours = topology->switch_neighbours();
    auto cabled = [&](int s, int v) {
        return std::binary_search(neighbours[s].begin(), neighbours[s].end(), v);
    };
    for (int s = 0; s < c.switches; ++s) {
        EXPECT_TRUE(std::is_sorted(neighbours[s].begin(), neighbours[s].end()));
        EXPECT_EQ(std::adjacent_find(neighbours[s].begin(), neighbours[s].end()),
                  neighbours[s].end())
            << sw(s) << " is cabled twice to one switch";
        EXPECT_FALSE(cabled(s, s)) << sw(s) << " is cabled to itself";
        EXPECT_LE(hosts[s] + static_cast<int>(neighbours[s].size()), c.ports) << sw(s);
        for (int v : neighbours[s]) EXPECT_TRUE(cabled(v, s)) << sw(v) << " lacks " << sw(s);
    }
    // Wiring stops only when no two switches that are not cabled both have a free port.
    auto has_free_port = [&](int s) {
        return hosts[s] + static_cast<int>(neighbours[s].size()) < c.ports;
    };
    for (int s = 0; s < c.switches; ++s) {
        for (int v = s + 1; v < c.switches; ++v) {
            EXPECT_FALSE(has_free_port(s) && has_free_port(v) && !cabled(s, v))
                << sw(s) << " and " << sw(v) << " could still be cabled";
        }
    }
    expect_links_match_neighbours(*topology);
}

TEST_P(Irregular, EveryRouteIsAShortestUpDownRoute) {
    const IrregularCase c = GetParam();
    const auto topology =
        Topology::irregular(c.nodes, c.ports, c.hosts_per_switch, c.seed, nullptr);
    ASSERT_TRUE(topology);
    std::vector<int> all(c.nodes);
    for (int n = 0; n < c.nodes; ++n) all[n] = n;
    expect_up_down_routes(*topology, all);
}

TEST_P(Irregular, SameSeedSameNetwork) {
    const IrregularCase c = GetParam();
    const auto one = Topology::irregular(c.nodes, c.ports, c.hosts_per_switch, c.seed, nullptr);
    const auto two = Topology::irregular(c.nodes, c.ports, c.hosts_per_switch, c.seed, nullptr);
    ASSERT_TRUE(one && two);
    EXPECT_EQ(one->switch_neighbours(), two->switch_neighbours());
    std::vector<LinkId> first;
    std::vector<LinkId> second;
    for (int a = 0; a < c.nodes; ++a) {
        for (int b = 0; b < c.nodes; ++b) {
            if (a == b) continue;
            one->route(a, b, first);
            two->route(a, b, second);
        }
    }
    EXPECT_EQ(first, second);
}

INSTANTIATE_TEST_SUITE_P(
    Networks, Irregular,
    testing::Values(
        // Kesavan and Panda's network: 64 nodes on sixteen 8-port switches
        IrregularCase{64, 8, 4, 1, 16}, IrregularCase{64, 8, 4, 2, 16},
        IrregularCase{64, 8, 4, 3, 16}, IrregularCase{64, 8, 4, 4, 16},
        IrregularCase{64, 8, 4, 5, 16}, IrregularCase{64, 8, 4, 0xfeedULL, 16},
        IrregularCase{61, 8, 4, 7, 16},  // the last switch half empty
        IrregularCase{64, 6, 4, 8, 16},  // two free ports: little beyond the tree
        IrregularCase{100, 12, 5, 9, 20}, IrregularCase{8, 5, 4, 10, 2},
        IrregularCase{4, 8, 4, 11, 1}, IrregularCase{1, 8, 4, 12, 1}),
    [](const auto& info) {
        const IrregularCase& c = info.param;
        return "N" + std::to_string(c.nodes) + "_ports" + std::to_string(c.ports) + "_hosts" +
               std::to_string(c.hosts_per_switch) + "_seed" + std::to_string(c.seed);
    });

TEST(Irregular, DifferentSeedsDifferentNetworks) {
    std::vector<std::vector<std::vector<int>>> networks;
    for (std::uint64_t seed = 1; seed <= 10; ++seed) {
        const auto topology = Topology::irregular(64, 8, 4, seed, nullptr);
        ASSERT_TRUE(topology);
        for (const auto& other : networks) EXPECT_NE(topology->switch_neighbours(), other);
        networks.push_back(topology->switch_neighbours());
    }
}

TEST(Irregular, LargestSize) {
    const auto topology = Topology::irregular(4096, 8, 4, 2024, nullptr);
    ASSERT_TRUE(topology);
    EXPECT_EQ(topology->switches(), 1024);
    // Routes between every eighth switch: checking all million switch pairs takes seconds.
    std::vector<int> sample;
    for (int s = 0; s < 1024; s += 8) sample.push_back(4 * s + s % 4);
    expect_up_down_routes(*topology, sample);
}

TEST(Irregular, SaysWhyItCannot) {
    std::string why;
    EXPECT_FALSE(Topology::irregular(0, 8, 4, 1, &why));
    EXPECT_EQ(why, "irregular: need at least 1 node, got 0");
    EXPECT_FALSE(Topology::irregular(64, 8, 0, 1, &why));
    EXPECT_EQ(why, "irregular: need at least 1 host per switch, got 0");
    EXPECT_FALSE(Topology::irregular(64, 2, 4, 1, &why));
    EXPECT_EQ(why, "irregular: 4 hosts per switch do not fit on 2-port switches");
    EXPECT_FALSE(Topology::irregular(64, 4, 4, 1, &why));
    EXPECT_EQ(why,
              "irregular: 4-port switches with 4 hosts each leave 0 ports free; connecting 16 "
              "switches needs 2");
    EXPECT_FALSE(Topology::irregular(12, 5, 4, 1, &why));
    EXPECT_EQ(why,
              "irregular: 5-port switches with 4 hosts each leave 1 ports free; connecting 3 "
              "switches needs 2");
    EXPECT_FALSE(Topology::irregular(4 * 4097, 8, 4, 1, &why));
    EXPECT_EQ(why,
              "irregular: 16388 nodes need 4097 switches, more than the 4096 the routing table is "
              "sized for");
    EXPECT_FALSE(Topology::irregular(64, 257, 4, 1, &why));
    EXPECT_EQ(why,
              "irregular: 257-port switches have too many ports for the routing table (at most "
              "256)");
    EXPECT_TRUE(Topology::irregular(64, 256, 4, 1, &why)) << why;
    EXPECT_FALSE(Topology::irregular(0, 8, 4, 1, nullptr));
}

// --- every kind ---------------------------------------------------------------------------------

TEST(Topology, RouteAppends) {
    const auto topology = Topology::irregular(64, 8, 4, 1, nullptr);
    ASSERT_TRUE(topology);
    std::vector<LinkId> alone;
    topology->route(0, 63, alone);
    std::vector<LinkId> path{77};
    topology->route(0, 63, path);
    ASSERT_EQ(path.size(), alone.size() + 1);
    EXPECT_EQ(path[0], 77u);
    EXPECT_TRUE(std::equal(alone.begin(), alone.end(), path.begin() + 1));
}

TEST(Topology, NodeLinkNames) {
    const Topology topology = Topology::crossbar(4);
    EXPECT_EQ(topology.link_name(0), "node0>sw0");
    EXPECT_EQ(topology.link_name(1), "sw0>node0");
    EXPECT_EQ(topology.link_name(7), "sw0>node3");
}

}  // namespace
}  // namespace nicsim::sim
