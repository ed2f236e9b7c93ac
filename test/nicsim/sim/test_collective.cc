// Allgathers and barriers on the modeled cluster (Yu et al.). Runs that carry payloads check every
// byte of every node's result (run_allgather fails otherwise), so the property tests below ask
// only that the run succeeds: over random group sizes 1..257, block sizes, MTUs, topologies,
// loss rates and seeds, every node ends with every block exactly once, in the right place.
#include <gtest/gtest.h>

#include <tuple>

#include "sim/collective.h"
#include "sim/rng.h"

namespace nicsim::sim {
namespace {

CollectiveSpec gm(Rank nodes, std::uint64_t bytes, std::string algorithm) {
    CollectiveSpec spec;
    spec.model = preset_model(*find_preset("gm-lanai9"));
    spec.model.nodes = nodes;
    spec.bytes = bytes;
    spec.algorithm = std::move(algorithm);
    return spec;
}

CollectiveResult must_run(const CollectiveSpec& spec, bool allgather = true) {
    std::string why;
    auto r = allgather ? run_allgather(spec, nullptr, &why) : run_barrier(spec, nullptr, &why);
    EXPECT_TRUE(r.has_value()) << why;
    return r.value_or(CollectiveResult{});
}

using Params = std::tuple<std::string /*algorithm*/, double /*loss*/, std::uint64_t /*seed*/>;

class Allgathers : public testing::TestWithParam<Params> {};

TEST_P(Allgathers, EveryNodeGetsEveryByteInPlace) {
    const auto& [algorithm, loss, seed] = GetParam();
    Rng rng(seed, 11);
    CollectiveSpec spec;
    spec.model = default_model();
    spec.model.topology = rng.below(2) ? "crossbar" : "irregular";
    spec.model.nodes = static_cast<int>(1 + rng.below(257));
    spec.model.mtu = static_cast<int>(16 + rng.below(4096));
    spec.model.dma_bw = 200;
    spec.model.nack_timeout = 200;
    spec.model.seed = seed;
    spec.bytes = rng.below(3) == 0 ? rng.below(8) : rng.below(600);
    spec.algorithm = algorithm;
    spec.loss = loss;
    spec.payloads = true;
    SCOPED_TRACE(testing::Message() << spec.model.nodes << " nodes, " << spec.bytes
                                    << " bytes, mtu " << spec.model.mtu << ", "
                                    << spec.model.topology);
    const CollectiveResult r = must_run(spec);
    const bool folds = algorithm == "rd" && (spec.model.nodes & (spec.model.nodes - 1)) != 0;
    if (loss == 0) {
        EXPECT_EQ(r.lost, 0u);
        // Folded ranks may time out waiting (NoLossMeansNoNackAndNoRetransmission).
        if (!folds) {
            EXPECT_EQ(r.stats.nacks_sent, 0u);
            EXPECT_EQ(r.stats.retransmitted, 0u);
            EXPECT_EQ(r.stats.duplicates, 0u);
        }
    } else if (r.lost > 0) {
        EXPECT_GT(r.stats.nacks_sent, 0u);
    }
}

INSTANTIATE_TEST_SUITE_P(Random, Allgathers,
                         testing::Combine(testing::Values("rd", "ab", "flat"),
                                          testing::Values(0.0, 0.01, 0.05),
                                          testing::Range<std::uint64_t>(1, 9)));

TEST(Allgather, NoLossMeansNoNackAndNoRetransmission) {
    // Without loss a NACK goes out only when a rank waits longer than nack_timeout for packets
    // still to come: recursive doubling's folded ranks wait for the whole exchange, so on
    // non-powers of two they are given a collective shorter than the timeout.
    const std::tuple<const char*, Rank, std::uint64_t> runs[] = {
        {"ab", 2, 10000},  {"ab", 3, 10000},   {"ab", 16, 10000}, {"ab", 100, 10000},
        {"rd", 2, 10000},  {"rd", 16, 10000},  {"rd", 128, 10000}, {"rd", 3, 10000},
        {"rd", 100, 64}};
    for (const auto& [algorithm, n, bytes] : runs) {
        const CollectiveResult r = must_run(gm(n, bytes, algorithm));
        EXPECT_EQ(r.stats.nacks_sent + r.stats.nacks_forwarded + r.stats.retransmitted, 0u)
            << algorithm << " on " << n << " nodes";
    }
}

TEST(Allgather, FoldedRanksOfMultiPacketStepsFinishWithoutANackStorm) {
    // Regression: `nicsim allgather --preset kesavan97 --nodes 17 --bytes 100000 --algorithm rd`
    // never finished. The folded rank waits for the whole exchange; at each timeout it asked for
    // every packet of its last step (thousands of 64-byte packets) from a partner not there yet,
    // which ignored them, and the NACKs kept both NICs too busy for the exchange to progress.
    // Here the timeout is far below a step's time, so every rank that waits asks, round after
    // round; the NACKs must stay a small fraction of the packets and every byte must be right.
    for (const Rank n : {3, 5, 6, 17, 33}) {
        for (const std::uint64_t bytes : {1000u, 6400u, 20000u}) {
            CollectiveSpec spec;
            spec.model = preset_model(*find_preset("kesavan97"));
            spec.model.nodes = n;
            spec.model.nack_timeout = 20;
            spec.bytes = bytes;
            spec.algorithm = "rd";
            spec.payloads = true;
            const CollectiveResult r = must_run(spec);
            EXPECT_EQ(r.lost, 0u);
            // A handful per round of timeouts, not one per packet still to come.
            EXPECT_LE(r.stats.nacks_sent, r.packets / 50 + 20) << n << " nodes, " << bytes << " bytes";
            EXPECT_LE(r.stats.duplicates, r.stats.retransmitted) << n << " nodes, " << bytes << " bytes";
            spec.loss = 0.01;  // and what is lost is still asked for and found
            const CollectiveResult lossy = must_run(spec);
            EXPECT_GT(lossy.lost, 0u) << n << " nodes, " << bytes << " bytes";
        }
    }
}

TEST(Allgather, AHostOneMillisecondLateLosesNothing) {
    for (const char* algorithm : {"rd", "ab", "flat"}) {
        CollectiveSpec spec = gm(16, 6000, algorithm);
        spec.skew_us = 1000;
        spec.payloads = true;
        spec.model.nack_timeout = 5000;  // the others wait for it without asking
        CollectiveResult r = must_run(spec);
        ASSERT_GE(r.late, 0);
        EXPECT_EQ(r.stats.early_dropped, 0u) << algorithm;
        EXPECT_EQ(r.stats.nacks_sent + r.stats.retransmitted, 0u) << algorithm;
        // Nobody can finish before the late host has sent its block.
        EXPECT_GT(r.latency_us, 1000.0) << algorithm;
        spec.model.nack_timeout = 100;  // the others give up waiting and ask: still all correct
        r = must_run(spec);
        EXPECT_EQ(r.stats.early_dropped, 0u) << algorithm;
    }
}

TEST(Allgather, OneNodeIsDoneAtOnce) {
    for (const char* algorithm : {"rd", "ab", "host-rd", "host-ring"}) {
        const CollectiveResult r = must_run(gm(1, 100, algorithm));
        EXPECT_EQ(r.packets, 0u) << algorithm;
    }
}

TEST(Allgather, HostCpuIsPostAndCompletionOnTheNicAndEverythingOnTheHost) {
    const CollectiveSpec nic = gm(16, 64, "rd");
    const CollectiveResult on_nic = must_run(nic);
    for (const double cpu : on_nic.host_cpu_us) {
        EXPECT_DOUBLE_EQ(cpu, nic.model.ts + nic.model.tr);
    }
    const CollectiveResult on_host = must_run(gm(16, 64, "host-rd"));
    for (std::size_t i = 0; i < on_host.done_us.size(); ++i) {
        EXPECT_DOUBLE_EQ(on_host.host_cpu_us[i], on_host.done_us[i]);
    }
}

TEST(Allgather, RunsRepeatExactly) {
    CollectiveSpec spec = gm(37, 3000, "ab");
    spec.loss = 0.02;
    spec.skew_us = 50;
    const CollectiveResult a = must_run(spec);
    const CollectiveResult b = must_run(spec);
    EXPECT_EQ(a.done_us, b.done_us);
    EXPECT_EQ(a.events, b.events);
    EXPECT_EQ(a.stats.nacks_sent, b.stats.nacks_sent);
}

TEST(Allgather, BadSpecsAreRefusedNamingTheInput) {
    std::string why;
    EXPECT_FALSE(run_allgather(gm(16, 4, "ring"), nullptr, &why));
    EXPECT_NE(why.find("--algorithm ring"), std::string::npos) << why;
    CollectiveSpec lossy = gm(16, 4, "host-rd");
    lossy.loss = 0.01;
    EXPECT_FALSE(run_allgather(lossy, nullptr, &why));
    EXPECT_NE(why.find("--loss"), std::string::npos) << why;
    lossy.algorithm = "rd";
    lossy.loss = 1;
    EXPECT_FALSE(run_allgather(lossy, nullptr, &why));
    EXPECT_NE(why.find("--loss"), std::string::npos) << why;
    EXPECT_FALSE(run_allgather(gm(16, std::uint64_t{1} << 40, "ab"), nullptr, &why));
    EXPECT_NE(why.find("--bytes"), std::string::npos) << why;
}

TEST(Barrier, EveryAlgorithmCompletesOnEveryGroupSize) {
    for (const std::string& name : barrier_names()) {
        for (Rank n = 1; n <= 33; ++n) {
            CollectiveSpec spec = gm(n, 0, name);
            spec.skew_us = n % 3 == 0 ? 20 : 0;
            const CollectiveResult r = must_run(spec, false);
            EXPECT_EQ(r.done_us.size(), static_cast<std::size_t>(n)) << name;
            if (r.late >= 0) {
                EXPECT_GE(r.latency_us, 20.0) << name;
            }
        }
    }
}

TEST(Barrier, NicBeatsHostAndNamesWhatRan) {
    const CollectiveResult nic = must_run(gm(16, 0, "nic"), false);
    const CollectiveResult host = must_run(gm(16, 0, "host"), false);
    EXPECT_EQ(nic.algorithm, "dissemination");
    EXPECT_EQ(host.algorithm, "host-dissemination");
    EXPECT_LT(nic.latency_us, host.latency_us);
    std::string why;
    EXPECT_FALSE(run_barrier(gm(16, 0, "binomial"), nullptr, &why));
    EXPECT_NE(why.find("--algorithm binomial"), std::string::npos) << why;
}

// GM's point-to-point protocol (p2p_flow=gm, sim/gm.h) under the host-based collectives. A run
// fails unless every node gets every packet of every message once and in order and ends with
// nothing held or unacknowledged, so these tests ask what was dropped and sent again.

TEST(GmP2p, TwoReceiveBuffersOverflowAndGmSendsAgain) {
    // gm-lanai9 keeps two receive buffers per NIC: at 64 KB they overflow, the next packet from
    // that sender arrives out of sequence and is NACKed, and the sender goes back.
    const CollectiveResult r = must_run(gm(16, 65536, "host-rd"));
    EXPECT_GT(r.gm.dropped_full, 0u);
    EXPECT_EQ(r.gm.nacks, r.gm.nack_go_backs);
    EXPECT_GE(r.gm.resent, r.gm.dropped_full);
    EXPECT_EQ(r.packets, r.gm.data_sent + r.gm.acks + r.gm.nacks);
    // 16 blocks of 16 packets, each node receiving 15: every one was sent at least once.
    EXPECT_GE(r.gm.data_sent - r.gm.resent, 16u * 15u * 16u);
}

TEST(GmP2p, EnoughReceiveBuffersLoseNothing) {
    for (const std::uint64_t bytes : {4u, 8192u, 65536u}) {
        CollectiveSpec spec = gm(16, bytes, "host-rd");
        spec.model.gm_recv_buffers = 3;
        const CollectiveResult r = must_run(spec);
        EXPECT_EQ(r.gm.dropped_full + r.gm.dropped_order + r.gm.resent + r.gm.nacks, 0u) << bytes;
        EXPECT_GT(r.gm.acks, 0u);
    }
}

TEST(GmP2p, CreditsNeverUseGm) {
    CollectiveSpec spec = gm(16, 65536, "host-rd");
    spec.model.p2p_flow = "credits";
    const CollectiveResult r = must_run(spec);
    EXPECT_EQ(r.gm.data_sent + r.gm.acks, 0u);
    EXPECT_GT(r.packets, 0u);
}

TEST(GmP2p, ALostTailIsSentAgainAfterTheTimeout) {
    // One receive buffer, two nodes, two packets each way: the second packet finds the buffer
    // busy and nothing follows it to be NACKed, so only the resend timeout brings it.
    CollectiveSpec spec = gm(2, 8192, "host-rd");
    spec.model.gm_recv_buffers = 1;
    spec.model.gm_resend_timeout = 100;
    const CollectiveResult r = must_run(spec);
    EXPECT_GT(r.gm.timeout_go_backs, 0u);
    EXPECT_GT(r.latency_us, 100.0);
}

TEST(GmP2p, RunsRepeatExactly) {
    const CollectiveResult a = must_run(gm(16, 32768, "host-rd"));
    const CollectiveResult b = must_run(gm(16, 32768, "host-rd"));
    EXPECT_EQ(a.latency_us, b.latency_us);
    EXPECT_EQ(a.done_us, b.done_us);
    EXPECT_EQ(a.gm.resent, b.gm.resent);
    EXPECT_EQ(a.gm.dropped_order, b.gm.dropped_order);
}

class GmRandom : public testing::TestWithParam<std::uint64_t> {};

TEST_P(GmRandom, EveryHostCollectiveCompletes) {
    // Random groups, sizes, packet sizes and GM buffers and timeouts, timeouts short enough to
    // fire needlessly too (a packet sent again that had arrived is dropped and acknowledged).
    Rng rng(GetParam(), 23);
    for (int run = 0; run < 12; ++run) {
        const char* algorithm = rng.below(3) == 0 ? "host-ring" : "host-rd";
        CollectiveSpec spec = gm(static_cast<Rank>(1 + rng.below(40)),
                                 rng.below(3) == 0 ? rng.below(8) : rng.below(30000), algorithm);
        spec.model.mtu = static_cast<int>(64 + rng.below(4033));
        spec.model.gm_recv_buffers = static_cast<int>(1 + rng.below(3));
        spec.model.gm_send_buffers = static_cast<int>(1 + rng.below(4));
        spec.model.gm_resend_timeout = static_cast<double>(5 + rng.below(2000));
        SCOPED_TRACE(testing::Message()
                     << algorithm << ", " << spec.model.nodes << " nodes, " << spec.bytes
                     << " bytes, mtu " << spec.model.mtu << ", " << spec.model.gm_recv_buffers
                     << " receive and " << spec.model.gm_send_buffers << " send buffers, timeout "
                     << spec.model.gm_resend_timeout);
        const CollectiveResult r = must_run(spec);
        EXPECT_EQ(r.done_us.size(), static_cast<std::size_t>(spec.model.nodes));
    }
    CollectiveSpec barrier = gm(static_cast<Rank>(2 + rng.below(40)), 0, "host");
    barrier.model.gm_recv_buffers = 1;
    must_run(barrier, false);
}

INSTANTIATE_TEST_SUITE_P(Seeds, GmRandom, testing::Range<std::uint64_t>(1, 9));

}  // namespace
}  // namespace nicsim::sim
