// Simulator: GM's point-to-point protocol, the host-based baseline's network on Yu et al.'s
// cluster (Model::p2p_flow == "gm": each node of sim/cluster.cc runs a GmNic beside its LFC NIC).
//
// GM has reliability but no flow control (Yu et al. §3, §4.3.1):
//
//   sender NIC    fetches each packet from host memory (DMA) into a send buffer and sends it at
//                 once, numbered per connection (destination); keeps a send record until a
//                 cumulative ACK covers it. On a NACK, or when its oldest record has waited
//                 gm_resend_timeout, it goes back to that packet and sends it and every later one
//                 again, each fetched from host memory again (go-back-N).
//   receiver NIC  gm_recv_buffers receive buffers shared by every sender. A packet that finds
//                 none free is dropped unseen; one out of sequence is dropped once the NIC has
//                 looked at it (tnr), with one NACK per gap; one in sequence holds its buffer
//                 until its DMA to the host is over, then is acknowledged.
//
// ACKs and NACKs are header-only packets that cost tns to send and tnr to receive, and never
// need a receive buffer (GM's control packets "need not wait on the DMA engine").
#pragma once

#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <vector>

#include "core/packet.h"
#include "core/rank_map.h"
#include "core/status.h"
#include "sim/model.h"
#include "sim/time.h"

namespace nicsim::sim {

struct GmStats {
    std::uint64_t data_sent = 0;  // data packets put on the wire, resends included
    std::uint64_t resent = 0;     // of which sent again after a go-back
    std::uint64_t acks = 0;
    std::uint64_t nacks = 0;
    std::uint64_t dropped_full = 0;   // arrived with every receive buffer busy
    std::uint64_t dropped_order = 0;  // arrived out of sequence, or again
    std::uint64_t nack_go_backs = 0;  // go-backs a NACK started
    std::uint64_t timeout_go_backs = 0;

    GmStats& operator+=(const GmStats& o) {
        data_sent += o.data_sent;
        resent += o.resent;
        acks += o.acks;
        nacks += o.nacks;
        dropped_full += o.dropped_full;
        dropped_order += o.dropped_order;
        nack_go_backs += o.nack_go_backs;
        timeout_go_backs += o.timeout_go_backs;
        return *this;
    }
};

// What a GM packet carries besides the engine's header.
struct GmTag {
    enum Kind : std::uint8_t { none, data, ack, nack };
    Kind kind = none;
    std::uint16_t epoch = 0;  // data: the sender's go-backs so far; nack: the dropped packet's
    std::uint32_t seq = 0;    // data: its number; ack: the next one expected; nack: the one missing
};

// What a trace calls a packet: GM's ACKs and NACKs and LFC's credits by their kind, any other
// `other` (what the track does with it: "send", "packet", "receive").
const char* packet_label(const PacketHeader& header, GmTag tag, const char* other);

// The times GmNic asks its node to call it back at.
enum class GmEvent : std::uint32_t {
    dma,       // the DMA engine may take up its next transfer
    dma_done,  // the DMA engine's transfer is over
    rx_free,   // a packet dropped out of sequence frees its receive buffer
    timer,     // arg: destination; time to see whether its oldest packet is overdue
};

// What GM's NIC needs of the simulated node it runs on (sim/cluster.cc): its clock, its NIC
// processor and links, its I/O bus and host.
class GmNode {
public:
    virtual Time now() const = 0;
    // The NIC processor sends a packet (tns, then the wire); again while it is busy, and it calls
    // GmNic::pump() once it is free.
    virtual Status send_gm(Rank dst, const PacketHeader& header, GmTag tag) = 0;
    // When the NIC processor is next free (the packet just sent has left).
    virtual Time nic_free() const = 0;
    // The NIC processor takes in a packet that reached it at `now` (tnr); returns when it is done
    // (`what` names the work in a trace).
    virtual Time take_in(Time now, const char* what) = 0;
    // The I/O bus: fetches `bytes` from host memory, or stores a received packet there (the host
    // has its message tr after the last one); each returns when the transfer is over.
    virtual Time fetch(Time from, std::uint64_t bytes) = 0;
    virtual Time store(const PacketHeader& header, Time from) = 0;
    virtual void schedule(Time at, GmEvent event, std::uint32_t arg) = 0;
    virtual void fail(std::string what) = 0;

protected:
    ~GmNode() = default;
};

// One node's GM NIC.
class GmNic {
public:
    GmNic(const Model& model, Rank rank, GmNode& node);

