// Kesavan and Panda's formulas: N(s, k) against Lemma 1 evaluated as written, L1 against a search over s,
// and optimal k as in Fig. 12 (k = ceil(log2 n) for one packet, never rising with the message
// length, the chain for 16 nodes from 12 packets on).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "plan/barrier.h"
#include "plan/kbinomial.h"

namespace nicsim::plan {
namespace {

// Lemma 1 as printed, each sum saturating at kCoverageMax.
std::vector<std::uint64_t> lemma1_table(int k, int max_s) {
    std::vector<std::uint64_t> n(max_s + 1);
    for (int s = 0; s <= max_s; ++s) {
        if (s <= k) {
            n[s] = s < 62 ? std::uint64_t{1} << s : kCoverageMax;
            continue;
        }
        n[s] = 1;
        for (int i = 1; i <= k; ++i) n[s] = std::min(n[s] + n[s - i], kCoverageMax);
    }
    return n;
}

class KbinomialByK : public testing::TestWithParam<int> {
protected:
    int k() const { return GetParam(); }
};

TEST_P(KbinomialByK, CoverageIsLemma1) {
    const auto table = lemma1_table(k(), 200);
    for (int s = 0; s <= 200; ++s) EXPECT_EQ(kbinomial_coverage(s, k()), table[s]) << "s = " << s;
}

TEST_P(KbinomialByK, StepsAreTheFewestThatCoverN) {
    const auto table = lemma1_table(k(), 4100);
    for (Rank n = 1; n <= 4100; ++n) {
        const int s = kbinomial_steps(n, k());
        ASSERT_GE(table[s], static_cast<std::uint64_t>(n)) << "n = " << n;
        if (s > 0) {
            ASSERT_LT(table[s - 1], static_cast<std::uint64_t>(n)) << "n = " << n;
        }
    }
}

INSTANTIATE_TEST_SUITE_P(KFrom1To12And61To64, KbinomialByK,
                         testing::Values(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 61, 62, 63, 64),
                         [](const auto& info) { return "k" + std::to_string(info.param); });

TEST(KbinomialCoverage, Lemma1Values) {
    for (int s = 0; s <= 1000; ++s) EXPECT_EQ(kbinomial_coverage(s, 1), s + 1u);
    for (int k = 1; k <= 70; ++k) {
        for (int s = 0; s <= std::min(k, 61); ++s) {
            EXPECT_EQ(kbinomial_coverage(s, k), std::uint64_t{1} << s) << "k = " << k;
        }
    }
    // k = 2: N(s, 2) = F(s + 3) - 1.
    const std::vector<std::uint64_t> two{1, 2, 4, 7, 12, 20, 33, 54, 88, 143, 232};
    const std::vector<std::uint64_t> three{1, 2, 4, 8, 15, 28, 52, 96, 177, 326};
    for (int s = 0; s < static_cast<int>(two.size()); ++s)
        EXPECT_EQ(kbinomial_coverage(s, 2), two[s]);
    for (int s = 0; s < static_cast<int>(three.size()); ++s) {
        EXPECT_EQ(kbinomial_coverage(s, 3), three[s]);
    }
}

TEST(KbinomialCoverage, SaturatesInsteadOfOverflowing) {
    EXPECT_EQ(kbinomial_coverage(61, 61), std::uint64_t{1} << 61);
    EXPECT_EQ(kbinomial_coverage(62, 62), kCoverageMax);
    EXPECT_EQ(kbinomial_coverage(1000, 1000), kCoverageMax);
    EXPECT_EQ(kbinomial_coverage(1000000, 2), kCoverageMax);
    EXPECT_EQ(kbinomial_coverage(87, 2), 2880067194370816119u);  // F(90) - 1, below 2^62
    EXPECT_EQ(kbinomial_coverage(88, 2), kCoverageMax);          // F(91) - 1, above
    EXPECT_EQ(kbinomial_coverage(2147483647, 1), 2147483648u);
}

TEST(KbinomialSteps, Values) {
    for (int k = 1; k <= 64; ++k) EXPECT_EQ(kbinomial_steps(1, k), 0);
    for (Rank n = 1; n <= 1000; ++n) EXPECT_EQ(kbinomial_steps(n, 1), n - 1);
    for (Rank n = 1; n <= 5000; ++n) {
        for (int k = ceil_log2(n); k <= ceil_log2(n) + 2; ++k) {
            EXPECT_EQ(kbinomial_steps(n, std::max(k, 1)), ceil_log2(n)) << "n = " << n;
        }
    }
    EXPECT_EQ(kbinomial_steps(16, 2), 5);  // N(4, 2) = 12 < 16 <= N(5, 2) = 20
    EXPECT_EQ(kbinomial_steps(16, 3), 5);  // N(4, 3) = 15
    EXPECT_EQ(kbinomial_steps(2147483647, 1), 2147483646);
    EXPECT_EQ(kbinomial_steps(2147483647, 2), 44);  // N(43, 2) = 1836311902, N(44, 2) = 2971215072
    EXPECT_EQ(kbinomial_steps(2147483647, 31), 31);
}

TEST(KbinomialTotalSteps, IsL1PlusKPerExtraPacket) {
    EXPECT_EQ(kbinomial_total_steps(8, 3, 3), 9);  // Kesavan and Panda Fig. 8
    EXPECT_EQ(kbinomial_total_steps(16, 1, 4), 4);
    EXPECT_EQ(kbinomial_total_steps(16, 3, 2), 5 + 2 * 2);
    EXPECT_EQ(kbinomial_total_steps(4096, 1000000, 1), 4095 + 999999);
    EXPECT_EQ(kbinomial_total_steps(2, 1000000, 1), 1000000);
    EXPECT_EQ(kbinomial_total_steps(1, 1000000, 1), 0);  // a group of one sends nothing
}

TEST(OptimalK, OnePacketTakesTheBinomialTree) {
    // Fig. 12: "for m = 1, the optimal value of k = ceil(log2 n)".
    EXPECT_EQ(optimal_k(1, 1), 1);
    for (Rank n = 2; n <= 1024; ++n) EXPECT_EQ(optimal_k(n, 1), ceil_log2(n)) << "n = " << n;
}

TEST(OptimalK, NeverRisesWithTheMessageLength) {
    for (Rank n = 2; n <= 1024; ++n) {
        int previous = optimal_k(n, 1);
        for (std::int64_t m = 2; m <= 2048; ++m) {
            const int k = optimal_k(n, m);
            ASSERT_LE(k, previous) << "n = " << n << ", m = " << m;
            ASSERT_GE(k, 1);
            previous = k;
        }
    }
}

TEST(OptimalK, SixteenNodesTakeTheChainFromTwelvePackets) {
    // Fig. 12(a): for n = 16 the optimal k reaches 1 before m = 32. k = 2 covers 16 nodes in 5
    // steps: 5 + 2 (m - 1) against the chain's 15 + (m - 1), equal at m = 11.
    EXPECT_EQ(optimal_k(16, 1), 4);
    for (std::int64_t m = 2; m <= 11; ++m) EXPECT_EQ(optimal_k(16, m), 2) << "m = " << m;
    for (std::int64_t m = 12; m <= 2048; ++m) EXPECT_EQ(optimal_k(16, m), 1) << "m = " << m;
}

TEST(OptimalK, FourAndEightPacketsSettleOnTwo) {
    // Fig. 12(b): with 4 or 8 packets k = 2 over most multicast set sizes, larger k only for
    // large n.
    for (Rank n = 2; n <= 1024; ++n) {
        EXPECT_EQ(optimal_k(n, 8), n <= 11 ? 1 : 2) << "n = " << n;
        EXPECT_EQ(optimal_k(n, 4), n <= 6 ? 1 : n <= 986 ? 2 : 3) << "n = " << n;
    }
}

TEST(OptimalK, IsFastForLargeGroupsAndMessages) {
    // Called per multicast: the k = 1 steps come from N(s, 1) = s + 1, not from a walk of n steps.
    EXPECT_EQ(optimal_k(1 << 30, 1), 30);
    EXPECT_EQ(optimal_k(1 << 30, 1000000), 2);
    EXPECT_EQ(optimal_k(4096, 1000000), 1);
}

}  // namespace
}  // namespace nicsim::plan
