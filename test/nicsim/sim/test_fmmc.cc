// The FM/MC comparator (Bhoedjang et al. §2.2): every host gets every packet once and in order (run_fmmc
// checks that and fails otherwise) for one sender and for all, over sizes, pools and queues;
// runs repeat exactly; credits come from the manager in batches and the token goes round while
// they are out; a small NI queue swaps; the credit pool bounds a sender; bad specs are refused.
#include <gtest/gtest.h>

#include "sim/fmmc.h"
#include "sim/rng.h"

namespace nicsim::sim {
namespace {

FmmcSpec lfc_cluster(int nodes, std::uint64_t bytes, bool all) {
    FmmcSpec spec;
    spec.model = preset_model(*find_preset("lfc-myrinet"));
    spec.model.nodes = nodes;
    spec.bytes = bytes;
    spec.all_senders = all;
    return spec;
}

class RandomFmmc : public testing::TestWithParam<std::uint64_t> {};

TEST_P(RandomFmmc, DeliversEverythingOnceInOrderAndRepeats) {
    Rng rng(GetParam(), 0xf33);
    FmmcSpec spec =
        lfc_cluster(static_cast<int>(2 + rng.below(40)), rng.below(20000), rng.below(2) == 1);
    spec.model.topology = rng.below(2) ? "hypercube" : "crossbar";
    spec.model.send_buffers = static_cast<int>(1 + rng.below(16));
    spec.params.credit_batch = static_cast<int>(1 + rng.below(16));
    spec.params.host_buffers = spec.params.credit_batch + static_cast<int>(rng.below(64));
    spec.params.ni_queue = static_cast<int>(2 + rng.below(32));
    spec.messages = static_cast<int>(1 + rng.below(3));
    spec.root = static_cast<Rank>(rng.below(static_cast<std::uint64_t>(spec.model.nodes)));
    std::string why;
    const auto r = run_fmmc(spec, &why);
    ASSERT_TRUE(r.has_value()) << why;
    const auto senders = spec.all_senders ? static_cast<std::uint64_t>(spec.model.nodes) : 1;
    const auto n = static_cast<std::uint64_t>(spec.model.nodes);
    // A binary tree sends each packet once to every node but its root.
    EXPECT_EQ(r->data_packets,
              senders * (n - 1) * r->packets * static_cast<std::uint64_t>(spec.messages));
    EXPECT_GT(r->credit_requests, 0u);
    EXPECT_GT(r->token_hops, 0u);
    EXPECT_EQ(r->token_hops % n, 0u);  // the token only ever makes whole rounds
    const auto again = run_fmmc(spec, &why);
    ASSERT_TRUE(again.has_value());
    EXPECT_EQ(again->events, r->events);
    EXPECT_EQ(again->per_sender_mbs, r->per_sender_mbs);
}

INSTANTIATE_TEST_SUITE_P(Seeds, RandomFmmc, testing::Range<std::uint64_t>(1, 41));

// The first packet of a message gives up one word to the handler (Bhoedjang et al. §5.3 note 2).
TEST(Fmmc, FixedPacketsAndTheHandlerWord) {
    std::string why;
    for (const auto& [bytes, packets] :
         {std::pair{0u, 1u}, std::pair{252u, 1u}, std::pair{253u, 2u}, std::pair{508u, 2u},
          std::pair{509u, 3u}}) {
        const auto r = run_fmmc(lfc_cluster(4, bytes, false), &why);
        ASSERT_TRUE(r.has_value()) << why;
        EXPECT_EQ(r->packets, packets) << bytes << " bytes";
    }
}

// With no NI flow control a full receive queue swaps to host memory; a large one never does.
TEST(Fmmc, ASmallReceiveQueueSwaps) {
    std::string why;
    FmmcSpec spec = lfc_cluster(32, 65536, true);
    spec.params.ni_queue = 4;
    const auto small = run_fmmc(spec, &why);
    ASSERT_TRUE(small.has_value()) << why;
    EXPECT_GT(small->swapped, 0u);
    spec.params.ni_queue = 1 << 20;
    const auto large = run_fmmc(spec, &why);
    ASSERT_TRUE(large.has_value()) << why;
    EXPECT_EQ(large->swapped, 0u);
}

// The credit pool bounds a sender once the token's round is long: more buffers, more throughput.
TEST(Fmmc, TheCreditPoolBoundsASenderOnManyNodes) {
    std::string why;
    FmmcSpec spec = lfc_cluster(61, 65536, false);
    spec.messages = 16;
    spec.params.host_buffers = 32;
    const auto few = run_fmmc(spec, &why);
    spec.params.host_buffers = 256;
    const auto many = run_fmmc(spec, &why);
    ASSERT_TRUE(few.has_value() && many.has_value()) << why;
    EXPECT_GT(many->per_sender_mbs, few->per_sender_mbs * 1.3);
}

TEST(Fmmc, RefusesBadSpecsNamingTheInput) {
    std::string why;
    FmmcSpec spec = lfc_cluster(1, 100, false);
    EXPECT_FALSE(run_fmmc(spec, &why).has_value());
    EXPECT_NE(why.find("nodes=1"), std::string::npos) << why;
    spec = lfc_cluster(8, 100, false);
    spec.root = 8;
    EXPECT_FALSE(run_fmmc(spec, &why).has_value());
    EXPECT_NE(why.find("--root 8"), std::string::npos) << why;
    spec.root = 0;
    spec.params.credit_batch = 0;
    EXPECT_FALSE(run_fmmc(spec, &why).has_value());
    EXPECT_NE(why.find("credit_batch"), std::string::npos) << why;
}

}  // namespace
}  // namespace nicsim::sim
