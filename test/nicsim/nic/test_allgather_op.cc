// Allgathers run by a group of NIC agents over an in-memory network that delivers packets in a
// random order, may refuse them for a while, drops them at a seeded rate, and lets hosts post
// at random moments, late ones included. When the network is quiet and a collective is still
// incomplete, the driver calls timeout() on every agent, as a real driver's timer would.
//
// Whatever happens, every rank ends every collective with every block, byte for byte equal to a
// reference computed here, each expected packet accepted exactly once (the others counted as
// duplicates); without loss no NACK, retransmission or duplicate is ever needed.
#include <gtest/gtest.h>

#include <algorithm>
#include <deque>
#include <functional>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "nic/agent.h"
#include "nic/allgather_op.h"
#include "nic/arrivals.h"
#include "plan/allgather.h"

namespace nicsim::nic {
namespace {

const plan::AllgatherAlgorithm& algorithm(std::string_view name) {
    return *plan::find_allgather_algorithm(name);
}

// Byte i of origin's block in collective k: a hash, so that a misplaced byte shows.
std::byte reference(int k, Rank origin, std::uint64_t i) {
    std::uint64_t x = (std::uint64_t(k) << 48) ^ (std::uint64_t(origin) << 32) ^ i;
    x *= 0x9e3779b97f4a7c15ULL;
    return static_cast<std::byte>(x >> 56);
}

// Rank r's node when the group spreads over `nodes` nodes (none: 0), by a hash.
std::vector<int> layout(Rank size, int nodes, unsigned seed) {
    std::vector<int> node_of;
    std::mt19937 rng(seed);
    for (Rank r = 0; r < size && nodes > 0; ++r)
        node_of.push_back(std::uniform_int_distribution<int>(0, nodes - 1)(rng));
    return node_of;
}

// Rank r's schedule as the agent plans it (rank order).
plan::AllgatherSchedule schedule(const plan::AllgatherAlgorithm& a, Rank rank, Rank size,
                                 const std::vector<int>& node_of) {
    std::vector<Rank> order(size);
    for (Rank r = 0; r < size; ++r) order[r] = r;
    return AllgatherOp::schedule_for(a, rank, order, node_of);
}

// Packets a rank accepts in one collective: what its schedule's receives are cut into.
std::size_t expected_packets(const plan::AllgatherAlgorithm& a, Rank rank, Rank size,
                             const std::vector<int>& node_of, std::uint64_t block,
                             std::uint32_t mtu) {
    const std::size_t per_block =
        plan::pack(std::vector<plan::BlockRange>{{0, 1}}, block, mtu).size();
    std::size_t n = 0;
    for (const plan::AllgatherStep& step : schedule(a, rank, size, node_of)) {
        for (const plan::Transfer& recv : step.recvs) {
            n += a.combines ? plan::pack(recv.blocks, block, mtu).size()
                            : per_block * static_cast<std::size_t>(plan::block_count(recv.blocks));
        }
    }
    return n;
}

struct Options {
    std::string_view algorithm = "rd";
    Rank size = 4;
    std::uint64_t block = 8;
    std::uint32_t mtu = 64;
    bool data = true;              // payloads travel; otherwise empty payloads, as in the simulator
    double drop = 0;               // probability that a packet is lost
    double refuse = 0;             // probability that the fabric answers `again`
    double early_timeout = 0;      // probability per step that a random agent times out too soon
    bool own_apart = false;        // each rank's block given apart (post_allgather's `own`)
    int nodes = 0;                 // ranks spread over this many nodes at random; 0: no layout
    int collectives = 3;           // one after the other on each rank
    ChannelConfig channels{2, 0};  // bytes 0: enough for a whole collective; the third
                                   // collective reuses the first one's channel
    unsigned seed = 1;
};

struct Wire {
    Rank src;
    Rank dst;
    PacketHeader header;
    std::vector<std::byte> payload;
};

class Cluster;

class WireFabric final : public Fabric {
public:
    WireFabric(Cluster& cluster, Rank self) : cluster_(cluster), self_(self) {}
    Status transmit(Rank dst, const PacketHeader& header,
                    std::span<const std::byte> payload) override;

private:
    Cluster& cluster_;
    Rank self_;
};

class Cluster {
public:
    explicit Cluster(const Options& o)
        : o_(o),
          algorithm_(algorithm(o.algorithm)),
          rng_(o.seed),
          in_flight_of_(o.collectives, 0),
          completed_of_(o.collectives, 0),
          released_(o.collectives, false),
          posted_(o.size, 0),
          busy_(o.size, false),
          delivered_data_(o.size, 0),
          results_(o.size, std::vector<std::vector<std::byte>>(o.collectives)),
          owns_(o.size, std::vector<std::vector<std::byte>>(o.collectives)),
          node_of_(layout(o.size, o.nodes, o.seed)) {
        AgentConfig config;
        config.node_of = node_of_;
        config.channels = o.channels;
        if (config.channels.bytes == 0) {
            config.channels.bytes = std::max<std::uint64_t>(1, o.size * o.block);
        }
        for (Rank r = 0; r < o.size; ++r) fabrics_.emplace_back(*this, r);
        for (Rank r = 0; r < o.size; ++r) agents_.emplace_back(r, o.size, fabrics_[r], config);
        for (Rank r = 0; r < o.size; ++r) idle_.push_back(r);
    }

    Status carry(Rank src, Rank dst, const PacketHeader& header,
                 std::span<const std::byte> payload) {
        if (payload.size() != (o_.data ? header.payload_bytes : 0)) {
            ADD_FAILURE() << "rank " << src << " sent " << payload.size() << " bytes for "
                          << header.payload_bytes;
        }
        if ((refuse_from && refuse_from(src)) || (o_.refuse > 0 && coin(o_.refuse))) {
            return Status::again;
        }
        Wire wire{src, dst, header, {payload.begin(), payload.end()}};
        if (drop_if ? drop_if(wire) : (o_.drop > 0 && coin(o_.drop))) return Status::ok;
        ++in_flight_of_.at(header.seq);
        wires_.push_back(std::move(wire));
        return Status::ok;
    }

