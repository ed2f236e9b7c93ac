// The binomial group topology for every group size 1..257 and every rank: 2 * ceil(log2 N)
// entries at distance +-2^k on the ring of ranks, and (Yu et al. §4.1.1) they are all a rank needs
// for binomial trees of every root.
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "plan/barrier.h"
#include "plan/group.h"
#include "plan/tree.h"

namespace nicsim::plan {
namespace {

constexpr Rank kMaxSize = 257;

bool contains(const std::vector<Rank>& ranks, Rank r) {
    return std::find(ranks.begin(), ranks.end(), r) != ranks.end();
}

TEST(BinomialGroup, KeepsTwoEntriesPerPowerOfTwoBelowTheSize) {
    for (Rank size = 1; size <= kMaxSize; ++size) {
        for (Rank r = 0; r < size; ++r) {
            const Group group = binomial_group(r, size);
            ASSERT_EQ(group.up.size() + group.down.size(), 2u * ceil_log2(size)) << size;
            ASSERT_EQ(group.up.size(), group.down.size());
            for (std::size_t k = 0; k < group.up.size(); ++k) {
                const Rank d = Rank{1} << k;
                EXPECT_EQ(group.up[k], (r + d) % size) << "rank " << r << " of " << size;
                EXPECT_EQ((group.down[k] + d) % size, r) << "rank " << r << " of " << size;
                EXPECT_TRUE(group.down[k] >= 0 && group.down[k] < size);
            }
        }
    }
}

TEST(BinomialGroup, SixRanksWorkedExample) {
    EXPECT_EQ(binomial_group(5, 6), (Group{{0, 1, 3}, {4, 3, 1}}));
    EXPECT_EQ(binomial_group(0, 2), (Group{{1}, {1}}));
    EXPECT_EQ(binomial_group(0, 1), Group{});
}

TEST(BinomialGroup, HoldsEveryTreeEdgeForEveryRoot) {
    // The binomial tree of tree.h, its positions shifted so that any rank is the root: a parent
    // finds each child among its up entries and a child its parent among its down entries.
    for (Rank size = 1; size <= kMaxSize; ++size) {
        std::vector<Group> groups;
        for (Rank r = 0; r < size; ++r) groups.push_back(binomial_group(r, size));
        const Tree tree = binomial_tree(size);
        for (Rank root = 0; root < size; ++root) {
            std::vector<Rank> order(size);
            for (Rank p = 0; p < size; ++p) order[p] = (root + p) % size;
            const Tree rooted = relabel(tree, order);
            for (Rank parent = 0; parent < size; ++parent) {
                for (Rank child : rooted.children[parent]) {
                    ASSERT_TRUE(contains(groups[parent].up, child))
                        << parent << " -> " << child << ", root " << root << " of " << size;
                    ASSERT_TRUE(contains(groups[child].down, parent))
                        << parent << " -> " << child << ", root " << root << " of " << size;
                }
            }
        }
    }
}

}  // namespace
}  // namespace nicsim::plan
