// Every allgather algorithm for every group size 1..257: a message-passing interpreter written
// here, independently of the planners, runs all ranks' schedules step by step (a rank sends only
// blocks it holds when the step begins, every receive consumes exactly one matching send) and
// counts what each rank receives. The step counts, the peers (all in the binomial group), the
// hop rule of ab's packets and the packing of blocks into MTU-sized packets are checked exactly.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "plan/allgather.h"
#include "plan/barrier.h"
#include "plan/group.h"

namespace nicsim::plan {
namespace {

constexpr Rank kMaxSize = 257;

bool is_power_of_two(Rank n) {
    return (n & (n - 1)) == 0;
}

// The origins the ranges name, in order.
std::vector<Rank> origins(const std::vector<BlockRange>& blocks) {
    std::vector<Rank> all;
    for (const BlockRange& range : blocks) {
        for (Rank o = range.first; o < range.first + range.count; ++o) all.push_back(o);
    }
    return all;
}

std::vector<AllgatherSchedule> plan_all(const AllgatherAlgorithm& algorithm, Rank size) {
    std::vector<AllgatherSchedule> all;
    for (Rank r = 0; r < size; ++r) all.push_back(algorithm.plan(r, size));
    return all;
}

// Runs every rank's schedule in lockstep and fills received[r][o]: how often rank r received
// origin o's block. Fails the test when a rank sends a block it does not hold yet, a receive
// matches no send of the same blocks at the same step, or a send is never received.
void interpret(const std::vector<AllgatherSchedule>& all, Rank size,
               std::vector<std::vector<int>>& received) {
    struct Message {
        Rank from;
        Transfer transfer;
        bool delivered = false;
    };
    std::vector<std::vector<bool>> holds(size, std::vector<bool>(size, false));
    received.assign(size, std::vector<int>(size, 0));
    for (Rank r = 0; r < size; ++r) {
        holds[r][r] = true;
        ASSERT_EQ(all[r].size(), all[0].size()) << "rank " << r;
    }
    for (std::size_t s = 0; s < all[0].size(); ++s) {
        std::vector<Message> sent;
        for (Rank r = 0; r < size; ++r) {
            for (const Transfer& send : all[r][s].sends) {
                ASSERT_TRUE(send.peer >= 0 && send.peer < size && send.peer != r)
                    << "rank " << r << " step " << s << " sends to " << send.peer;
                for (Rank o : origins(send.blocks)) {
                    ASSERT_TRUE(o >= 0 && o < size) << "rank " << r << " step " << s;
                    ASSERT_TRUE(holds[r][o])
                        << "rank " << r << " step " << s << " sends block " << o << " it lacks";
                }
                sent.push_back({r, send});
            }
        }
        // Every send is in `sent` before any receive lands: what arrives at step s can only be
        // sent on at step s + 1.
        for (Rank r = 0; r < size; ++r) {
            for (const Transfer& recv : all[r][s].recvs) {
                const auto match = std::find_if(sent.begin(), sent.end(), [&](const Message& m) {
                    return !m.delivered && m.from == recv.peer && m.transfer.peer == r &&
                           m.transfer.blocks == recv.blocks;
                });
                ASSERT_NE(match, sent.end())
                    << "rank " << r << " step " << s << " waits for " << recv.peer << " in vain";
                match->delivered = true;
                for (Rank o : origins(recv.blocks)) {
                    ++received[r][o];
                    holds[r][o] = true;
                }
            }
        }
        for (const Message& m : sent) {
            ASSERT_TRUE(m.delivered)
                << m.from << " -> " << m.transfer.peer << " step " << s << " is never received";
        }
    }
}

int expected_steps(const AllgatherAlgorithm& algorithm, Rank size) {
    if (algorithm.plan == allgather_recursive_doubling) {
        const int rounds = ceil_log2(size + 1) - 1;  // log2 of the largest power of two <= size
        return is_power_of_two(size) ? rounds : rounds + 2;
    }
    if (algorithm.plan == allgather_all_to_all) return ceil_log2(size);
    return size - 1;
}

class AllgatherSchedules : public testing::TestWithParam<std::tuple<int, Rank>> {
protected:
    const AllgatherAlgorithm& algorithm() const {
        return allgather_algorithms()[std::get<0>(GetParam())];
    }
    Rank size() const { return std::get<1>(GetParam()); }
};

TEST_P(AllgatherSchedules, EveryRankReceivesEveryOtherBlockExactlyOnce) {
    std::vector<std::vector<int>> received;
    interpret(plan_all(algorithm(), size()), size(), received);
    ASSERT_FALSE(HasFatalFailure());
    for (Rank r = 0; r < size(); ++r) {
        for (Rank o = 0; o < size(); ++o) {
            ASSERT_EQ(received[r][o], o == r ? 0 : 1) << "rank " << r << ", block " << o;
        }
    }
}

TEST_P(AllgatherSchedules, StepCount) {
    for (Rank r = 0; r < size(); ++r) {
        EXPECT_EQ(static_cast<int>(algorithm().plan(r, size()).size()),
                  expected_steps(algorithm(), size()))
            << "rank " << r;
    }
}

TEST_P(AllgatherSchedules, EveryPeerIsInTheBinomialGroup) {
    if (algorithm().plan == allgather_flat) GTEST_SKIP() << "flat names every rank";
    for (Rank r = 0; r < size(); ++r) {
        const Group group = binomial_group(r, size());
        const auto known = [&](Rank peer) {
            return std::count(group.up.begin(), group.up.end(), peer) +
                       std::count(group.down.begin(), group.down.end(), peer) >
                   0;
        };
        for (const AllgatherStep& step : algorithm().plan(r, size())) {
            for (const Transfer& send : step.sends) EXPECT_TRUE(known(send.peer)) << r;
            for (const Transfer& recv : step.recvs) EXPECT_TRUE(known(recv.peer)) << r;
        }
    }
}

TEST_P(AllgatherSchedules, BlockRangesAreAscendingAndNeverAdjacent) {
    for (Rank r = 0; r < size(); ++r) {
        for (const AllgatherStep& step : algorithm().plan(r, size())) {
            for (const auto* transfers : {&step.sends, &step.recvs}) {
                for (const Transfer& t : *transfers) {
                    ASSERT_FALSE(t.blocks.empty()) << "rank " << r;
                    for (std::size_t i = 0; i < t.blocks.size(); ++i) {
                        EXPECT_GT(t.blocks[i].count, 0) << "rank " << r;
                        if (i > 0) {
                            EXPECT_GT(t.blocks[i].first,
                                      t.blocks[i - 1].first + t.blocks[i - 1].count)
                                << "rank " << r;
                        }
                    }
                }
            }
        }
    }
}

INSTANTIATE_TEST_SUITE_P(
    AllAlgorithmsAndSizes, AllgatherSchedules,
    testing::Combine(testing::Range(0, static_cast<int>(allgather_algorithms().size())),
                     testing::Range(Rank{1}, kMaxSize + 1)),
    [](const auto& info) {
        std::string name(allgather_algorithms()[std::get<0>(info.param)].name);
        std::replace(name.begin(), name.end(), '-', '_');
        return name + "_N" + std::to_string(std::get<1>(info.param));
    });

TEST(AllgatherRecursiveDoubling, PowersOfTwoExchangeWithXorPartners) {
    for (Rank size = 1; size <= kMaxSize; size *= 2) {
        for (Rank r = 0; r < size; ++r) {
            const auto steps = allgather_recursive_doubling(r, size);
            ASSERT_EQ(static_cast<int>(steps.size()), ceil_log2(size));
            for (std::size_t k = 0; k < steps.size(); ++k) {
                const Rank width = Rank{1} << k;
                const Rank partner = r ^ width;
                EXPECT_EQ(steps[k], (AllgatherStep{{{partner, {{r & -width, width}}}},
                                                   {{partner, {{partner & -width, width}}}}}));
            }
        }
    }
}

TEST(AllgatherRecursiveDoubling, SixRanksFoldInAndOut) {
    EXPECT_EQ(allgather_recursive_doubling(0, 6),
              (AllgatherSchedule{
                  {{}, {{4, {{4, 1}}}}},
                  {{{1, {{0, 1}, {4, 1}}}}, {{1, {{1, 1}, {5, 1}}}}},
                  {{{2, {{0, 2}, {4, 2}}}}, {{2, {{2, 2}}}}},
                  {{{4, {{0, 4}, {5, 1}}}}, {}},
              }));
    EXPECT_EQ(allgather_recursive_doubling(3, 6), (AllgatherSchedule{
                                                      {},
                                                      {{{2, {{3, 1}}}}, {{2, {{2, 1}}}}},
                                                      {{{1, {{2, 2}}}}, {{1, {{0, 2}, {4, 2}}}}},
                                                      {},
                                                  }));
    EXPECT_EQ(allgather_recursive_doubling(5, 6), (AllgatherSchedule{
                                                      {{{1, {{5, 1}}}}, {}},
                                                      {},
                                                      {},
                                                      {{}, {{1, {{0, 5}}}}},
                                                  }));
}

TEST(AllgatherAllToAll, SixRanksWorkedExample) {
    // Step 2 sends only 2 of the 4 blocks within distance 4: the others' next hop would be >= 6.
    EXPECT_EQ(allgather_all_to_all(0, 6), (AllgatherSchedule{
                                              {{{1, {{0, 1}}}}, {{5, {{5, 1}}}}},
                                              {{{2, {{0, 1}, {5, 1}}}}, {{4, {{3, 2}}}}},
                                              {{{4, {{0, 1}, {5, 1}}}}, {{2, {{1, 2}}}}},
                                          }));
}

TEST(AllgatherFlat, FourRanksWorkedExample) {
    // Rank 1's own block to 2, 3 and 0 in turn; the block of the rank as far behind comes back.
    EXPECT_EQ(allgather_flat(1, 4), (AllgatherSchedule{
                                        {{{2, {{1, 1}}}}, {{0, {{0, 1}}}}},
                                        {{{3, {{1, 1}}}}, {{3, {{3, 1}}}}},
                                        {{{0, {{1, 1}}}}, {{2, {{2, 1}}}}},
                                    }));
    EXPECT_EQ(allgather_flat(0, 1), AllgatherSchedule{});
}

TEST(AllgatherRing, FourRanksWorkedExample) {
    EXPECT_EQ(allgather_ring(1, 4), (AllgatherSchedule{
                                        {{{2, {{1, 1}}}}, {{0, {{0, 1}}}}},
                                        {{{2, {{0, 1}}}}, {{0, {{3, 1}}}}},
                                        {{{2, {{3, 1}}}}, {{0, {{2, 1}}}}},
                                    }));
}

// Yu et al.'s hop rule for ab, written here as the reference the schedule must agree with. A
// packet carries the flag (i, j): i its origin, j log2 of the distance of the hop that brought it,
// counted in ranks after the origin modulo N. The origin sends first to rank + 1 with flag
// (i, 0); a rank d after the origin that received the packet with flag (i, j), or sent it with
// that flag, sends it on to d + 2^(j+1) with flag (i, j + 1) while that is less than N.
struct HopFlag {
    Rank origin = 0;
    int j = 0;

