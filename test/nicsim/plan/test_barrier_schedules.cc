// Every barrier schedule, for every group size 1..64 and every rank: the steps pair up across
// ranks, and the last step of every rank causally follows every rank's arrival (which is what
// makes it a barrier). The dissemination, recursive-doubling, tree and flat partners are checked
// exactly.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <tuple>
#include <vector>

#include "plan/barrier.h"
#include "plan/barrier_dissemination.h"
#include "plan/barrier_flat.h"
#include "plan/barrier_recursive_doubling.h"
#include "plan/barrier_tree.h"

namespace nicsim::plan {
namespace {

constexpr Rank kMaxSize = 64;

std::vector<BarrierSchedule> plan_all(const BarrierAlgorithm& algorithm, Rank size) {
    std::vector<BarrierSchedule> all;
    for (Rank r = 0; r < size; ++r) all.push_back(algorithm.plan(r, size));
    return all;
}

// The steps of every rank's schedule pair up: each token sent is expected by its receiver at the
// same step.
void expect_tokens_pair_up(const std::vector<BarrierSchedule>& all) {
    const auto size = static_cast<Rank>(all.size());
    for (Rank r = 0; r < size; ++r) ASSERT_EQ(all[r].size(), all[0].size()) << "rank " << r;
    for (std::size_t s = 0; s < all[0].size(); ++s) {
        std::vector<std::vector<int>> sent(size, std::vector<int>(size, 0));
        std::vector<std::vector<int>> expected(size, std::vector<int>(size, 0));
        for (Rank r = 0; r < size; ++r) {
            for (Rank d : all[r][s].send_to) {
                ASSERT_TRUE(d >= 0 && d < size && d != r) << "rank " << r << " step " << s;
                ++sent[r][d];
            }
            ASSERT_LE(all[r][s].recv_from.size(), kMaxBarrierSenders);
            for (Rank f : all[r][s].recv_from) {
                ASSERT_TRUE(f >= 0 && f < size && f != r) << "rank " << r << " step " << s;
                ++expected[f][r];
            }
        }
        EXPECT_EQ(sent, expected) << "step " << s;
    }
}

// No rank's last step can end before every rank has entered.
void expect_a_barrier(const std::vector<BarrierSchedule>& all) {
    // knows[r][q]: rank r's progress causally depends on rank q having entered the barrier.
    const auto size = static_cast<Rank>(all.size());
    std::vector<std::vector<bool>> knows(size, std::vector<bool>(size, false));
    for (Rank r = 0; r < size; ++r) knows[r][r] = true;
    for (std::size_t s = 0; s < all[0].size(); ++s) {
        const auto before = knows;  // a step's tokens carry what their sender knew entering it
        for (Rank r = 0; r < size; ++r) {
            for (Rank f : all[r][s].recv_from) {
                for (Rank q = 0; q < size; ++q) knows[r][q] = knows[r][q] || before[f][q];
            }
        }
    }
    for (Rank r = 0; r < size; ++r) {
        for (Rank q = 0; q < size; ++q) EXPECT_TRUE(knows[r][q]) << r << " leaves without " << q;
    }
}

class BarrierSchedules : public testing::TestWithParam<std::tuple<int, Rank>> {
protected:
    const BarrierAlgorithm& algorithm() const { return barrier_algorithms()[std::get<0>(GetParam())]; }
    Rank size() const { return std::get<1>(GetParam()); }
};

TEST_P(BarrierSchedules, EveryTokenSentIsExpectedAtTheSameStep) {
    expect_tokens_pair_up(plan_all(algorithm(), size()));
}

TEST_P(BarrierSchedules, NoRankLeavesBeforeEveryRankArrived) {
    expect_a_barrier(plan_all(algorithm(), size()));
}

// Over nodes: random layouts and orders, every algorithm among the leaders. Besides being a
// barrier, only leaders (a node's first rank in the order) send between nodes.
TEST(NodeBarrier, IsABarrierAndOnlyLeadersCrossBetweenNodes) {
    std::uint64_t state = 5;
    auto below = [&state](int n) {
        state = state * 6364136223846793005ull + 1442695040888963407ull;
        return static_cast<int>((state >> 33) % static_cast<std::uint64_t>(n));
    };
    for (int round = 0; round < 400; ++round) {
        const Rank size = 1 + below(70);
        const int nodes = 1 + below(std::min<int>(size, 9));
        std::vector<int> node_of(size);
        for (Rank r = 0; r < size; ++r) node_of[r] = below(nodes);
        std::vector<Rank> order(size);
        for (Rank r = 0; r < size; ++r) order[r] = r;
        for (Rank i = size - 1; i > 0; --i) std::swap(order[i], order[below(i + 1)]);
        std::vector<bool> leader(size, false);
        std::vector<bool> led(nodes, false);
        for (const Rank r : order) {
            if (!led[node_of[r]]) leader[r] = led[node_of[r]] = true;
        }
        for (const BarrierAlgorithm& algorithm : barrier_algorithms()) {
            std::vector<BarrierSchedule> all;
            for (Rank r = 0; r < size; ++r) all.push_back(node_barrier(algorithm, r, order, node_of));
            expect_tokens_pair_up(all);
            expect_a_barrier(all);
            for (Rank r = 0; r < size; ++r) {
                for (const BarrierStep& step : all[r]) {
                    for (const Rank d : step.send_to) {
                        EXPECT_TRUE(node_of[d] == node_of[r] || (leader[r] && leader[d]))
                            << algorithm.name << ": " << r << " sends to " << d;
                    }
                }
            }
        }
    }
}

INSTANTIATE_TEST_SUITE_P(
    AllAlgorithmsAndSizes, BarrierSchedules,
    testing::Combine(testing::Range(0, static_cast<int>(barrier_algorithms().size())),
                     testing::Range(Rank{1}, kMaxSize + 1)),
    [](const auto& info) {
        return std::string(barrier_algorithms()[std::get<0>(info.param)].name) + "_P" +
               std::to_string(std::get<1>(info.param));
    });

TEST(BarrierDissemination, PartnersAreExact) {
    for (Rank size = 1; size <= kMaxSize; ++size) {
        for (Rank r = 0; r < size; ++r) {
            const auto steps = barrier_dissemination(r, size);
            ASSERT_EQ(static_cast<int>(steps.size()), ceil_log2(size));
            for (std::size_t s = 0; s < steps.size(); ++s) {
                const Rank d = Rank{1} << s;
                EXPECT_EQ(steps[s].send_to, std::vector<Rank>{(r + d) % size});
                EXPECT_EQ(steps[s].recv_from, std::vector<Rank>{(r - d + size) % size});
            }
        }
    }
}

TEST(BarrierDissemination, SixRanksWorkedExample) {
    // P = 6: rounds at distance 1, 2, 4. Rank 5 signals 0, 1, 3 and hears from 4, 3, 1.
    const auto steps = barrier_dissemination(5, 6);
    ASSERT_EQ(steps.size(), 3u);
    EXPECT_EQ(steps[0], (BarrierStep{{0}, {4}}));
    EXPECT_EQ(steps[1], (BarrierStep{{1}, {3}}));
    EXPECT_EQ(steps[2], (BarrierStep{{3}, {1}}));
}

TEST(BarrierRecursiveDoubling, FoldsExtraRanksInAndOut) {
    // P = 6: core ranks 0..3, extra ranks 4, 5 pair with 0, 1.
    EXPECT_EQ(barrier_recursive_doubling(5, 6),
              (BarrierSchedule{{{1}, {}}, {}, {}, {{}, {1}}}));
    EXPECT_EQ(barrier_recursive_doubling(1, 6),
              (BarrierSchedule{{{}, {5}}, {{0}, {0}}, {{3}, {3}}, {{5}, {}}}));
    EXPECT_EQ(barrier_recursive_doubling(2, 6),
              (BarrierSchedule{{}, {{3}, {3}}, {{0}, {0}}, {}}));
}

TEST(BarrierRecursiveDoubling, PowersOfTwoExchangeWithXorPartners) {
    for (Rank size = 1; size <= kMaxSize; size *= 2) {
        for (Rank r = 0; r < size; ++r) {
            const auto steps = barrier_recursive_doubling(r, size);
            ASSERT_EQ(static_cast<int>(steps.size()), ceil_log2(size) + 2);
            EXPECT_EQ(steps.front(), BarrierStep{});
            EXPECT_EQ(steps.back(), BarrierStep{});
            for (int s = 0; s < ceil_log2(size); ++s) {
                const Rank partner = r ^ (Rank{1} << s);
                EXPECT_EQ(steps[s + 1], (BarrierStep{{partner}, {partner}}));
            }
        }
    }
}

TEST(BarrierTree, FlatUpTo65Ranks) {
    // P = 6: every rank reports to rank 0 in step 0 and is released by it in step 1.
    EXPECT_EQ(barrier_tree(0, 6), (BarrierSchedule{{{}, {1, 2, 3, 4, 5}}, {{1, 2, 3, 4, 5}, {}}}));
    EXPECT_EQ(barrier_tree(4, 6), (BarrierSchedule{{{0}, {}}, {{}, {0}}}));
    EXPECT_EQ(barrier_tree(0, 1), BarrierSchedule{});
}

TEST(BarrierTree, LevelsOf64ChildrenAbove65Ranks) {
    // P = 200: ranks 65, 130 and 195 lead 64, 64 and 4 ranks and report to rank 0.
    const auto steps = barrier_tree(130, 200);
    ASSERT_EQ(steps.size(), 4u);
    EXPECT_EQ(steps[0].send_to, std::vector<Rank>{});
    EXPECT_EQ(steps[0].recv_from.size(), 64u);
    EXPECT_EQ(steps[0].recv_from.front(), 131);
    EXPECT_EQ(steps[0].recv_from.back(), 194);
    EXPECT_EQ(steps[1], (BarrierStep{{0}, {}}));
    EXPECT_EQ(steps[2], (BarrierStep{{}, {0}}));
    EXPECT_EQ(steps[3].send_to, steps[0].recv_from);
    EXPECT_EQ(barrier_tree(0, 200)[1], (BarrierStep{{}, {65, 130, 195}}));
    EXPECT_EQ(barrier_tree(197, 200), (BarrierSchedule{{{195}, {}}, {}, {}, {{}, {195}}}));
    for (const Rank size : {66, 200, 4225, 4226}) {
        std::vector<BarrierSchedule> all;
        for (Rank r = 0; r < size; ++r) all.push_back(barrier_tree(r, size));
        expect_tokens_pair_up(all);
        if (size <= 200) expect_a_barrier(all);  // (quadratic in size)
    }
}

TEST(BarrierFlat, OneStepToEveryOtherRankUpTo65Ranks) {
    EXPECT_EQ(barrier_flat(1, 4), (BarrierSchedule{{{2, 3, 0}, {0, 3, 2}}}));
    EXPECT_EQ(barrier_flat(0, 1), BarrierSchedule{});
    for (Rank size = 2; size <= 65; ++size) {
        for (Rank r = 0; r < size; ++r) {
            const auto steps = barrier_flat(r, size);
            ASSERT_EQ(steps.size(), 1u);
            std::vector<Rank> others;
            for (Rank q = 0; q < size; ++q) {
                if (q != r) others.push_back(q);
            }
            for (auto ranks : {steps[0].send_to, steps[0].recv_from}) {
                std::sort(ranks.begin(), ranks.end());
                EXPECT_EQ(ranks, others) << "rank " << r << " of " << size;
            }
        }
    }
}

// Above 65 ranks: n-way dissemination, rounds of at most 64 signals at distances j * 65^r.
TEST(BarrierFlat, RoundsOf64SignalsAbove65Ranks) {
    const auto steps = barrier_flat(10, 200);
    ASSERT_EQ(steps.size(), 2u);
    EXPECT_EQ(steps[0].send_to.size(), 64u);
    EXPECT_EQ(steps[0].send_to.front(), 11);
    EXPECT_EQ(steps[0].recv_from.front(), 9);
    EXPECT_EQ(steps[1], (BarrierStep{{75, 140, 5}, {145, 80, 15}}));  // 65, 130, 195 away
    for (const Rank size : {65, 66, 130, 131, 200}) {
        std::vector<BarrierSchedule> all;
        for (Rank r = 0; r < size; ++r) all.push_back(barrier_flat(r, size));
        expect_tokens_pair_up(all);
        expect_a_barrier(all);
    }
    // 65^2 ranks take two full rounds; one more, a third round of one signal.
    EXPECT_EQ(barrier_flat(0, 4225).size(), 2u);
    EXPECT_EQ(barrier_flat(0, 4225)[1].send_to.size(), 64u);
    EXPECT_EQ(barrier_flat(7, 4226).size(), 3u);
    EXPECT_EQ(barrier_flat(7, 4226)[2], (BarrierStep{{6}, {8}}));  // 7 + 4225, 7 - 4225 mod 4226
}

// The release is a broadcast from rank 0: rank 0 waits for nothing once every rank has arrived,
// and every other rank for its parent alone, so a rank leaves after its parent.
TEST(BarrierTree, ReleasesDownTheTreeFromRankZero) {
    for (Rank size = 1; size <= 300; ++size) {
        for (Rank r = 0; r < size; ++r) {
            const auto steps = barrier_tree(r, size);
            std::vector<Rank> waits;
            for (std::size_t s = steps.size() / 2; s < steps.size(); ++s) {
                waits.insert(waits.end(), steps[s].recv_from.begin(), steps[s].recv_from.end());
            }
            const Rank parent = r < 65 ? 0 : r % 65 == 0 ? 0 : r - r % 65;
            EXPECT_EQ(waits, r == 0 ? std::vector<Rank>{} : std::vector<Rank>{parent})
                << "rank " << r << " of " << size;
        }
    }
}

TEST(BarrierAlgorithms, TableNamesAreUniqueAndDefaultIsDissemination) {
    const auto table = barrier_algorithms();
    ASSERT_FALSE(table.empty());
    EXPECT_EQ(table[0].name, "dissemination");
    for (std::size_t i = 0; i < table.size(); ++i) {
        EXPECT_FALSE(table[i].description.empty());
        for (std::size_t j = i + 1; j < table.size(); ++j) EXPECT_NE(table[i].name, table[j].name);
    }
}

TEST(BarrierAlgorithms, CeilLog2) {
    EXPECT_EQ(ceil_log2(1), 0);
    EXPECT_EQ(ceil_log2(2), 1);
    EXPECT_EQ(ceil_log2(3), 2);
    EXPECT_EQ(ceil_log2(4), 2);
    EXPECT_EQ(ceil_log2(5), 3);
    EXPECT_EQ(ceil_log2(64), 6);
    EXPECT_EQ(ceil_log2(65), 7);
}

}  // namespace
}  // namespace nicsim::plan
