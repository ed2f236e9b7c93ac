// LFC's NIC: its send path, flow control and multicast forwarding (Bhoedjang et al. §3), with
// Kesavan and Panda's two forwarding disciplines (Kesavan and Panda §3). Every packet of both
// fabrics goes through it: the packets of the collective agent that runs on it (agent.h), in the
// model and in real jobs, and the host's own messages of the modeled network's host-based
// collectives.
//
//   host ── post_send ──────▶ send buffer ──┐
//   agent ─ multicast (root) ▶ send buffer ──┤
//   agent ─ send ───────────────────────────┼─▶ a descriptor per peer ─┬─▶ transmit queue ─▶ Fabric
//   agent ─ forward ─▶ receive buffer ──────┘                          │        ▲
//                           ▲                                          └▶ blocked-sends[dst]
//   Fabric ─ on_packet ─────┴─▶ agent (a collective's packet: at once)    (no credit for dst)
//                           └─▶ host (a message: into a buffer it posted)
//
// The agent decides where a packet goes (its broadcast trees, its schedules); the NIC moves it.
// Flow control is a sliding window between every pair of NICs: this NIC keeps `credits` receive
// buffers for each sender, and a sender may transmit to it only while it holds a credit for it.
// A receive buffer is released once its packet went to every child it is forwarded to and to
// the host; released buffers go back to their sender as credits, piggybacked on the next packet
// to that sender or, when the sender is down to `low_water` credits, in an explicit credit
// packet. A destination's blocked-sends queue is served before any new packet to it, so packets
// to one destination leave in the order they were queued. A host message the host has no buffer
// for stays in the NIC, holding its receive buffer, so its sender eventually stalls.
//
// The NIC never reads a clock: the fabric and the host charge time for what it asks of them. The
// host (or the agent) may send from inside deliver(); otherwise neither the host nor the fabric
// calls back into the NIC from inside a call it makes to them (send_space, transmit): they act on
// it later, from their own events or progress loop.
#pragma once

#include <cstdint>
#include <span>
#include <unordered_map>
#include <vector>

#include "core/packet.h"
#include "core/rank_map.h"
#include "core/ring.h"
#include "core/small_vector.h"
#include "nic/deadlock_recovery.h"
#include "nic/fabric.h"
#include "nic/host_port.h"

namespace nicsim::nic {

enum class Forwarding {
    fpfs,  // first packet, first served: each packet goes to every child as soon as it arrives
    fcfs,  // first child, first served: the whole message to the first child, then the next
};

struct NicConfig {
    NicConfig() = default;
    NicConfig(int credits, int low_water, int send_buffers,
              Forwarding forwarding = Forwarding::fpfs, bool deadlock_recovery = false,
              double recovery_timeout_us = 0)
        : credits(credits),
          low_water(low_water),
          send_buffers(send_buffers),
          forwarding(forwarding),
          deadlock_recovery(deadlock_recovery),
          recovery_timeout_us(recovery_timeout_us) {}

    int credits = 8;       // receive buffers kept for each sender, so each sender's window
    // A sender left with this many credits is sent an explicit update; below 0, half its window.
    int low_water = 4;
    // Buffers the host fills with packets to send (its messages, a broadcast root's packets);
    // 0: no limit, the packets stay in the host's memory until they have left.
    int send_buffers = 16;
    Forwarding forwarding = Forwarding::fpfs;
    // Deadlock channels and recovery (Bhoedjang et al. §4, nic/deadlock_recovery.h); FPFS only.
    // Off: the basic protocol, deadlock-free only on trees such as binomial ones.
    bool deadlock_recovery = false;
    // The host takes every packet as it arrives, with no receive buffers to post (a real job's
    // agent, which places each packet in its collective's buffer). Without it, only a host
    // message waits for one: the packets of the agent's collectives never do.
    bool host_takes_all = false;
    // Payloads are not copied: a sent one stays where it is until its packet has left, and a
    // received one is either done with when on_packet() returns or copied then (a real job's
    // agent sends from its collectives' buffers, which outlive their packets). A forwarded
    // packet then goes on from where the host placed it, which is its receive buffer: its
    // sender's credit returns at once. (LFC's NIC forwards from its own receive buffers, whose
    // credits wait for the forwarding; with windows that cross between trees of concurrent
    // broadcasts, that can deadlock without LFC's recovery, Bhoedjang et al. §4.)
    bool stable_payloads = false;
    // 0: a blocked-sends queue signals deadlock at once (Bhoedjang et al. §4.1). > 0: the
    // timeout-based refinement Bhoedjang et al. §5.2 proposes: only a queue that stayed blocked, no
    // packet leaving it on a credit, across two ticks this far apart (Fabric::tick_after) is
    // suspected.
    double recovery_timeout_us = 0;

