// The seam between the two fabrics: the agent decides the same over the modeled network and over
// the real fabric's code path (the C API's TransportFabric over an in-memory transport).
//
// Barriers and allgathers replay through the C API as a real job's group runs them. Broadcasts
// replay through an agent on a TransportFabric with the model's NIC (its send buffers, which
// the root's host fills packet by packet, and its forwarding discipline): the configuration a
// modeled LFC node has, on the real fabric's code path.
//
// A modeled run records, per node, what its agent was asked (the host's post, each packet's
// arrival, each time the NIC offered its queue to the fabric again) and every packet it handed
// the fabric, with the fabric's answer. A group of the C API, on the same rank, is then asked the
// same things in the same order, its transport answering as the modeled fabric did, and must hand
// over the same packets (destination, kind, collective, step, origin, flags, credits carried back,
// payload bytes), credit updates included. (A broadcast's flags are compared without the name of
// its tree, which a real job's packets carry and the modeled network's, over trees it lays
// itself, do not: core/packet.h.)
#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <vector>

#include "nic/agent.h"
#include "nicsim/nicsim.h"
#include "plan/allgather.h"
#include "plan/barrier.h"
#include "sim/bcast.h"
#include "sim/cluster.h"
#include "sim/model.h"
#include "sim/simulator.h"
#include "real/transport_fabric.h"

namespace nicsim {
namespace {

using sim::Cluster;
using Event = Cluster::AgentEvent;

struct Collective {
    const plan::BarrierAlgorithm* barrier = nullptr;
    const plan::AllgatherAlgorithm* allgather = nullptr;
    std::uint64_t block_bytes = 0;
};

// The model: Yu et al.'s cluster on a crossbar, with NACK timers that never fire (the real path
// has none) and channels that keep every early packet, as a real job's do.
sim::Model seam_model(Rank nodes) {
    sim::Model model = sim::preset_model(*sim::find_preset("gm-lanai9"));
    model.nodes = nodes;
    model.topology = "crossbar";
    model.nack_timeout = 1e9;
    return model;
}

std::vector<std::vector<Event>> modeled_run(const sim::Model& model, const Collective& c) {
    std::string why;
    std::optional<sim::Topology> topology = sim::make_topology(model, &why);
    EXPECT_TRUE(topology) << why;
    sim::Simulator sim;
    Cluster cluster(model, std::move(*topology), nic::Forwarding::fpfs, sim, nullptr);
    std::vector<std::vector<Event>> log;
    Cluster::CollectiveOptions options;
    options.channels.unbounded = true;
    options.log = &log;
    cluster.enable_collectives(options);
    for (Rank r = 0; r < model.nodes; ++r) {
        if (c.barrier != nullptr) {
            cluster.post_barrier(r, *c.barrier, 0);
        } else {
            cluster.post_allgather(r, *c.allgather, c.block_bytes, 0);
        }
    }
    sim.run();
    EXPECT_EQ(cluster.error(), "");
    for (Rank r = 0; r < model.nodes; ++r) EXPECT_TRUE(cluster.collective(r).complete) << r;
    return log;
}

PacketHeader unnamed(PacketHeader h) {
    h.flags &= static_cast<std::uint16_t>(~(kTreeNamed | kTreeShapeBits | kTreeKBits));
    return h;
}

std::string describe(Rank peer, const PacketHeader& h) {
    const unsigned flags = unnamed(h).flags;
    return "to/from " + std::to_string(peer) + " kind " + std::to_string(static_cast<int>(h.kind)) +
           " seq " + std::to_string(h.seq) + " step " + std::to_string(h.step) + " origin " +
           std::to_string(h.origin) + " flags " + std::to_string(flags) + " credits " +
           std::to_string(h.credits) + " bytes " + std::to_string(h.payload_bytes);
}

// One rank's record, replayed: the transport checks each packet against the next transmit of
// the record and answers as the modeled fabric did.
struct Replay {
    const std::vector<Event>* log;
    std::size_t next = 0;
    std::string mismatch;  // the first difference

