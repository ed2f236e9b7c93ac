// k-ary n-trees: sizes, the wiring as a graph (every switch k distinct neighbours each way, every
// leaf reaching every top switch by exactly one climb), unicast routes that are walks of the
// expected length, multicast routes that reach exactly their range and replicate only in the
// broadcast tree.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "plan/fattree.h"

namespace nicsim::plan {
namespace {

int first_port(Switch, std::span<const FatLink>) { return 0; }
int last_port(Switch, std::span<const FatLink> links) { return static_cast<int>(links.size()) - 1; }

// Where a link goes, read back from its name ("a>b"): the graph as the names describe it, built
// without the arithmetic of up() and descend().
std::pair<std::string, std::string> ends(const FatTree& net, FatLink link) {
    const std::string name = net.link_name(link);
    const auto gt = name.find('>');
    return {name.substr(0, gt), name.substr(gt + 1)};
}

TEST(FatTree, SizesOfQuaternaryTrees) {
    for (const auto& [nodes, levels] : std::vector<std::pair<Rank, int>>{
             {1, 1}, {4, 1}, {5, 2}, {16, 2}, {32, 3}, {64, 3}, {1024, 5}, {2048, 6}, {4096, 6}}) {
        const FatTree net = FatTree::holding(nodes);
        EXPECT_EQ(net.levels(), levels) << nodes;
        EXPECT_EQ(net.nodes(), nodes);
        // n * 4^(n-1) switches (Coll et al. §2), each below the top with 4 cables up, two links each.
        const std::int64_t k_n = net.power(levels);
        EXPECT_EQ(net.links(), static_cast<std::size_t>(2 * k_n + 2 * (levels - 1) * k_n)) << nodes;
    }
}

TEST(FatTree, EverySwitchHasKDistinctNeighboursEachWay) {
    for (const Rank nodes : {16, 64, 256}) {
        const FatTree net = FatTree::holding(nodes);
        std::map<std::string, std::set<std::string>> up, down;
        for (FatLink l = static_cast<FatLink>(2 * net.power(net.levels())); l < net.links(); l += 2) {
            const auto [a, b] = ends(net, l);
            up[a].insert(b);
            const auto [c, d] = ends(net, l + 1);
            EXPECT_EQ(c, b);
            EXPECT_EQ(d, a);
            down[b].insert(a);
        }
        const std::size_t per_level = static_cast<std::size_t>(net.switches_per_level());
        EXPECT_EQ(up.size(), per_level * static_cast<std::size_t>(net.levels() - 1));
        for (const auto& [s, n] : up) EXPECT_EQ(n.size(), 4u) << s;
        EXPECT_EQ(down.size(), per_level * static_cast<std::size_t>(net.levels() - 1));
        for (const auto& [s, n] : down) EXPECT_EQ(n.size(), 4u) << s;
    }
}

TEST(FatTree, RootLevelsAndSwitches) {
    const FatTree net = FatTree::holding(16);
    EXPECT_EQ(net.root_level({0, 3}), 0);
    EXPECT_EQ(net.root_level({6, 7}), 0);   // Coll et al. Fig. 6(a)
    EXPECT_EQ(net.root_level({7, 8}), 1);   // Fig. 6(b)
    EXPECT_EQ(net.root_level({2, 5}), 1);
    EXPECT_EQ(net.root_switch({9, 10}), (Switch{0, 2, 0}));
    const FatTree big = FatTree::holding(4096);
    EXPECT_EQ(big.root_level({0, 4095}), 5);
    EXPECT_EQ(big.root_level({64, 127}), 2);
    EXPECT_EQ(big.root_level({63, 64}), 3);
    EXPECT_EQ(big.root_switch({1100, 1200}), (Switch{3, 4, 0}));
}

TEST(FatTree, UnicastRoutesAreWalksThroughTheNearestCommonAncestor) {
    const FatTree net = FatTree::holding(64);
    for (Rank a = 0; a < 64; a += 5) {
        for (Rank b = 0; b < 64; b += 3) {
            if (a == b) continue;
            int top = 0;
            while (a / net.power(top + 1) != b / net.power(top + 1)) ++top;
            for (const auto& choose : {FatTree::Chooser(first_port), FatTree::Chooser(last_port)}) {
                std::vector<FatLink> path;
                net.unicast_route(a, b, choose, path);
                ASSERT_EQ(path.size(), static_cast<std::size_t>(2 * top + 2)) << a << ">" << b;
                EXPECT_EQ(ends(net, path.front()).first, "node" + std::to_string(a));
                EXPECT_EQ(ends(net, path.back()).second, "node" + std::to_string(b));
                for (std::size_t i = 1; i < path.size(); ++i) {
                    EXPECT_EQ(ends(net, path[i - 1]).second, ends(net, path[i]).first);
                }
            }
        }
    }
}

TEST(FatTree, MulticastRoutesReachTheirRangeAndReplicateInTheBroadcastTree) {
    const FatTree net = FatTree::holding(64);
    for (const auto& [source, dest] : std::vector<std::pair<Rank, NodeRange>>{
             {8, {7, 15}}, {0, {0, 63}}, {40, {2, 5}}, {3, {17, 30}}, {63, {60, 62}}, {5, {5, 5}}}) {
        std::vector<FatLink> path;
        std::vector<int> hops;
        net.multicast_route(source, dest, last_port, path, &hops);
        ASSERT_EQ(path.size(), hops.size());
        std::set<std::string> reached;
        std::map<std::string, int> fanout;  // links out of each switch
        std::set<std::string> entered{"node" + std::to_string(source)};
        for (std::size_t i = 0; i < path.size(); ++i) {
            const auto [from, to] = ends(net, path[i]);
            EXPECT_TRUE(entered.count(from)) << net.link_name(path[i]) << ": a link from nowhere";
            entered.insert(to);
            ++fanout[from];
            if (to.starts_with("node")) reached.insert(to);
        }
        std::set<std::string> want;
        for (Rank v = dest.lo; v <= dest.hi; ++v) want.insert("node" + std::to_string(v));
        EXPECT_EQ(reached, want) << source;
        for (const auto& [from, n] : fanout) {
            if (n > 1) {
                EXPECT_TRUE(from.ends_with(",0)")) << from << " replicates outside the broadcast tree";
            }
        }
        const Switch root = net.root_switch(dest);
        EXPECT_TRUE(entered.count("sw(" + std::to_string(root.level) + "," + std::to_string(root.block) + ",0)"));
    }
}

}  // namespace
}  // namespace nicsim::plan