    // A real job's NIC: no flow control until a window is set, credit updates at half a window,
    // no limit on send buffers (payloads stay in the host's), every packet taken as it arrives.
    static NicConfig real_job() {
        NicConfig c(0, -1, 0);
        c.host_takes_all = true;
        return c;
    }
};

struct NicStats {
    std::uint64_t data_sent = 0;        // data packets handed to the fabric
    std::uint64_t data_received = 0;
    std::uint64_t credit_packets = 0;   // explicit credit updates sent
    std::uint64_t piggybacked = 0;      // data packets that carried credits back
    std::uint64_t blocked = 0;          // descriptors that had to wait for a credit
    std::uint64_t delivered = 0;        // packets handed to the host
    std::size_t peak_buffers = 0;       // most packets held at once (send, receive, FCFS store)
    std::uint64_t recoveries = 0;       // deadlock recoveries this NIC started
    std::uint64_t recovery_packets = 0; // data packets it sent in a deadlock channel
    std::uint64_t recovery_acks = 0;    // recovery acknowledgements it sent
};

// A blocked-sends queue that is not empty: its destination and length.
struct BlockedQueue {
    Rank dst;
    std::size_t packets;
};

class Nic {
public:
    // Where a broadcast's packets go from this NIC: its children, as this NIC's peers, looked up
    // once (route()) and kept by the broadcast for every packet.
    using Route = SmallVector<std::uint32_t, 4>;
    Route route(std::span<const Rank> children);
    // `peer_credits`, when not empty, holds each peer's window by rank instead of
    // config.credits. A window of 0 turns flow control off with that peer: its transport is its
    // own window (a ring of slots).
    Nic(Rank rank, const NicConfig& config, Fabric& fabric, HostPort& host,
        std::vector<int> peer_credits = {});
    Nic(const Nic&) = delete;
    Nic& operator=(const Nic&) = delete;

    // The collective agent running on this NIC takes its collectives' packets (every kind but a
    // host message's) from now on, or, with null, the host again.
    void attach(HostPort* agent) { agent_ = agent; }

    // The host queues one packet of a message to `dst`. `again` when no send buffer is free
    // (HostPort::send_space() follows); the sticky error after a transport error.
    Status post_send(Rank dst, PacketHeader header, std::span<const std::byte> payload);
    // A packet of a collective's protocol (a barrier token, an allgather block, a NACK), which
    // keeps its kind and goes to `dst` only. It is sent from the collective's buffer and claims
    // no send buffer (Yu et al. §4.3). The NIC writes the credits it returns to dst with it
    // into header.credits: the header is the caller's, not copied, since a copy of a header
    // just written field by field reads it back wider than it was stored, which stalls
    // store-to-load forwarding (docs/measurements.md).
    Status send(Rank dst, PacketHeader& header, std::span<const std::byte> payload = {});
    // A packet of a broadcast this rank is the root of, to `children` in this order under the
    // forwarding discipline (FPFS: to each child as it comes; FCFS: the whole message to one
    // child, then the next). It holds a send buffer until it has left for every child, as the
    // host filled one with it (`again` when none is free; HostPort::send_space() follows), or,
    // with send buffers unlimited, is sent from `payload`. Writes header.credits, as send().
    Status multicast(const Route& children, PacketHeader& header,
                     std::span<const std::byte> payload);
    // Forwards a packet of a broadcast to `children` (Bhoedjang et al. §3), `payload` being
    // where the host placed it. From inside HostPort::deliver() of that very packet, it goes
    // from its receive buffer, which, and with it its sender's credit, stays taken until the
    // packet has left for every child; in a deadlock channel it goes on in that channel
    // (Bhoedjang et al. §4.2). Otherwise (a packet the host kept until its collective was
    // posted, or, with stable payloads, placed in its collective's buffer) it is sent anew, as
    // by send().
    Status forward(const Route& children, const PacketHeader& header,
                   std::span<const std::byte> payload);