    static nicsim_status_t send(void* context, int dst, const void* header, const void*,
                                size_t payload_bytes) {
        auto* self = static_cast<Replay*>(context);
        const auto h = PacketHeader::decode_header(
            {static_cast<const std::byte*>(header), PacketHeader::kBytes});
        if (!h) {
            self->fail("the real path sent a header that does not decode");
            return NICSIM_OK;
        }
        const std::string sent = describe(dst, *h);
        if (self->next == self->log->size() || (*self->log)[self->next].kind != Event::transmit) {
            self->fail("the real path sent " + sent + " where the model sent nothing");
            return NICSIM_OK;
        }
        const Event& e = (*self->log)[self->next++];
        if (e.peer != dst || e.header != unnamed(*h) || payload_bytes != h->payload_bytes) {
            self->fail("the real path sent " + sent + " where the model sent " +
                       describe(e.peer, e.header));
        }
        return static_cast<nicsim_status_t>(e.answer);
    }
    void fail(std::string what) {
        if (mismatch.empty()) mismatch = "event " + std::to_string(next) + ": " + std::move(what);
    }
};

// Replays rank r's record through a group of the C API; empty when it sent what the model did.
std::string replay(Rank r, const sim::Model& model, const Collective& c,
                   const std::vector<Event>& log) {
    Replay replay{&log, 0, {}};
    const nicsim_transport_t transport{&replay, &Replay::send};
    nicsim_group_config_t config{};
    config.credits = model.credits;
    nicsim_group_t* group = nullptr;
    if (nicsim_group_create(r, model.nodes, &transport, &config, &group) != NICSIM_OK) {
        return "no group";
    }
    std::vector<std::byte> result(c.block_bytes * static_cast<std::uint64_t>(model.nodes));
    nicsim_request_t* request = nullptr;
    std::vector<std::byte> payload;
    while (replay.next < log.size() && replay.mismatch.empty()) {
        const Event& e = log[replay.next++];
        nicsim_status_t s = NICSIM_OK;
        switch (e.kind) {
        case Event::post:
            s = c.barrier != nullptr
                    ? nicsim_barrier_post(
                          group, nicsim_algorithm_find(NICSIM_COLL_BARRIER, c.barrier->name.data()),
                          &request)
                    : nicsim_allgather_post(
                          group,
                          nicsim_algorithm_find(NICSIM_COLL_ALLGATHER, c.allgather->name.data()),
                          result.data(), c.block_bytes, static_cast<std::size_t>(model.mtu),
                          nullptr, &request);
            break;
        case Event::deliver: {
            const auto header = e.header.encode();
            payload.assign(e.header.payload_bytes, std::byte{0});
            s = nicsim_group_deliver(group, e.peer, header.data(), payload.data(), payload.size());
            break;
        }
        case Event::progress:
            s = nicsim_group_progress(group);
            if (s == NICSIM_IN_PROGRESS) s = NICSIM_OK;
            break;
        case Event::supply:
            replay.fail("the model's host fed a broadcast; no barrier or allgather takes one");
            break;
        case Event::timeout:
            replay.fail("the model's collective timed out; a real job's has no timer");
            break;
        case Event::transmit:
            replay.fail("the model sent " + describe(e.peer, e.header) + ", the real path did not");
            break;
        }
        if (s != NICSIM_OK) replay.fail("the real path answered " + std::to_string(s));
    }
    if (replay.mismatch.empty() && nicsim_request_test(request) != NICSIM_OK) {
        replay.fail("the real path's collective is not complete where the model's is");
    }
    if (request != nullptr) nicsim_request_free(request);
    nicsim_group_free(group);
    return replay.mismatch;
}

// What the records held beyond plain sends: the replays covered these too.
struct Seen {
    std::size_t refused = 0;         // packets the modeled fabric answered `again`
    std::size_t credit_updates = 0;  // explicit credit packets
    std::size_t piggybacked = 0;     // data packets that carried credits back

