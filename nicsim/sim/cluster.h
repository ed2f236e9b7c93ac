// Simulator: the simulated machine, the sim fabric the engine's NIC agent runs on.
//
// Each node is a host and a NIC on a topology. The NIC is the engine's nic::Nic, unchanged; this
// file gives it a Fabric and a HostPort that charge time:
//
//   host ── ts per message, then per packet: PIO (host and I/O bus busy) or DMA (bus busy) ──▶ NIC
//   NIC  ── tns per packet sent, then until it is on the wire; tnr per packet received;
//           one thing at a time ──▶ links
//   link ── busy while a packet crosses it; a switch adds its latency to the packet's head
//   NIC  ── DMA across the I/O bus ──▶ host: tr once the message's last packet is in
//
// A node's NIC also runs the engine's collective agent (nic::Agent), as in a real job: its
// broadcasts (LFC's multicasts, Kesavan and Panda's trees), barriers and allgathers (Yu et al.)
// go through the same NIC, with LFC's credits (off when the network loses packets) and never
// wait for a host buffer. A broadcast root's host moves each packet into a send buffer, as it
// sends a message:
//
//   host ── ts once, then per packet PIO or DMA into a send buffer ──▶ agent ── multicast ──▶
//   agent ◀── tnr per packet, forwarded from its receive buffer; DMA to the host, tr after the last
//
// Barrier and allgather packets claim no send buffer (Yu et al. §4.3):
//
//   host ── ts, the request (and, hopping, its own block by DMA) ──▶ agent
//   agent ── combining: each packet by DMA from host memory; hopping: re-injected from NIC memory
//   agent ◀── tnr per packet; its payload by DMA to the host, small ones through the staging buffer
//   agent ── done: staging flushed, a receive event ──▶ host: tr (and a copy of staged bytes)
//
// Host-based collectives instead run a schedule of messages on the hosts, over the LFC NIC or,
// with p2p_flow=gm, over GM's protocol (sim/gm.h), which the node runs beside the LFC NIC.
//
// Every resource keeps the time it is busy until and is reserved first come, first served, so a
// packet costs one event (its arrival at the next NIC). The NIC works on its own timeline, which
// runs ahead of the event clock while the NIC is busy: work that arrives meanwhile queues behind.
#pragma once

#include <cstdint>
#include <memory>
#include <set>
#include <tuple>
#include <string>
#include <vector>

#include "nic/agent.h"
#include "nic/nic.h"
#include "plan/allgather.h"
#include "plan/barrier.h"
#include "plan/tree.h"
#include "sim/gm.h"
#include "sim/model.h"
#include "sim/rng.h"
#include "sim/simulator.h"
#include "sim/topology.h"
#include "sim/trace.h"

namespace nicsim::sim {

class Cluster {
public:
    // A message or broadcast a host received in full: its origin, its number and when the host
    // had it (tr included).
    struct Receipt {
        Rank origin;
        Seq seq;
        Time done;
    };

    // `trace` may be null.
    Cluster(const Model& model, Topology topology, nic::Forwarding forwarding, Simulator& sim,
            Trace* trace);
    ~Cluster();
    Cluster(const Cluster&) = delete;
    Cluster& operator=(const Cluster&) = delete;

    Rank size() const { return static_cast<Rank>(nodes_.size()); }
    const Topology& topology() const { return topology_; }
    const nic::Nic& nic(Rank node) const;

    // The next broadcast of every node, in call order (its number, from 0, is its Receipt's
    // seq): `bytes` from tree.root along `tree` (labelled with nodes; it outlives the run),
    // forwarded by the NICs' agents. The root's host starts sending it at `at`.
    void broadcast(const plan::Tree& tree, std::uint64_t bytes, Time at);

    // Host forwarding instead: messages from `origin` reach `node`'s host, which sends each
    // whole on to `children`...
    void set_host_route(Rank node, Rank origin, std::span<const Rank> children);
    // ...as `node`'s host sends message `seq` of `bytes` bytes to `dst` from time `at`. Each
    // host's messages and broadcasts leave in the order given.
    void send(Rank node, Rank dst, Seq seq, std::uint64_t bytes, Time at);

    const std::vector<Receipt>& receipts(Rank node) const;
    // When `node`'s host handed the last packet of its last message to its NIC.
    Time last_post(Rank node) const;
    // `node`'s host is busy elsewhere until `until` (a late process): it takes its messages and
    // broadcasts, and sends, only from then on. Its NIC forwards meanwhile.
    void hold_host(Rank node, Time until);
    // The time `node`'s host spent on messages and broadcasts: ts per message sent, its PIO, tr
    // per message received.
    Time host_busy(Rank node) const;

    // Empty while the run is sound; otherwise the first thing that went wrong (a NIC refused a
    // packet, a host got packets out of order).
    const std::string& error() const { return error_; }
    // Whether that was a collective giving up: it heard nothing from its peers in
    // kMaxSilentTimeouts timeouts, as where the network loses most packets or a host posts very
    // late. An outcome of the input, not a broken invariant.
    bool gave_up() const { return gave_up_; }
    // After the run: every NIC idle, every host done, and for every pair of NICs the sender's
    // credits plus the receiver's unreturned ones equal the window. False with the first
    // violation in *why.
    bool check_quiescent(std::string* why) const;