    // An abort (kind abort, no payload) to `dst`: this rank gave up collective header.seq, and
    // the peer must hear it whatever state the window or the transport is in. It travels outside
    // the flow-control window, past a transport error: sent at once, or offered again by
    // progress() while the fabric answers `again`; dropped when the fabric fails on it (that
    // peer cannot be told).
    void tell(Rank dst, const PacketHeader& header);

    // Send buffers free for the host to fill; wait_for_send_space() asks for a
    // HostPort::send_space() call when one frees up.
    int free_send_buffers() const { return send_buffers_free_; }
    void wait_for_send_space() { host_waits_for_space_ = true; }

    // The host posts `n` more receive buffers.
    void post_host_buffers(int n);

    // A packet from `src` arrived from the network. `protocol` when it breaks the protocol (a
    // sender beyond its window, an unknown kind).
    Status on_packet(Rank src, const PacketHeader& header, std::span<const std::byte> payload);

    // The tick asked for with Fabric::tick_after(): blocked queues that made no progress since
    // the last one are suspected of deadlock.
    Status on_tick();

    // Offers the aborts still to go (tell()), then the transmit queue, to the fabric again
    // (after `again`): ok when empty, in_progress while packets wait, or the sticky transport
    // error.
    Status progress();

    const NicStats& stats() const { return stats_; }
    // Packets waiting for the fabric or for a credit.
    std::size_t queued() const { return transmit_.size() + waiting_; }
    // Whether a collective's packet to `dst` with the kind, seq, step and origin of `header`
    // waits here still, for the fabric or for a credit: not yet sent. (A scan; for NACKs.)
    bool holds(Rank dst, const PacketHeader& header) const;
    // Aborts (tell()) the fabric has not taken yet.
    std::size_t untold() const { return telling_.size(); }
    // The sticky transport error, or ok.
    Status error() const { return error_; }
    // The group is broken (`why`): nothing queued or blocked leaves any more (its payloads may
    // be gone), every later send fails with `why`, and only aborts (tell()) still go.
    void shut(Status why);
    // Credits this NIC holds for sending to `peer`, and the receive buffers of `peer`'s it has
    // released but not yet returned: per pair, the sender's credits plus the receiver's
    // unreturned ones plus what is in flight always equal the window.
    int send_credits(Rank peer) const;
    int unreturned_credits(Rank peer) const;
    // The flow-control window with `peer` (0: none).
    int window(Rank peer) const { return window_of(peer); }
    // A host's message rather than a packet of the agent's collectives.
    static bool is_message(PacketKind kind) { return kind == PacketKind::unicast; }
    // Nothing held, queued or blocked: every buffer is free.
    bool idle() const;
    bool waiting_for_host_buffers() const { return !to_host_.empty(); }
    // The blocked-sends queues that hold packets, by destination rank (a deadlock report).
    std::vector<BlockedQueue> blocked_queues() const;
    // The ranks this NIC has exchanged packets with.
    std::vector<Rank> peers() const;

private:
    using BufferId = std::uint32_t;
    using PeerId = std::uint32_t;  // a peer's index in peers_, kept instead of its rank
    static constexpr BufferId kCreditUpdate = ~BufferId{0};  // a descriptor for a credit packet
    static constexpr BufferId kRecoveryAck = ~BufferId{0} - 1;  // ...for a recovery ack
    static constexpr PeerId kFromHost = ~PeerId{0};        // a host message's, in a send buffer
    static constexpr PeerId kFromCollective = ~PeerId{0} - 1;  // sent from a collective's buffer
    static constexpr BufferId kNoBuffer = ~BufferId{0} - 2;
    static constexpr PeerId kNoChannel = ~PeerId{0};
    static constexpr PeerId kOwnChannel = ~PeerId{0} - 1;  // this NIC's own channel
    // What a NIC keeps inline (core/small_vector.h), enough for a node of a tree or chain:
    // packets held and queued at once, peers. More go to the heap.
    static constexpr std::size_t kInlineBuffers = 4;
    static constexpr std::size_t kInlinePeers = 4;

