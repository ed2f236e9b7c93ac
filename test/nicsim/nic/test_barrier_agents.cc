// Barriers run by a group of NIC agents over an in-memory network that delivers packets in a
// random order, lets hosts post at random moments, and (optionally) refuses packets when a
// sender has too many in flight. Whatever the order: no agent completes barrier k before every
// agent posted barrier k, and every agent completes every barrier.
#include <gtest/gtest.h>

#include <algorithm>
#include <deque>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "nic/agent.h"
#include "plan/barrier.h"

namespace nicsim::nic {
namespace {

struct InFlight {
    Rank src;
    Rank dst;
    std::vector<std::byte> bytes;
};

class Network;

class NetFabric final : public Fabric {
public:
    NetFabric(Network& net, Rank self) : net_(net), self_(self) {}
    Status transmit(Rank dst, const PacketHeader& header, std::span<const std::byte>) override;

private:
    Network& net_;
    Rank self_;
};

class Network {
public:
    explicit Network(std::size_t per_sender_limit) : limit_(per_sender_limit) {}
    Status carry(Rank src, Rank dst, std::span<const std::byte> packet) {
        const auto mine = std::count_if(in_flight.begin(), in_flight.end(),
                                        [&](const InFlight& p) { return p.src == src; });
        if (static_cast<std::size_t>(mine) >= limit_) return Status::again;
        in_flight.push_back({src, dst, {packet.begin(), packet.end()}});
        return Status::ok;
    }
    std::vector<InFlight> in_flight;

private:
    std::size_t limit_;
};

Status NetFabric::transmit(Rank dst, const PacketHeader& header, std::span<const std::byte>) {
    return net_.carry(self_, dst, header.encode());
}

using Params = std::tuple<int /*algorithm*/, Rank /*size*/, std::size_t /*limit*/>;

class BarrierAgents : public testing::TestWithParam<Params> {};

TEST_P(BarrierAgents, SynchroniseUnderAnyDeliveryOrder) {
    const auto& [algorithm_index, size, limit] = GetParam();
    const auto& algorithm = plan::barrier_algorithms()[algorithm_index];
    constexpr int kBarriers = 5;

    for (unsigned seed = 1; seed <= 4; ++seed) {
        std::mt19937 rng(seed);
        Network net(limit);
        std::deque<NetFabric> fabrics;
        std::deque<Agent> agents;
        for (Rank r = 0; r < size; ++r) fabrics.emplace_back(net, r);
        for (Rank r = 0; r < size; ++r) agents.emplace_back(r, size, fabrics[r]);

        std::vector<int> posted(size, 0), completed(size, 0);
        std::vector<Seq> current(size);
        std::vector<bool> busy(size, false);

        auto check_completions = [&] {
            for (Rank r = 0; r < size; ++r) {
                if (!busy[r]) continue;
                const Status s = agents[r].test(current[r]);
                ASSERT_FALSE(failed(s)) << to_string(s);
                if (s != Status::ok) continue;
                const int k = completed[r]++;
                busy[r] = false;
                agents[r].release(current[r]);
                for (Rank q = 0; q < size; ++q) {
                    ASSERT_GT(posted[q], k) << "rank " << r << " left barrier " << k
                                            << " before rank " << q << " entered it";
                }
            }
        };

        for (long step = 0;; ++step) {
            ASSERT_LT(step, 1'000'000) << "no progress";
            std::vector<Rank> idle;
            for (Rank r = 0; r < size; ++r) {
                if (!busy[r] && posted[r] < kBarriers) idle.push_back(r);
            }
            if (idle.empty() && net.in_flight.empty() &&
                std::all_of(completed.begin(), completed.end(), [](int c) { return c == kBarriers; })) {
                break;
            }
            const int action = std::uniform_int_distribution<int>(0, 2)(rng);
            if (action == 0 && !idle.empty()) {
                const Rank r = idle[std::uniform_int_distribution<std::size_t>(0, idle.size() - 1)(rng)];
                ASSERT_EQ(agents[r].post_barrier(algorithm, &current[r]), Status::ok);
                ++posted[r];
                busy[r] = true;
            } else if (action == 1 && !net.in_flight.empty()) {
                const auto i = std::uniform_int_distribution<std::size_t>(0, net.in_flight.size() - 1)(rng);
                InFlight p = std::move(net.in_flight[i]);
                net.in_flight.erase(net.in_flight.begin() + static_cast<long>(i));
                ASSERT_EQ(agents[p.dst].deliver(p.src, p.bytes), Status::ok);
            } else {
                const Rank r = std::uniform_int_distribution<Rank>(0, size - 1)(rng);
                ASSERT_FALSE(failed(agents[r].progress()));
            }
            check_completions();
            if (HasFatalFailure()) return;
        }
        for (const Agent& a : agents) {
            EXPECT_EQ(a.active(), 0u);
            EXPECT_EQ(a.early_packets(), 0u);
        }
    }
}

INSTANTIATE_TEST_SUITE_P(
    Sizes, BarrierAgents,
    testing::Combine(testing::Range(0, static_cast<int>(plan::barrier_algorithms().size())),
                     testing::Values(1, 2, 3, 5, 8, 13, 16, 33),
                     testing::Values(std::size_t{1}, std::size_t{1000})),
    [](const auto& info) {
        return std::string(plan::barrier_algorithms()[std::get<0>(info.param)].name) + "_P" +
               std::to_string(std::get<1>(info.param)) + "_limit" +
               std::to_string(std::get<2>(info.param));
    });

class LoopbackFabric final : public Fabric {
public:
    Status transmit(Rank dst, const PacketHeader& header, std::span<const std::byte>) override {
        const auto packet = header.encode();
        sent.push_back({0, dst, {packet.begin(), packet.end()}});
        return Status::ok;
    }
    std::vector<InFlight> sent;
};

TEST(Agent, RejectsPacketsThatNameNoCollectiveOrComeFromOutsideTheGroup) {
    LoopbackFabric fabric;
    Agent agent(0, 2, fabric);
    Seq seq;
    ASSERT_EQ(agent.post_barrier(plan::barrier_algorithms()[0], &seq), Status::ok);
    ASSERT_EQ(fabric.sent.size(), 1u);
    const auto token = fabric.sent[0].bytes;  // (seq 0, step 0): what rank 1 sends us too

    EXPECT_EQ(agent.deliver(2, token), Status::protocol);   // no rank 2 in a group of 2
    EXPECT_EQ(agent.deliver(-1, token), Status::protocol);
    EXPECT_EQ(agent.deliver(1, std::span(token).first(3)), Status::protocol);
    EXPECT_EQ(agent.test(seq), Status::in_progress);  // none of that touched the barrier

    EXPECT_EQ(agent.deliver(1, token), Status::ok);
    EXPECT_EQ(agent.test(seq), Status::ok);
    EXPECT_EQ(agent.deliver(1, token), Status::protocol);  // a token for a finished barrier
    agent.release(seq);
    EXPECT_EQ(agent.test(seq), Status::invalid);
}

TEST(Agent, KeepsTokensThatArriveBeforeTheirBarrierIsPosted) {
    LoopbackFabric fabric;
    Agent agent(0, 2, fabric);
    PacketHeader early;
    early.kind = PacketKind::barrier;
    early.seq = 1;  // the second barrier
    const auto bytes = early.encode();
    ASSERT_EQ(agent.deliver(1, bytes), Status::ok);
    EXPECT_EQ(agent.early_packets(), 1u);

    Seq first, second;
    ASSERT_EQ(agent.post_barrier(plan::barrier_algorithms()[0], &first), Status::ok);
    EXPECT_EQ(agent.test(first), Status::in_progress);
    PacketHeader now = early;
    now.seq = 0;
    ASSERT_EQ(agent.deliver(1, now.encode()), Status::ok);
    EXPECT_EQ(agent.test(first), Status::ok);

    ASSERT_EQ(agent.post_barrier(plan::barrier_algorithms()[0], &second), Status::ok);
    EXPECT_EQ(agent.test(second), Status::ok);  // its token was already here
    EXPECT_EQ(agent.early_packets(), 0u);
}

TEST(Agent, DuplicateTokenFailsTheBarrier) {
    LoopbackFabric fabric;
    Agent agent(0, 4, fabric);  // dissemination step 0 hears from rank 3
    Seq seq;
    ASSERT_EQ(agent.post_barrier(plan::barrier_algorithms()[0], &seq), Status::ok);
    PacketHeader step1;
    step1.seq = seq;
    step1.step = 1;  // rank 2's token for step 1, early: rank 0 is still in step 0
    ASSERT_EQ(agent.deliver(2, step1.encode()), Status::ok);
    EXPECT_EQ(agent.deliver(2, step1.encode()), Status::protocol);
    EXPECT_EQ(agent.test(seq), Status::protocol);
}

class RefusingFabric final : public Fabric {
public:
    Status transmit(Rank, const PacketHeader&, std::span<const std::byte>) override {
        return answer;
    }
    Status answer = Status::again;
};

TEST(Agent, QueuesPacketsTheFabricRefusesAndFailsOnTransportErrors) {
    RefusingFabric fabric;
    Agent agent(0, 2, fabric);
    Seq seq;
    ASSERT_EQ(agent.post_barrier(plan::barrier_algorithms()[0], &seq), Status::ok);
    EXPECT_EQ(agent.progress(), Status::in_progress);  // still refused: the token waits
    fabric.answer = Status::transport;
    EXPECT_EQ(agent.progress(), Status::transport);
    EXPECT_EQ(agent.test(seq), Status::transport);
}

TEST(Agent, BarrierIsNotCompleteWhileItsTokenWaitsForTheFabric) {
    // Rank 0's token is refused; rank 1's arrives. Rank 0 must not report completion until its
    // own token is out, or rank 1 would wait for it forever.
    RefusingFabric fabric;
    Agent agent(0, 2, fabric);
    Seq seq;
    ASSERT_EQ(agent.post_barrier(plan::barrier_algorithms()[0], &seq), Status::ok);
    PacketHeader token;
    token.seq = seq;
    ASSERT_EQ(agent.deliver(1, token.encode()), Status::ok);
    EXPECT_EQ(agent.test(seq), Status::in_progress);
    fabric.answer = Status::ok;
    EXPECT_EQ(agent.progress(), Status::ok);
    EXPECT_EQ(agent.test(seq), Status::ok);
}

}  // namespace
}  // namespace nicsim::nic
