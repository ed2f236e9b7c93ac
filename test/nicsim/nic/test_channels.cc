// The global collective channels and the NIC staging buffer (Yu et al. §4.2, §5.1, §5.2), each on
// its own; the allgather tests (test_allgather_op.cc) run the channels inside the agent.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "nic/channels.h"
#include "nic/staging.h"

namespace nicsim::nic {
namespace {

std::vector<std::byte> bytes(std::size_t n, int fill) {
    return std::vector<std::byte>(n, static_cast<std::byte>(fill));
}

TEST(Channels, KeepPayloadsInTheirCollectivesChannelUntilTheHostReadsThem) {
    Channels channels({4, 100});
    const auto a = bytes(30, 1), b = bytes(20, 2), c = bytes(50, 3);
    const auto sa = channels.store(0, 30, a);
    const auto sb = channels.store(0, 20, b);
    const auto sc = channels.store(2, 50, c);  // another channel
    ASSERT_TRUE(sa && sb && sc);
    EXPECT_EQ(channels.read(0, *sa).size(), 30u);
    EXPECT_TRUE(std::ranges::equal(channels.read(0, *sa), a));
    EXPECT_TRUE(std::ranges::equal(channels.read(0, *sb), b));
    EXPECT_TRUE(std::ranges::equal(channels.read(2, *sc), c));
}

TEST(Channels, RefuseAPayloadThatDoesNotFit) {
    Channels channels({2, 100});
    EXPECT_TRUE(channels.store(1, 60, bytes(60, 1)));
    EXPECT_FALSE(channels.store(1, 41, bytes(41, 2)));
    EXPECT_TRUE(channels.store(1, 40, bytes(40, 3)));  // exactly full
    EXPECT_FALSE(channels.store(1, 1, bytes(1, 4)));
    EXPECT_FALSE(channels.store(0, 101, bytes(101, 5)));  // larger than a channel
}

TEST(Channels, AccountSizesWithoutDataWhenOnlyTimeIsModelled) {
    Channels channels({1, 100});
    const auto kept = channels.store(0, 70, {});
    ASSERT_TRUE(kept);
    EXPECT_EQ(kept->length, 0u);
    EXPECT_TRUE(channels.read(0, *kept).empty());
    EXPECT_FALSE(channels.store(0, 31, {}));  // the 70 bytes count
}

TEST(Channels, ReuseAChannelOnlyAfterItsCollectiveIsRecycled) {
    Channels channels({4, 100});
    ASSERT_TRUE(channels.store(1, 10, bytes(10, 1)));
    EXPECT_FALSE(channels.store(5, 10, bytes(10, 2)));  // channel 1 still holds collective 1
    channels.recycle(0);                                // not enough: 1 is not done
    EXPECT_FALSE(channels.store(5, 10, bytes(10, 2)));
    channels.recycle(3);  // covers 1, and every collective before 3
    const auto kept = channels.store(5, 100, bytes(100, 2));  // the whole channel is free again
    ASSERT_TRUE(kept);
    EXPECT_TRUE(std::ranges::equal(channels.read(5, *kept), bytes(100, 2)));
    EXPECT_FALSE(channels.store(1, 1, bytes(1, 3)));  // collective 5 holds it now
}

TEST(Channels, KeepPayloadlessPacketsWithoutRoom) {
    Channels none({0, 0});
    EXPECT_TRUE(none.store(7, 0, {}));
    EXPECT_FALSE(none.store(7, 1, bytes(1, 1)));
    Channels full({1, 1});
    ASSERT_TRUE(full.store(0, 1, bytes(1, 1)));
    EXPECT_TRUE(full.store(1, 0, {}));  // channel 0 held by collective 0: no matter
}

TEST(Channels, SequenceNumbersWrap) {
    // 2^32 - 1 and 0 share channel 0 of 3; the first holds it until recycled.
    Channels channels({3, 10});
    const Seq last = ~Seq{0};
    ASSERT_TRUE(channels.store(last, 5, bytes(5, 1)));
    EXPECT_FALSE(channels.store(0, 5, bytes(5, 2)));
    channels.recycle(last - 1);
    EXPECT_FALSE(channels.store(0, 5, bytes(5, 2)));
    channels.recycle(last);
    EXPECT_TRUE(channels.store(0, 5, bytes(5, 2)));
    channels.recycle(last);  // 0 comes after 2^32 - 1: not done
    EXPECT_FALSE(channels.store(3, 5, bytes(5, 3)));
}

std::vector<Dma> add_all(Staging& staging, std::initializer_list<std::uint64_t> payloads) {
    std::vector<Dma> dmas;
    for (const std::uint64_t bytes : payloads) staging.add(bytes, dmas);
    return dmas;
}

TEST(Staging, GathersSmallPayloadsIntoOneDmaAtCompletion) {
    // Yu et al.'s case: ab with 4-byte blocks over 1024 nodes, 1023 packets of 4 bytes.
    Staging staging;
    std::vector<Dma> dmas;
    for (int i = 0; i < 1023; ++i) staging.add(4, dmas);
    EXPECT_TRUE(dmas.empty());
    EXPECT_EQ(staging.held(), 4092u);
    staging.flush(dmas);
    EXPECT_EQ(dmas, (std::vector<Dma>{{4092, 1023}}));
    EXPECT_EQ(staging.held(), 0u);
    staging.flush(dmas);  // nothing left: no empty DMA
    EXPECT_EQ(dmas.size(), 1u);
}

TEST(Staging, FlushesWhenTheNextSmallPayloadDoesNotFit) {
    Staging staging(128);
    EXPECT_EQ(add_all(staging, {64, 64, 1}), (std::vector<Dma>{{128, 2}}));
    EXPECT_EQ(staging.held(), 1u);
    EXPECT_EQ(add_all(staging, {64, 63, 64}), (std::vector<Dma>{{128, 3}}));
}

TEST(Staging, LetsALargePayloadPassAfterWhatWaits) {
    Staging staging;
    EXPECT_EQ(add_all(staging, {10, 20, 65, 64}), (std::vector<Dma>{{30, 2}, {65, 1}}));
    EXPECT_EQ(staging.held(), 64u);
    EXPECT_EQ(add_all(staging, {4096}), (std::vector<Dma>{{64, 1}, {4096, 1}}));
    EXPECT_EQ(add_all(staging, {4096}), (std::vector<Dma>{{4096, 1}}));  // nothing waits
}

TEST(Staging, IgnoresEmptyPayloadsAndPassesEverythingWhenTooSmall) {
    Staging staging(32);
    EXPECT_TRUE(add_all(staging, {0, 0}).empty());
    EXPECT_EQ(add_all(staging, {16, 33}), (std::vector<Dma>{{16, 1}, {33, 1}}));
    Staging none(0);
    EXPECT_EQ(add_all(none, {1, 2}), (std::vector<Dma>{{1, 1}, {2, 1}}));
}

}  // namespace
}  // namespace nicsim::nic
