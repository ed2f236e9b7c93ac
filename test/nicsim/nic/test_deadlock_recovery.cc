// LFC's deadlock recovery (Bhoedjang et al. §4) without time: NICs wired by FIFO channels, one per
// ordered pair, packets delivered from a random channel at each step. Every node multicasts at
// once along its own random tree with a random window of 1..8 credits. With recovery on, every
// run completes: every host gets every packet exactly once, in per-origin order, and credits are
// conserved. With it off, a run completes or stops with packets blocked, never loops.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <memory>
#include <vector>

#include "nic/nic.h"
#include "plan/tree.h"
#include "sim/rng.h"

#include "nic_net.h"

#include "../random_tree.h"

namespace nicsim::nic {
namespace {

using test::random_tree;

struct Outcome {
    bool completed = false;
    bool blocked = false;  // stopped with packets in blocked-sends queues
    std::uint64_t recoveries = 0;
    std::uint64_t flagged = 0;
};

// Every node multicasts `messages` messages of `packets` packets at once. The hosts post what
// their send buffers take, the network moves one packet, and so on, until nothing moves.
Outcome all_to_all(Net& net, const std::vector<plan::Tree>& trees, int messages,
                   std::uint32_t packets, std::size_t bytes) {
    const auto n = static_cast<Rank>(net.nics.size());
    for (Rank origin = 0; origin < n; ++origin) {
        for (Rank v = 0; v < n; ++v) net.set_route(v, origin, trees[origin].children[v]);
    }
    std::vector<std::uint32_t> posted(static_cast<std::size_t>(n), 0);
    const std::uint32_t total = static_cast<std::uint32_t>(messages) * packets;
    constexpr std::uint64_t kMaxSteps = 5'000'000;  // far above any run here: a loop is a bug
    for (std::uint64_t steps = 0; steps < kMaxSteps; ++steps) {
        bool any = false;
        for (Rank origin = 0; origin < n; ++origin) {
            while (posted[origin] < total) {
                PacketHeader h;
                h.seq = static_cast<Seq>(posted[origin] / packets);
                h.step = posted[origin] % packets;
                h.payload_bytes = static_cast<std::uint32_t>(bytes);
                if (h.step + 1 == packets) h.flags = kLastPacket;
                const Status s =
                    net.multicast(origin, h, payload_of(origin, h.seq, h.step, bytes));
                if (s == Status::again) break;
                EXPECT_EQ(s, Status::ok);
                ++posted[origin];
                any = true;
            }
        }
        if (!net.step() && !any) break;
    }
    Outcome out;
    out.completed = true;
    for (Rank v = 0; v < n; ++v) {
        out.completed = out.completed && net.nics[v]->idle() && posted[v] == total;
        out.blocked = out.blocked || !net.nics[v]->blocked_queues().empty();
        out.recoveries += net.nics[v]->stats().recoveries;
        out.flagged += net.ports[v]->flagged;
    }
    return out;
}

// Each host got every other origin's packets exactly once, in order, with their bytes.
void expect_all_delivered(const Net& net, int messages, std::uint32_t packets, std::size_t bytes) {
    const auto n = static_cast<Rank>(net.nics.size());
    for (Rank r = 0; r < n; ++r) {
        std::map<Rank, std::uint32_t> next;  // by origin: packets seen
        for (const Packet& p : net.ports[r]->got) {
            std::uint32_t& i = next[p.header.origin];
            EXPECT_NE(p.header.origin, r);
            EXPECT_EQ(p.header.seq, i / packets) << "node " << r << " origin " << p.header.origin;
            EXPECT_EQ(p.header.step, i % packets) << "node " << r << " origin " << p.header.origin;
            EXPECT_EQ(p.payload, payload_of(p.header.origin, p.header.seq, p.header.step, bytes));
            EXPECT_EQ(p.header.flags & kDeadlockFlag, 0);
            ++i;
        }
        EXPECT_EQ(next.size(), static_cast<std::size_t>(n - 1)) << "node " << r;
        for (const auto& [origin, count] : next) {
            EXPECT_EQ(count, static_cast<std::uint32_t>(messages) * packets)
                << "node " << r << " origin " << origin;
        }
    }
}

void expect_credits_conserved(const Net& net, int credits) {
    for (Rank r = 0; r < static_cast<Rank>(net.nics.size()); ++r) {
        for (const Rank p : net.nics[r]->peers()) {
            EXPECT_EQ(net.nics[r]->send_credits(p) + net.nics[p]->unreturned_credits(r), credits)
                << r << " -> " << p;
        }
    }
}

struct Case {
    Rank n;
    NicConfig config;
    int host_buffers;
    std::vector<plan::Tree> trees;
    int messages;
    std::uint32_t packets;
    std::size_t bytes;
};

Case random_case(std::uint64_t seed, bool recovery) {
    sim::Rng rng(seed, 0xdead);
    Case c;
    c.n = static_cast<Rank>(2 + rng.below(11));
    const int credits = static_cast<int>(1 + rng.below(8));
    c.config = NicConfig{credits,
                         static_cast<int>(rng.below(static_cast<std::uint64_t>(credits))),
                         static_cast<int>(1 + rng.below(8)),
                         Forwarding::fpfs,
                         recovery,
                         rng.below(2) == 0 ? 0.0 : 10.0};  // half with the timeout refinement
    c.host_buffers = static_cast<int>(1 + rng.below(8));
    for (Rank origin = 0; origin < c.n; ++origin) c.trees.push_back(random_tree(c.n, origin, rng));
    c.messages = static_cast<int>(1 + rng.below(3));
    c.packets = static_cast<std::uint32_t>(1 + rng.below(6));
    c.bytes = rng.below(16);
    return c;
}

class RandomAllToAll : public testing::TestWithParam<std::uint64_t> {};

TEST_P(RandomAllToAll, WithRecoveryEveryPacketArrivesOnceInOrder) {
    const Case c = random_case(GetParam(), true);
    Net net(c.n, c.config, c.host_buffers, GetParam(), true);
    const Outcome out = all_to_all(net, c.trees, c.messages, c.packets, c.bytes);
    ASSERT_TRUE(out.completed) << c.n << " nodes, " << c.config.credits << " credits";
    expect_all_delivered(net, c.messages, c.packets, c.bytes);
    expect_credits_conserved(net, c.config.credits);
}

TEST_P(RandomAllToAll, WithoutRecoveryCompletesOrStopsBlocked) {
    const Case c = random_case(GetParam(), false);
    Net net(c.n, c.config, c.host_buffers, GetParam(), true);
    const Outcome out = all_to_all(net, c.trees, c.messages, c.packets, c.bytes);
    EXPECT_NE(out.completed, out.blocked);  // one or the other, and nothing else
    EXPECT_EQ(out.recoveries, 0u);
    EXPECT_EQ(out.flagged, 0u);
    if (out.completed) {
        expect_all_delivered(net, c.messages, c.packets, c.bytes);
        expect_credits_conserved(net, c.config.credits);
    }
}

INSTANTIATE_TEST_SUITE_P(Seeds, RandomAllToAll, testing::Range<std::uint64_t>(1, 201));

// The random cases are not all easy: many of them deadlock without recovery.
TEST(DeadlockRecovery, ManyRandomCasesNeedIt) {
    int deadlocked = 0;
    for (std::uint64_t seed = 1; seed < 201; ++seed) {
        const Case c = random_case(seed, false);
        Net net(c.n, c.config, c.host_buffers, seed, true);
        deadlocked += all_to_all(net, c.trees, c.messages, c.packets, c.bytes).blocked ? 1 : 0;
    }
    EXPECT_GE(deadlocked, 10) << "of 200";
}

// Chains over a ring of NICs with one credit each deadlock without recovery (every NIC waits for
// the next), and with it complete, the channel carrying packets.
std::vector<plan::Tree> ring_chains(Rank n) {
    std::vector<plan::Tree> trees;
    for (Rank origin = 0; origin < n; ++origin) {
        plan::Tree t;
        t.root = origin;
        t.parent.assign(static_cast<std::size_t>(n), -1);
        t.children.resize(static_cast<std::size_t>(n));
        for (Rank i = 1; i < n; ++i) {
            const Rank v = (origin + i) % n;
            const Rank p = (origin + i - 1) % n;
            t.parent[v] = p;
            t.children[p].push_back(v);
        }
        trees.push_back(t);
    }
    return trees;
}

TEST(DeadlockRecovery, RingOfChainsDeadlocksWithoutAndCompletesWith) {
    for (const double timeout : {-1.0, 0.0, 10.0}) {  // -1: recovery off
        const bool recovery = timeout >= 0;
        const NicConfig config{1, 0, 4, Forwarding::fpfs, recovery, std::max(timeout, 0.0)};
        Net net(5, config, 4, 7, true);
        const Outcome out = all_to_all(net, ring_chains(5), 2, 4, 3);
        if (!recovery) {
            EXPECT_TRUE(out.blocked);
            EXPECT_FALSE(out.completed);
            continue;
        }
        ASSERT_TRUE(out.completed);
        EXPECT_GT(out.recoveries, 0u);
        EXPECT_GE(out.flagged, out.recoveries);
        expect_all_delivered(net, 2, 4, 3);
        expect_credits_conserved(net, 1);
    }
}

// A flagged packet for a channel that is taken, or with recovery off, breaks the protocol.
TEST(DeadlockRecovery, RefusesASecondPacketInOneChannel) {
    const NicConfig config{2, 0, 4, Forwarding::fpfs, true};
    // Node 1's host posts no buffer: the host message stays in the channel.
    Net net(3, config, 0, 1, true);
    PacketHeader h;
    h.kind = PacketKind::unicast;
    h.origin = 0;
    h.flags = kDeadlockFlag;
    h.credits = 0;  // the channel's owner
    EXPECT_EQ(net.nics[1]->on_packet(0, h, {}), Status::ok);
    h.step = 1;
    EXPECT_EQ(net.nics[1]->on_packet(0, h, {}), Status::protocol);
    h.credits = 1;  // a NIC owns no buffer on itself
    EXPECT_EQ(net.nics[1]->on_packet(0, h, {}), Status::protocol);

    const NicConfig off{2, 0, 4, Forwarding::fpfs, false};
    Net plain(2, off, 4, 1);
    h.credits = 0;
    EXPECT_EQ(plain.nics[1]->on_packet(0, h, {}), Status::protocol);
}

}  // namespace
}  // namespace nicsim::nic
