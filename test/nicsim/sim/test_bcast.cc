// Broadcasts on the modeled cluster: for every tree shape, forwarding discipline, topology,
// credit window, packet size and NIC timing, every host gets every packet once and in order, credits are
// conserved and every queue ends empty (run_bcast checks all of that and fails otherwise); runs
// repeat exactly; bad specs are refused with the option named.
#include <gtest/gtest.h>

#include <tuple>

#include "plan/kbinomial.h"
#include "sim/bcast.h"
#include "sim/rng.h"

namespace nicsim::sim {
namespace {

using Params = std::tuple<std::string /*tree*/, std::string /*forwarding*/, std::string /*topology*/,
                          std::uint64_t /*seed*/>;

class Broadcasts : public testing::TestWithParam<Params> {};

TEST_P(Broadcasts, DeliverEverythingOnceInOrderAndEndQuiescent) {
    const auto& [tree, forwarding, topology, seed] = GetParam();
    Rng rng(seed, 7);
    BcastSpec spec;
    spec.model = default_model();
    spec.model.topology = topology;
    spec.model.nodes = static_cast<int>(1 + rng.below(topology == "hypercube" ? 100 : 70));
    spec.model.credits = static_cast<int>(1 + rng.below(16));
    spec.model.low_water = static_cast<int>(rng.below(static_cast<std::uint64_t>(spec.model.credits)));
    spec.model.send_buffers = static_cast<int>(1 + rng.below(8));
    spec.model.host_buffers = static_cast<int>(1 + rng.below(8));
    spec.model.mtu = static_cast<int>(16 + rng.below(2048));
    spec.model.host_send = rng.below(2) ? "pio" : "dma";
    spec.model.pio_bw = 50;
    spec.model.dma_bw = 100;
    spec.model.seed = seed;
    spec.bytes = rng.below(20000);
    spec.tree = tree;
    spec.forwarding = forwarding;
    spec.root = static_cast<Rank>(rng.below(static_cast<std::uint64_t>(spec.model.nodes)));
    spec.messages = static_cast<int>(1 + rng.below(3));
    spec.model.nic_timing = rng.below(2) ? "steps" : "serial";
    std::string why;
    const auto r = run_bcast(spec, nullptr, &why);
    ASSERT_TRUE(r.has_value()) << why;
    for (Rank v = 0; v < spec.model.nodes; ++v) {
        if (v != spec.root) {
            EXPECT_GT(r->done_us[v], 0.0) << "node " << v;
        }
    }
    EXPECT_EQ(r->done_us[spec.root], 0.0);
    const std::uint64_t receivers = static_cast<std::uint64_t>(spec.model.nodes - 1);
    EXPECT_EQ(r->totals.delivered, receivers * r->packets * static_cast<std::uint64_t>(spec.messages));

    const auto again = run_bcast(spec, nullptr, &why);
    ASSERT_TRUE(again.has_value());
    EXPECT_EQ(again->done_us, r->done_us);
    EXPECT_EQ(again->events, r->events);
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, Broadcasts,
    testing::Combine(testing::Values("binomial", "binary", "chain", "optimal"),
                     testing::Values("fpfs", "fcfs", "host"),
                     testing::Values("crossbar", "hypercube", "irregular"),
                     testing::Values(1u, 2u, 3u)),
    [](const auto& info) {
        return std::get<0>(info.param) + "_" + std::get<1>(info.param) + "_" +
               std::get<2>(info.param) + "_" + std::to_string(std::get<3>(info.param));
    });

TEST(Broadcast, RefusesBadSpecsNamingTheOption) {
    BcastSpec spec;
    spec.model = default_model();
    std::string why;
    spec.tree = "star";
    EXPECT_FALSE(run_bcast(spec, nullptr, &why));
    EXPECT_EQ(why, "--tree star: not one of binomial|binary|chain|flat|kbinomial[:K]|optimal");
    spec.tree = "kbinomial";
    spec.k = 7;
    EXPECT_FALSE(run_bcast(spec, nullptr, &why));
    EXPECT_EQ(why, "--tree kbinomial:7: k out of range 1..6 for 64 nodes");
    spec.k = 0;
    spec.root = 64;
    EXPECT_FALSE(run_bcast(spec, nullptr, &why));
    EXPECT_EQ(why, "--root 64: not a node of 0..63");
    spec.root = 0;
    spec.forwarding = "lifo";
    EXPECT_FALSE(run_bcast(spec, nullptr, &why));
    EXPECT_EQ(why, "--forwarding lifo: not one of fpfs|fcfs|host");
}

// A crossbar of `nodes` with round costs, for runs timed by hand.
Model hand_timed(int nodes) {
    Model m = default_model();
    m.nodes = nodes;
    m.ts = 10;
    m.tr = 20;
    m.tns = 3;
    m.tnr = 2;
    m.link_bw = 100;  // 100 bytes: 1 us per link
    m.header_bytes = 0;
    m.switch_latency = 0.5;
    return m;
}

// One packet of 100 bytes down a chain of three nodes on a crossbar, for runs timed by hand.
BcastSpec hand_timed_chain() {
    BcastSpec spec;
    spec.model = hand_timed(3);
    spec.model.pio_bw = 50;        // 100 bytes: 2 us
    spec.model.dma_bw = 25;        // 100 bytes: 4 us
    spec.bytes = 100;
    spec.tree = "chain";
    return spec;
}

// Every cost appears once.
TEST(Broadcast, ChargesEachCostOnce) {
    const BcastSpec spec = hand_timed_chain();
    std::string why;
    const auto r = run_bcast(spec, nullptr, &why);
    ASSERT_TRUE(r) << why;
    // node 1: ts 10 + pio 2 + tns 3, then cut-through: the head crosses the switch (0.5) and
    // the tail follows one link time (1) behind it; + tnr 2 + dma 4 + tr 20
    EXPECT_DOUBLE_EQ(r->done_us[1], 10 + 2 + 3 + 1.5 + 2 + 4 + 20);
    // node 2: node 1's NIC forwards as soon as it has received, while the DMA to its host runs:
    // + tns 3 + 1.5 on the wire + tnr 2, then its own DMA and tr
    EXPECT_DOUBLE_EQ(r->done_us[2], 10 + 2 + 3 + 1.5 + 2 + 3 + 1.5 + 2 + 4 + 20);
    EXPECT_DOUBLE_EQ(r->latency_us, r->done_us[2]);
}

// A late host on the chain above, timed by hand. Its NIC forwards as if it were on time (the
// agent has the tree), so only the late host's own completion moves: to the skew, + tr. With
// host forwarding the late host sends on only once it is back, and its subtree waits for it.
// Host CPU: the root's ts and PIO, each receiver's tr, and a host forwarder's ts and PIO too.
TEST(Broadcast, ALateHostDelaysOnlyItselfWhereTheNicsForward) {
    BcastSpec spec = hand_timed_chain();
    std::string why;
    const auto on_time = run_bcast(spec, nullptr, &why);
    ASSERT_TRUE(on_time) << why;
    spec.skew_us = 1000;
    spec.late = 1;
    const auto late = run_bcast(spec, nullptr, &why);
    ASSERT_TRUE(late) << why;
    EXPECT_EQ(late->late, 1);
    EXPECT_DOUBLE_EQ(late->done_us[1], 1000 + 20);
    EXPECT_DOUBLE_EQ(late->done_us[2], on_time->done_us[2]);
    EXPECT_EQ(late->host_cpu_us, (std::vector<double>{10 + 2, 20, 20}));

    spec.forwarding = "host";
    const auto host = run_bcast(spec, nullptr, &why);
    ASSERT_TRUE(host) << why;
    EXPECT_DOUBLE_EQ(host->done_us[1], 1000 + 20);
    // node 1's host sends from 1020: ts 10, PIO 2, then the hop to node 2 as from the root
    EXPECT_DOUBLE_EQ(host->done_us[2], 1020 + 10 + 2 + 3 + 1.5 + 2 + 4 + 20);
    EXPECT_EQ(host->host_cpu_us, (std::vector<double>{10 + 2, 20 + 10 + 2, 20}));

    spec.forwarding = "fpfs";
    spec.late = 0;  // a late root delays everyone by the skew
    const auto root = run_bcast(spec, nullptr, &why);
    ASSERT_TRUE(root) << why;
    EXPECT_DOUBLE_EQ(root->done_us[2], 1000 + on_time->done_us[2]);

    spec.late = 3;
    EXPECT_FALSE(run_bcast(spec, nullptr, &why));
    EXPECT_EQ(why, "--late 3: not a node of 0..2");
}

// In steps on a crossbar every step is as long, and an m-packet broadcast on a k-binomial tree
// takes Kesavan and Panda's L1 + (m - 1) k steps (Theorem 2 with delta_r = k) between ts and tr (on 16
// nodes, a power of two, where that count is exact for every k).
TEST(Broadcast, InStepsTakesTheTheoremsSteps) {
    BcastSpec spec;
    spec.model = hand_timed(16);
    spec.model.nic_timing = "steps";
    spec.model.mtu = 100;
    spec.model.pio_bw = 0;
    spec.model.dma_bw = 0;
    spec.model.credits = 1000;
    spec.model.low_water = 500;
    const double step = 3 + 1.5 + 2;  // tns, the wire and the switch, tnr
    spec.tree = "kbinomial";
    for (int k = 1; k <= 4; ++k) {
        for (std::int64_t m = 1; m <= 8; ++m) {
            spec.k = k;
            spec.bytes = static_cast<std::uint64_t>(m * 100);
            std::string why;
            const auto r = run_bcast(spec, nullptr, &why);
            ASSERT_TRUE(r) << why;
            const auto steps = static_cast<double>(plan::kbinomial_total_steps(16, m, k));
            EXPECT_NEAR(r->latency_us, 10 + steps * step + 20, 1e-6) << "k " << k << ", m " << m;
        }
    }
    // And the optimal tree is Theorem 3's.
    spec.tree = "optimal";
    spec.k = 0;
    for (std::int64_t m = 1; m <= 40; ++m) {
        spec.bytes = static_cast<std::uint64_t>(m * 100);
        std::string why;
        const auto r = run_bcast(spec, nullptr, &why);
        ASSERT_TRUE(r) << why;
        EXPECT_EQ(r->tree, "kbinomial:" + std::to_string(plan::optimal_k(16, m))) << "m " << m;
    }
}

}  // namespace
}  // namespace nicsim::sim