    // Posts rank r's next collective.
    void post(Rank r) {
        const int k = posted_[r]++;
        std::vector<std::byte>& result = results_[r][k];
        std::vector<std::byte>& own = owns_[r][k];
        if (o_.data) {
            result.assign(o_.size * o_.block, std::byte{0xee});
            std::vector<std::byte>& mine = o_.own_apart ? own : result;
            if (o_.own_apart) own.resize(o_.block);
            for (std::uint64_t i = 0; i < o_.block; ++i)
                mine[(o_.own_apart ? 0 : r * o_.block) + i] = reference(k, r, i);
        }
        Seq seq;
        ASSERT_EQ(agents_[r].post_allgather(algorithm_, o_.block, o_.mtu, result, &seq, own),
                  Status::ok);
        ASSERT_EQ(seq, static_cast<Seq>(k));
        busy_[r] = true;
        idle_.erase(std::find(idle_.begin(), idle_.end(), r));
        check(r);
    }

    void post_all() {
        for (Rank r = 0; r < o_.size; ++r) post(r);
    }

    // Delivers the wire at index i.
    void deliver(std::size_t i) {
        Wire w = std::move(wires_[i]);
        wires_[i] = std::move(wires_.back());
        wires_.pop_back();
        --in_flight_of_[w.header.seq];
        Status s;
        if (o_.data) {
            const auto head = w.header.encode();
            std::vector<std::byte> bytes(head.size() + w.payload.size());
            std::copy(w.payload.begin(), w.payload.end(),
                      std::copy(head.begin(), head.end(), bytes.begin()));
            s = agents_[w.dst].deliver(w.src, bytes);
        } else {
            s = agents_[w.dst].deliver(w.src, w.header, {});
        }
        if (released_[w.header.seq]) {
            EXPECT_EQ(s, Status::protocol) << "a packet of a forgotten collective";
            ++stale;
        } else {
            ASSERT_EQ(s, Status::ok) << describe(w);
            if (w.header.kind == PacketKind::allgather) ++delivered_data_[w.dst];
        }
        check(w.dst);
    }

    // Delivers everything in flight, in a random order, until nothing is.
    void drain() {
        while (!wires_.empty() && !testing::Test::HasFatalFailure()) deliver(pick(wires_.size()));
    }

    void timeout(Rank r) {
        ASSERT_FALSE(failed(agents_[r].timeout()));
        check(r);
    }

    // Runs until every rank completed every collective and the network is empty.
    void run() {
        for (long iteration = 0;; ++iteration) {
            ASSERT_LT(iteration, 100'000'000) << "no progress";
            if (wires_.empty() && idle_.empty()) {
                if (!quiet()) continue;  // some transmit queue still had packets
                if (completed_total_ == o_.size * o_.collectives) {
                    release_finished();
                    ASSERT_TRUE(finished_.empty());
                    return;
                }
                ASSERT_GT(o_.drop, 0.0)
                    << "stuck without loss: " << completed_total_ << " completions";
                ASSERT_LT(++quiet_timeouts, 200) << "losses are not being repaired";
                for (Rank r = 0; r < o_.size; ++r) timeout(r);
            } else {
                const int dice = std::uniform_int_distribution<int>(0, 99)(rng_);
                if (!idle_.empty() && (wires_.empty() || dice < 3)) {
                    post(idle_[pick(idle_.size())]);
                } else if (o_.refuse > 0 && dice < 13) {
                    const Rank r = static_cast<Rank>(pick(o_.size));
                    ASSERT_FALSE(failed(agents_[r].progress()));
                    check(r);
                } else if (o_.early_timeout > 0 && dice < 14 && coin(o_.early_timeout)) {
                    timeout(static_cast<Rank>(pick(o_.size)));
                } else if (!wires_.empty()) {
                    deliver(pick(wires_.size()));
                }
            }
            release_finished();
            if (testing::Test::HasFatalFailure()) return;
        }
    }

    // Every rank accepted each expected packet once (a packet its channel could not keep is not
    // accepted); all collectives forgotten, nothing kept.
    void expect_exactly_once() const {
        for (Rank r = 0; r < o_.size; ++r) {
            const std::size_t expected =
                expected_packets(algorithm_, r, o_.size, node_of_, o_.block, o_.mtu) *
                o_.collectives;
            const CollectiveStats& s = agents_[r].stats();
            EXPECT_EQ(delivered_data_[r] - s.duplicates - s.early_dropped, expected)
                << "rank " << r;
            EXPECT_EQ(agents_[r].active(), 0u) << "rank " << r;
            EXPECT_EQ(agents_[r].early_packets(), 0u) << "rank " << r;
        }
    }

    CollectiveStats total() const {
        CollectiveStats t;
        for (const Agent& a : agents_) {
            const CollectiveStats& s = a.stats();
            t.nacks_sent += s.nacks_sent;
            t.nacks_forwarded += s.nacks_forwarded;
            t.retransmitted += s.retransmitted;
            t.duplicates += s.duplicates;
            t.early_dropped += s.early_dropped;
        }
        return t;
    }

    Agent& agent(Rank r) { return agents_[r]; }
    std::vector<Wire>& wires() { return wires_; }

    std::function<bool(const Wire&)> drop_if;  // replaces the random loss when set
    std::function<bool(Rank src)> refuse_from;  // the fabric answers `again` to these senders
    long quiet_timeouts = 0;
    long stale = 0;

private:
    bool coin(double p) { return std::bernoulli_distribution(p)(rng_); }
    std::size_t pick(std::size_t n) {
        return std::uniform_int_distribution<std::size_t>(0, n - 1)(rng_);
    }

