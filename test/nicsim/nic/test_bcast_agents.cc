// Broadcasts and allgathers run by a group of NIC agents with flow control, over an in-memory
// network that keeps each pair's packets in order (as MPI's PML does) but interleaves pairs at
// random, while hosts post their collectives at random moments, several outstanding at once.
// Whatever the order: every rank ends with exactly the bytes a reference computes on its own,
// every agent ends idle, and per pair the credits add up to the window again. Some groups mix
// windows as a job over several nodes does: none between ranks of one node (a ring of slots is
// the window there), credits between nodes. Now and then one rank cannot post a collective (a
// local failure: Agent::post_abort): it ends with that failure, every other rank with the right
// bytes or, not done yet when told, peer_failed; nothing hangs and later collectives run as before.
#include <gtest/gtest.h>

#include <cstdio>
#include <deque>
#include <numeric>
#include <map>
#include <random>
#include <vector>

#include "nic/agent.h"
#include "plan/allgather.h"
#include "plan/tree.h"

namespace nicsim::nic {
namespace {

// A byte of the reference: origin's (or the root's) byte `i` in collective `c`.
std::byte pattern(int c, Rank origin, std::uint64_t i) {
    return static_cast<std::byte>((c * 131 + origin * 31 + i * 7 + (i >> 8)) & 0xff);
}

class FifoNetwork {
public:
    using Queue = std::deque<std::vector<std::byte>>;
    std::map<std::pair<Rank, Rank>, Queue> links;  // (src, dst) -> packets in order
    bool empty() const {
        for (const auto& [pair, q] : links) {
            if (!q.empty()) return false;
        }
        return true;
    }
};

class FifoFabric final : public Fabric {
public:
    FifoFabric(FifoNetwork& net, Rank self, std::mt19937& rng) : net_(net), self_(self), rng_(rng) {}
    Status transmit(Rank dst, const PacketHeader& header,
                    std::span<const std::byte> payload) override {
        // Now and then the transport is out of room.
        if (std::uniform_int_distribution<int>(0, 7)(rng_) == 0) return Status::again;
        const auto head = header.encode();
        std::vector<std::byte> bytes(head.begin(), head.end());
        bytes.insert(bytes.end(), payload.begin(), payload.end());
        net_.links[{self_, dst}].push_back(std::move(bytes));
        return Status::ok;
    }

private:
    FifoNetwork& net_;
    Rank self_;
    std::mt19937& rng_;
};

// `size` agents over one network, each with unbounded channels and what `configure` adds.
struct Group {
    FifoNetwork net;
    std::deque<FifoFabric> fabrics;
    std::deque<Agent> agents;
    template <typename Configure>
    Group(Rank size, std::mt19937& rng, Configure configure) {
        for (Rank r = 0; r < size; ++r) fabrics.emplace_back(net, r, rng);
        for (Rank r = 0; r < size; ++r) {
            AgentConfig config;
            config.channels.unbounded = true;
            configure(r, config);
            agents.emplace_back(r, size, fabrics[r], config);
        }
    }
};

// One collective every rank posts: a broadcast or an allgather.
struct Collective {
    bool bcast;
    const plan::TreeShape* shape = nullptr;
    int k = 0;
    Rank root = 0;
    const plan::AllgatherAlgorithm* allgather = nullptr;
    std::uint64_t bytes = 0;  // message, or block
    std::uint32_t mtu = 1;
    Rank fails = -1;          // the rank that cannot post it, or none
};

std::vector<std::byte> expected(const Collective& c, int index, Rank size) {
    if (c.bcast) {
        std::vector<std::byte> out(c.bytes);
        for (std::uint64_t i = 0; i < c.bytes; ++i) out[i] = pattern(index, c.root, i);
        return out;
    }
    std::vector<std::byte> out(c.bytes * size);
    for (Rank o = 0; o < size; ++o) {
        for (std::uint64_t i = 0; i < c.bytes; ++i) out[o * c.bytes + i] = pattern(index, o, i);
    }
    return out;
}

// What rank r's buffer holds when it posts: the root's message, its own block, junk elsewhere.
std::vector<std::byte> initial(const Collective& c, int index, Rank r, Rank size) {
    std::vector<std::byte> out = expected(c, index, size);
    for (std::uint64_t i = 0; i < out.size(); ++i) {
        const bool mine = c.bcast ? r == c.root : i / c.bytes == static_cast<std::uint64_t>(r);
        if (!mine) out[i] = std::byte{0xee};
    }
    return out;
}

TEST(BcastAgents, EveryRankGetsEveryByteWithAnyCreditsAndInterleaving) {
    int failures = 0, told = 0;  // collectives a rank could not post, and ranks told of them
    const auto shapes = plan::tree_shapes();
    const plan::AllgatherAlgorithm* allgathers[] = {plan::find_allgather_algorithm("rd"),
                                                   plan::find_allgather_algorithm("ab")};
    for (unsigned seed = 1; seed <= 40; ++seed) {
        std::mt19937 rng(seed);
        auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
        const Rank size = pick(1, 11);
        const int credits = seed % 5 == 0 ? 0 : pick(1, 16);
        // Ranks r and q share a node when r % 2 == q % 2: no window between them.
        const bool mixed = seed % 3 == 0 && credits > 0;
        auto window_between = [&](Rank a, Rank b) { return mixed && a % 2 == b % 2 ? 0 : credits; };
        const int window = 3;  // collectives a rank may have outstanding

        std::vector<Collective> plan;
        for (int i = 0; i < 12; ++i) {
            Collective c;
            c.bcast = pick(0, 2) != 0;
            c.mtu = static_cast<std::uint32_t>(pick(1, 3) == 1 ? pick(1, 8) : pick(9, 300));
            c.bytes = static_cast<std::uint64_t>(pick(0, 3) == 0 ? pick(0, 2) : pick(3, 2000));
            if (c.bcast) {
                c.shape = &shapes[pick(0, static_cast<int>(shapes.size()) - 1)];
                c.k = pick(1, 4);
                c.root = pick(0, size - 1);
            } else {
                c.allgather = allgathers[pick(0, 1)];
                c.bytes /= static_cast<std::uint64_t>(size);
            }
            if (pick(0, 5) == 0) c.fails = pick(0, size - 1);
            plan.push_back(c);
        }

        Group group(size, rng, [&](Rank r, AgentConfig& config) {
            config.nic.credits = credits;
            for (Rank p = 0; mixed && p < size; ++p) config.peer_credits.push_back(window_between(r, p));
            // A locality order that is not rank order.
            for (Rank p = 0; p < size; ++p) config.order.push_back((p * 5 + 3) % size);
            if (std::gcd(5, size) != 1) config.order.clear();
        });
        FifoNetwork& net = group.net;
        std::deque<Agent>& agents = group.agents;

        struct Posted {
            int index;
            Seq seq;
            std::vector<std::byte> buffer;
        };
        std::vector<std::deque<Posted>> outstanding(size);
        std::vector<int> next(size, 0), done(size, 0);

        for (long step = 0;; ++step) {
            ASSERT_LT(step, 5'000'000) << "no progress, seed " << seed;
            bool all_done = true;
            for (Rank r = 0; r < size; ++r) all_done &= done[r] == static_cast<int>(plan.size());
            if (all_done && net.empty()) {
                bool flushed = true;  // credit updates may still wait for the fabric
                for (Rank q = 0; q < size; ++q) flushed &= agents[q].progress() == Status::ok;
                if (flushed && net.empty()) break;
                continue;
            }

            const int action = pick(0, 3);
            const Rank r = pick(0, size - 1);
            if (action == 0 && next[r] < static_cast<int>(plan.size()) &&
                outstanding[r].size() < window) {
                const int index = next[r]++;
                const Collective& c = plan[index];
                Posted p{index, 0, initial(c, index, r, size)};
                const Status s =
                    c.fails == r ? agents[r].post_abort(Status::no_memory, &p.seq)
                    : c.bcast    ? agents[r].post_bcast(*c.shape, c.k, c.root, c.bytes, c.mtu, p.buffer, &p.seq)
                                 : agents[r].post_allgather(*c.allgather, c.bytes, c.mtu, p.buffer, &p.seq);
                ASSERT_EQ(s, Status::ok) << "seed " << seed << " collective " << index;
                outstanding[r].push_back(std::move(p));
            } else if (action == 1) {
                // Deliver the head of a random non-empty link.
                std::vector<std::pair<Rank, Rank>> busy;
                for (const auto& [pair, q] : net.links) {
                    if (!q.empty()) busy.push_back(pair);
                }
                if (busy.empty()) continue;
                const auto link = busy[pick(0, static_cast<int>(busy.size()) - 1)];
                std::vector<std::byte> bytes = std::move(net.links[link].front());
                net.links[link].pop_front();
                ASSERT_EQ(agents[link.second].deliver(link.first, bytes), Status::ok)
                    << "seed " << seed;
            } else if (action == 2) {
                ASSERT_FALSE(failed(agents[r].progress()));
            } else if (!outstanding[r].empty()) {
                // Complete one outstanding collective, in any order.
                auto it = outstanding[r].begin() + pick(0, static_cast<int>(outstanding[r].size()) - 1);
                const Status s = agents[r].test(it->seq);
                if (s == Status::in_progress) continue;
                const Collective& c = plan[it->index];
                if (c.fails == r) {
                    ASSERT_EQ(s, Status::no_memory) << "seed " << seed;
                    ++failures;
                } else if (c.fails >= 0 && s == Status::peer_failed) {
                    ++told;
                } else {
                    ASSERT_EQ(s, Status::ok) << "seed " << seed;
                    ASSERT_EQ(it->buffer, expected(c, it->index, size))
                        << "seed " << seed << " rank " << r << " collective " << it->index;
                }
                agents[r].release(it->seq);
                outstanding[r].erase(it);
                ++done[r];
            }
        }
        for (Rank a = 0; a < size; ++a) {
            EXPECT_EQ(agents[a].active(), 0u);
            EXPECT_EQ(agents[a].early_packets(), 0u);
            for (Rank b = 0; b < size && credits > 0; ++b) {
                if (a == b) continue;
                EXPECT_EQ(agents[a].credits(b) + agents[b].owed_credits(a), window_between(a, b))
                    << "seed " << seed << " pair " << a << "->" << b;
            }
        }
    }
    EXPECT_GT(failures, 0);
    EXPECT_GT(told, 0);
    std::printf("# %d collectives a rank could not post; %d ranks not done with them were told\n",
                failures, told);
}

// A late host does not hold up its subtree: a broadcast's packets name their tree, so the agent
// of a rank whose host has not posted the broadcast forwards them on arrival, from a copy of its
// own, and places them once its host posts. Over a tree a driver laid (unnamed), the subtree
// waits for the host, as before.
TEST(BcastAgents, ARankForwardsBeforeItsHostPosts) {
    const plan::TreeShape* binomial = plan::find_tree_shape("binomial");
    for (const bool named : {true, false}) {
        const Rank size = 8;
        std::mt19937 rng(7);
        Group group(size, rng, [](Rank, AgentConfig& config) {
            config.nic.credits = 2;  // a window smaller than the message: forwards wait too
        });
        FifoNetwork& net = group.net;
        std::deque<Agent>& agents = group.agents;
        const plan::Tree tree = binomial->build(size, 0);  // rank order: 4 forwards to 5 and 6
        const Rank late = 4;
        ASSERT_FALSE(tree.children[late].empty());
        const Collective c{true, binomial, 0, 0, nullptr, 1000, 100};
        std::vector<std::vector<std::byte>> buffers(size);
        std::vector<Seq> seqs(size);
        auto post = [&](Rank r) {
            buffers[r] = initial(c, 0, r, size);
            const Status s = named ? agents[r].post_bcast(*c.shape, 0, c.root, c.bytes, c.mtu,
                                                          buffers[r], &seqs[r])
                                   : agents[r].post_bcast(tree, c.bytes, c.mtu, buffers[r], &seqs[r]);
            ASSERT_EQ(s, Status::ok);
        };
        // Everything moves, the late host excepted, until nothing more can.
        auto run = [&] {
            for (long step = 0; step < 1'000'000; ++step) {
                bool moved = false;
                for (auto& [link, q] : net.links) {
                    if (q.empty()) continue;
                    std::vector<std::byte> bytes = std::move(q.front());
                    q.pop_front();
                    ASSERT_EQ(agents[link.second].deliver(link.first, bytes), Status::ok);
                    moved = true;
                }
                for (Rank r = 0; r < size; ++r) moved |= agents[r].progress() == Status::in_progress;
                if (!moved) return;
            }
            FAIL() << "no end";
        };
        for (Rank r = 0; r < size; ++r) {
            if (r != late) post(r);
        }
        run();
        const std::vector<std::byte> want = expected(c, 0, size);
        for (Rank r = 0; r < size; ++r) {
            if (r == late) continue;
            bool below = false;  // in the late rank's subtree
            for (Rank a = tree.parent[r]; a >= 0 && !below; a = tree.parent[a]) below = a == late;
            if (named || !below) {
                EXPECT_EQ(agents[r].test(seqs[r]), Status::ok) << "rank " << r;
                EXPECT_EQ(buffers[r], want) << "rank " << r;
            } else {
                EXPECT_EQ(agents[r].test(seqs[r]), Status::in_progress) << "rank " << r;
            }
        }
        EXPECT_EQ(agents[late].stats().forwarded, named ? 10u : 0u);  // packets, each to its children
        post(late);
        run();
        for (Rank r = 0; r < size; ++r) {
            EXPECT_EQ(agents[r].test(seqs[r]), Status::ok) << "rank " << r << (named ? "" : " unnamed");
            EXPECT_EQ(buffers[r], want) << "rank " << r;
            agents[r].release(seqs[r]);
            EXPECT_EQ(agents[r].active(), 0u);
            EXPECT_EQ(agents[r].early_packets(), 0u);
        }
        EXPECT_EQ(agents[late].stats().forwarded, 10u);
    }
}

}  // namespace
}  // namespace nicsim::nic
