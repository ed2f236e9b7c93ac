// Hardware-based multicast trees (Coll et al.): the worked examples of Fig. 4 and Fig. 5 exactly,
// the overlap tests and splits, and on random fault maps trees checked link by link: every step's
// multicasts routed on the fat tree with disjoint links (the adaptive hops searched), every
// destination reached exactly once, from a node that had the message.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <set>
#include <vector>

#include "plan/hwtree.h"
#include "plan/hwtree_search.h"

namespace nicsim::plan {
namespace {

using Ranges = std::vector<NodeRange>;

// Every route of a multicast, one per choice of its adaptive hops; the highest ports first, as
// they leave the broadcast tree's links (which other multicasts need) soonest.
std::vector<std::vector<FatLink>> routes(const FatTree& net, const HwMulticast& m) {
    int adaptive = 0;
    std::vector<FatLink> path;
    net.multicast_route(m.source, m.dest, [&](Switch, std::span<const FatLink>) { return ++adaptive, 0; }, path);
    std::int64_t choices = 1;
    for (int i = 0; i < adaptive; ++i) choices *= net.arity();
    std::vector<std::vector<FatLink>> all;
    for (std::int64_t c = 0; c < choices; ++c) {
        std::int64_t digits = c;
        path.clear();
        net.multicast_route(m.source, m.dest, [&](Switch, std::span<const FatLink> links) {
            const int port = static_cast<int>(links.size()) - 1 -
                             static_cast<int>(digits % static_cast<std::int64_t>(links.size()));
            digits /= static_cast<std::int64_t>(links.size());
            return port;
        }, path);
        all.push_back(path);
    }
    return all;
}

// Whether the multicasts from `next` on can each take a route that shares no link with `used`
// or with each other: a search over the adaptive choices, those with fewest choices first.
bool disjoint(const std::vector<std::vector<std::vector<FatLink>>>& options, std::size_t next,
              std::set<FatLink>& used) {
    if (next == options.size()) return true;
    for (const std::vector<FatLink>& path : options[next]) {
        if (std::any_of(path.begin(), path.end(), [&](FatLink l) { return used.count(l); })) continue;
        used.insert(path.begin(), path.end());
        if (disjoint(options, next + 1, used)) return true;
        for (const FatLink l : path) used.erase(l);
    }
    return false;
}

// Empty when `tree` is a valid hardware multicast tree for `groups` from tree.source; otherwise
// what is wrong.
std::string check_tree(const FatTree& net, const HwTree& tree, const Ranges& groups) {
    std::set<Rank> have{tree.source};
    std::set<Rank> want;
    for (const NodeRange& g : groups) {
        for (Rank v = g.lo; v <= g.hi; ++v) want.insert(v);
    }
    std::set<Rank> got;
    for (std::size_t s = 0; s < tree.steps.size(); ++s) {
        std::vector<std::vector<std::vector<FatLink>>> options;
        std::set<Rank> senders;
        std::set<Rank> reached;
        for (const HwMulticast& m : tree.steps[s]) {
            const std::string where = "step " + std::to_string(s + 1) + ", " + std::to_string(m.source) +
                                      " -> [" + std::to_string(m.dest.lo) + "," + std::to_string(m.dest.hi) + "]";
            if (!have.count(m.source)) return where + ": the source has no message yet";
            if (!senders.insert(m.source).second) return where + ": the source sends twice in a step";
            options.push_back(routes(net, m));
            for (Rank v = m.dest.lo; v <= m.dest.hi; ++v) {
                if (!want.count(v)) return where + ": reaches " + std::to_string(v) + ", not a destination";
                if (v != tree.source && !got.insert(v).second) return where + ": reaches " + std::to_string(v) + " twice";
                reached.insert(v);
            }
        }
        std::sort(options.begin(), options.end(), [](const auto& a, const auto& b) { return a.size() < b.size(); });
        std::set<FatLink> used;
        if (!disjoint(options, 0, used)) {
            return "step " + std::to_string(s + 1) + ": its multicasts cannot all take disjoint links";
        }
        have.insert(reached.begin(), reached.end());
    }
    want.erase(tree.source);
    return got == want ? "" : "not every destination reached";
}

// `count` distinct faulty nodes of 0..nodes-1 and a live source, from `seed`.
std::pair<std::vector<Rank>, Rank> fault_map(Rank nodes, int count, unsigned seed) {
    std::mt19937 rng(seed);
    std::vector<Rank> all(static_cast<std::size_t>(nodes));
    for (Rank v = 0; v < nodes; ++v) all[static_cast<std::size_t>(v)] = v;
    std::shuffle(all.begin(), all.end(), rng);
    return {std::vector<Rank>(all.begin(), all.begin() + count), all[static_cast<std::size_t>(count)]};
}

TEST(HwTree, LiveGroupsAreTheRunsOfLiveNodes) {
    EXPECT_EQ(live_groups(16, std::vector<Rank>{1, 6}), (Ranges{{0, 0}, {2, 5}, {7, 15}}));
    EXPECT_EQ(live_groups(8, std::vector<Rank>{0, 7, 3, 4}), (Ranges{{1, 2}, {5, 6}}));
    EXPECT_EQ(live_groups(4, std::vector<Rank>{}), (Ranges{{0, 3}}));
}

TEST(HwTree, GroupsSortBySizeThenRootLevel) {
    const FatTree net = FatTree::holding(16);
    Ranges groups{{0, 0}, {6, 7}, {2, 2}, {9, 12}, {14, 15}, {3, 4}};
    sort_groups(net, groups);
    // [3,4] crosses a level-0 switch: root level 1, ahead of [6,7] and [14,15] at level 0.
    EXPECT_EQ(groups, (Ranges{{9, 12}, {3, 4}, {6, 7}, {14, 15}, {0, 0}, {2, 2}}));
}

TEST(HwTree, SubtractAndMerge) {
    EXPECT_EQ(subtract(Ranges{{0, 9}, {20, 29}}, Ranges{{3, 4}, {9, 21}, {25, 25}}),
              (Ranges{{0, 2}, {5, 8}, {22, 24}, {26, 29}}));
    EXPECT_EQ(merge(Ranges{{8, 8}}, Ranges{{7, 15}, {0, 0}, {2, 5}}), (Ranges{{0, 0}, {2, 5}, {7, 15}}));
    EXPECT_EQ(merge(Ranges{{0, 3}, {9, 9}}, Ranges{{4, 6}, {8, 8}}), (Ranges{{0, 6}, {8, 9}}));
}

// Coll et al. Fig. 4: 16 nodes, source 8, groups [0,0] [2,5] [7,15].
TEST(HwTree, Fig4BackwardOverlapAndItsTwoSplits) {
    const FatTree net = FatTree::holding(16);
    // The paper's evaluation of Eq. 1 for [2,5] and [7,15].
    EXPECT_TRUE(backward_overlap(net, {2, 5}, {7, 15}, 1));
    EXPECT_FALSE(backward_overlap(net, {2, 5}, {7, 15}, 0));
    EXPECT_FALSE(backward_overlap(net, {0, 0}, {2, 5}, 1));
    const Ranges pair{{2, 5}, {7, 15}};
    const auto o = first_backward_overlap(net, pair);
    ASSERT_TRUE(o);
    EXPECT_EQ(o->left, 0u);
    EXPECT_EQ(o->right, 1u);
    EXPECT_EQ(o->level, 1);
    EXPECT_EQ(split_right(net, pair, *o), (Ranges{{2, 5}, {7, 7}, {8, 15}}));
    EXPECT_EQ(split_left(net, pair, *o), (Ranges{{2, 3}, {4, 5}, {7, 15}}));
    EXPECT_FALSE(first_backward_overlap(net, split_right(net, pair, *o)));
    EXPECT_FALSE(first_backward_overlap(net, split_left(net, pair, *o)));

    const Ranges groups{{0, 0}, {2, 5}, {7, 15}};
    for (const HwTree& tree : {greedy_hw_tree(net, 8, groups), optimal_hw_tree(net, 8, groups, 100000).tree}) {
        // The rightmost branch: 8 -> [7,15], then [2,5] and [0,0] from two of [7,15].
        ASSERT_EQ(tree.depth(), 2);
        EXPECT_EQ(tree.steps[0], (HwStep{{8, {7, 15}}}));
        ASSERT_EQ(tree.steps[1].size(), 2u);
        EXPECT_EQ(tree.steps[1][0].dest, (NodeRange{0, 0}));
        EXPECT_EQ(tree.steps[1][1].dest, (NodeRange{2, 5}));
        EXPECT_EQ(check_tree(net, tree, groups), "");
    }
}

// Coll et al. Fig. 5: 16 nodes, source 2, groups [0,0] [3,7] [9,12]; the branch where 2 sent to
// [0,0] first.
TEST(HwTree, Fig5ForwardOverlapFromCapabilitiesNeedsAndDifferences) {
    const FatTree net = FatTree::holding(16);
    const Ranges sources{{0, 0}, {2, 2}};
    const Ranges pending{{3, 7}, {9, 12}};
    // Index = level; the paper writes them highest level first: c = (1,1), n = (2,0), d = (-1,1).
    EXPECT_EQ(capabilities(net, sources), (LevelCounts{1, 1}));
    EXPECT_EQ(needs(net, pending), (LevelCounts{0, 2}));
    EXPECT_EQ(differences(capabilities(net, sources), needs(net, pending)), (LevelCounts{1, -1}));
    EXPECT_EQ(forward_overlap_level(LevelCounts{1, -1}), 1);
    EXPECT_FALSE(first_backward_overlap(net, pending));
    EXPECT_EQ(split_lower(net, {3, 7}), (Ranges{{3, 3}, {4, 7}}));
    EXPECT_EQ(split_lower(net, {9, 12}), (Ranges{{9, 11}, {12, 12}}));
    // Fig. 6: [6,7] gives c = (1,1), [7,8] gives (2,0).
    EXPECT_EQ(capabilities(net, Ranges{{6, 7}}), (LevelCounts{1, 1}));
    EXPECT_EQ(capabilities(net, Ranges{{7, 8}}), (LevelCounts{0, 2}));
    // Both new lists pass; either way the tree from {0, 2} takes two more steps, so the search
    // prefers sending to [3,7] first: two steps in all.
    for (const Ranges& split : {Ranges{{3, 3}, {4, 7}, {9, 12}}, Ranges{{3, 7}, {9, 11}, {12, 12}}}) {
        Ranges two = split;
        sort_groups(net, two);
        two.resize(2);
        EXPECT_EQ(forward_overlap_level(differences(capabilities(net, sources), needs(net, two))), -1);
    }
    const Ranges groups{{0, 0}, {3, 7}, {9, 12}};
    const HwTree greedy = greedy_hw_tree(net, 2, groups);
    EXPECT_EQ(greedy.depth(), 2);
    EXPECT_EQ(check_tree(net, greedy, groups), "");
    EXPECT_EQ(optimal_hw_tree(net, 2, groups, 100000).tree.depth(), 2);
}

TEST(HwTree, CapabilitiesOfLargerTreesCountBlocksPerLevel) {
    const FatTree net = FatTree::holding(64);  // levels 0, 1, 2
    // [14,17]: blocks of 16 {0,1}, blocks of 4 {3,4}: c2 = 2, c1 = 2 - 2 = 0, c0 = 4 - 2 = 2.
    EXPECT_EQ(capabilities(net, Ranges{{14, 17}}), (LevelCounts{2, 0, 2}));
    // [4,11] and node 40: 16-blocks {0,2}, 4-blocks {1,2,10}: c = (2, 1, 6).
    EXPECT_EQ(capabilities(net, Ranges{{4, 11}, {40, 40}}), (LevelCounts{6, 1, 2}));
    // Eq. 2: a surplus carries down, a deficit does not.
    EXPECT_EQ(differences(LevelCounts{6, 1, 2}, LevelCounts{1, 3, 1}), (LevelCounts{5, -1, 1}));
    EXPECT_EQ(differences(LevelCounts{6, 1, 2}, LevelCounts{0, 1, 3}), (LevelCounts{6, 0, -1}));
    EXPECT_EQ(forward_overlap_level(LevelCounts{5, -1, 1}), 1);
    EXPECT_EQ(forward_overlap_level(LevelCounts{6, 0, -1}), 2);
}

TEST(HwTree, NoFaultsIsOneMulticast) {
    for (const Rank nodes : {4, 16, 32, 1024}) {
        const FatTree net = FatTree::holding(nodes);
        const HwTree tree = greedy_hw_tree(net, nodes / 3, live_groups(nodes, {}));
        ASSERT_EQ(tree.depth(), 1);
        EXPECT_EQ(tree.steps[0], (HwStep{{nodes / 3, {0, nodes - 1}}}));
    }
}

// Algorithm 2 as written first: the whole combination sorted and checked again after every
// split. greedy_hw_tree() keeps indexes instead, and must give the same trees.
HwTree reference_greedy(const FatTree& net, Rank source, std::span<const NodeRange> groups) {
    HwTree tree{source, {}};
    Ranges sources{{source, source}};
    Ranges pending(groups.begin(), groups.end());
    std::sort(pending.begin(), pending.end(), [](NodeRange a, NodeRange b) { return a.lo < b.lo; });
    while (!pending.empty()) {
        Ranges candidates = pending;
        for (;;) {
            sort_groups(net, candidates);
            candidates.resize(static_cast<std::size_t>(
                std::min<std::int64_t>(node_count(sources), static_cast<std::int64_t>(candidates.size()))));
            const Check check = check_combination(net, sources, candidates);
            if (check.backward) {
                candidates = split_right(net, check.by_position, *check.backward);
            } else if (check.forward_level >= 0) {
                candidates = split_forward(net, candidates,
                                           forward_splits(net, candidates, check.forward_level).front());
            } else {
                tree.steps.push_back(*check.step);
                pending = subtract(pending, check.by_position);
                sources = merge(sources, check.by_position);
                break;
            }
        }
    }
    return tree;
}

TEST(HwTree, GreedyGivesTheTreesOfSortingAndCheckingAfterEverySplit) {
    int compared = 0;
    for (const Rank nodes : {16, 64, 256, 1024, 4096}) {
        const FatTree net = FatTree::holding(nodes);
        for (const double percent : {0.2, 1.0, 3.0, 10.0, 30.0}) {
            const int faulty = std::max(1, static_cast<int>(nodes * percent / 100));
            for (unsigned seed = 1; seed <= (nodes >= 4096 ? 10u : 40u); ++seed) {
                const auto [faults, source] = fault_map(nodes, faulty, seed * 7919 + static_cast<unsigned>(nodes));
                const Ranges groups = live_groups(nodes, faults);
                const HwTree fast = greedy_hw_tree(net, source, groups);
                const HwTree slow = reference_greedy(net, source, groups);
                ASSERT_EQ(fast.steps, slow.steps) << nodes << " nodes, " << faulty << " faulty, seed " << seed;
                ++compared;
            }
        }
    }
    EXPECT_EQ(compared, 4 * 5 * 40 + 5 * 10);
}

struct Case {
    Rank nodes;
    int faulty;
};

class RandomFaults : public ::testing::TestWithParam<Case> {};

TEST_P(RandomFaults, TreesAreValidAndOptimalIsNoDeeperThanGreedy) {
    const auto [nodes, faulty] = GetParam();
    const FatTree net = FatTree::holding(nodes);
    int decided = 0;
    for (unsigned seed = 1; seed <= 40; ++seed) {
        const auto [faults, source] = fault_map(nodes, faulty, seed);
        const Ranges groups = live_groups(nodes, faults);
        const HwTree greedy = greedy_hw_tree(net, source, groups);
        ASSERT_EQ(check_tree(net, greedy, groups), "") << "greedy, seed " << seed;
        const OptimalSearch optimal = optimal_hw_tree(net, source, groups, 20000);
        ASSERT_EQ(check_tree(net, optimal.tree, groups), "") << "optimal, seed " << seed;
        EXPECT_LE(optimal.tree.depth(), greedy.depth());
        decided += optimal.decided;
    }
    EXPECT_GT(decided, 0);
}

INSTANTIATE_TEST_SUITE_P(Sizes, RandomFaults,
                         ::testing::Values(Case{16, 1}, Case{16, 3}, Case{16, 6}, Case{32, 4},
                                           Case{64, 2}, Case{64, 8}, Case{256, 3}, Case{256, 25},
                                           Case{1024, 10}),
                         [](const auto& info) {
                             return std::to_string(info.param.nodes) + "_nodes_" +
                                    std::to_string(info.param.faulty) + "_faulty";
                         });

}  // namespace
}  // namespace nicsim::plan