    struct Buffer {
        PacketHeader header;
        PeerId from = kFromHost;   // the sender whose window it belongs to, or kFrom...
        int sends_left = 0;        // destinations it still has to reach
        bool for_host = false;     // still to be delivered to the host
        bool slot_held = false;    // still holds a send buffer, or a credit of its sender's
        PeerId channel = kNoChannel;  // held in this owner's deadlock buffer, not in a window
    };
    struct Descriptor {
        BufferId buffer;
        PeerId dst;
        PeerId channel =
            kNoChannel;  // sent flagged in this owner's channel; a recovery ack's owner
    };
    struct Peer {
        int send_credits;
        int held = 0;        // its packets in our receive buffers
        int unreturned = 0;  // released buffers not yet credited back
        int waiting = 0;     // its packets in blocked_, waiting for a credit
        std::uint16_t window;  // 0: no flow control with this peer (headers carry 16-bit credits)
        bool update_queued = false;
    };
    // FCFS keeps a message's packets until its last child has them.
    struct FcfsMessage {
        std::vector<BufferId> buffers;
        std::size_t child = 0;  // the child being served
        std::size_t next = 0;   // the next packet for that child
        bool complete = false;  // the last packet has arrived
    };

    int window_of(Rank rank) const;
    // Whether the host takes a packet of this kind as it arrives: every kind but a host
    // message's belongs to the agent's collectives, which always do.
    bool taken_at_once(PacketKind kind) const {
        return config_.host_takes_all || !is_message(kind);
    }
    // Who takes a packet of this kind.
    HostPort& port(PacketKind kind) const {
        return agent_ != nullptr && !is_message(kind) ? *agent_ : host_;
    }
    PeerId peer_id(Rank rank) {
        const std::uint32_t i = peers_.index(rank);
        return i != RankMap<Peer, kInlinePeers>::kAbsent ? i : add_peer(rank);
    }
    [[gnu::cold]] PeerId add_peer(Rank rank);
    int low_water(const Peer& p) const {
        return config_.low_water >= 0 ? config_.low_water : p.window / 2;
    }
    Status queue(PeerId dst, const PacketHeader& header, std::span<const std::byte> payload,
                 PeerId from);
    // send() to a peer by index.
    Status send_to(PeerId dst, PacketHeader& header, std::span<const std::byte> payload);
    // Sends straight to the fabric when nothing is queued before it and a credit allows: true
    // when the packet is gone (or *s is the transport's error), false when it must be queued.
    bool send_now(PeerId to, PacketHeader& header, std::span<const std::byte> payload,
                  Status* s);
    BufferId hold(const PacketHeader& header, std::span<const std::byte> payload, PeerId from);
    std::span<const std::byte> payload_of(BufferId buffer) const;
    void forward(BufferId buffer, std::span<const PeerId> children);
    void serve_fcfs(FcfsMessage& message, std::span<const PeerId> children);
    void enqueue(BufferId buffer, PeerId dst);
    void unblock(PeerId dst);
    Status deliver_or_keep(BufferId buffer);
    Status hand_to_host(BufferId buffer);
    // The packet the host is being handed (HostPort::deliver()), which forward() sends on: its
    // buffer (kNoBuffer until it needs one) and deadlock channel.
    struct Delivery {
        PeerId from;
        const PacketHeader& header;
        BufferId buffer = kNoBuffer;
        PeerId channel = kNoChannel;
        bool refused = false;  // the fabric refused a packet forward() sent straight to it
    };
    Delivery* delivering_ = nullptr;
    void release_slot(Buffer& buffer);
    void owe_credit(PeerId from);
    void maybe_free(BufferId buffer);
    // Sends what waits in the transmit queue while the fabric takes it; error_. (The empty
    // queue, as after nearly every packet of a real job, costs no call.)
    Status pump() { return transmit_.empty() ? error_ : send_queued(); }
    Status send_queued();

