// Every tree shape for n = 1..130 and a few large n: a spanning tree rooted at position 0 whose
// subtrees are contiguous ranges of positions. A step model written here, independently of the
// builders, checks Kesavan and Panda's step counts: one packet over kbinomial_tree(n, k) takes
// kbinomial_steps(n, k) steps, m packets take L1 + (m - 1) times the largest fanout (Theorem 2),
// and the worked examples of the papers of Bhoedjang et al. and of Kesavan and Panda come out as printed.
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <string>
#include <tuple>
#include <vector>

#include "plan/barrier.h"
#include "plan/kbinomial.h"
#include "plan/tree.h"

namespace nicsim::plan {
namespace {

// arrival[v][j]: the step at which packet j reaches node v, forwarded first-packet-first-served
// (Kesavan and Panda Fig. 7): a node sends packet j to each child in order, one send per step, packets in
// order, and can send a packet from the step after it received it. The root holds every packet
// at step 0.
std::vector<std::vector<int>> fpfs_arrivals(const Tree& tree, int packets) {
    std::vector<std::vector<int>> arrival(tree.size(), std::vector<int>(packets, -1));
    arrival[tree.root].assign(packets, 0);
    std::vector<Rank> parents_first{tree.root};
    for (std::size_t i = 0; i < parents_first.size(); ++i) {
        const Rank v = parents_first[i];
        int last_send = 0;
        for (int j = 0; j < packets; ++j) {
            for (Rank c : tree.children[v]) {
                last_send = std::max(last_send + 1, arrival[v][j] + 1);
                arrival[c][j] = last_send;
            }
        }
        parents_first.insert(parents_first.end(), tree.children[v].begin(), tree.children[v].end());
    }
    return arrival;
}

// The step at which the last packet reaches the last node.
int fpfs_steps(const Tree& tree, int packets) {
    int last = 0;
    for (const auto& node : fpfs_arrivals(tree, packets)) {
        last = std::max(last, *std::max_element(node.begin(), node.end()));
    }
    return last;
}

int max_fanout(const Tree& tree) {
    std::size_t fanout = 0;
    for (const auto& c : tree.children) fanout = std::max(fanout, c.size());
    return static_cast<int>(fanout);
}

// Nodes per level, the root's level first.
std::vector<int> level_sizes(const Tree& tree) {
    std::vector<int> sizes;
    std::vector<int> level(tree.size(), 0);
    std::vector<Rank> parents_first{tree.root};
    for (std::size_t i = 0; i < parents_first.size(); ++i) {
        const Rank v = parents_first[i];
        if (level[v] == static_cast<int>(sizes.size())) sizes.push_back(0);
        ++sizes[level[v]];
        for (Rank c : tree.children[v]) {
            level[c] = level[v] + 1;
            parents_first.push_back(c);
        }
    }
    return sizes;
}

bool is_power_of_two(Rank n) {
    return (n & (n - 1)) == 0;
}

// A shape with its k: the k-binomial tree is swept at a few k, the others once.
struct ShapeCase {
    const TreeShape* shape;
    int k;
};

std::vector<ShapeCase> shape_cases() {
    std::vector<ShapeCase> cases;
    for (const TreeShape& shape : tree_shapes()) {
        if (!shape.takes_k) {
            cases.push_back({&shape, 0});
            continue;
        }
        for (int k : {1, 2, 3, 5}) cases.push_back({&shape, k});
    }
    return cases;
}

std::vector<Rank> sizes_to_sweep() {
    std::vector<Rank> sizes;
    for (Rank n = 1; n <= 130; ++n) sizes.push_back(n);
    for (Rank n : {1000, 1024, 4095, 4096}) sizes.push_back(n);
    return sizes;
}

class TreeShapes : public testing::TestWithParam<std::tuple<ShapeCase, Rank>> {
protected:
    Rank n() const { return std::get<1>(GetParam()); }
    Tree build() const {
        const auto [shape, k] = std::get<0>(GetParam());
        return shape->build(n(), k);
    }
};

TEST_P(TreeShapes, IsASpanningTreeRootedAtPositionZero) {
    const Tree tree = build();
    ASSERT_EQ(tree.size(), n());
    ASSERT_EQ(tree.children.size(), tree.parent.size());
    EXPECT_EQ(tree.root, 0);
    EXPECT_EQ(tree.parent[0], -1);
    std::vector<int> listed(n(), 0);
    for (Rank p = 0; p < n(); ++p) {
        for (Rank c : tree.children[p]) {
            ASSERT_TRUE(c >= 0 && c < n()) << "node " << p << " child " << c;
            EXPECT_EQ(tree.parent[c], p) << "child " << c;
            ++listed[c];
        }
    }
    EXPECT_EQ(listed[0], 0);
    for (Rank c = 1; c < n(); ++c) EXPECT_EQ(listed[c], 1) << "node " << c;
    // Each node listed once and the root never: following the children from the root reaches
    // every node exactly once if and only if there is no cycle.
    std::vector<bool> reached(n(), false);
    std::vector<Rank> pending{tree.root};
    Rank count = 0;
    while (!pending.empty()) {
        const Rank v = pending.back();
        pending.pop_back();
        ASSERT_FALSE(reached[v]) << "node " << v << " reached twice";
        reached[v] = true;
        ++count;
        pending.insert(pending.end(), tree.children[v].begin(), tree.children[v].end());
    }
    EXPECT_EQ(count, n());
}

TEST_P(TreeShapes, LaidAlongItsPreorderEverySubtreeIsAContiguousRange) {
    // Sorted by position, the children of the node covering [v, end) start at v + 1 and each
    // child's range ends where the next one's starts, the last one's at end.
    std::vector<Rank> identity(static_cast<std::size_t>(n()));
    std::iota(identity.begin(), identity.end(), 0);
    const Tree tree = lay_along(build(), identity);
    std::vector<Rank> end(n(), -1);
    end[tree.root] = n();
    std::vector<Rank> pending{tree.root};
    while (!pending.empty()) {
        const Rank v = pending.back();
        pending.pop_back();
        std::vector<Rank> starts = tree.children[v];
        std::sort(starts.begin(), starts.end());
        ASSERT_TRUE(starts.empty() || starts[0] == v + 1) << "node " << v;
        for (std::size_t i = 0; i < starts.size(); ++i) {
            end[starts[i]] = i + 1 < starts.size() ? starts[i + 1] : end[v];
            pending.push_back(starts[i]);
        }
    }
    // The ranges must hold the real subtrees (parents come before children in every shape).
    std::vector<Rank> subtree(n(), 1);
    for (Rank v = n() - 1; v > 0; --v) subtree[tree.parent[v]] += subtree[v];
    for (Rank v = 0; v < n(); ++v) EXPECT_EQ(subtree[v], end[v] - v) << "node " << v;
}

INSTANTIATE_TEST_SUITE_P(AllShapesAndSizes, TreeShapes,
                         testing::Combine(testing::ValuesIn(shape_cases()),
                                          testing::ValuesIn(sizes_to_sweep())),
                         [](const auto& info) {
                             const ShapeCase& c = std::get<0>(info.param);
                             return std::string(c.shape->name) +
                                    (c.shape->takes_k ? "_k" + std::to_string(c.k) : "") + "_n" +
                                    std::to_string(std::get<1>(info.param));
                         });

TEST(TreeShapeTable, BinomialFirstNamesUniqueOnlyKbinomialTakesK) {
    const auto table = tree_shapes();
    ASSERT_EQ(table.size(), 5u);
    EXPECT_EQ(table[0].name, "binomial");
    for (std::size_t i = 0; i < table.size(); ++i) {
        EXPECT_FALSE(table[i].description.empty());
        EXPECT_EQ(table[i].takes_k, table[i].name == "kbinomial");
        EXPECT_EQ(find_tree_shape(table[i].name), &table[i]);
        for (std::size_t j = i + 1; j < table.size(); ++j) EXPECT_NE(table[i].name, table[j].name);
    }
    EXPECT_EQ(find_tree_shape("binomal"), nullptr);
    EXPECT_EQ(find_tree_shape(""), nullptr);
}

TEST(BinomialTree, EightNodesAsDrawnInTheHeader) {
    const Tree tree = binomial_tree(8);
    EXPECT_EQ(tree.children,
              (std::vector<std::vector<Rank>>{{4, 2, 1}, {}, {3}, {}, {6, 5}, {}, {7}, {}}));
    EXPECT_EQ(tree.parent, (std::vector<Rank>{-1, 0, 0, 2, 0, 4, 4, 6}));
}

TEST(BinomialTree, SixtyOneNodesAsInBhoedjang) {
    // Bhoedjang et al. §5.2: "only 4 nodes at the last (6th) level and a maximum fanout of 6".
    const Tree tree = binomial_tree(61);
    EXPECT_EQ(level_sizes(tree), (std::vector<int>{1, 6, 15, 20, 15, 4}));
    EXPECT_EQ(max_fanout(tree), 6);
    EXPECT_EQ(tree.children[0].size(), 6u);
}

TEST(BinomialTree, OnePacketTakesCeilLog2StepsOverFloorLog2Levels) {
    // A node's level is the number of bits set in its position, so there are floor(log2 n)
    // levels below the root; later children wait for earlier ones, so steps can exceed levels.
    for (Rank n = 1; n <= 1100; ++n) {
        const Tree tree = binomial_tree(n);
        EXPECT_EQ(depth(tree), ceil_log2(n + 1) - 1) << "n = " << n;
        EXPECT_EQ(fpfs_steps(tree, 1), ceil_log2(n)) << "n = " << n;
    }
}

TEST(BinaryTree, SixtyOneNodesAsInBhoedjang) {
    // Bhoedjang et al. §5.2: "the binary tree is almost full; it has 6 levels and 30 nodes at the last".
    EXPECT_EQ(level_sizes(binary_tree(61)), (std::vector<int>{1, 2, 4, 8, 16, 30}));
}

TEST(BinaryTree, NumberedBreadthFirst) {
    EXPECT_EQ(binary_tree(6).children,
              (std::vector<std::vector<Rank>>{{1, 2}, {3, 4}, {5}, {}, {}, {}}));
    for (Rank n = 1; n <= 1100; ++n) {
        const Tree tree = binary_tree(n);
        EXPECT_LE(max_fanout(tree), 2);
        EXPECT_EQ(depth(tree), ceil_log2(n + 1) - 1) << "n = " << n;  // complete: floor(log2 n)
    }
}

TEST(Preorder, LaysSubtreesAsRunsOfPositions) {
    // The binary tree's subtrees are not runs of positions; pre-order makes them runs.
    EXPECT_EQ(preorder(binary_tree(6)), (std::vector<Rank>{0, 1, 3, 4, 2, 5}));
    // The other shapes' subtrees are runs already: their pre-order is the identity.
    for (Rank n = 1; n <= 130; ++n) {
        std::vector<Rank> identity(static_cast<std::size_t>(n));
        for (Rank p = 0; p < n; ++p) identity[p] = p;
        EXPECT_EQ(preorder(binomial_tree(n)), identity) << "n = " << n;
        EXPECT_EQ(preorder(chain_tree(n)), identity) << "n = " << n;
        EXPECT_EQ(preorder(flat_tree(n)), identity) << "n = " << n;
        for (int k = 1; k <= 9; ++k) {
            EXPECT_EQ(preorder(kbinomial_tree(n, k)), identity) << "n = " << n << ", k = " << k;
        }
    }
}

TEST(ChainTree, DepthAndStepsAreNMinusOne) {
    for (Rank n = 1; n <= 300; ++n) {
        const Tree tree = chain_tree(n);
        EXPECT_EQ(depth(tree), n - 1);
        EXPECT_EQ(fpfs_steps(tree, 1), n - 1);
        EXPECT_EQ(fpfs_steps(tree, 5), n == 1 ? 0 : n - 1 + 4);  // one packet per step
    }
}

TEST(FlatTree, TheRootSendsToEveryOtherNodeInOrder) {
    EXPECT_EQ(flat_tree(4).children, (std::vector<std::vector<Rank>>{{1, 2, 3}, {}, {}, {}}));
    for (Rank n = 1; n <= 300; ++n) {
        const Tree tree = flat_tree(n);
        EXPECT_EQ(depth(tree), n == 1 ? 0 : 1);
        EXPECT_EQ(max_fanout(tree), n - 1);
        EXPECT_EQ(fpfs_steps(tree, 1), n - 1);
        EXPECT_EQ(fpfs_steps(tree, 5), 5 * (n - 1));  // the root sends every packet n - 1 times
    }
}

TEST(KbinomialTree, SevenNodesTwoChildrenAsDrawnInTheHeader) {
    EXPECT_EQ(kbinomial_tree(7, 2).children,
              (std::vector<std::vector<Rank>>{{3, 1}, {2}, {}, {5, 4}, {}, {6}, {}}));
}

TEST(KbinomialTree, OneChildEachIsTheChain) {
    for (Rank n = 1; n <= 130; ++n) {
        EXPECT_EQ(kbinomial_tree(n, 1).children, chain_tree(n).children) << "n = " << n;
    }
}

TEST(KbinomialTree, IsTheBinomialTreeForPowersOfTwo) {
    for (int log_n = 0; log_n <= 12; ++log_n) {
        const Rank n = Rank{1} << log_n;
        for (int k = std::max(1, log_n); k <= log_n + 3; ++k) {
            EXPECT_EQ(kbinomial_tree(n, k).children, binomial_tree(n).children)
                << "n = " << n << ", k = " << k;
        }
    }
}

TEST(KbinomialTree, FinishesInCeilLog2StepsOnceKReachesIt) {
    // Binomial-like, though for n not a power of two the positions differ from binomial_tree.
    for (Rank n = 2; n <= 300; ++n) {
        for (int k = ceil_log2(n); k <= ceil_log2(n) + 3; ++k) {
            EXPECT_EQ(fpfs_steps(kbinomial_tree(n, k), 1), ceil_log2(n)) << "n = " << n;
        }
    }
    EXPECT_NE(kbinomial_tree(5, 3).children, binomial_tree(5).children);
}

class KbinomialTreeByK : public testing::TestWithParam<int> {
protected:
    int k() const { return GetParam(); }
};

TEST_P(KbinomialTreeByK, OnePacketReachesEveryNodeByStepL1) {
    for (Rank n = 1; n <= 300; ++n) {
        const Tree tree = kbinomial_tree(n, k());
        const auto arrival = fpfs_arrivals(tree, 1);
        for (Rank v = 0; v < n; ++v) ASSERT_GE(arrival[v][0], 0) << "n = " << n << ", node " << v;
        EXPECT_EQ(fpfs_steps(tree, 1), kbinomial_steps(n, k())) << "n = " << n;
        EXPECT_LE(max_fanout(tree), k()) << "n = " << n;
    }
}

TEST_P(KbinomialTreeByK, PacketsFollowEachOtherByTheLargestFanout) {
    // Theorem 2 with delta_r = k holds whenever some node has k children: always, except when
    // k >= L1 = ceil(log2 n) and n is not a power of two. There the root's subtrees of 2^(L1-1),
    // 2^(L1-2), ... positions cover n before an L1-th is needed, no node has more than L1 - 1
    // children, and the tree is the (L1 - 1)-binomial one: it runs m - 1 steps ahead of
    // kbinomial_total_steps(n, m, k = L1).
    for (Rank n = 2; n <= 40; ++n) {
        const Tree tree = kbinomial_tree(n, k());
        const int l1 = kbinomial_steps(n, k());
        const bool corner = k() >= l1 && !is_power_of_two(n);
        ASSERT_EQ(max_fanout(tree), corner ? l1 - 1 : std::min(k(), l1)) << "n = " << n;
        if (corner) {
            EXPECT_EQ(l1, ceil_log2(n));
            EXPECT_EQ(tree.children, kbinomial_tree(n, l1 - 1).children) << "n = " << n;
        }
        for (int m = 1; m <= 6; ++m) {
            const int steps = fpfs_steps(tree, m);
            EXPECT_EQ(steps, l1 + (m - 1) * max_fanout(tree)) << "n = " << n << ", m = " << m;
            if (k() <= ceil_log2(n)) {
                EXPECT_EQ(steps, corner ? kbinomial_total_steps(n, m, k()) - (m - 1)
                                        : kbinomial_total_steps(n, m, k()))
                    << "n = " << n << ", m = " << m;
            }
        }
    }
}

INSTANTIATE_TEST_SUITE_P(KFrom1To10, KbinomialTreeByK, testing::Range(1, 11),
                         [](const auto& info) { return "k" + std::to_string(info.param); });

TEST(KbinomialTree, OptimalKIsTheFastestOfAllK) {
    // Theorem 3 searches only k <= ceil(log2 n); no larger k, and no other k in the real trees,
    // does better than the one it picks.
    for (Rank n = 2; n <= 40; ++n) {
        for (int m = 1; m <= 12; ++m) {
            int fastest = fpfs_steps(kbinomial_tree(n, 1), m);
            for (int k = 2; k < n; ++k) {
                fastest = std::min(fastest, fpfs_steps(kbinomial_tree(n, k), m));
            }
            EXPECT_EQ(fpfs_steps(kbinomial_tree(n, optimal_k(n, m)), m), fastest)
                << "n = " << n << ", m = " << m;
            EXPECT_EQ(kbinomial_total_steps(n, m, optimal_k(n, m)), fastest)
                << "n = " << n << ", m = " << m;
        }
    }
}

TEST(TreeSteps, KesavanPandaWorkedExamples) {
    // Fig. 5: 3 packets to 3 destinations, 6 steps over the binomial tree and 5 over the chain.
    EXPECT_EQ(fpfs_steps(binomial_tree(4), 3), 6);
    EXPECT_EQ(fpfs_steps(chain_tree(4), 3), 5);
    // Fig. 8: 3 packets to 7 destinations over the binomial tree, 3 + (3 - 1) * 3 = 9 steps.
    EXPECT_EQ(fpfs_steps(binomial_tree(8), 3), 9);
}

TEST(Relabel, RenamesPositionsAndKeepsTheSendingOrder) {
    const std::vector<Rank> order{5, 2, 0, 4, 1, 3};
    const Tree tree = relabel(binary_tree(6), order);  // {1, 2}, {3, 4}, {5}, {}, {}, {}
    EXPECT_EQ(tree.root, 5);
    EXPECT_EQ(tree.children, (std::vector<std::vector<Rank>>{{3}, {}, {4, 1}, {}, {}, {2, 0}}));
    EXPECT_EQ(tree.parent, (std::vector<Rank>{5, 2, 5, 0, 2, -1}));
    EXPECT_EQ(depth(tree), 2);
}

TEST(Depth, OfTheSmallestTrees) {
    EXPECT_EQ(depth(binomial_tree(1)), 0);
    EXPECT_EQ(depth(chain_tree(2)), 1);
    EXPECT_EQ(depth(kbinomial_tree(7, 2)), 3);
}

TEST(NodeTree, AsDrawnInItsFile) {
    // nodes a: {0, 1, 2}, b: {3, 4}, c: {5, 6}
    const std::vector<int> node_of{7, 7, 7, 3, 3, 9, 9};
    const std::vector<Rank> list{0, 1, 2, 3, 4, 5, 6};
    const Tree tree = node_tree(tree_shapes()[0], 0, list, node_of);
    EXPECT_EQ(tree.root, 0);
    EXPECT_EQ(tree.children,
              (std::vector<std::vector<Rank>>{{5, 3, 2, 1}, {}, {}, {4}, {}, {6}, {}}));
}

// Every shape, random layouts of ranks over nodes and random roots: a spanning tree rooted at the
// root, whose edges cross between nodes exactly nodes - 1 times, every node entered at one rank.
TEST(NodeTree, CrossesBetweenNodesOncePerNode) {
    std::uint64_t state = 17;
    auto below = [&state](int n) {
        state = state * 6364136223846793005ull + 1442695040888963407ull;
        return static_cast<int>((state >> 33) % static_cast<std::uint64_t>(n));
    };
    for (int round = 0; round < 300; ++round) {
        const Rank n = 1 + below(40);
        const int node_count = 1 + below(std::min<int>(n, 8));
        std::vector<int> node_of(n);
        for (Rank r = 0; r < n; ++r) node_of[r] = below(node_count) * 10;
        std::vector<Rank> list(n);
        std::iota(list.begin(), list.end(), 0);
        for (Rank i = n - 1; i > 0; --i) std::swap(list[i], list[below(i + 1)]);
        for (const TreeShape& shape : tree_shapes()) {
            const Tree tree = node_tree(shape, 1 + below(4), list, node_of);
            ASSERT_EQ(tree.size(), n);
            ASSERT_EQ(tree.root, list[0]);
            std::vector<bool> reached(n, false);
            std::vector<Rank> pending{tree.root};
            int crossings = 0, count = 0;
            while (!pending.empty()) {
                const Rank v = pending.back();
                pending.pop_back();
                ASSERT_FALSE(reached[v]) << shape.name << ": rank " << v << " reached twice";
                reached[v] = true;
                ++count;
                for (const Rank c : tree.children[v]) {
                    crossings += node_of[c] != node_of[v];
                    pending.push_back(c);
                }
            }
            EXPECT_EQ(count, n) << shape.name;
            std::vector<int> ids(node_of);
            std::sort(ids.begin(), ids.end());
            const auto nodes = std::unique(ids.begin(), ids.end()) - ids.begin();
            EXPECT_EQ(crossings, nodes - 1) << shape.name << ", " << n << " ranks";
        }
    }
}

}  // namespace
}  // namespace nicsim::plan