    std::string describe(const Wire& w) const {
        return std::to_string(w.src) + " -> " + std::to_string(w.dst) + " kind " +
               std::to_string(static_cast<int>(w.header.kind)) + " seq " +
               std::to_string(w.header.seq) + " step " + std::to_string(w.header.step >> 24) + "/" +
               std::to_string(w.header.step & 0xffffff) + " origin " +
               std::to_string(w.header.origin);
    }

    // Offers every transmit queue to the network: true when all were empty.
    bool quiet() {
        bool quiet = true;
        for (Rank r = 0; r < o_.size; ++r) {
            const Status s = agents_[r].progress();
            EXPECT_FALSE(failed(s));
            if (s != Status::ok) quiet = false;
            check(r);
        }
        return quiet && wires_.empty();
    }

    // Rank r's current collective may have completed: check its data, and once every rank has
    // completed it, synchronise (recycle its channels) as a barrier would.
    void check(Rank r) {
        if (!busy_[r]) return;
        const int k = posted_[r] - 1;
        const Status s = agents_[r].test(k);
        ASSERT_FALSE(failed(s)) << "rank " << r << " collective " << k << ": " << to_string(s);
        if (s != Status::ok) return;
        busy_[r] = false;
        if (posted_[r] < o_.collectives) idle_.push_back(r);
        ++completed_total_;
        if (o_.data) {
            const std::vector<std::byte>& result = results_[r][k];
            for (std::uint64_t at = 0; at < result.size(); ++at) {
                const Rank origin = static_cast<Rank>(at / o_.block);
                ASSERT_EQ(result[at], reference(k, origin, at % o_.block))
                    << "rank " << r << " collective " << k << " block " << origin << " byte "
                    << at % o_.block;
            }
        }
        if (++completed_of_[k] == o_.size) {
            for (Agent& a : agents_) ASSERT_EQ(a.recycle(k), Status::ok);
            finished_.push_back(k);
        }
    }

    // A collective every rank completed is released once none of its packets is in flight:
    // nobody can miss one any more.
    void release_finished() {
        while (!finished_.empty() && in_flight_of_[finished_.front()] == 0) {
            const int k = finished_.front();
            finished_.pop_front();
            for (Agent& a : agents_) a.release(k);
            released_[k] = true;
            for (auto& mine : results_) mine[k] = {};
            for (auto& mine : owns_) mine[k] = {};
        }
    }

