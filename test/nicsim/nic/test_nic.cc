// The NIC agent without time: NICs wired by FIFO channels (one per ordered pair, as links keep
// order), with packets delivered from a random channel at each step. Checks LFC's flow control
// and forwarding: windows are respected, credits are conserved, every packet reaches every host
// once and in order, FPFS and FCFS send in their orders, and a host without buffers stalls its
// senders.
#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "nic/nic.h"
#include "plan/tree.h"
#include "sim/rng.h"

#include "nic_net.h"

namespace nicsim::nic {
namespace {

constexpr Rank kMulticast = -1;  // post_all()'s destination for a broadcast along the routes

// Posts `messages` messages of `packets` packets, to `dst` or multicast, retrying while send
// buffers are full.
void post_all(Net& net, Rank origin, Rank dst, int messages, std::uint32_t packets, std::size_t bytes) {
    for (int m = 0; m < messages; ++m) {
        for (std::uint32_t s = 0; s < packets; ++s) {
            PacketHeader h;
            h.seq = static_cast<Seq>(m);
            h.step = s;
            h.origin = origin;
            h.payload_bytes = static_cast<std::uint32_t>(bytes);
            if (s + 1 == packets) h.flags = kLastPacket;
            const auto payload = payload_of(origin, h.seq, s, bytes);
            while ((dst == kMulticast ? net.multicast(origin, h, payload)
                                      : net.nics[origin]->post_send(dst, h, payload)) == Status::again) {
                ASSERT_TRUE(net.step()) << "no send buffer frees up";
            }
        }
    }
}

void expect_all_delivered(const Net& net, Rank origin, const std::vector<Rank>& receivers,
                          int messages, std::uint32_t packets, std::size_t bytes) {
    for (const Rank r : receivers) {
        const auto& got = net.ports[r]->got;
        ASSERT_EQ(got.size(), static_cast<std::size_t>(messages) * packets) << "node " << r;
        for (std::size_t i = 0; i < got.size(); ++i) {
            const Seq seq = static_cast<Seq>(i / packets);
            const auto step = static_cast<std::uint32_t>(i % packets);
            EXPECT_EQ(got[i].header.origin, origin);
            EXPECT_EQ(got[i].header.seq, seq) << "node " << r << " packet " << i;
            EXPECT_EQ(got[i].header.step, step) << "node " << r << " packet " << i;
            EXPECT_EQ(got[i].payload, payload_of(origin, seq, step, bytes));
        }
    }
}

void expect_quiescent(const Net& net, int credits) {
    for (Rank r = 0; r < static_cast<Rank>(net.nics.size()); ++r) {
        EXPECT_TRUE(net.nics[r]->idle()) << "node " << r;
        for (const Rank p : net.nics[r]->peers()) {
            EXPECT_GE(net.nics[r]->send_credits(p), 0);
            EXPECT_EQ(net.nics[r]->send_credits(p) + net.nics[p]->unreturned_credits(r), credits)
                << r << " -> " << p;
        }
    }
}

TEST(Nic, UnicastStaysWithinTheWindowAndCreditsComeBack) {
    const NicConfig config{4, 1, 64, Forwarding::fpfs};
    Net net(2, config, 1000, 1);
    post_all(net, 0, 1, 1, 20, 8);
    // Without any delivery the sender stops at its window; the rest wait for credits.
    EXPECT_EQ(net.in_flight(), 4u);
    EXPECT_EQ(net.nics[0]->send_credits(1), 0);
    EXPECT_EQ(net.nics[0]->stats().blocked, 16u);
    net.run();
    expect_all_delivered(net, 0, {1}, 1, 20, 8);
    expect_quiescent(net, 4);
    EXPECT_GT(net.nics[1]->stats().credit_packets, 0u);
}

TEST(Nic, AHostWithoutBuffersStallsItsSender) {
    const NicConfig config{4, 1, 64, Forwarding::fpfs};
    Net net(2, config, 0, 2);
    net.ports[1]->repost = false;
    post_all(net, 0, 1, 1, 10, 8);
    net.run();
    // The receiver keeps 4 packets it cannot hand over; their credits never go back.
    EXPECT_TRUE(net.ports[1]->got.empty());
    EXPECT_TRUE(net.nics[1]->waiting_for_host_buffers());
    EXPECT_EQ(net.nics[0]->send_credits(1), 0);
    EXPECT_EQ(net.nics[0]->stats().data_sent, 4u);
    net.ports[1]->repost = true;
    net.nics[1]->post_host_buffers(1);
    net.run();
    expect_all_delivered(net, 0, {1}, 1, 10, 8);
    expect_quiescent(net, 4);
}

TEST(Nic, ReverseTrafficCarriesCreditsBack) {
    const NicConfig config{4, 1, 64, Forwarding::fpfs};
    Net net(2, config, 1000, 3);
    for (int i = 0; i < 40; ++i) {
        post_all(net, 0, 1, 1, 1, 4);
        post_all(net, 1, 0, 1, 1, 4);
        net.step();
    }
    net.run();
    EXPECT_GT(net.nics[0]->stats().piggybacked + net.nics[1]->stats().piggybacked, 0u);
    expect_quiescent(net, 4);
}

// Windows by peer: 0 and 1 lend each other 2 credits, updated at half the window; between 2 and
// 3 there is no flow control (their transport would be its own window).
TEST(Nic, KeepsEachPeersOwnWindow) {
    const NicConfig config{0, -1, 64, Forwarding::fpfs};
    Net net(4, config, 1000, 8, false, {2, 2, 0, 0});
    post_all(net, 0, 1, 10, 1, 4);
    post_all(net, 2, 3, 10, 1, 4);
    EXPECT_EQ(net.nics[2]->queued(), 0u);  // all sent, none waiting for a credit
    EXPECT_GT(net.nics[0]->queued(), 0u);
    net.run();
    EXPECT_EQ(net.ports[1]->got.size(), 10u);
    EXPECT_EQ(net.ports[3]->got.size(), 10u);
    EXPECT_GT(net.nics[0]->stats().blocked, 0u);
    EXPECT_EQ(net.nics[2]->stats().blocked, 0u);
    EXPECT_EQ(net.nics[3]->stats().credit_packets, 0u);
    EXPECT_EQ(net.nics[1]->stats().credit_packets, 10u);  // each packet leaves 0 at half of 2
    EXPECT_EQ(net.nics[0]->send_credits(1) + net.nics[1]->unreturned_credits(0), 2);
    EXPECT_EQ(net.nics[2]->send_credits(3) + net.nics[3]->unreturned_credits(2), 0);
    // A peer without a window may not return credits.
    PacketHeader h;
    h.kind = PacketKind::credit;
    h.credits = 1;
    EXPECT_EQ(net.nics[3]->on_packet(2, h, {}), Status::protocol);
}

TEST(Nic, RejectsASenderBeyondItsWindow) {
    const NicConfig config{2, 0, 8, Forwarding::fpfs};
    Net net(2, config, 0, 4);
    PacketHeader h;
    h.kind = PacketKind::unicast;
    EXPECT_EQ(net.nics[1]->on_packet(0, h, {}), Status::ok);
    EXPECT_EQ(net.nics[1]->on_packet(0, h, {}), Status::ok);
    EXPECT_EQ(net.nics[1]->on_packet(0, h, {}), Status::protocol);
    h.kind = PacketKind::barrier;  // a collective's packet takes a buffer of the window too
    EXPECT_EQ(net.nics[1]->on_packet(0, h, {}), Status::protocol);
    h.kind = PacketKind::credit;  // more credits than were lent
    h.credits = 9;
    EXPECT_EQ(net.nics[1]->on_packet(0, h, {}), Status::protocol);
}

TEST(Nic, SendBuffersRunOutAndTheHostIsToldWhenOneFrees) {
    const NicConfig config{1, 0, 2, Forwarding::fpfs};
    Net net(2, config, 1000, 5);
    PacketHeader h;
    h.flags = kLastPacket;
    ASSERT_EQ(net.nics[0]->post_send(1, h, {}), Status::ok);  // sent: its buffer is free again
    h.seq = 1;
    ASSERT_EQ(net.nics[0]->post_send(1, h, {}), Status::ok);  // waits for a credit, in a buffer
    h.seq = 2;
    ASSERT_EQ(net.nics[0]->post_send(1, h, {}), Status::ok);
    EXPECT_EQ(net.nics[0]->free_send_buffers(), 0);
    h.seq = 3;
    EXPECT_EQ(net.nics[0]->post_send(1, h, {}), Status::again);
    net.run();
    EXPECT_EQ(net.ports[0]->space_calls, 1);
    EXPECT_EQ(net.nics[0]->free_send_buffers(), 2);
}

// A random tree over `n` nodes rooted at 0: each node's parent is a random earlier node.
plan::Tree random_tree(Rank n, sim::Rng& rng) {
    plan::Tree t;
    t.root = 0;
    t.parent.assign(static_cast<std::size_t>(n), -1);
    t.children.resize(static_cast<std::size_t>(n));
    for (Rank v = 1; v < n; ++v) {
        t.parent[v] = static_cast<Rank>(rng.below(static_cast<std::uint64_t>(v)));
        t.children[t.parent[v]].push_back(v);
    }
    return t;
}

class RandomMulticast : public testing::TestWithParam<std::tuple<Forwarding, std::uint64_t>> {};

TEST_P(RandomMulticast, EveryHostGetsEveryPacketOnceInOrderAndCreditsAreConserved) {
    const auto [forwarding, seed] = GetParam();
    sim::Rng rng(seed, 99);
    const Rank n = static_cast<Rank>(1 + rng.below(40));
    const int credits = static_cast<int>(1 + rng.below(16));
    const NicConfig config{credits, static_cast<int>(rng.below(static_cast<std::uint64_t>(credits))),
                           static_cast<int>(1 + rng.below(8)), forwarding};
    const auto packets = static_cast<std::uint32_t>(1 + rng.below(12));
    const int messages = static_cast<int>(1 + rng.below(4));
    const std::size_t bytes = rng.below(64);
    const plan::Tree tree = random_tree(n, rng);
    // Rank the nodes at random so the tree's shape and the rank numbers are unrelated.
    Net net(n, config, static_cast<int>(1 + rng.below(8)), seed);
    for (Rank v = 0; v < n; ++v) net.set_route(v, 0, tree.children[v]);
    post_all(net, 0, kMulticast, messages, packets, bytes);
    net.run();
    std::vector<Rank> receivers;
    for (Rank v = 1; v < n; ++v) receivers.push_back(v);
    expect_all_delivered(net, 0, receivers, messages, packets, bytes);
    expect_quiescent(net, credits);
    EXPECT_TRUE(net.ports[0]->got.empty());
}

INSTANTIATE_TEST_SUITE_P(Trees, RandomMulticast,
                         testing::Combine(testing::Values(Forwarding::fpfs, Forwarding::fcfs),
                                          testing::Range<std::uint64_t>(1, 41)),
                         [](const auto& info) {
                             return std::string(std::get<0>(info.param) == Forwarding::fpfs ? "fpfs" : "fcfs") +
                                    "_seed" + std::to_string(std::get<1>(info.param));
                         });

// The order a root sends a 3-packet message to 2 children: FPFS by packet, FCFS by child.
TEST(Nic, FpfsServesPacketsFirstAndFcfsServesChildrenFirst) {
    for (const Forwarding f : {Forwarding::fpfs, Forwarding::fcfs}) {
        Net net(3, NicConfig{8, 4, 8, f}, 100, 6);
        const std::vector<Rank> children = {1, 2};
        net.set_route(0, 0, children);
        post_all(net, 0, kMulticast, 1, 3, 0);
        const std::vector<Rank> expected =
            f == Forwarding::fpfs ? std::vector<Rank>{1, 2, 1, 2, 1, 2} : std::vector<Rank>{1, 1, 1, 2, 2, 2};
        EXPECT_EQ(net.ports[0]->sent_to, expected);
        net.run();
    }
}

}  // namespace
}  // namespace nicsim::nic
