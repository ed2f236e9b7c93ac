// The inline containers: the same results inline and spilled, across the boundary both ways, for
// plain and resource-owning elements; a ring keeps FIFO order while it grows out of its inline
// slots and wraps.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/rank_map.h"
#include "core/ring.h"
#include "core/small_vector.h"

namespace nicsim {
namespace {

class SmallVectorGrowth : public ::testing::TestWithParam<int> {};

TEST_P(SmallVectorGrowth, HoldsWhatWasPushedInlineAndSpilled) {
    const int n = GetParam();
    SmallVector<int, 4> v;
    for (int i = 0; i < n; ++i) v.push_back(10 * i);
    ASSERT_EQ(v.size(), static_cast<std::size_t>(n));
    EXPECT_EQ(v.empty(), n == 0);
    EXPECT_EQ(std::vector<int>(v.begin(), v.end()), [n] {
        std::vector<int> expected;
        for (int i = 0; i < n; ++i) expected.push_back(10 * i);
        return expected;
    }());
    for (int i = n; i > 0; --i) {
        EXPECT_EQ(v.back(), 10 * (i - 1));
        v.pop_back();
    }
    EXPECT_TRUE(v.empty());
    v.push_back(7);  // a spilled vector emptied by pop_back() keeps working
    EXPECT_EQ(v[0], 7);
    EXPECT_EQ(v.size(), 1u);
}

INSTANTIATE_TEST_SUITE_P(Sizes, SmallVectorGrowth, ::testing::Values(0, 1, 3, 4, 5, 8, 9, 100));

TEST(SmallVector, ClearGoesBackInlineAndReleasesElements) {
    SmallVector<std::string, 2> v;
    for (const char* s : {"a", "b", "c"}) v.emplace_back(s);
    v.clear();
    EXPECT_TRUE(v.empty());
    v.emplace_back(std::string(100, 'x'));
    v.pop_back();
    v.resize(2);  // inline slots past the size are empty again
    EXPECT_EQ(v[0], "");
    EXPECT_EQ(v[1], "");
}

TEST(SmallVector, CopiesAndAssignsInlineAndSpilled) {
    const std::vector<int> few = {1, 2};
    const std::vector<int> many = {1, 2, 3, 4, 5, 6};
    for (const auto& source : {few, many}) {
        SmallVector<int, 3> v(source.begin(), source.end());
        const SmallVector<int, 3> copy = v;
        v[0] = 42;
        EXPECT_EQ(std::vector<int>(copy.begin(), copy.end()), source);
        SmallVector<int, 3> moved = std::move(v);
        EXPECT_EQ(moved[0], 42);
        EXPECT_EQ(moved.size(), source.size());
    }
}

TEST(SmallVector, ResizesAcrossTheInlineCapacity) {
    SmallVector<int, 4> v;
    v.resize(3);
    EXPECT_EQ(v.size(), 3u);
    v[2] = 5;
    v.resize(6);
    EXPECT_EQ(v.size(), 6u);
    EXPECT_EQ(v[2], 5);
    EXPECT_EQ(v[5], 0);
}

class RingGrowth : public ::testing::TestWithParam<int> {};

TEST_P(RingGrowth, KeepsFifoOrderWhileWrappingAndGrowing) {
    const int live = GetParam();  // entries in the queue at once
    Ring<int, 4> ring;
    int next_in = 0;
    int next_out = 0;
    for (int round = 0; round < 50; ++round) {
        while (static_cast<int>(ring.size()) < live) ring.push_back(next_in++);
        for (int i = 0; i < (live + 1) / 2; ++i) {
            ASSERT_EQ(ring.front(), next_out++);
            ring.pop_front();
        }
    }
    while (!ring.empty()) {
        ASSERT_EQ(ring.front(), next_out++);
        ring.pop_front();
    }
    EXPECT_EQ(next_out, next_in);
}

INSTANTIATE_TEST_SUITE_P(Sizes, RingGrowth, ::testing::Values(1, 3, 4, 5, 17));

TEST(RankMap, IndicesAndKeysSurviveGrowingPastTheInlineEntries) {
    RankMap<std::string, 2> map;
    for (Rank r = 0; r < 40; ++r) {
        EXPECT_EQ(map.add(100 - 3 * r, std::to_string(r)), static_cast<std::uint32_t>(r));
    }
    for (Rank r = 0; r < 40; ++r) {
        ASSERT_NE(map.find(100 - 3 * r), nullptr);
        EXPECT_EQ(*map.find(100 - 3 * r), std::to_string(r));
        EXPECT_EQ(map.keys()[static_cast<std::size_t>(r)], 100 - 3 * r);
    }
    EXPECT_EQ(map.find(101), nullptr);
}

}  // namespace
}  // namespace nicsim
