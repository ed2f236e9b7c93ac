// Simulator: Illinois Fast Messages 1.0 (Pakin et al.), the point-to-point layer on a Myrinet LANai
// behind an SBus, with its design choices as options so that each can be measured alone.
//
//   sender host ── FM_send: hybrid: PIO of header and payload into the LANai send queue, one sync
//                           all-DMA: copy into the DMA region, two syncs; the LANai DMAs it in
//   sender LANai ── the LCP loop: check, DMA setup, counters; then the channel DMA (link busy)
//   switch ──────── switch_latency
//   receiver LANai ─ receive into the LANai receive queue; with flow control, a packet the host
//                    receive queue has no slot for is returned to its sender (return-to-sender)
//                 ── one DMA over the SBus carries every packet waiting (aggregation, §4.4),
//                    started whenever the SBus is free, while the LCP receives on
//   receiver host ── FM_extract: one packet at a time from the host receive queue
//
// The four queues of §4.4 (Fig. 6): the LANai send queue (fm_sendq slots, counted by the host's
// hostsent and the LANai's lanaisent), the LANai receive queue (unbounded here: what the LCP has
// not taken yet waits in the network, as Myrinet's link-level backpressure would hold it), the
// host receive queue in the
// DMA region (fm_recvq slots) and the host reject queue (fm_rejectq: a sender reserves one slot
// per packet in flight; an acknowledgement frees it, a returned packet waits there to be sent
// again). Acknowledgements are piggybacked on data going the other way, or sent alone once
// fm_ack_every packets from a peer are unacknowledged or the receiver's queue runs dry.
//
// Two departures from FM 1.0, both stated where they matter: rejection is decided by the LANai
// when it finds the host queue full (FM 1.0 rejects on the host, §5, which this model would have
// to give host receive slots to before deciding), and a receiver rejects every packet behind a
// rejected one from the same sender, so that delivery stays in order (FM 1.0 gives no order,
// §4.5; here a rejected packet and its followers are sent again in order).
//
// Each resource (host CPU, SBus, LANai processor, outgoing link) keeps the time it is busy
// until; a node's host and LANai each run as a loop woken by events.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "core/packet.h"
#include "sim/model.h"
#include "sim/simulator.h"

namespace nicsim::sim {

enum class FmLoop { streamed, baseline };  // Fig. 2 (b) and (a)
enum class FmIo { hybrid, dma, none };     // §4.3; none: LANai to LANai, no host (§4.2)

struct FmOptions {
    FmLoop loop = FmLoop::streamed;
    FmIo io = FmIo::hybrid;
    bool buffers = true;     // §4.4: bounded queues and their bookkeeping; off: infinite buffers
    bool flow = true;        // §4.5: return-to-sender with a reject queue (needs buffers)
    bool interpret = false;  // §4.4: a switch() on each packet in the LCP's receive loop
};

// Names as the command line takes them; false for an unknown name.
bool parse_fm_loop(std::string_view name, FmLoop* out);
bool parse_fm_io(std::string_view name, FmIo* out);
std::string_view fm_loop_name(FmLoop loop);
std::string_view fm_io_name(FmIo io);

class FmLayer final : public EventHandler {
public:
    struct Delivery {
        Rank src;
        std::uint32_t seq;  // the sender's count of data packets to this node
        std::uint32_t bytes;
        Time at;  // the handler returned (io none: the LANai has the packet)
    };
    struct Stats {
        std::uint64_t data_sent = 0;  // data packets put on the wire, resends included
        std::uint64_t rejected = 0;   // packets returned to their sender
        std::uint64_t resent = 0;
        std::uint64_t acks = 0;              // acknowledgement packets (not piggybacked ones)
        std::uint64_t host_dmas = 0;         // LANai-to-host DMAs (each may carry several packets)
        std::uint32_t peak_recvq = 0;        // most host receive queue slots in use at once
        std::uint32_t peak_outstanding = 0;  // most reject queue slots reserved at once
    };

    // `nodes` hosts and LANais on one switch. `model` must be valid (model.h ranges).
    FmLayer(const Model& model, const FmOptions& options, int nodes, Simulator& sim);
    FmLayer(const FmLayer&) = delete;
    FmLayer& operator=(const FmLayer&) = delete;