    // Totals over all NICs; peak_buffers is the largest of any one NIC.
    nic::NicStats totals() const;
    // GM's protocol (p2p_flow=gm): totals over all nodes.
    GmStats gm_totals() const;

    // What a node's collective agent was asked, and what it handed its fabric, in order: the
    // record a test replays through the real fabric's code path (test/nicsim/test_seam.cc).
    struct AgentEvent {
        enum Kind : std::uint8_t {
            post,      // the host posted the node's collective (or the next broadcast)
            supply,    // the host moved packet `header` of its broadcast into the NIC
            deliver,   // a packet from `peer` arrived (`header`)
            progress,  // the NIC, free again, offered its queue to the fabric
            timeout,   // the collective deemed its packets overdue
            transmit,  // the NIC handed `header` to the fabric for `peer`, which said `answer`
        };
        Kind kind;
        Rank peer = 0;
        PacketHeader header;
        Status answer = Status::ok;
    };

    // Collectives: one per node and run.
    struct CollectiveOptions {
        bool payloads = false;       // carry real bytes (to check them) rather than sizes only
        double loss = 0;             // each allgather packet or NACK is lost with this
                                     // probability, drawn with the model's seed
        nic::ChannelConfig channels; // where a NIC keeps packets that come before its host posts
        std::vector<std::vector<AgentEvent>>* log = nullptr;  // by node, when not null
    };
    void enable_collectives(const CollectiveOptions& options);
    // `node`'s host posts a NIC-based collective at `at`. An allgather's blocks are
    // `block_bytes` each; with payloads, the node's own block holds a pattern of its rank.
    void post_barrier(Rank node, const plan::BarrierAlgorithm& algorithm, Time at);
    void post_allgather(Rank node, const plan::AllgatherAlgorithm& algorithm,
                        std::uint64_t block_bytes, Time at);
    // A host-based collective: at each step the host sends each message (to `dst`, of `bytes`),
    // then waits until it has received one message from each of `from`.
    struct HostStep {
        struct Message {
            Rank dst;
            std::uint64_t bytes;
        };
        std::vector<Message> sends;
        std::vector<Rank> from;
    };
    void run_on_host(Rank node, std::vector<HostStep> steps, Time at);

    struct CollectiveRecord {
        Time posted = 0;
        bool complete = false;
        Time done = 0;       // when the host knew it complete
        Time host_busy = 0;  // host CPU time the collective took (Yu et al. §6.3)
    };
    const CollectiveRecord& collective(Rank node) const;
    // With payloads: the node's allgather result buffer, and what byte `offset` of `origin`'s
    // block holds.
    std::span<const std::byte> result(Rank node) const;
    static std::byte block_byte(Rank origin, std::uint64_t offset);
    // Totals over all agents.
    nic::CollectiveStats collective_totals() const;
    std::uint64_t collective_packets() const { return collective_packets_; }
    std::uint64_t lost_packets() const { return lost_packets_; }
    // Multicast packets that started at least one deadlock recovery (Bhoedjang et al. Table 1
    // counts recoveries as a fraction of the multicasts).
    std::uint64_t recovery_starters() const { return recovery_starters_.size(); }

private:
    class Node;
    struct Flight {
        Rank src;
        Rank dst;
        PacketHeader header;
        GmTag gm;
    };

    // The packet is ready to leave `src`'s NIC at `leave`: reserves the links on its way,
    // schedules its arrival at `dst` (*arrives: when its tail is in) and returns when its tail
    // has left the NIC.
    Time launch(Rank src, Rank dst, std::span<const LinkId> path, const PacketHeader& header,
                std::span<const std::byte> payload, Time leave, GmTag gm, Time* arrives);
    // How long a packet with `payload_bytes` takes to cross a link. Nearly every packet of a run
    // is as long as the one before (a full MTU), so the last answer is kept rather than
    // converting and dividing again.
    Time wire_time(std::uint32_t payload_bytes);
    // Whether a collective packet arriving now is lost.
    bool lose(const PacketHeader& header);
    void fail(std::string what);

    Model model_;
    Topology topology_;
    Simulator& sim_;
    Trace* trace_;
    const Time switch_hop_;  // the model's switch latency
    std::uint32_t wire_payload_ = ~std::uint32_t{0};  // wire_time()'s last question...
    Time wire_time_ = 0;                              // ...and its answer
    std::vector<std::unique_ptr<Node>> nodes_;
    std::vector<Time> link_free_;
    std::vector<Flight> flights_;
    std::vector<std::vector<std::byte>> flight_payloads_;  // by flight, with payloads only
    std::vector<std::uint32_t> free_flights_;
    std::string error_;
    bool gave_up_ = false;
    nic::NicConfig nic_config_;  // every node's NIC, as the model sets it up
    CollectiveOptions collectives_;
    Rng loss_rng_{1};
    std::uint64_t collective_packets_ = 0;  // sent by agents
    std::uint64_t lost_packets_ = 0;
    std::set<std::tuple<Rank, Seq, std::uint32_t>> recovery_starters_;  // origin, seq, step
    struct Broadcast {
        const plan::Tree* tree;
        std::uint64_t bytes;
    };
    std::vector<Broadcast> broadcasts_;  // by number
};

}  // namespace nicsim::sim