    void add(const std::vector<Event>& log) {
        for (const Event& e : log) {
            if (e.kind != Event::transmit) continue;
            refused += e.answer == Status::again;
            credit_updates += e.header.kind == PacketKind::credit;
            piggybacked += e.header.kind != PacketKind::credit && e.header.credits != 0;
        }
    }
};

void expect_same_decisions(Rank nodes, const Collective& c, const std::string& name,
                           Seen* seen) {
    const sim::Model model = seam_model(nodes);
    ASSERT_EQ(model.low_water * 2, model.credits) << "a real job's NIC updates at half a window";
    const std::vector<std::vector<Event>> log = modeled_run(model, c);
    ASSERT_EQ(log.size(), static_cast<std::size_t>(nodes));
    for (Rank r = 0; r < nodes; ++r) {
        EXPECT_EQ(replay(r, model, c, log[r]), "") << name << " on " << nodes << " ranks, rank " << r;
        seen->add(log[r]);
    }
}

TEST(Seam, BarriersDecideTheSameOnBothFabrics) {
    Seen seen;
    for (Rank n = 2; n <= 16; ++n) {
        for (const plan::BarrierAlgorithm& a : plan::barrier_algorithms()) {
            expect_same_decisions(n, Collective{&a, nullptr, 0}, std::string(a.name), &seen);
        }
    }
    EXPECT_GT(seen.refused, 0u);
}

TEST(Seam, AllgathersDecideTheSameOnBothFabrics) {
    Seen seen;
    const std::uint64_t mtu = static_cast<std::uint64_t>(seam_model(2).mtu);
    for (Rank n = 2; n <= 16; ++n) {
        for (const char* name : {"rd", "ab", "flat"}) {
            const plan::AllgatherAlgorithm* a = plan::find_allgather_algorithm(name);
            ASSERT_NE(a, nullptr);
            for (const std::uint64_t block : {std::uint64_t{4}, mtu, 3 * mtu + 5}) {
                expect_same_decisions(n, Collective{nullptr, a, block},
                                      std::string(name) + " of " + std::to_string(block) + " B",
                                      &seen);
            }
        }
    }
    EXPECT_GT(seen.refused, 0u);
    EXPECT_GT(seen.credit_updates, 0u);
    EXPECT_GT(seen.piggybacked, 0u);
    std::printf("# %zu packets refused by the fabric, %zu credit updates, %zu piggybacked\n",
                seen.refused, seen.credit_updates, seen.piggybacked);
}

// Broadcasts: `messages` of `bytes` from `root` over a tree of `shape` (k where it takes one),
// on LFC's cluster with `credits` per window.
struct Broadcast {
    const plan::TreeShape* shape;
    int k;
    Rank root;
    std::uint64_t bytes;
    int messages;
    int credits;
    nic::Forwarding forwarding;
};

sim::Model bcast_model(Rank nodes, const Broadcast& b) {
    sim::Model model = sim::preset_model(*sim::find_preset("lfc-myrinet"));
    model.nodes = nodes;
    model.topology = "crossbar";
    model.credits = b.credits;
    model.low_water = b.credits / 2;
    return model;
}

std::vector<std::vector<Event>> modeled_bcast(const sim::Model& model, const Broadcast& b) {
    std::string why;
    std::optional<sim::Topology> topology = sim::make_topology(model, &why);
    EXPECT_TRUE(topology) << why;
    // Laid as sim/bcast.cc lays a modeled broadcast's tree.
    const plan::Tree tree =
        plan::lay_along(b.shape->build(model.nodes, b.k), sim::tree_order(*topology, b.root));
    sim::Simulator sim;
    Cluster cluster(model, std::move(*topology), b.forwarding, sim, nullptr);
    std::vector<std::vector<Event>> log;
    Cluster::CollectiveOptions options;
    options.log = &log;
    cluster.enable_collectives(options);
    for (int m = 0; m < b.messages; ++m) cluster.broadcast(tree, b.bytes, 0);
    sim.run();
    EXPECT_EQ(cluster.error(), "");
    for (Rank r = 0; r < model.nodes; ++r) {
        if (r != b.root) {
            EXPECT_EQ(cluster.receipts(r).size(), static_cast<std::size_t>(b.messages)) << r;
        }
    }
    return log;
}

// Rank r's record, replayed by an agent on the real fabric's code path: posts through the shape,
// as a real job's agent lays its trees.
std::string replay_bcast(Rank r, const sim::Model& model, const Broadcast& b,
                         const std::vector<Event>& log) {
    Replay replay{&log, 0, {}};
    const nicsim_transport_t transport{&replay, &Replay::send};
    real::TransportFabric fabric(transport);
    nic::AgentConfig config;
    config.nic = nic::NicConfig(model.credits, model.low_water, model.send_buffers, b.forwarding);
    config.host_feeds_root = true;
    nic::Agent agent(r, model.nodes, fabric, config);
    std::vector<std::vector<std::byte>> messages;
    std::vector<Seq> seqs;
    std::vector<std::byte> payload;
    while (replay.next < log.size() && replay.mismatch.empty()) {
        const Event& e = log[replay.next++];
        Status s = Status::ok;
        switch (e.kind) {
        case Event::post: {
            messages.emplace_back(b.bytes, std::byte{1});
            Seq seq;
            s = agent.post_bcast(*b.shape, b.k, b.root, b.bytes,
                                 static_cast<std::uint32_t>(model.mtu), messages.back(), &seq);
            seqs.push_back(seq);
            break;
        }
        case Event::supply:
            s = agent.supply(e.header.seq);
            break;
        case Event::deliver:
            payload.assign(e.header.payload_bytes, std::byte{0});
            s = agent.deliver(e.peer, e.header, payload);
            break;
        case Event::progress:
            s = agent.progress();
            if (s == Status::in_progress) s = Status::ok;
            break;
        case Event::timeout:
            replay.fail("a broadcast timed out");
            break;
        case Event::transmit:
            replay.fail("the model sent " + describe(e.peer, e.header) + ", the real path did not");
            break;
        }
        if (s != Status::ok) replay.fail("the real path answered " + std::string(to_string(s)));
    }
    for (const Seq seq : seqs) {
        if (replay.mismatch.empty() && agent.test(seq) != Status::ok) {
            replay.fail("broadcast " + std::to_string(seq) + " is not complete where the model's is");
        }
    }
    return replay.mismatch;
}

TEST(Seam, BroadcastsDecideTheSameOnBothFabrics) {
    Seen seen;
    const std::uint64_t mtu = static_cast<std::uint64_t>(bcast_model(2, {}).mtu);
    std::size_t runs = 0;
    for (Rank n = 2; n <= 16; n += (n < 6 ? 1 : 5)) {
        for (const plan::TreeShape& shape : plan::tree_shapes()) {
            for (const std::uint64_t bytes : {std::uint64_t{0}, 3 * mtu - 1, 20 * mtu}) {
                for (const int credits : {2, 8}) {
                    for (const nic::Forwarding f : {nic::Forwarding::fpfs, nic::Forwarding::fcfs}) {
                        const auto root = static_cast<Rank>(runs % static_cast<std::size_t>(n));
                        const Broadcast b{&shape, shape.takes_k ? 2 : 0, root,
                                          bytes, bytes == 0 ? 3 : 2, credits, f};
                        ++runs;
                        const sim::Model model = bcast_model(n, b);
                        const std::vector<std::vector<Event>> log = modeled_bcast(model, b);
                        ASSERT_EQ(log.size(), static_cast<std::size_t>(n));
                        for (Rank r = 0; r < n; ++r) {
                            EXPECT_EQ(replay_bcast(r, model, b, log[r]), "")
                                << shape.name << " from " << b.root << " on " << n << " ranks, "
                                << bytes << " B, " << credits << " credits, "
                                << (f == nic::Forwarding::fpfs ? "fpfs" : "fcfs") << ", rank " << r;
                            seen.add(log[r]);
                        }
                    }
                }
            }
        }
    }
    EXPECT_GT(seen.refused, 0u);
    EXPECT_GT(seen.credit_updates, 0u);
    std::printf("# %zu broadcast runs: %zu packets refused by the fabric, %zu credit updates, "
                "%zu piggybacked\n",
                runs, seen.refused, seen.credit_updates, seen.piggybacked);
}

}  // namespace
}  // namespace nicsim