    // `src`'s application calls FM_send(dst, `bytes`) at `at` (sends of one host leave in the
    // order given, each once the previous one returned). With io none the packet appears in
    // the LANai send queue at `at`.
    void send(Rank src, Rank dst, std::uint32_t bytes, Time at);
    // `node`'s application calls FM_extract from `at` on; before, its host does not look at its
    // receive queue (a busy receiver). Every host extracts from 0 unless told otherwise.
    void extract_from(Rank node, Time at);
    // Called for each data packet as its handler returns, in delivery order; may call send().
    void on_deliver(std::function<void(Rank node, const Delivery&)> hook) {
        hook_ = std::move(hook);
    }

    const std::vector<Delivery>& deliveries(Rank node) const { return nodes_[node].delivered; }
    const Stats& stats() const { return stats_; }
    // After a run: every send delivered, no queue holding a packet, no reservation left. False
    // with the first violation in *why.
    bool check_quiescent(std::string* why) const;

    void on_event(std::uint32_t kind, std::uint32_t arg) override;

private:
    enum class Kind : std::uint8_t { data, ack, returned };
    static constexpr Time kNever = ~Time{0};
    struct Packet {
        Kind kind;
        Rank src;  // the data's sender (also for a returned packet)
        Rank dst;  // where it travels now
        Rank to;   // the data's destination (also for a returned packet)
        std::uint32_t seq;
        std::uint32_t bytes;
        std::uint32_t
            acks;  // packets from `to` to `src` (data, ack: from dst to src) this acknowledges
    };
    struct Pending {
        Rank dst;
        std::uint32_t bytes;
        Time at;
    };
    struct Node {
        // host
        Time host_free = 0;
        Time sbus_free = 0;
        Time extract_at = 0;
        Time host_wake = kNever;              // the earliest wake pending
        std::deque<Pending> program;          // FM_send calls not yet made
        std::deque<Packet> host_rx;           // host receive queue (data, acks, returned packets)
        std::deque<Packet> resend;            // returned packets, in the order to send them again
        std::vector<std::uint32_t> next_seq;  // per destination
        std::vector<std::uint32_t> unacked;   // per source: delivered, not yet acknowledged
        std::vector<std::uint32_t> expected;  // per source: the next seq to accept
        std::vector<std::uint32_t> outstanding;  // per destination: reject-queue slots held
        std::uint32_t reserved = 0;              // reject queue slots held in all
        std::uint32_t recvq_used = 0;            // host receive queue slots held (data only)
        std::uint32_t sendq_used = 0;            // LANai send queue slots held
        Time last_extract = 0;                   // when the host last took a data packet
        std::vector<Delivery> delivered;
        // LANai
        Time lanai_free = 0;
        Time link_free = 0;
        Time lanai_wake = kNever;
        bool last_was_send = true;
        std::deque<Packet> fetch;    // all-DMA: posted, still in host memory
        std::deque<Packet> tx;       // LANai send queue: visible to the LCP
        std::deque<Packet> rx;       // arrived, not yet processed by the LCP
        std::deque<Packet> to_host;  // in the LANai receive queue, waiting for the SBus
    };
    enum EventKind : std::uint32_t {
        host_wake,
        lanai_wake,
        pio,
        posted,
        fetched,
        sent,
        arrived,
        landed
    };

    void wake_host(Rank node, Time at);
    void wake_lanai(Rank node, Time at);
    void run_host(Rank node);
    void run_lanai(Rank node);
    // The host hands `p` to its LANai (costs by io); returns when the host is done, or kNever
    // when that depends on the SBus: the `pio` event then takes the bus and says.
    Time host_send(Rank node, const Packet& p, Time t);
    Time host_extract(Rank node, Time t);
    void schedule_packet(Time at, std::uint32_t kind, Rank node, const Packet& p);
    // The LCP's overhead for one packet of the given direction (loop shape, §4.2).
    Time loop_cost(Node& n, bool send);
    std::uint32_t park(const Packet& p);  // keeps a packet in flight; its slot number
    Packet unpark(std::uint32_t slot);

    Model model_;
    FmOptions options_;
    Simulator& sim_;
    std::vector<Node> nodes_;
    std::vector<Packet> flight_;
    std::vector<std::uint32_t> free_flight_;
    std::vector<std::uint32_t> flight_node_;  // the node a parked packet is bound for
    std::function<void(Rank, const Delivery&)> hook_;
    Stats stats_;
};

}  // namespace nicsim::sim