    Options o_;
    const plan::AllgatherAlgorithm& algorithm_;
    std::mt19937 rng_;
    std::deque<WireFabric> fabrics_;
    std::deque<Agent> agents_;
    std::vector<Wire> wires_;
    std::vector<long> in_flight_of_;
    std::vector<Rank> completed_of_;
    std::vector<bool> released_;
    std::deque<int> finished_;
    std::vector<int> posted_;
    std::vector<bool> busy_;
    std::vector<Rank> idle_;
    std::vector<std::size_t> delivered_data_;
    std::vector<std::vector<std::vector<std::byte>>> results_;  // [rank][collective]
    std::vector<std::vector<std::vector<std::byte>>> owns_;     // own_apart: [rank][collective]
    long completed_total_ = 0;
    std::vector<int> node_of_;
};

Status WireFabric::transmit(Rank dst, const PacketHeader& header,
                            std::span<const std::byte> payload) {
    return cluster_.carry(self_, dst, header, payload);
}

// ---- the properties ---------------------------------------------------------------------------

using Params = std::tuple<std::string_view /*algorithm*/, double /*drop*/, bool /*data*/>;

class AllgatherAgents : public testing::TestWithParam<Params> {};

// A sample of groups, block sizes and MTUs: the edges, then random ones. Bytes moved stay within
// a budget so that the whole file runs in seconds. Under AddressSanitizer (sanitized_tests), where
// the flat allgather's 257 x 257 packets take seconds each, groups of up to 129 ranks: nicsim_tests
// runs the whole sample.
#ifdef __SANITIZE_ADDRESS__
constexpr Rank kLargestGroup = 129;
#else
constexpr Rank kLargestGroup = 257;
#endif
std::vector<Options> sample(unsigned seed) {
    std::mt19937 rng(seed);
    const auto uniform = [&rng](auto lo, auto hi) {
        return std::uniform_int_distribution<decltype(lo)>(lo, hi)(rng);
    };
    std::vector<Options> cases;
    std::vector<Rank> sizes;
    for (const Rank edge :
         {1, 2, 3, 4, 5, 7, 8, 9, 16, 17, 31, 32, 33, 64, 127, 128, 129, 256, 257})
        if (edge <= kLargestGroup) sizes.push_back(edge);
    for (int i = 0; i < 8; ++i) sizes.push_back(uniform(Rank{1}, kLargestGroup));
    for (const Rank size : sizes) {
        Options o;
        o.size = size;
        o.mtu = std::array<std::uint32_t, 4>{16, 64, 256, 1024}[uniform(0, 3)];
        switch (uniform(0, 3)) {
            case 0:
                o.block = 0;
                break;
            case 1:
                o.block = uniform(std::uint64_t{1}, std::uint64_t{64});
                break;
            default:
                o.block = uniform(std::uint64_t{o.mtu} + 1, std::uint64_t{3} * o.mtu);
                break;  // > MTU
        }
        // About a million bytes gathered in all.
        while (o.block > 0 && std::uint64_t(size) * size * o.block > (1u << 20)) o.block /= 2;
        o.refuse = uniform(0, 2) == 0 ? 0.2 : 0;
        o.own_apart = uniform(0, 1) == 1;
        if (size > 2 && uniform(0, 1) == 1) o.nodes = uniform(2, std::min<int>(size, 6));
        o.seed = uniform(1u, 1u << 30);
        cases.push_back(o);
    }
    return cases;
}

TEST_P(AllgatherAgents, EveryRankGetsEveryBlockExactlyOnce) {
    const auto& [name, drop, data] = GetParam();
    CollectiveStats sum;
    for (Options o :
         sample(std::hash<std::string_view>{}(name) + static_cast<unsigned>(drop * 1000))) {
        o.algorithm = name;
        o.drop = drop;
        o.data = data;
        o.early_timeout = drop > 0 ? 0.01 : 0;
        if (drop > 0 && o.seed % 2 == 0)
            o.channels.bytes = std::max<std::uint64_t>(1, o.size * o.block / 4);
        SCOPED_TRACE(testing::Message()
                     << "size " << o.size << " block " << o.block << " mtu " << o.mtu << " refuse "
                     << o.refuse << " own apart " << o.own_apart << " nodes " << o.nodes
                     << " channel bytes "
                     << o.channels.bytes << " seed " << o.seed);
        Cluster cluster(o);
        cluster.run();
        if (HasFatalFailure()) return;
        cluster.expect_exactly_once();
        const CollectiveStats t = cluster.total();
        if (drop == 0) {
            EXPECT_EQ(t.nacks_sent, 0u);
            EXPECT_EQ(t.nacks_forwarded, 0u);
            EXPECT_EQ(t.retransmitted, 0u);
            EXPECT_EQ(t.duplicates, 0u);
            EXPECT_EQ(t.early_dropped, 0u);
            EXPECT_EQ(cluster.quiet_timeouts, 0);
            EXPECT_EQ(cluster.stale, 0);
        }
        sum.nacks_sent += t.nacks_sent;
        sum.retransmitted += t.retransmitted;
    }
    if (drop > 0) {  // the losses were real and were repaired
        EXPECT_GT(sum.nacks_sent, 0u);
        EXPECT_GT(sum.retransmitted, 0u);
    }
}

INSTANTIATE_TEST_SUITE_P(
    Sample, AllgatherAgents,
    testing::Combine(testing::Values(std::string_view("rd"), std::string_view("ab"),
                                     std::string_view("flat")),
                     testing::Values(0.0, 0.01, 0.05), testing::Bool()),
    [](const auto& info) {
        return std::string(std::get<0>(info.param)) + "_loss" +
               std::to_string(static_cast<int>(std::get<1>(info.param) * 100)) +
               (std::get<2>(info.param) ? "_data" : "_timing");
    });

// ---- scenarios ---------------------------------------------------------------------------------

class AllgatherAlgorithms : public testing::TestWithParam<std::string_view> {};

TEST_P(AllgatherAlgorithms, ALateHostFindsItsPacketsKeptInItsChannel) {
    Options o;
    o.algorithm = GetParam();
    o.size = 9;
    o.block = 100;
    o.mtu = 64;
    o.collectives = 1;
    Cluster cluster(o);
    for (Rank r = 0; r < o.size; ++r) {
        if (r != 5) cluster.post(r);
    }
    cluster.drain();
    EXPECT_GT(cluster.agent(5).early_packets(), 0u);
    cluster.post(5);
    cluster.drain();
    ASSERT_FALSE(HasFatalFailure());
    for (Rank r = 0; r < o.size; ++r) EXPECT_EQ(cluster.agent(r).test(0), Status::ok) << r;
    const CollectiveStats t = cluster.total();
    EXPECT_EQ(t.nacks_sent + t.retransmitted + t.duplicates + t.early_dropped, 0u);
}

TEST_P(AllgatherAlgorithms, PacketsNoChannelCouldKeepAreAskedForOncePosted) {
    Options o;
    o.algorithm = GetParam();
    o.size = 6;
    o.block = 10;
    o.mtu = 8;
    o.collectives = 1;
    o.channels = {1, 1};  // holds no packet of 8 or 2 bytes
    Cluster cluster(o);
    for (Rank r = 1; r < o.size; ++r) cluster.post(r);
    cluster.drain();
    EXPECT_GT(cluster.agent(0).stats().early_dropped, 0u);
    cluster.post(0);
    cluster.drain();
    for (int round = 0; round < 20 && cluster.agent(0).test(0) != Status::ok; ++round) {
        for (Rank r = 0; r < o.size; ++r) cluster.timeout(r);
        cluster.drain();
    }
    for (Rank r = 0; r < o.size; ++r) EXPECT_EQ(cluster.agent(r).test(0), Status::ok) << r;
    EXPECT_GT(cluster.agent(0).stats().nacks_sent, 0u);
}

INSTANTIATE_TEST_SUITE_P(Each, AllgatherAlgorithms, testing::Values("rd", "ab", "flat"),
                         [](const auto& info) { return std::string(info.param); });

bool is_data(const Wire& w, Rank src, Rank dst) {
    return w.header.kind == PacketKind::allgather && w.src == src && w.dst == dst;
}

// Loses the first allgather packet from `src` to `dst`, and nothing else.
std::function<bool(const Wire&)> drop_first_data(Rank src, Rank dst) {
    return [src, dst, lost = false](const Wire& w) mutable {
        if (lost || !is_data(w, src, dst)) return false;
        return lost = true;
    };
}

TEST(AllgatherOp, ANackClimbsToTheFirstRankThatHasThePacket) {
    // ab, 4 ranks: origin 0's block goes 0 -> 1 (flag (0, 0)), 0 -> 2 and 1 -> 3 (flag (0, 1)).
    // 0 -> 1 is lost, so neither 1 nor 3 gets it; 3 asks 1, which lacks it and asks 0.
    Options o;
    o.algorithm = "ab";
    o.size = 4;
    o.block = 5;
    o.collectives = 1;
    Cluster cluster(o);
    cluster.drop_if = drop_first_data(0, 1);
    cluster.post_all();
    cluster.drain();
    EXPECT_EQ(cluster.agent(1).test(0), Status::in_progress);
    EXPECT_EQ(cluster.agent(3).test(0), Status::in_progress);

    cluster.timeout(3);
    ASSERT_EQ(cluster.wires().size(), 1u);
    const Wire nack = cluster.wires()[0];
    EXPECT_EQ(nack.header.kind, PacketKind::nack);
    EXPECT_EQ(nack.dst, 1);
    EXPECT_EQ(nack.header.origin, 0);
    EXPECT_EQ(nack.header.step, 1u << kAllgatherIndexBits);  // flag (0, 1), packet 0

    cluster.deliver(0);  // 1 lacks it: the NACK goes on to 0, for flag (0, 0)
    ASSERT_EQ(cluster.wires().size(), 1u);
    EXPECT_EQ(cluster.wires()[0].header.kind, PacketKind::nack);
    EXPECT_EQ(cluster.wires()[0].dst, 0);
    EXPECT_EQ(cluster.wires()[0].header.step, 0u);

    cluster.drain();  // 0 sends it again to 1, which forwards it to 3 as it would have
    for (Rank r = 0; r < o.size; ++r) EXPECT_EQ(cluster.agent(r).test(0), Status::ok) << r;
    EXPECT_EQ(cluster.agent(3).stats().nacks_sent, 1u);
    EXPECT_EQ(cluster.agent(1).stats().nacks_sent, 0u);
    EXPECT_EQ(cluster.agent(1).stats().nacks_forwarded, 1u);
    EXPECT_EQ(cluster.agent(0).stats().retransmitted, 1u);
    EXPECT_EQ(cluster.total().duplicates, 0u);
}

TEST(AllgatherOp, ASubtreeThatMissedAPacketHasItSentOnce) {
    // ab, 16 ranks: 0 -> 1 is lost, so origin 0's block misses 1 and its subtree, every odd
    // rank. All time out together: each asks its parent, and a parent that lacks the packet and
    // asked for it itself passes nothing up. 0 sends it again once; it flows down as before.
    Options o;
    o.algorithm = "ab";
    o.size = 16;
    o.collectives = 1;
    Cluster cluster(o);
    cluster.drop_if = drop_first_data(0, 1);
    cluster.post_all();
    cluster.drain();
    for (Rank r = 0; r < o.size; ++r) cluster.timeout(r);
    cluster.drain();
    for (Rank r = 0; r < o.size; ++r) EXPECT_EQ(cluster.agent(r).test(0), Status::ok) << r;
    const CollectiveStats t = cluster.total();
    EXPECT_EQ(t.nacks_sent, 8u);  // one per odd rank
    EXPECT_EQ(t.nacks_forwarded, 0u);
    EXPECT_EQ(t.retransmitted, 1u);
    EXPECT_EQ(t.duplicates, 0u);
}

// ab on 2 ranks, blocks of 4 packets, one collective.
Options two_ranks_four_packets() {
    Options o;
    o.algorithm = "ab";
    o.size = 2;
    o.block = 200;
    o.mtu = 64;
    o.collectives = 1;
    return o;
}

// Rank 1's fabric takes its packets again: the collective completes everywhere, no packet twice.
void let_rank_one_send(Cluster& cluster) {
    cluster.refuse_from = nullptr;
    EXPECT_FALSE(failed(cluster.agent(1).progress()));
    cluster.drain();
    for (Rank r = 0; r < 2; ++r) EXPECT_EQ(cluster.agent(r).test(0), Status::ok) << r;
    EXPECT_EQ(cluster.total().duplicates, 0u);
}

TEST(AllgatherOp, ANackForAPacketStillQueuedAtTheSenderIsNotAnsweredWithACopy) {
    // ab, 2 ranks, blocks of 4 packets: 1's fabric refuses, so its packets wait in its NIC. 0
    // hears nothing and asks for the last one (which stands for those before it); 1 still holds
    // it queued for 0 and sends no copy: the packet leaves in the normal course, once.
    Cluster cluster(two_ranks_four_packets());
    cluster.refuse_from = [](Rank src) { return src == 1; };
    cluster.post_all();
    cluster.drain();
    EXPECT_EQ(cluster.agent(0).test(0), Status::in_progress);
    cluster.timeout(0);
    ASSERT_EQ(cluster.wires().size(), 1u);
    EXPECT_EQ(cluster.wires()[0].header.kind, PacketKind::nack);
    EXPECT_EQ(cluster.wires()[0].header.step & ((1u << kAllgatherIndexBits) - 1), 3u);
    cluster.drain();
    EXPECT_EQ(cluster.agent(1).stats().retransmitted, 0u);
    let_rank_one_send(cluster);
    EXPECT_EQ(cluster.agent(0).stats().nacks_sent, 1u);
}

TEST(AllgatherOp, LastPacketsAreAskedForLessOftenWhilePacketsKeepComing) {
    // ab, 2 ranks, blocks of 4 packets; 1's fabric takes one packet at a time, when let. 0 has
    // packet 0 of 1's block and asks for the last (round 1); a packet comes, and round 2 lets the
    // last ones be; another comes, round 3 asks; with nothing come since, round 4 asks again.
    Cluster cluster(two_ranks_four_packets());
    int let = 1;  // packets 1's fabric takes before it refuses
    cluster.refuse_from = [&let](Rank src) { return src == 1 && let-- <= 0; };
    cluster.post_all();
    cluster.drain();
    const auto asked = [&] { return cluster.agent(0).stats().nacks_sent; };
    const auto one_more = [&] {
        let = 1;
        EXPECT_FALSE(failed(cluster.agent(1).progress()));
        cluster.drain();
    };
    cluster.timeout(0);
    cluster.drain();
    EXPECT_EQ(asked(), 1u);
    one_more();
    cluster.timeout(0);
    EXPECT_EQ(asked(), 1u);
    one_more();
    cluster.timeout(0);
    cluster.drain();
    EXPECT_EQ(asked(), 2u);
    cluster.timeout(0);
    cluster.drain();
    EXPECT_EQ(asked(), 3u);
    EXPECT_EQ(cluster.agent(1).stats().retransmitted, 0u);  // 1 held them all queued
    let_rank_one_send(cluster);
}

TEST(AllgatherOp, ACompleteRankStillAnswersNacks) {
    // rd, 2 ranks: 1's only packet to 0 is lost; 1 completes, then answers 0's NACK.
    Options o;
    o.size = 2;
    o.collectives = 1;
    Cluster cluster(o);
    cluster.drop_if = [](const Wire& w) { return is_data(w, 1, 0); };
    cluster.post_all();
    cluster.drain();
    EXPECT_EQ(cluster.agent(1).test(0), Status::ok);
    EXPECT_EQ(cluster.agent(0).test(0), Status::in_progress);
    cluster.drop_if = nullptr;
    cluster.timeout(0);
    cluster.drain();
    EXPECT_EQ(cluster.agent(0).test(0), Status::ok);
    EXPECT_EQ(cluster.agent(1).stats().retransmitted, 1u);
}

TEST(AllgatherOp, RecursiveDoublingIgnoresANackForAStepItHasNotReached) {
    // rd, 4 ranks: 1's step-0 packet to 0 is lost, so 0 never sends step 1 to 2. 2 asks 0 for
    // it, in vain: 0 sends it once 0 itself has asked 1 for what it misses.
    Options o;
    o.size = 4;
    o.collectives = 1;
    Cluster cluster(o);
    cluster.drop_if = drop_first_data(1, 0);
    cluster.post_all();
    cluster.drain();
    cluster.timeout(2);
    cluster.drain();
    EXPECT_EQ(cluster.agent(2).stats().nacks_sent, 1u);
    EXPECT_EQ(cluster.agent(0).stats().retransmitted, 0u);
    EXPECT_EQ(cluster.agent(2).test(0), Status::in_progress);
    cluster.timeout(0);
    cluster.drain();
    for (Rank r = 0; r < o.size; ++r) EXPECT_EQ(cluster.agent(r).test(0), Status::ok) << r;
    EXPECT_EQ(cluster.agent(1).stats().retransmitted, 1u);
}

TEST(AllgatherOp, RecursiveDoublingAsksOnlyForItsCurrentStep) {
    // rd, 8 ranks: 1 -> 0 at step 0 and 6 -> 2 at step 2 are lost. 2 waits at step 1 for 0,
    // which waits for 1; 2 asks 0 only, not yet 6 (which could as well still be on its way).
    Options o;
    o.size = 8;
    o.collectives = 1;
    Cluster cluster(o);
    cluster.drop_if = [](const Wire& w) { return is_data(w, 1, 0) || is_data(w, 6, 2); };
    cluster.post_all();
    cluster.drain();
    cluster.drop_if = nullptr;
    cluster.timeout(2);
    EXPECT_EQ(cluster.agent(2).stats().nacks_sent, 1u);
    ASSERT_EQ(cluster.wires().size(), 1u);
    EXPECT_EQ(cluster.wires()[0].dst, 0);
    for (int round = 0; round < 3; ++round) {
        for (Rank r = 0; r < o.size; ++r) cluster.timeout(r);
        cluster.drain();
    }
    for (Rank r = 0; r < o.size; ++r) EXPECT_EQ(cluster.agent(r).test(0), Status::ok) << r;
}

TEST(AllgatherOp, DuplicatesAreIgnoredAndNotForwarded) {
    Options o;
    o.algorithm = "ab";
    o.size = 8;
    o.collectives = 1;
    Cluster cluster(o);
    cluster.post_all();
    auto copy = std::find_if(cluster.wires().begin(), cluster.wires().end(),
                             [](const Wire& w) { return is_data(w, 0, 1); });
    ASSERT_NE(copy, cluster.wires().end());
    cluster.wires().push_back(*copy);
    cluster.drain();
    for (Rank r = 0; r < o.size; ++r) EXPECT_EQ(cluster.agent(r).test(0), Status::ok) << r;
    EXPECT_EQ(cluster.agent(1).stats().duplicates, 1u);
    EXPECT_EQ(cluster.total().duplicates, 1u);  // 1 forwarded it once: nobody else saw it twice
}

// ---- one agent, packets made by hand ----------------------------------------------------------

class Recorder final : public Fabric {
public:
    Status transmit(Rank dst, const PacketHeader& header,
                    std::span<const std::byte> payload) override {
        if (answer != Status::ok) return answer;
        sent.push_back({0, dst, header, {payload.begin(), payload.end()}});
        return Status::ok;
    }
    std::vector<Wire> sent;
    Status answer = Status::ok;
};

class Discard final : public Fabric {
public:
    Status transmit(Rank, const PacketHeader&, std::span<const std::byte>) override {
        return Status::ok;
    }
};

PacketHeader data_header(Seq seq, std::uint32_t step, std::uint32_t index, Rank origin,
                         std::uint32_t bytes) {
    PacketHeader h;
    h.kind = PacketKind::allgather;
    h.seq = seq;
    h.step = step << kAllgatherIndexBits | index;
    h.origin = origin;
    h.payload_bytes = bytes;
    return h;
}

TEST(AllgatherOp, RejectsPacketsItDoesNotExpect) {
    // rd over 4 ranks, rank 0: step 0 from 1 (block 1), step 1 from 2 (blocks 2, 3); 4-byte blocks.
    const std::vector<std::byte> four(4), eight(8);
    struct Case {
        const char* what;
        Rank src;
        PacketHeader header;
        std::span<const std::byte> payload;
    };
    PacketHeader barrier = data_header(0, 0, 0, 1, 0);
    barrier.kind = PacketKind::barrier;
    PacketHeader nack_from_stranger = data_header(0, 1, 0, 0, 0);
    nack_from_stranger.kind = PacketKind::nack;  // 3 gets nothing from 0 at step 1
    const Case cases[] = {
        {"another kind", 1, barrier, {}},
        {"a step past the end", 1, data_header(0, 2, 0, 1, 4), four},
        {"a sender not of that step", 2, data_header(0, 0, 0, 2, 4), four},
        {"an origin that is not the sender", 1, data_header(0, 0, 0, 3, 4), four},
        {"a packet index past the end", 1, data_header(0, 0, 1, 1, 4), four},
        {"a wrong length", 1, data_header(0, 0, 0, 1, 8), eight},
        {"an empty payload while data travels", 1, data_header(0, 0, 0, 1, 4), {}},
        {"a NACK from a rank this one does not send to", 3, nack_from_stranger, {}},
    };
    for (const Case& c : cases) {
        Recorder fabric;
        Agent agent(0, 4, fabric);
        std::vector<std::byte> result(16);
        Seq seq;
        ASSERT_EQ(agent.post_allgather(algorithm("rd"), 4, 64, result, &seq), Status::ok);
        EXPECT_EQ(agent.deliver(c.src, c.header, c.payload), Status::protocol) << c.what;
        EXPECT_EQ(agent.test(seq), Status::protocol) << c.what;
    }
}

TEST(AllgatherOp, ANackForACollectiveNotPostedHereIsDropped) {
    // What it asks for leaves in the normal course once the collective is posted.
    Recorder fabric;
    Agent agent(0, 2, fabric);
    PacketHeader nack = data_header(0, 0, 0, 0, 0);
    nack.kind = PacketKind::nack;
    EXPECT_EQ(agent.deliver(1, nack, {}), Status::ok);
    EXPECT_EQ(agent.early_packets(), 0u);
    std::vector<std::byte> result(2);
    Seq seq;
    ASSERT_EQ(agent.post_allgather(algorithm("ab"), 1, 64, result, &seq), Status::ok);
    EXPECT_EQ(fabric.sent.size(), 1u);  // its block to 1, once
    EXPECT_EQ(agent.stats().retransmitted, 0u);
}

TEST(AllgatherOp, ModelsTimeWithEmptyPayloads) {
    // ab over 3 ranks, 100-byte blocks, MTU 64: two packets per block, of 64 and 36 bytes.
    Recorder fabric;
    Agent agent(1, 3, fabric);
    Seq seq;
    ASSERT_EQ(agent.post_allgather(algorithm("ab"), 100, 64, {}, &seq), Status::ok);
    ASSERT_EQ(fabric.sent.size(), 4u);  // its block to 2 (flag (1, 0)), then to 0 (flag (1, 1))
    for (const Wire& w : fabric.sent) EXPECT_TRUE(w.payload.empty());
    EXPECT_EQ(fabric.sent[0].header, data_header(0, 0, 0, 1, 64));
    EXPECT_EQ(fabric.sent[0].dst, 2);
    EXPECT_EQ(fabric.sent[1].header, data_header(0, 1, 0, 1, 64));
    EXPECT_EQ(fabric.sent[1].dst, 0);
    EXPECT_EQ(fabric.sent[3].header, data_header(0, 1, 1, 1, 36));

    // From 0 at step 0 (origin 0), from 2 at step 1 (origin 2); origin 0 goes no further.
    for (const std::uint32_t q : {0u, 1u}) {
        const std::uint32_t bytes = q == 0 ? 64 : 36;
        EXPECT_EQ(agent.deliver(0, data_header(0, 0, q, 0, bytes), {}), Status::ok);
        EXPECT_EQ(agent.deliver(2, data_header(0, 1, q, 2, bytes), {}), Status::ok);
    }
    EXPECT_EQ(agent.test(seq), Status::ok);
    EXPECT_EQ(fabric.sent.size(), 4u);
    std::vector<std::byte> payload(64);
    EXPECT_EQ(agent.deliver(0, data_header(0, 0, 0, 0, 64), payload), Status::protocol)
        << "bytes where only time is modelled";
    EXPECT_EQ(agent.test(seq), Status::ok) << "a complete collective stays complete";
}

TEST(AllgatherOp, AGroupOfOneIsCompleteAtOnce) {
    for (const auto& name : {"rd", "ab", "flat"}) {
        Recorder fabric;
        Agent agent(0, 1, fabric);
        std::vector<std::byte> result(7, std::byte{3});
        Seq seq;
        ASSERT_EQ(agent.post_allgather(algorithm(name), 7, 4, result, &seq), Status::ok);
        EXPECT_EQ(agent.test(seq), Status::ok);
        EXPECT_TRUE(fabric.sent.empty());
    }
}

TEST(AllgatherOp, ARepeatedCallReusesTheOpAndAnotherShapeMakesItsOwn) {
    // Rank 1 of 2: one packet each way per call. The op a call leaves behind is offered to the
    // next one; these calls change algorithm, block size and whether bytes travel in between, so
    // reusing an op that does not fit would show as a wrong header, payload or result.
    struct Call {
        const char* algorithm;
        std::uint64_t block;
        bool data;
    };
    const std::array<Call, 9> calls{{{"rd", 4, true}, {"rd", 4, true}, {"rd", 8, true},
                                     {"ab", 8, true}, {"ab", 8, true}, {"ab", 8, false},
                                     {"ab", 4, false}, {"ab", 8, true}, {"rd", 4, true}}};
    Recorder fabric;
    Agent agent(1, 2, fabric);
    for (Seq k = 0; k < calls.size(); ++k) {
        const Call& c = calls[k];
        SCOPED_TRACE(testing::Message() << "call " << k);
        const auto block_of = [&](Rank origin) {
            std::vector<std::byte> bytes(c.data ? c.block : 0);
            for (std::uint64_t i = 0; i < bytes.size(); ++i) bytes[i] = reference(k, origin, i);
            return bytes;
        };
        std::vector<std::byte> result(c.data ? 2 * c.block : 0, std::byte{0xee});
        std::ranges::copy(block_of(1), result.begin() + static_cast<std::ptrdiff_t>(c.block));
        Seq seq;
        ASSERT_EQ(agent.post_allgather(algorithm(c.algorithm), c.block, 64, result, &seq),
                  Status::ok);
        ASSERT_EQ(seq, k);
        ASSERT_EQ(fabric.sent.size(), k + 1);
        const auto header = [&](Rank origin) {
            return data_header(k, 0, 0, origin, static_cast<std::uint32_t>(c.block));
        };
        EXPECT_EQ(fabric.sent.back().header, header(1));
        EXPECT_EQ(fabric.sent.back().payload, block_of(1));
        EXPECT_EQ(agent.deliver(0, header(0), block_of(0)), Status::ok);
        EXPECT_EQ(agent.test(seq), Status::ok);
        std::vector<std::byte> gathered = block_of(0);
        std::ranges::copy(block_of(1), std::back_inserter(gathered));
        EXPECT_EQ(result, gathered);
        agent.release(seq);
    }
}

TEST(Agent, PostAllgatherRejectsWhatItCannotRun) {
    Recorder fabric;
    Agent agent(0, 4, fabric);
    std::vector<std::byte> result(16);
    Seq seq = 99;
    EXPECT_EQ(agent.post_allgather(algorithm("host-rd"), 4, 64, result, &seq), Status::invalid);
    EXPECT_EQ(agent.post_allgather(algorithm("rd"), 4, 0, result, &seq), Status::invalid);
    EXPECT_EQ(agent.post_allgather(algorithm("rd"), 5, 64, result, &seq), Status::invalid);
    // 4 ranks x (2^22 + 1) bytes in packets of 1 byte: more than 2^24 packets in all, past what
    // the encoding can number in rd's last transfer; 2^22 bytes is the most.
    EXPECT_EQ(agent.post_allgather(algorithm("rd"), (std::uint64_t{1} << 22) + 1, 1, {}, &seq),
              Status::invalid);
    EXPECT_EQ(seq, 99u);
    EXPECT_EQ(agent.active(), 0u);
    Discard discard;
    Agent big(0, 4, discard);
    EXPECT_EQ(big.post_allgather(algorithm("rd"), std::uint64_t{1} << 22, 1, {}, &seq), Status::ok);
    EXPECT_EQ(big.recycle(0), Status::ok);
    EXPECT_EQ(big.recycle(1), Status::invalid);  // not posted yet
}

// A host that takes every packet, as an agent does.
class TakingHost final : public HostPort {
public:
    Status deliver(Rank, const PacketHeader&, std::span<const std::byte>) override {
        return Status::ok;
    }
    void send_space() override {}
};

// A packet the fabric refused waits with its own copy of the payload, unless payloads are stable,
// when it is sent from the caller's bytes as they are then.
TEST(AgentNic, CopiesAPayloadTheFabricRefusedUnlessPayloadsAreStable) {
    for (const bool stable : {false, true}) {
        Recorder fabric;
        fabric.answer = Status::again;
        TakingHost host;
        NicConfig config;
        config.credits = 0;
        config.send_buffers = 0;
        config.host_takes_all = true;
        config.stable_payloads = stable;
        Nic nic(0, config, fabric, host);
        std::vector<std::byte> payload(3, std::byte{1});
        PacketHeader h = data_header(0, 0, 0, 0, 3);
        ASSERT_EQ(nic.send(1, h, payload), Status::ok);
        EXPECT_EQ(nic.queued(), 1u);
        EXPECT_EQ(nic.progress(), Status::in_progress);
        payload.assign(3, std::byte{2});
        fabric.answer = Status::ok;
        ASSERT_EQ(nic.progress(), Status::ok);
        EXPECT_EQ(nic.queued(), 0u);
        ASSERT_EQ(fabric.sent.size(), 1u);
        EXPECT_EQ(fabric.sent[0].payload, std::vector<std::byte>(3, stable ? std::byte{2} : std::byte{1}));
        EXPECT_EQ(fabric.sent[0].header.kind, PacketKind::allgather);  // send() keeps the kind
    }
}

TEST(Arrivals, CountsNewPacketsAndFindsTheMissingOnes) {
    Arrivals arrivals(1024);  // Yu et al.: 32 integers for 1024 nodes
    EXPECT_EQ(arrivals.next_missing(0), 0u);
    for (std::size_t i = 0; i < 1024; ++i) {
        if (i != 31 && i != 32 && i != 1023) {
            EXPECT_TRUE(arrivals.record(i));
        }
    }
    EXPECT_FALSE(arrivals.record(5));
    EXPECT_EQ(arrivals.count(), 1021u);
    EXPECT_FALSE(arrivals.complete());
    EXPECT_TRUE(arrivals.has(30));
    EXPECT_FALSE(arrivals.has(31));
    EXPECT_EQ(arrivals.next_missing(0), 31u);
    EXPECT_EQ(arrivals.next_missing(32), 32u);
    EXPECT_EQ(arrivals.next_missing(33), 1023u);
    for (const std::size_t i : {31u, 32u, 1023u}) EXPECT_TRUE(arrivals.record(i));
    EXPECT_TRUE(arrivals.complete());
    EXPECT_EQ(arrivals.next_missing(0), 1024u);

    Arrivals gap(100);  // a search from inside a word into the next word's first bit
    for (std::size_t i = 0; i < 100; ++i) {
        if (i != 64) gap.record(i);
    }
    EXPECT_EQ(gap.next_missing(33), 64u);

    Arrivals odd(33), none(0);
    for (std::size_t i = 0; i < 32; ++i) odd.record(i);
    EXPECT_EQ(odd.next_missing(0), 32u);
    EXPECT_TRUE(none.complete());
    EXPECT_EQ(none.next_missing(0), 0u);
}

}  // namespace
}  // namespace nicsim::nic