    // The host posted a message of `packets` packets: they stay in host memory until the NIC
    // fetches them.
    void post(Rank dst, Rank origin, Seq seq, std::uint64_t bytes, std::uint32_t packets);
    // A GM packet reached this NIC at `now`.
    void arrival(Rank src, const PacketHeader& header, GmTag tag, Time now);
    void on_event(GmEvent event, std::uint32_t arg, Time now);
    // Sends what waits, as far as the NIC processor takes it.
    void pump();
    // Nothing queued, in flight or unacknowledged.
    bool idle() const;
    const GmStats& stats() const { return stats_; }

private:
    struct GmRecord {
        enum State : std::uint8_t { in_host, fetching, ready, sent };
        PacketHeader header;
        std::uint32_t seq = 0;
        State state = in_host;
        bool resend = false;      // sent before a go-back
        std::uint64_t fetch = 0;  // which fetch brings it (a go-back makes older ones stale)
        Time left = 0;            // when it last left
    };
    struct GmOut {
        std::deque<GmRecord> records;  // unacknowledged, in order
        std::uint32_t next_seq = 0;    // the next new packet's number
        std::uint32_t next_tx = 0;     // the next to send
        std::uint32_t fetch_next = 0;  // the next to fetch
        std::uint16_t epoch = 0;       // go-backs so far
        bool timer = false;
        bool listed = false;  // in conns_
    };
    struct GmIn {
        std::uint32_t expected = 0;  // the next packet it takes
        std::uint32_t dma_done = 0;  // packets in host memory, so what an ACK says
        bool ack_queued = false;
        bool nacked = false;  // a NACK went for (nack_seq, nack_epoch)
        std::uint32_t nack_seq = 0;
        std::uint16_t nack_epoch = 0;
    };
    struct GmToHost {
        Rank src;
        PacketHeader header;
        Time ready;  // when the NIC is done with it
    };
    struct GmControl {
        Rank dst;
        GmTag::Kind kind;
        std::uint32_t seq;
        std::uint16_t epoch;
    };

    GmRecord* record(GmOut& out, std::uint32_t seq);
    // The connections in turn from `turn`: the first whose record at its `next` counter is in
    // `state`, and `turn` moved past it; none when no connection has one.
    struct Turn {
        Rank peer;
        GmOut* out;
        GmRecord* record;
    };
    std::optional<Turn> next_in_turn(std::size_t& turn, std::uint32_t GmOut::*next,
                                     GmRecord::State state);
    void dma(Time now);
    void dma_done(Time now);
    void dma_at(Time at);
    void acked(GmOut& out, std::uint32_t seq);
    void go_back(GmOut& out, std::uint32_t seq);
    void timer(Rank dst, Time now);
    void ack(Rank src, GmIn& in);

    const Model& model_;
    Rank rank_;
    GmNode& node_;
    const Time resend_;
    int send_free_;
    int rx_busy_ = 0;
    RankMap<GmOut> out_;
    RankMap<GmIn> in_;
    std::vector<Rank> conns_;  // destinations ever sent to, taken in turn
    std::size_t fetch_turn_ = 0;
    std::size_t send_turn_ = 0;
    std::uint64_t fetch_count_ = 0;
    struct Dma {
        bool busy = false;
        bool fetch = false;  // a packet to send, or a received one to the host (the last one's
                             // kind until the next starts)
        Rank peer = 0;          // its destination or source
        std::uint32_t seq = 0;  // a fetch: the packet's number...
        std::uint64_t id = 0;   // ...and which fetch of it
        Time done = 0;
        Time wake = ~Time{0};  // a look again is scheduled then
    } dma_;
    std::deque<GmToHost> to_host_;   // received packets waiting for the DMA engine, in order
    std::deque<GmControl> control_;  // ACKs and NACKs to send
    GmStats stats_;
};

}  // namespace nicsim::sim