    friend bool operator==(const HopFlag&, const HopFlag&) = default;
};

struct Hop {
    Rank to = 0;
    HopFlag flag;

    friend bool operator==(const Hop&, const Hop&) = default;
};

std::optional<Hop> hop_to(std::int64_t distance, HopFlag flag, Rank size) {
    if (distance >= size) return std::nullopt;
    return Hop{static_cast<Rank>((flag.origin + distance) % size), flag};
}

std::optional<Hop> ab_first_hop(Rank rank, Rank size) {
    return hop_to(1, {rank, 0}, size);
}

std::optional<Hop> ab_next_hop(HopFlag flag, Rank rank, Rank size) {
    const Rank distance = ((rank - flag.origin) % size + size) % size;
    const int j = flag.j + 1;
    if (j > 30) return std::nullopt;
    return hop_to(distance + (std::int64_t{1} << j), {flag.origin, j}, size);
}

// The rule followed packet by packet from every origin: the origin's NIC, having sent, and
// every NIC that receives, each ask ab_next_hop() where the packet goes next.
struct HopRecord {
    Rank from;
    Hop hop;
};

std::vector<HopRecord> follow_hops(Rank origin, Rank size) {
    std::vector<HopRecord> hops;
    std::vector<HopRecord> pending;
    if (const auto first = ab_first_hop(origin, size)) pending.push_back({origin, *first});
    while (!pending.empty() && hops.size() <= static_cast<std::size_t>(size) * size) {
        const HopRecord made = pending.back();
        pending.pop_back();
        hops.push_back(made);
        for (Rank at : {made.from, made.hop.to}) {
            if (const auto next = ab_next_hop(made.hop.flag, at, size))
                pending.push_back({at, *next});
        }
    }
    return hops;
}

TEST(AllgatherHops, ReachEveryRankExactlyOncePerOrigin) {
    for (Rank size = 1; size <= kMaxSize; ++size) {
        for (Rank origin = 0; origin < size; ++origin) {
            std::vector<int> visits(size, 0);
            for (const HopRecord& h : follow_hops(origin, size)) {
                ASSERT_EQ(h.hop.flag.origin, origin);
                // j is log2 of the distance the hop covers.
                ASSERT_EQ((h.hop.to - h.from + size) % size, Rank{1} << h.hop.flag.j)
                    << "origin " << origin << " of " << size;
                ASSERT_LT(h.hop.flag.j, ceil_log2(size));
                ++visits[h.hop.to];
            }
            for (Rank r = 0; r < size; ++r) {
                ASSERT_EQ(visits[r], r == origin ? 0 : 1)
                    << "origin " << origin << " rank " << r << " of " << size;
            }
        }
    }
}

TEST(AllgatherHops, ScheduleSendsWhatTheHopsCarry) {
    // Hops with flag (i, j) travel at step j: the ab schedule is the union of all origins' hops.
    for (Rank size = 1; size <= kMaxSize; ++size) {
        // hop_origins[{from, step}][to]: the origins whose packets make that hop, ascending.
        std::map<std::pair<Rank, int>, std::map<Rank, std::vector<Rank>>> hop_origins;
        for (Rank origin = 0; origin < size; ++origin) {
            for (const HopRecord& h : follow_hops(origin, size)) {
                hop_origins[{h.from, h.hop.flag.j}][h.hop.to].push_back(origin);
            }
        }
        for (auto& [key, by_peer] : hop_origins) {
            for (auto& [to, list] : by_peer) std::sort(list.begin(), list.end());
        }
        for (Rank r = 0; r < size; ++r) {
            const auto steps = allgather_all_to_all(r, size);
            for (int s = 0; s < static_cast<int>(steps.size()); ++s) {
                std::map<Rank, std::vector<Rank>> planned;
                for (const Transfer& send : steps[s].sends)
                    planned[send.peer] = origins(send.blocks);
                const auto it = hop_origins.find({r, s});
                EXPECT_EQ(planned, it == hop_origins.end() ? decltype(planned){} : it->second)
                    << "rank " << r << " step " << s << " of " << size;
            }
        }
    }
}

TEST(AllgatherHops, SixRanksWorkedExample) {
    EXPECT_EQ(ab_first_hop(5, 6), (Hop{0, {5, 0}}));
    EXPECT_EQ(ab_first_hop(0, 1), std::nullopt);
    // Origin 2's packet reached rank 3 (distance 1) by a hop of 2^0: on to distance 1 + 2 = 3.
    EXPECT_EQ(ab_next_hop({2, 0}, 3, 6), (Hop{5, {2, 1}}));
    // Having sent it there, rank 3 sends it on to distance 1 + 4 = 5, i.e. rank 1.
    EXPECT_EQ(ab_next_hop({2, 1}, 3, 6), (Hop{1, {2, 2}}));
    EXPECT_EQ(ab_next_hop({2, 2}, 3, 6), std::nullopt);  // 1 + 8 >= 6
    EXPECT_EQ(ab_next_hop({2, 1}, 5, 6), std::nullopt);  // 3 + 4 >= 6
    EXPECT_EQ(ab_next_hop({2, 30}, 3, 6), std::nullopt);
}

// Packing: the pieces of all packets, in order, are exactly the blocks' bytes in order.
std::vector<ByteRange> merged(std::vector<ByteRange> ranges) {
    std::vector<ByteRange> out;
    for (const ByteRange& r : ranges) {
        if (r.length == 0) continue;
        if (!out.empty() && out.back().offset + out.back().length == r.offset) {
            out.back().length += r.length;
        } else {
            out.push_back(r);
        }
    }
    return out;
}

void expect_packed(const std::vector<BlockRange>& blocks, std::uint64_t block_bytes,
                   std::uint64_t mtu) {
    const auto packets = pack(blocks, block_bytes, mtu);
    std::uint64_t total = 0;
    std::vector<ByteRange> expected;
    for (const BlockRange& range : blocks) {
        const std::uint64_t length = static_cast<std::uint64_t>(range.count) * block_bytes;
        expected.push_back({static_cast<std::uint64_t>(range.first) * block_bytes, length});
        total += length;
    }
    ASSERT_EQ(packets.size(), std::max<std::uint64_t>(1, (total + mtu - 1) / mtu))
        << "B " << block_bytes << " mtu " << mtu;
    std::vector<ByteRange> sent;
    for (const Packet& packet : packets) {
        ASSERT_LE(packet.payload(), mtu) << "B " << block_bytes;
        for (const ByteRange& piece : packet.pieces) {
            ASSERT_GT(piece.length, 0u);
            sent.push_back(piece);
        }
    }
    ASSERT_EQ(merged(sent), merged(expected)) << "B " << block_bytes << " mtu " << mtu;
}

class AllgatherPacking : public testing::TestWithParam<std::tuple<std::uint64_t, std::uint64_t>> {};

TEST_P(AllgatherPacking, EveryTransferFitsTheMtuAndCoversEveryByteOnce) {
    const auto [block_bytes, mtu] = GetParam();
    for (const AllgatherAlgorithm& algorithm : allgather_algorithms()) {
        for (Rank size : {1, 2, 3, 6, 8, 13, 32, 33}) {
            for (Rank r = 0; r < size; ++r) {
                for (const AllgatherStep& step : algorithm.plan(r, size)) {
                    for (const Transfer& send : step.sends) {
                        if (algorithm.combines) {
                            expect_packed(send.blocks, block_bytes, mtu);
                        } else {
                            for (Rank o : origins(send.blocks)) {
                                expect_packed({{o, 1}}, block_bytes, mtu);
                            }
                        }
                        ASSERT_FALSE(HasFatalFailure()) << algorithm.name << " N " << size;
                    }
                }
            }
        }
    }
}

INSTANTIATE_TEST_SUITE_P(BlockSizesAndMtus, AllgatherPacking,
                         testing::Values(std::tuple{0, 1}, std::tuple{0, 4096}, std::tuple{1, 1},
                                         std::tuple{5, 1}, std::tuple{5, 7}, std::tuple{3, 4096},
                                         std::tuple{64, 7}, std::tuple{1000, 1500},
                                         std::tuple{1500, 1500}, std::tuple{4096, 1500},
                                         std::tuple{9000, 4096}, std::tuple{9000, 8192}),
                         [](const auto& info) {
                             return "B" + std::to_string(std::get<0>(info.param)) + "_mtu" +
                                    std::to_string(std::get<1>(info.param));
                         });

TEST(AllgatherPacking, CombinesAndSplitsBlocks) {
    // Blocks 1, 2 and 5 of 100 bytes in packets of 128: block 2 straddles two packets, which
    // the second shares with block 5.
    const std::vector<BlockRange> blocks{{1, 2}, {5, 1}};
    EXPECT_EQ(pack(blocks, 100, 128), (std::vector<Packet>{
                                          {{{100, 128}}},
                                          {{{228, 72}, {500, 56}}},
                                          {{{556, 44}}},
                                      }));
    // One block larger than the MTU.
    EXPECT_EQ(pack(std::vector<BlockRange>{{3, 1}}, 300, 128),
              (std::vector<Packet>{{{{900, 128}}}, {{{1028, 128}}}, {{{1156, 44}}}}));
    // Small blocks: one packet for many.
    EXPECT_EQ(pack(std::vector<BlockRange>{{0, 4}, {8, 4}}, 4, 4096),
              (std::vector<Packet>{{{{0, 16}, {32, 16}}}}));
}

TEST(AllgatherPacking, OnePacketFoundByItsIndex) {
    // pack() is packet_at() for every index below packet_count(); one from the middle, alone.
    const std::vector<BlockRange> blocks{{1, 2}, {5, 1}};
    EXPECT_EQ(packet_count(blocks, 100, 128), 3u);
    EXPECT_EQ(packet_at(blocks, 100, 128, 1), (Packet{{{228, 72}, {500, 56}}}));
    EXPECT_EQ(packet_count(blocks, 0, 128), 1u);
    EXPECT_EQ(packet_count(blocks, 100, 0), 0u);
}

TEST(AllgatherPacking, EmptyBlocksStillMakeOneHeaderOnlyPacket) {
    EXPECT_EQ(pack(std::vector<BlockRange>{{0, 7}}, 0, 4096), std::vector<Packet>(1));
    EXPECT_EQ(pack(std::vector<BlockRange>{}, 64, 4096), std::vector<Packet>(1));
    EXPECT_EQ(pack(std::vector<BlockRange>{{0, 7}}, 64, 0), std::vector<Packet>{});
}

TEST(AllgatherBlocks, CyclicRangesSplitAtTheWrap) {
    EXPECT_EQ(cyclic_blocks(4, 3, 6), (std::vector<BlockRange>{{0, 1}, {4, 2}}));
    EXPECT_EQ(cyclic_blocks(-1, 2, 6), (std::vector<BlockRange>{{0, 1}, {5, 1}}));
    EXPECT_EQ(cyclic_blocks(1, 3, 6), (std::vector<BlockRange>{{1, 3}}));
    EXPECT_EQ(cyclic_blocks(2, 6, 6), (std::vector<BlockRange>{{0, 6}}));
    EXPECT_EQ(cyclic_blocks(3, 5, 6), (std::vector<BlockRange>{{0, 2}, {3, 3}}));
    EXPECT_EQ(cyclic_blocks(3, 0, 6), std::vector<BlockRange>{});
    EXPECT_EQ(block_count(cyclic_blocks(3, 5, 6)), 5);
}

TEST(AllgatherAlgorithms, TableNamesAndDefault) {
    const auto table = allgather_algorithms();
    std::vector<std::string_view> names;
    for (const AllgatherAlgorithm& algorithm : table) {
        names.push_back(algorithm.name);
        EXPECT_FALSE(algorithm.description.empty());
        EXPECT_EQ(find_allgather_algorithm(algorithm.name), &algorithm);
    }
    EXPECT_EQ(names,
              (std::vector<std::string_view>{"rd", "ab", "flat", "host-rd", "host-ring"}));
    EXPECT_EQ(find_allgather_algorithm("rd")->plan, find_allgather_algorithm("host-rd")->plan);
    EXPECT_FALSE(find_allgather_algorithm("ab")->combines);
    EXPECT_FALSE(find_allgather_algorithm("flat")->combines);
    EXPECT_TRUE(find_allgather_algorithm("host-ring")->on_host);
    EXPECT_FALSE(find_allgather_algorithm("rd")->on_host);
    EXPECT_EQ(find_allgather_algorithm("bruck"), nullptr);
}

TEST(NodeAllgather, AllToAllBroadcastOverThreeNodesOfTwoWorkedExample) {
    // Column 0 (ranks 0, 2, 4) runs ab among the nodes, column 1 (1, 3, 5) too; then each rank
    // gives its node's other member its own block and the two its column brought.
    const std::vector<Rank> order{0, 1, 2, 3, 4, 5};
    const std::vector<int> node_of{0, 0, 1, 1, 2, 2};
    const AllgatherAlgorithm& ab = *find_allgather_algorithm("ab");
    EXPECT_EQ(node_allgather(ab, 0, order, node_of),
              (AllgatherSchedule{
                  {{{2, {{0, 1}}}}, {{4, {{4, 1}}}}},
                  {{{4, {{0, 1}}}}, {{2, {{2, 1}}}}},
                  {{{1, {{0, 1}, {2, 1}, {4, 1}}}}, {{1, {{1, 1}, {3, 1}, {5, 1}}}}},
              }));
    EXPECT_EQ(node_allgather(ab, 3, order, node_of),
              (AllgatherSchedule{
                  {{{5, {{3, 1}}}}, {{1, {{1, 1}}}}},
                  {{{1, {{3, 1}}}}, {{5, {{5, 1}}}}},
                  {{{2, {{1, 1}, {3, 1}, {5, 1}}}}, {{2, {{0, 1}, {2, 1}, {4, 1}}}}},
              }));
}

// Over nodes: random layouts and orders, every algorithm. Every rank gets every other block
// exactly once, sends only what it holds, a step moves at most one transfer each way, every
// block enters each other node exactly once, and, for the combining ones, only leaders (a node's
// first rank in the order) send between nodes.
TEST(NodeAllgather, EveryBlockOnceAndIntoEachOtherNodeOnce) {
    std::uint64_t state = 11;
    auto below = [&state](int n) {
        state = state * 6364136223846793005ull + 1442695040888963407ull;
        return static_cast<int>((state >> 33) % static_cast<std::uint64_t>(n));
    };
    for (int round = 0; round < 300; ++round) {
        const Rank size = 1 + below(40);
        const int nodes = 1 + below(std::min<int>(size, 7));
        std::vector<int> node_of(size);
        for (Rank r = 0; r < size; ++r) node_of[r] = below(nodes);
        std::vector<Rank> order(size);
        for (Rank r = 0; r < size; ++r) order[r] = r;
        for (Rank i = size - 1; i > 0; --i) std::swap(order[i], order[below(i + 1)]);
        std::vector<bool> leader(size, false), led(nodes, false);
        for (const Rank r : order) {
            if (!led[node_of[r]]) leader[r] = led[node_of[r]] = true;
        }
        for (const AllgatherAlgorithm& algorithm : allgather_algorithms()) {
            std::vector<AllgatherSchedule> all;
            for (Rank r = 0; r < size; ++r) {
                all.push_back(node_allgather(algorithm, r, order, node_of));
            }
            std::vector<std::vector<int>> received;
            interpret(all, size, received);
            ASSERT_FALSE(HasFatalFailure()) << algorithm.name << ", " << size << " ranks";
            for (Rank r = 0; r < size; ++r) {
                for (Rank o = 0; o < size; ++o) {
                    ASSERT_EQ(received[r][o], o == r ? 0 : 1)
                        << algorithm.name << ": rank " << r << ", block " << o;
                }
                for (const AllgatherStep& step : all[r]) {
                    ASSERT_LE(step.sends.size(), 1u);
                    ASSERT_LE(step.recvs.size(), 1u);
                    for (const Transfer& send : step.sends) {
                        if (!algorithm.combines) continue;
                        EXPECT_TRUE(node_of[send.peer] == node_of[r] ||
                                    (leader[r] && leader[send.peer]))
                            << algorithm.name << ": " << r << " sends to " << send.peer;
                    }
                }
            }
            // entered[o][n]: how often origin o's block came into node n from another node.
            std::vector<std::vector<int>> entered(size, std::vector<int>(nodes, 0));
            for (Rank r = 0; r < size; ++r) {
                for (const AllgatherStep& step : all[r]) {
                    for (const Transfer& recv : step.recvs) {
                        if (node_of[recv.peer] == node_of[r]) continue;
                        for (Rank o : origins(recv.blocks)) ++entered[o][node_of[r]];
                    }
                }
            }
            std::vector<bool> used(nodes, false);
            for (Rank r = 0; r < size; ++r) used[node_of[r]] = true;
            for (Rank o = 0; o < size; ++o) {
                for (int n = 0; n < nodes; ++n) {
                    ASSERT_EQ(entered[o][n], used[n] && n != node_of[o] ? 1 : 0)
                        << algorithm.name << ": block " << o << " into node " << n << ", "
                        << size << " ranks";
                }
            }
        }
    }
}

}  // namespace
}  // namespace nicsim::plan
