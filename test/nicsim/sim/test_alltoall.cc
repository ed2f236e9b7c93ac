// All-to-all multicast on the modeled cluster (Bhoedjang et al. §5.2): random tree shapes (one per
// origin) and credit windows of 1..8. With deadlock recovery on, every run completes, every host
// gets every packet exactly once and in per-origin order, credits are conserved and every queue
// ends empty (run_alltoall checks all of that and fails otherwise). With it off, a run completes
// or reports a deadlock naming the NICs and queues; it never hangs, since the simulator stops
// when no event is left. Bad specs are refused with the option named.
#include <gtest/gtest.h>

#include "sim/alltoall.h"
#include "sim/bcast.h"
#include "sim/rng.h"

#include "../random_tree.h"

namespace nicsim::sim {
namespace {

using test::random_tree;

AlltoallSpec random_spec(std::uint64_t seed, bool recovery) {
    Rng rng(seed, 0xa11);
    AlltoallSpec spec;
    spec.model = default_model();
    spec.model.topology = rng.below(2) ? "hypercube" : "crossbar";
    spec.model.nodes = static_cast<int>(2 + rng.below(23));
    spec.model.credits = static_cast<int>(1 + rng.below(8));
    spec.model.low_water =
        static_cast<int>(rng.below(static_cast<std::uint64_t>(spec.model.credits)));
    spec.model.send_buffers = static_cast<int>(1 + rng.below(8));
    spec.model.host_buffers = static_cast<int>(1 + rng.below(8));
    spec.model.mtu = static_cast<int>(64 + rng.below(1024));
    spec.model.deadlock_recovery = recovery ? 1 : 0;
    spec.model.recovery_timeout = rng.below(2) == 0 ? 0 : static_cast<double>(1 + rng.below(200));
    spec.model.seed = seed;
    spec.bytes = rng.below(8000);
    spec.messages = static_cast<int>(1 + rng.below(3));
    for (Rank origin = 0; origin < spec.model.nodes; ++origin) {
        spec.trees.push_back(random_tree(spec.model.nodes, origin, rng));
    }
    return spec;
}

class RandomTrees : public testing::TestWithParam<std::uint64_t> {};

TEST_P(RandomTrees, WithRecoveryEveryPacketArrivesOnceInOrder) {
    const AlltoallSpec spec = random_spec(GetParam(), true);
    std::string why;
    const auto r = run_alltoall(spec, nullptr, &why);
    ASSERT_TRUE(r.has_value()) << why;
    ASSERT_FALSE(r->deadlocked);
    const auto n = static_cast<std::uint64_t>(spec.model.nodes);
    EXPECT_EQ(r->totals.delivered,
              n * (n - 1) * r->packets * static_cast<std::uint64_t>(spec.messages));
    EXPECT_LE(r->recoveries_per_multicast, 1.0);
    const auto again = run_alltoall(spec, nullptr, &why);
    ASSERT_TRUE(again.has_value());
    EXPECT_EQ(again->events, r->events);
    EXPECT_EQ(again->recoveries, r->recoveries);
}

TEST_P(RandomTrees, WithoutRecoveryCompletesOrReportsTheDeadlock) {
    const AlltoallSpec spec = random_spec(GetParam(), false);
    std::string why;
    const auto r = run_alltoall(spec, nullptr, &why);
    ASSERT_TRUE(r.has_value()) << why;
    EXPECT_EQ(r->recoveries, 0u);
    if (r->deadlocked) {
        ASSERT_FALSE(r->stuck.empty());
        EXPECT_FALSE(describe_deadlock(r->stuck).empty());
    } else {
        const auto n = static_cast<std::uint64_t>(spec.model.nodes);
        EXPECT_EQ(r->totals.delivered,
                  n * (n - 1) * r->packets * static_cast<std::uint64_t>(spec.messages));
    }
}

INSTANTIATE_TEST_SUITE_P(Seeds, RandomTrees, testing::Range<std::uint64_t>(1, 61));

// The random cases are not all easy: many of them deadlock without recovery.
TEST(Alltoall, ManyRandomCasesNeedRecovery) {
    int deadlocked = 0;
    std::string why;
    for (std::uint64_t seed = 1; seed < 61; ++seed) {
        const auto r = run_alltoall(random_spec(seed, false), nullptr, &why);
        ASSERT_TRUE(r.has_value()) << why;
        deadlocked += r->deadlocked ? 1 : 0;
    }
    EXPECT_GE(deadlocked, 10) << "of 60";
}

AlltoallSpec lfc(int nodes, const char* tree, bool recovery) {
    AlltoallSpec spec;
    spec.model = preset_model(*find_preset("lfc-myrinet"));
    spec.model.nodes = nodes;
    spec.model.deadlock_recovery = recovery ? 1 : 0;
    spec.bytes = 16384;
    spec.tree = tree;
    return spec;
}

// Chains deadlock in all-to-all traffic (Bhoedjang et al. §3.3); binomial trees do not (e-cube routes).
TEST(Alltoall, ChainsDeadlockWithoutRecoveryAndBinomialTreesDoNot) {
    std::string why;
    const auto chain = run_alltoall(lfc(16, "chain", false), nullptr, &why);
    ASSERT_TRUE(chain.has_value()) << why;
    EXPECT_TRUE(chain->deadlocked);
    EXPECT_EQ(chain->stuck.size(), 16u);
    const auto recovered = run_alltoall(lfc(16, "chain", true), nullptr, &why);
    ASSERT_TRUE(recovered.has_value()) << why;
    EXPECT_FALSE(recovered->deadlocked);
    EXPECT_GT(recovered->recoveries, 0u);
    const auto binomial = run_alltoall(lfc(16, "binomial", false), nullptr, &why);
    ASSERT_TRUE(binomial.has_value()) << why;
    EXPECT_FALSE(binomial->deadlocked);
}

// One sender on a binomial tree cannot deadlock, yet a blocked queue signals deadlock at once
// (Bhoedjang et al. §5.2: about a quarter of the multicasts); the timeout refinement silences that, while
// an all-to-all chain, a true deadlock, still recovers and completes.
TEST(Alltoall, TheTimeoutRefinementSilencesFalseAlarms) {
    std::string why;
    BcastSpec spec;
    spec.model = preset_model(*find_preset("lfc-myrinet"));
    spec.model.nodes = 61;
    spec.model.deadlock_recovery = 1;
    spec.bytes = 65536;
    spec.messages = 16;
    const auto at_once = run_bcast(spec, nullptr, &why);
    spec.model.recovery_timeout = 2000;
    const auto timed = run_bcast(spec, nullptr, &why);
    ASSERT_TRUE(at_once.has_value() && timed.has_value()) << why;
    EXPECT_GT(at_once->totals.recoveries, 0u);
    EXPECT_EQ(timed->totals.recoveries, 0u);
    AlltoallSpec chain = lfc(16, "chain", true);
    chain.model.recovery_timeout = 2000;
    const auto r = run_alltoall(chain, nullptr, &why);
    ASSERT_TRUE(r.has_value()) << why;
    EXPECT_FALSE(r->deadlocked);
    EXPECT_GT(r->recoveries, 0u);
}

TEST(Alltoall, RefusesBadSpecsNamingTheOption) {
    std::string why;
    AlltoallSpec spec = lfc(8, "kbinomial", true);
    EXPECT_FALSE(run_alltoall(spec, nullptr, &why).has_value());
    EXPECT_NE(why.find("--tree kbinomial"), std::string::npos) << why;
    spec = lfc(8, "binary", true);
    spec.messages = 0;
    EXPECT_FALSE(run_alltoall(spec, nullptr, &why).has_value());
    EXPECT_NE(why.find("--messages 0"), std::string::npos) << why;
}

}  // namespace
}  // namespace nicsim::sim