    // Deadlock recovery (nic/deadlock_recovery.cc): with it configured, whether to start it.
    void maybe_recover() {
        if (config_.deadlock_recovery) consider_recovery();
    }
    void consider_recovery();
    Status on_flagged(PeerId from, Rank owner, const PacketHeader& header,
                      std::span<const std::byte> payload);
    Status on_recovery_ack(PeerId from, Rank owner);
    void forward_in_recovery(BufferId id, std::span<const PeerId> children, PeerId owner);
    bool take_first_of_tree(PeerId dst, Rank origin, BufferId* id);
    bool migrate_channel_packet(PeerId from);
    void free_channel(PeerId owner);
    void maybe_ack(PeerId owner);
    DeadlockChannel& channel(PeerId owner);

    // What every packet touches first, in as few cache lines as will hold it.
    Rank rank_;
    NicConfig config_;
    Status error_ = Status::ok;
    int send_buffers_free_;
    int host_buffers_ = 0;
    std::uint32_t waiting_ = 0;  // descriptors in blocked-sends queues
    bool host_waits_for_space_ = false;
    Fabric& fabric_;
    HostPort& host_;
    HostPort* agent_ = nullptr;
    NicStats stats_;
    Ring<Descriptor, kInlineBuffers> transmit_;
    SmallVector<BufferId, kInlineBuffers> free_;
    Ring<BufferId, kInlineBuffers> to_host_;  // waiting for a host buffer, in arrival order
    RankMap<Peer, kInlinePeers> peers_;
    SmallVector<Buffer, kInlineBuffers> buffers_;
    std::vector<Ring<BufferId>> blocked_;  // by peer, once one has to wait for a credit
    // Payloads by buffer, kept apart from the buffers: the simulator's packets carry none, and
    // without them four buffers share two cache lines. Made for a buffer once it holds one.
    // `bytes` is the payload: `copy`, or the caller's bytes with stable payloads.
    struct Payload {
        std::span<const std::byte> bytes;
        std::vector<std::byte> copy;
    };
    std::vector<Payload> payloads_;
    void keep_copy(BufferId buffer);
    std::unordered_map<std::uint64_t, FcfsMessage> fcfs_;
    // Deadlock recovery: this NIC's own recovery, the next queue to look at, the other owners'
    // channels through this NIC (by owner's peer index) and the buffers held in them.
    bool recovering_ = false;
    PeerId next_queue_ = 0;
    std::vector<DeadlockChannel> channels_;
    std::vector<BufferId> in_channels_;  // oldest first
    // The timeout refinement, by peer: packets that left the blocked queue on a credit, that
    // count at the last tick, whether the queue was blocked then, and whether it is suspected.
    struct QueueWatch {
        std::uint32_t moved = 0;
        std::uint32_t seen = 0;
        bool blocked_at_tick = false;
        bool suspected = false;
    };
    std::vector<QueueWatch> watch_;
    std::vector<int> peer_credits_;  // read once per peer: kept out of the hot lines
    // Aborts the fabric has not taken yet (tell()), oldest first.
    struct Tell {
        Rank dst;
        PacketHeader header;
    };
    std::vector<Tell> telling_;
    // Offers them again; those the fabric refuses with `again` stay.
    void pump_tells();
    bool tick_pending_ = false;
    void ask_for_tick();
};

}  // namespace nicsim::nic
