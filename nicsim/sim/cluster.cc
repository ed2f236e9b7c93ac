#include "sim/cluster.h"

#include <algorithm>
#include <optional>

#include "core/rank_map.h"
#include "core/ring.h"
#include "core/small_vector.h"
#include "nic/staging.h"

namespace nicsim::sim {

namespace {

enum EventKind : std::uint32_t {
    kArrive,     // arg: flight; a packet reaches this node's NIC
    kHostNext,   // the host may start its next piece of sending work
    kNicPost,    // a packet the host moved across the I/O bus reaches the NIC's send queue
    kWake,       // the host has posted receive buffers the NIC is waiting for
    kNicFree,    // the NIC processor is free to transmit the next packet of its queue
    kCollPost,   // the host's collective request reaches the NIC
    kTimeout,    // time to see whether the collective's packets are overdue
    kTick,       // the LFC NIC's deadlock-detection tick
    kGm,         // arg: a GmEvent and its argument (gm_event()); GM's NIC asked to be called
};

bool is_collective(PacketKind kind) {
    return kind == PacketKind::barrier || kind == PacketKind::allgather || kind == PacketKind::nack;
}

// A collective that keeps hearing nothing waits twice as long before each next round of NACKs,
// up to 2^kMaxBackoff times: a rank can legitimately wait long (recursive doubling's folded ranks
// wait for the whole exchange), and NACKs at a fixed pace would load the NICs it waits on.
constexpr int kMaxBackoff = 6;
// A collective that has not heard a packet in this many timeouts is stuck, not slow: a bug.
constexpr int kMaxSilentTimeouts = 1000;

// How much of the next event's node the simulator prefetches (see the Cluster constructor).
constexpr std::size_t kPrefetchBytes = 12 * 64;
// ...and of its agent, before an arrival (Node::prepare()).
constexpr std::size_t kAgentPrefetchBytes = 3 * 64;

// A GmEvent and its argument (a rank) in one event argument.
constexpr unsigned kGmEventShift = 28;
std::uint32_t gm_event(GmEvent event, std::uint32_t arg) {
    return static_cast<std::uint32_t>(event) << kGmEventShift | arg;
}

}  // namespace

class Cluster::Node final : public EventHandler,
                            public nic::Fabric,
                            public nic::HostPort,
                            public GmNode {
public:
    static constexpr Rank kBroadcast = -1;  // send()'s destination for the node's own broadcast

    Node(Cluster& cluster, Rank rank, const nic::NicConfig& config) : c_(cluster), rank_(rank) {
        make_nic(config);
        if (c_.model_.p2p_flow == "gm") gm_.emplace(c_.model_, rank_, *this);
    }

    nic::Nic& nic() { return *nic_; }
    const std::vector<Receipt>& receipts() const { return receipts_; }
    Time last_post() const { return last_post_; }
    Time host_busy() const { return host_busy_; }
    void hold_host(Time until) { host_free_ = std::max(host_free_, until); }
    bool host_idle() const {
        return outgoing_.empty() && posting_.empty() && (!gm_ || gm_->idle());
    }
    GmStats gm_stats() const { return gm_ ? gm_->stats() : GmStats{}; }

    void set_host_route(Rank origin, std::span<const Rank> children) {
        host_routes_.get(origin).assign(children.begin(), children.end());
    }

    // Collectives ------------------------------------------------------------------------------

    // Before anything is sent: the NIC anew, as `config` sets it up, with the collective
    // agent on it.
    void enable_collectives(const nic::NicConfig& config, const nic::ChannelConfig& channels) {
        coll().agent.reset();
        agent_ = nullptr;
        make_nic(config);
        make_agent(channels);
    }

    // The collective agent on the NIC as it is, unless it has one.
    void enable_broadcasts() {
        if (!coll().agent) make_agent({});
    }

    // The host posts a NIC-based collective: ts, then the request crosses the I/O bus; a hopping
    // allgather's own block goes with it, into NIC memory, where every later send finds it.
    void post(const plan::BarrierAlgorithm* barrier, const plan::AllgatherAlgorithm* allgather,
              std::uint64_t block_bytes, Time at) {
        coll().barrier = barrier;
        coll_->allgather = allgather;
        coll_->block_bytes = block_bytes;
        coll_->combining = allgather != nullptr && allgather->combines;
        if (allgather != nullptr && c_.collectives_.payloads) {
            coll_->result.assign(block_bytes * static_cast<std::uint64_t>(c_.size()), std::byte{0});
            for (std::uint64_t i = 0; i < block_bytes; ++i) {
                coll_->result[block_bytes * static_cast<std::uint64_t>(rank_) + i] =
                    block_byte(rank_, i);
            }
        }
        coll_->record.posted = at;
        const Time begin = std::max(at, host_free_);
        host_free_ = begin + ts_;
        coll_->record.host_busy += ts_;
        busy(Trace::Track::host, "post", begin, host_free_);
        Time ready = host_free_;
        if (allgather != nullptr && !coll_->combining) ready = dma(ready, block_bytes, "dma out");
        c_.sim_.schedule(ready, *this, kCollPost);
    }

    void run_on_host(std::vector<HostStep> steps, Time at) {
        coll().record.posted = at;
        coll_->host_steps = std::move(steps);
        coll_->host_got.clear();
        for (const HostStep& step : coll_->host_steps)
            coll_->host_got.emplace_back(step.from.size(), false);
        host_advance(at);
    }

    const CollectiveRecord& record() const {
        static const CollectiveRecord none;
        return coll_ ? coll_->record : none;
    }
    std::span<const std::byte> result() const {
        return coll_ ? std::span<const std::byte>(coll_->result) : std::span<const std::byte>();
    }
    const nic::CollectiveStats* collective_stats() const {
        return coll_ && coll_->agent ? &coll_->agent->stats() : nullptr;
    }

    void send(Rank dst, Rank origin, Seq seq, std::uint64_t bytes, Time at) {
        const auto packets = static_cast<std::uint32_t>(packet_count(bytes, c_.model_.mtu));
        outgoing_.push_back({dst, origin, seq, bytes, packets, 0, at, false});
        if (!host_scheduled_) {
            host_scheduled_ = true;
            c_.sim_.schedule(std::max(at, c_.sim_.now()), *this, kHostNext);
        }
    }

    void on_event(std::uint32_t kind, std::uint32_t arg) override {
        const Time now = c_.sim_.now();
        switch (kind) {
        case kArrive: {
            const Flight f = c_.flights_[arg];
            c_.free_flights_.push_back(arg);
            if (f.gm.kind != GmTag::none) {
                gm_->arrival(f.src, f.header, f.gm, now);
                break;
            }
            if (is_collective(f.header.kind)) {
                collective_arrival(f, arg, now);
                break;
            }
            if (f.header.kind == PacketKind::bcast) {
                bcast_arrival(f, now);
                break;
            }
            const bool ahead = receive(now);
            repost_host_buffers();
            send_ahead_ = ahead;
            log(AgentEvent::deliver, f.src, f.header);
            check(nic_->on_packet(f.src, f.header, {}), "a packet from node", f.src);
            send_ahead_ = false;
            break;
        }
        case kHostNext:
            host_scheduled_ = false;
            host_next(now);
            break;
        case kNicPost: {
            const Posting p = posting_.front();
            posting_.pop_front();
            nic_now_ = std::max(now, nic_free_);
            repost_host_buffers();
            if (p.dst == kBroadcast) {
                post_through(p.header.seq);
                log(AgentEvent::supply, rank_, p.header);
                check(agent_->supply(p.header.seq), "its host's packet of broadcast",
                      static_cast<Rank>(p.header.seq));
            } else {
                check(nic_->post_send(p.dst, p.header, {}), "its host's packet to node", p.dst);
            }
            break;
        }
        case kWake:
            wake_scheduled_ = false;
            nic_now_ = std::max(now, nic_free_);
            repost_host_buffers();
            break;
        case kNicFree:
            free_scheduled_ = false;
            nic_now_ = now;
            repost_host_buffers();
            if (agent_ != nullptr) {  // the agent's progress also settles its collectives
                log(AgentEvent::progress);
                check(agent_->progress(), "its transmit queue at node", rank_);
                check_collective_done();
            } else {
                check(nic_->progress(), "its transmit queue at node", rank_);
            }
            if (gm_) gm_->pump();
            break;
        case kCollPost:
            nic_now_ = std::max(now, nic_free_);
            start_collective(now);
            break;
        case kTimeout:
            coll_->timer_scheduled = false;
            on_timer(now);
            break;
        case kTick:
            nic_now_ = std::max(now, nic_free_);
            check(nic_->on_tick(), "its deadlock-detection tick at node", rank_);
            break;
        case kGm:
            gm_->on_event(static_cast<GmEvent>(arg >> kGmEventShift),
                          arg & ((1u << kGmEventShift) - 1), now);
            break;
        }
        if (nic_->waiting_for_host_buffers() && !reposts_.empty() && !wake_scheduled_) {
            wake_scheduled_ = true;
            c_.sim_.schedule(std::max(reposts_.front(), now), *this, kWake);
        }
    }

    // An arrival comes next: its flight (a big run's flights are far apart) and the
    // collective the agent last fed, which the packet most likely belongs to.
    void prepare(std::uint32_t kind, std::uint32_t arg) override {
        if (kind != kArrive) return;
        if (arg < c_.flights_.size()) __builtin_prefetch(&c_.flights_[arg]);
        if (hot_ != nullptr) {
            __builtin_prefetch(hot_);
            __builtin_prefetch(static_cast<const char*>(hot_) + 64);
            const auto* agent = reinterpret_cast<const char*>(agent_);
            for (std::size_t offset = 0; offset < kAgentPrefetchBytes; offset += 64) {
                __builtin_prefetch(agent + offset);
            }
        }
    }

    // nic::Fabric: the NIC spends tns on the packet, then streams it onto its link; like the
    // LANai, it takes up the next piece of work once the packet has left. While it is busy it
    // refuses, and offers its queue again when it is free: a packet takes its links at the time
    // it really leaves, so it never holds a link ahead of packets that get there first.
    Status transmit(Rank dst, const PacketHeader& header,
                    std::span<const std::byte> payload) override {
        const Status s = send_packet(dst, header, payload, GmTag{});
        log(AgentEvent::transmit, dst, header, s);
        return s;
    }

    void log(AgentEvent::Kind kind, Rank peer = 0, const PacketHeader& header = {},
             Status answer = Status::ok) {
        if (c_.collectives_.log != nullptr) {
            (*c_.collectives_.log)[static_cast<std::size_t>(rank_)].push_back(
                {kind, peer, header, answer});
        }
    }

    Status send_packet(Rank dst, const PacketHeader& header, std::span<const std::byte> payload,
                       GmTag gm) {
        Time now = c_.sim_.now();
        // A combined allgather packet is gathered from host memory, where its blocks landed. The
        // DMA engine fetches it while the NIC still sends the packet before (double buffering).
        const bool gathered = header.kind == PacketKind::allgather && coll_ && coll_->combining;
        if (gathered && !coll_->fetching) {
            coll_->fetching = true;
            coll_->fetched = dma(now, header.payload_bytes, "dma out");
        }
        if (send_ahead_) {
            send_ahead_ = false;
            now = nic_free_;
        } else if (nic_free_ > now) {
            if (!free_scheduled_) {
                free_scheduled_ = true;
                c_.sim_.schedule(nic_free_, *this, kNicFree);
            }
            return Status::again;
        }
        if (gathered) {
            coll_->fetching = false;
            now = std::max(now, coll_->fetched);
        }
        if (is_collective(header.kind)) ++c_.collective_packets_;
        if ((header.flags & kDeadlockFlag) != 0 && header.credits == rank_) {  // its own channel
            c_.recovery_starters_.insert({header.origin, header.seq, header.step});
        }
        Time arrives;
        const Time left =
            c_.launch(rank_, dst, path_to(dst), header, payload, now + tns_, gm, &arrives);
        // In steps, the NIC sends its next packet once this one is in the next NIC.
        nic_free_ = steps_ ? arrives + tnr_ : left;
        busy(Trace::Track::nic, packet_label(header, gm, "send"), now, nic_free_);
        nic_now_ = steps_ ? now + tns_ : nic_free_;
        return Status::ok;
    }

    // nic::HostPort: the NIC DMAs the packet into a host buffer; the host has the message tr
    // after its last packet is in.
    Status deliver(Rank, const PacketHeader& header, std::span<const std::byte>) override {
        to_host(header, nic_now_);
        reposts_.push_back(bus_free_);  // the host copies the packet out and posts the buffer again
        return Status::ok;
    }

    // The NIC DMAs a message's packet (a host message's, a broadcast's) into host memory from
    // `from` on; returns when the DMA is over.
    Time to_host(const PacketHeader& header, Time from) {
        const Time start = std::max(from, bus_free_);
        bus_free_ = start + transfer_time(header.payload_bytes, c_.model_.dma_bw);
        if (bus_free_ > start) busy(Trace::Track::host, "dma in", start, bus_free_);
        const Time dma_done = bus_free_;
        if (header.kind == PacketKind::unicast) check_order(header);  // the agent checks its own
        if ((header.flags & kLastPacket) == 0) return dma_done;
        const Time begin = std::max(bus_free_, host_free_);
        host_free_ = begin + tr_;
        host_busy_ += tr_;
        busy(Trace::Track::host, "receive", begin, host_free_);
        receipts_.push_back({header.origin, header.seq, host_free_});
        if (coll_ && !coll_->host_steps.empty()) host_received(header.origin);
        const std::vector<Rank>* children = host_routes_.find(header.origin);
        if (children == nullptr) return dma_done;
        const std::uint64_t bytes = message_bytes(header);
        for (const Rank child : *children) {
            send(child, header.origin, header.seq, bytes, host_free_);
        }
        return dma_done;
    }

    void tick_after(double after_us) override {
        c_.sim_.schedule(std::max(nic_now_, c_.sim_.now()) + from_us(after_us), *this, kTick);
    }

    void send_space() override {
        if (waiting_for_space_ && !host_scheduled_) {
            host_scheduled_ = true;
            c_.sim_.schedule(std::max(nic_now_, c_.sim_.now()), *this, kHostNext);
        }
        waiting_for_space_ = false;
    }

    // GmNode: GM's NIC runs on this node's clock, NIC processor, links and I/O bus.
    Time now() const override { return c_.sim_.now(); }
    Status send_gm(Rank dst, const PacketHeader& header, GmTag tag) override {
        return send_packet(dst, header, {}, tag);
    }
    Time nic_free() const override { return nic_free_; }
    Time take_in(Time now, const char* what) override {
        receive(now, what);
        return nic_now_;
    }
    Time fetch(Time from, std::uint64_t bytes) override { return dma(from, bytes, "dma out"); }
    Time store(const PacketHeader& header, Time from) override { return to_host(header, from); }
    void schedule(Time at, GmEvent event, std::uint32_t arg) override {
        c_.sim_.schedule(at, *this, kGm, gm_event(event, arg));
    }
    void fail(std::string what) override { c_.fail(std::move(what)); }

private:
    struct Outgoing {
        Rank dst;
        Rank origin;
        Seq seq;
        std::uint64_t bytes;
        std::uint32_t packets;
        std::uint32_t next;  // the next packet to move to the NIC
        Time ready;
        bool started;        // ts paid
    };
    struct Posting {
        Rank dst;
        PacketHeader header;
    };

    // The NIC takes in a packet that reached it at `now`: tnr once it is free. Serial, its one
    // processor is then free again. In steps, receiving runs beside sending, and a packet can
    // leave again no sooner than it is in. True when the first packet the NIC sends on receiving
    // this one may take its links now (send_ahead_): it goes right after the receive, so the
    // look-ahead is tnr, and a forwarding hop costs one event instead of two.
    bool receive(Time now, const char* what = "receive") {
        const Time start = std::max(now, steps_ ? rx_free_ : nic_free_);
        const Time done = start + tnr_;
        busy(Trace::Track::nic, what, start, done);
        const bool ahead = start == now && nic_free_ <= done;
        nic_free_ = std::max(nic_free_, done);
        rx_free_ = done;
        nic_now_ = done;
        return ahead;
    }

    // A collective packet reached the NIC: unless the network lost it, the NIC spends tnr on it,
    // DMAs its payload to the host (the staging buffer gathers small ones) and hands it to the
    // agent, which may forward it at once.
    void collective_arrival(const Flight& f, std::uint32_t flight, Time now) {
        std::vector<std::byte> payload;
        if (c_.collectives_.payloads) payload = std::move(c_.flight_payloads_[flight]);
        if (c_.lose(f.header)) return;
        if (agent_ == nullptr) {
            check(Status::protocol, "a collective packet from node", f.src);
            return;
        }
        const bool ahead = receive(now);
        coll_->last_heard = now;
        coll_->silent_timeouts = 0;
        if (f.header.kind == PacketKind::allgather) to_host(f.header.payload_bytes);
        send_ahead_ = ahead;
        log(AgentEvent::deliver, f.src, f.header);
        check(agent_->deliver(f.src, f.header, payload), "a collective packet from node", f.src);
        send_ahead_ = false;
        check_collective_done();
    }

    // A broadcast's packet reached the NIC: tnr, then the agent forwards it and the NIC DMAs it
    // into the host's message (the host has the message tr after its last packet).
    void bcast_arrival(const Flight& f, Time now) {
        if (agent_ == nullptr) {
            check(Status::protocol, "a broadcast packet from node", f.src);
            return;
        }
        const bool ahead = receive(now);
        post_through(f.header.seq);
        to_host(f.header, nic_now_);
        send_ahead_ = ahead;
        log(AgentEvent::deliver, f.src, f.header);
        check(agent_->deliver(f.src, f.header, {}), "a broadcast packet from node", f.src);
        hot_ = agent_->last_fed();
        send_ahead_ = false;
    }

    // Every node takes part in every broadcast, posted as the first of its packets comes (the
    // root's from its host, the others' from the network): as LFC's NICs hold their multicast
    // trees, the agent has the broadcast before the packet. Each is forgotten once complete.
    void post_through(Seq seq) {
        for (; seq_at_or_after(seq, next_broadcast_); ++next_broadcast_) {
            const Broadcast& b = c_.broadcasts_[next_broadcast_];
            Seq posted;
            log(AgentEvent::post);
            check(agent_->post_bcast(*b.tree, b.bytes,
                                           static_cast<std::uint32_t>(c_.model_.mtu), {}, &posted),
                  "posting broadcast", static_cast<Rank>(next_broadcast_));
            agent_->release(posted);
        }
    }

    void start_collective(Time now) {
        log(AgentEvent::post);
        Status s;
        if (coll_->barrier != nullptr) {
            s = agent_->post_barrier(*coll_->barrier, &coll_->seq);
        } else {
            s = agent_->post_allgather(*coll_->allgather, coll_->block_bytes,
                                       static_cast<std::uint32_t>(c_.model_.mtu), coll_->result,
                                       &coll_->seq);
        }
        check(s, "posting its collective, node", rank_);
        coll_->posted = !failed(s);
        coll_->last_heard = now;
        arm_timer(now);
        check_collective_done();
    }

    // Once the agent has done this rank's part, what is staged goes to the host, then the receive
    // event, and the host, which polls for it, pays tr and copies out what was staged.
    void check_collective_done() {
        if (!coll_->posted || coll_->record.complete) return;
        const Status s = agent_->test(coll_->seq);
        if (s == Status::in_progress) return;
        check(s, "its collective, node", rank_);
        coll_->staging.flush(coll_->dmas);
        for (const nic::Dma& d : coll_->dmas) dma(nic_now_, d.bytes, "dma in");
        coll_->dmas.clear();
        const Time cpu = tr_ + transfer_time(coll_->staged_bytes, c_.model_.copy_bw);
        const Time begin = std::max({nic_now_, bus_free_, host_free_});
        host_free_ = begin + cpu;
        busy(Trace::Track::host, "complete", begin, host_free_);
        coll_->record.host_busy += cpu;
        coll_->record.done = host_free_;
        coll_->record.complete = true;
    }

    // Receiver-driven retransmission (Yu et al. §4.3.1): a collective that heard nothing for
    // nack_timeout asks its peers for what it misses, then backs off while it still hears nothing.
    void on_timer(Time now) {
        if (coll_->record.complete) return;
        if (now - coll_->last_heard >= wait()) {
            if (++coll_->silent_timeouts > kMaxSilentTimeouts) {
                c_.gave_up_ = c_.gave_up_ || c_.error_.empty();
                c_.fail("node " + std::to_string(rank_) + "'s collective heard nothing in " +
                        std::to_string(kMaxSilentTimeouts) + " timeouts");
                return;
            }
            nic_now_ = std::max(now, nic_free_);
            log(AgentEvent::timeout);
            check(agent_->timeout(), "its collective's timeout, node", rank_);
            coll_->last_heard = now;
            check_collective_done();
        }
        arm_timer(now);
    }

    void arm_timer(Time now) {
        if (coll_->timer_scheduled || coll_->record.complete) return;
        coll_->timer_scheduled = true;
        c_.sim_.schedule(std::max(now, coll_->last_heard + wait()), *this, kTimeout);
    }

    Time wait() const {
        return from_us(c_.model_.nack_timeout) << std::min(coll_->silent_timeouts, kMaxBackoff);
    }

    // `bytes` cross the I/O bus from the NIC's clock on; returns when they are over.
    Time dma(Time from, std::uint64_t bytes, const char* what) {
        const Time start = std::max(from, bus_free_);
        bus_free_ = start + transfer_time(bytes, c_.model_.dma_bw);
        if (bus_free_ > start) busy(Trace::Track::host, what, start, bus_free_);
        return bus_free_;
    }

    // A hopping allgather expects many small packets and gathers them in the staging buffer;
    // a combining one DMAs each packet into the result, where its next step fetches it (Yu et al.
    // §5.2).
    void to_host(std::uint64_t bytes) {
        if (bytes == 0) return;
        if (coll_->combining) {
            dma(nic_now_, bytes, "dma in");
            return;
        }
        if (bytes <= nic::Staging::kSmallPayload) coll_->staged_bytes += bytes;
        coll_->staging.add(bytes, coll_->dmas);
        for (const nic::Dma& d : coll_->dmas) dma(nic_now_, d.bytes, "dma in");
        coll_->dmas.clear();
    }

    // Host-based collectives: a step's messages leave once the previous step's have all come.
    void host_advance(Time at) {
        while (coll_->host_step < coll_->host_steps.size()) {
            HostStep& step = coll_->host_steps[coll_->host_step];
            if (!step.sends.empty()) {
                for (const HostStep::Message& m : step.sends) {
                    send(m.dst, rank_, coll_->host_seq.get(m.dst, Seq{0})++, m.bytes, at);
                }
                step.sends.clear();
            }
            const std::vector<bool>& got = coll_->host_got[coll_->host_step];
            if (std::find(got.begin(), got.end(), false) != got.end()) return;
            ++coll_->host_step;
        }
        if (!coll_->record.complete) {
            coll_->record.done = at;
            coll_->record.complete = true;
            coll_->record.host_busy =
                at - coll_->record.posted;  // it polled throughout (Yu et al. §6.3)
        }
    }

    // A message from `src`: the first step still waiting for one from it.
    void host_received(Rank src) {
        for (std::size_t s = coll_->host_step; s < coll_->host_steps.size(); ++s) {
            const std::vector<Rank>& from = coll_->host_steps[s].from;
            for (std::size_t i = 0; i < from.size(); ++i) {
                if (from[i] == src && !coll_->host_got[s][i]) {
                    coll_->host_got[s][i] = true;
                    host_advance(host_free_);
                    return;
                }
            }
        }
        c_.fail("node " + std::to_string(rank_) + " got a message from node " +
                std::to_string(src) + " that no step of its collective expects");
    }

    // The host sends: ts once per message, then each packet across the I/O bus into a free send
    // buffer of the NIC.
    void host_next(Time now) {
        if (outgoing_.empty()) return;
        Outgoing& m = outgoing_.front();
        if (now < m.ready) return later(m.ready);
        if (!m.started) {
            m.started = true;
            const Time begin = std::max(now, host_free_);
            host_free_ = begin + ts_;
            host_busy_ += ts_;
            busy(Trace::Track::host, "send", begin, host_free_);
            return later(host_free_);
        }
        if (gm_ && m.dst != kBroadcast) {  // GM's NIC fetches the packets itself
            gm_->post(m.dst, m.origin, m.seq, m.bytes, m.packets);
            last_post_ = now;
            outgoing_.pop_front();
            return later(now);
        }
        if (nic_->free_send_buffers() - static_cast<int>(posting_.size()) <= 0) {
            waiting_for_space_ = true;
            nic_->wait_for_send_space();
            return;
        }
        const std::uint64_t mtu = static_cast<std::uint64_t>(c_.model_.mtu);
        PacketHeader h;
        h.seq = m.seq;
        h.step = m.next;
        h.origin = m.origin;
        h.payload_bytes = static_cast<std::uint32_t>(
            m.next + 1 < m.packets ? mtu : m.bytes - std::uint64_t{m.next} * mtu);
        if (m.next + 1 == m.packets) h.flags = kLastPacket;
        Time at;
        if (pio_) {
            const Time begin = std::max({now, host_free_, bus_free_});
            host_free_ = bus_free_ = begin + transfer_time(h.payload_bytes, c_.model_.pio_bw);
            host_busy_ += host_free_ - begin;
            if (host_free_ > begin) busy(Trace::Track::host, "pio", begin, host_free_);
            at = host_free_;
        } else {
            const Time begin = std::max(now, bus_free_);
            bus_free_ = begin + transfer_time(h.payload_bytes, c_.model_.dma_bw);
            if (bus_free_ > begin) busy(Trace::Track::host, "dma out", begin, bus_free_);
            at = bus_free_;
        }
        posting_.push_back({m.dst, h});
        c_.sim_.schedule(at, *this, kNicPost);
        last_post_ = at;
        if (++m.next == m.packets) outgoing_.pop_front();
        later(pio_ ? at : now);
    }

    // The links to `dst`, looked up once: a node sends to few others, and walking the routing
    // tables for every packet was a large share of a big run's cache misses.
    std::span<const LinkId> path_to(Rank dst) {
        if (const Path* path = paths_.find(dst)) return *path;
        std::vector<LinkId> path;
        c_.topology_.route(rank_, dst, path);
        return paths_.get(dst) = Path(path.begin(), path.end());
    }

    void later(Time at) {
        if (host_scheduled_ || outgoing_.empty()) return;
        host_scheduled_ = true;
        c_.sim_.schedule(at, *this, kHostNext);
    }

    void repost_host_buffers() {
        int n = 0;
        while (!reposts_.empty() && reposts_.front() <= nic_now_) {
            reposts_.pop_front();
            ++n;
        }
        if (n != 0) nic_->post_host_buffers(n);
    }

    std::uint64_t message_bytes(const PacketHeader& last) const {
        return std::uint64_t{last.step} * static_cast<std::uint64_t>(c_.model_.mtu) +
               last.payload_bytes;
    }

    // Packets of one origin must reach the host in order, each exactly once.
    void check_order(const PacketHeader& h) {
        // The first packet from an origin must start a message; any message number will do.
        Expect& e = expected_.get(h.origin, Expect{h.seq, 0});
        const bool in_order = h.seq == e.seq && h.step == e.step;
        if (!in_order) {
            c_.fail("node " + std::to_string(rank_) + " got packet " + std::to_string(h.step) +
                    " of message " + std::to_string(h.seq) + " from origin " +
                    std::to_string(h.origin) + " out of order");
        }
        if (h.flags & kLastPacket) {
            e = {h.seq + 1, 0};
        } else {
            e = {h.seq, h.step + 1};
        }
    }

    void check(Status s, const char* what, Rank node) {
        if (failed(s)) {
            c_.fail("node " + std::to_string(rank_) + "'s NIC: " + what + " " +
                    std::to_string(node) + ": " + to_string(s));
        }
    }

    // Inline so that an untraced run pays one test per call.
    void busy(Trace::Track track, const char* what, Time start, Time end) {
        if (c_.trace_ != nullptr) trace(track, what, start, end);
    }
    void trace(Trace::Track track, const char* what, Time start, Time end) {
        if (!c_.trace_->named(track, static_cast<std::uint32_t>(rank_))) {
            c_.trace_->name(
                track, static_cast<std::uint32_t>(rank_),
                (track == Trace::Track::nic ? "nic " : "host ") + std::to_string(rank_));
        }
        c_.trace_->slice(track, static_cast<std::uint32_t>(rank_), what, start, end);
    }

    struct Expect {
        Seq seq;
        std::uint32_t step;
    };
    // What a node keeps inline (core/small_vector.h), enough for a node of a tree or chain: the
    // links to a neighbour, the destinations and origins it deals with, buffers being copied out.
    using Path = SmallVector<LinkId, 6>;
    static constexpr std::size_t kInlineDestinations = 2;
    static constexpr std::size_t kInlineReposts = 4;

    // What every packet touches comes first and the NIC after it, what only a sender or the end
    // of a message touches last: a node's hot state is a few adjacent cache lines.
    Cluster& c_;
    Rank rank_;
    const Time tns_ = from_us(c_.model_.tns);
    const Time tnr_ = from_us(c_.model_.tnr);
    const bool steps_ = c_.model_.nic_timing == "steps";
    Time nic_free_ = 0;   // the NIC processor (in steps: its sending) is busy until then
    Time rx_free_ = 0;    // in steps: its receiving is busy until then
    Time nic_now_ = 0;    // the NIC's own clock while it handles one event
    Time host_free_ = 0;  // the host CPU
    Time host_busy_ = 0;  // its time on messages and broadcasts: ts, PIO, tr
    Time bus_free_ = 0;   // the I/O bus between them
    bool host_scheduled_ = false;
    bool waiting_for_space_ = false;
    bool wake_scheduled_ = false;
    bool free_scheduled_ = false;
    bool send_ahead_ = false;  // the next transmit may start when the current receive ends
    nic::Agent* agent_ = nullptr;  // coll_->agent, kept at hand for every packet
    const void* hot_ = nullptr;    // what the agent last fed (prepare())
    Seq next_broadcast_ = 0;       // the first broadcast not yet posted
    Ring<Time, kInlineReposts> reposts_;        // when host buffers become free again
    RankMap<Expect, 1> expected_;               // the next packet from each origin
    RankMap<Path, kInlineDestinations> paths_;  // by destination
    // The node's NIC: LFC's, through which the host's messages and the collective agent's
    // packets go (this node is the host, and the fabric).
    std::optional<nic::Nic> nic_;
    void make_nic(const nic::NicConfig& config) {
        nic_.emplace(rank_, config, *this, *this);
        nic_->post_host_buffers(c_.model_.host_buffers);
    }
    // The agent on it, whose broadcast roots the host feeds packet by packet.
    void make_agent(const nic::ChannelConfig& channels) {
        nic::AgentConfig agent;
        agent.channels = channels;
        agent.host_feeds_root = true;
        coll_->agent = std::make_unique<nic::Agent>(rank_, c_.topology_.nodes(), *nic_, agent);
        agent_ = coll_->agent.get();
    }

    const Time ts_ = from_us(c_.model_.ts);
    const Time tr_ = from_us(c_.model_.tr);
    const bool pio_ = c_.model_.host_send == "pio";
    Time last_post_ = 0;
    Ring<Outgoing> outgoing_;
    Ring<Posting> posting_;  // on the I/O bus towards the send queue
    std::vector<Receipt> receipts_;
    RankMap<std::vector<Rank>> host_routes_;  // children, by origin
    std::optional<GmNic> gm_;                 // with p2p_flow=gm: GM's NIC (sim/gm.h)

    // What a node keeps for its collective, made when it takes part in one: a broadcast's nodes
    // stay small.
    struct CollectiveState {
        std::unique_ptr<nic::Agent> agent;
        const plan::BarrierAlgorithm* barrier = nullptr;
        const plan::AllgatherAlgorithm* allgather = nullptr;
        std::uint64_t block_bytes = 0;
        bool combining = false;
        bool fetching = false;  // the packet at the head of the collective queue is being fetched
        Time fetched = 0;       // until then
        bool posted = false;  // the agent has the collective
        Seq seq = 0;
        CollectiveRecord record;
        std::vector<std::byte> result;
        Time last_heard = 0;  // the collective's last packet, or its post
        int silent_timeouts = 0;
        bool timer_scheduled = false;
        nic::Staging staging;
        std::vector<nic::Dma> dmas;
        std::uint64_t staged_bytes = 0;  // reached the host through the staging buffer
        std::vector<HostStep> host_steps;
        std::vector<std::vector<bool>> host_got;  // [step][i]: the message from step.from[i] came
        std::size_t host_step = 0;
        RankMap<Seq> host_seq;  // the next message number, by destination
    };
    std::unique_ptr<CollectiveState> coll_;

    CollectiveState& coll() {
        if (!coll_) coll_ = std::make_unique<CollectiveState>();
        return *coll_;
    }
};

Cluster::Cluster(const Model& model, Topology topology, nic::Forwarding forwarding,
                 Simulator& sim, Trace* trace)
    : model_(model),
      topology_(std::move(topology)),
      sim_(sim),
      trace_(trace),
      switch_hop_(from_us(model.switch_latency)),
      link_free_(topology_.links(), 0) {
    nic_config_ = nic::NicConfig{model.credits,    model.low_water,
                                 model.send_buffers, forwarding,
                                 model.deadlock_recovery != 0, model.recovery_timeout};
    // In a pipelined run every node is busy, so consecutive events are at different nodes, whose
    // state is rarely still in cache: have the next one's on its way while an event runs. Only
    // its first lines (the node's clocks and queues, the NIC's counters and queues): prefetching
    // a whole node (22 lines) fills the core's outstanding-miss slots, and then the running
    // event waits for them. 12 lines measured best at 4096 nodes (8 and 17 were slower).
    sim_.set_prefetch_bytes(std::min<std::size_t>(sizeof(Node), kPrefetchBytes));
    nodes_.reserve(static_cast<std::size_t>(topology_.nodes()));
    for (Rank r = 0; r < topology_.nodes(); ++r) {
        nodes_.push_back(std::make_unique<Node>(*this, r, nic_config_));
    }
}

Cluster::~Cluster() = default;

const nic::Nic& Cluster::nic(Rank node) const { return nodes_[node]->nic(); }

void Cluster::broadcast(const plan::Tree& tree, std::uint64_t bytes, Time at) {
    if (broadcasts_.empty()) {
        for (auto& node : nodes_) node->enable_broadcasts();
    }
    const auto seq = static_cast<Seq>(broadcasts_.size());
    broadcasts_.push_back({&tree, bytes});
    nodes_[tree.root]->send(Node::kBroadcast, tree.root, seq, bytes, at);
}

void Cluster::set_host_route(Rank node, Rank origin, std::span<const Rank> children) {
    nodes_[node]->set_host_route(origin, children);
}

void Cluster::send(Rank node, Rank dst, Seq seq, std::uint64_t bytes, Time at) {
    nodes_[node]->send(dst, node, seq, bytes, at);
}

const std::vector<Cluster::Receipt>& Cluster::receipts(Rank node) const {
    return nodes_[node]->receipts();
}

Time Cluster::last_post(Rank node) const { return nodes_[node]->last_post(); }

void Cluster::hold_host(Rank node, Time until) { nodes_[node]->hold_host(until); }

Time Cluster::host_busy(Rank node) const { return nodes_[node]->host_busy(); }

void Cluster::enable_collectives(const CollectiveOptions& options) {
    collectives_ = options;
    loss_rng_ = Rng(model_.seed, 0x1055);
    // Flow control as in real jobs, unless the network loses packets: a lost packet would take
    // its credit with it (LFC's links are reliable; Yu et al. recover by NACKs instead).
    nic::NicConfig nic = nic_config_;
    if (options.loss > 0) nic.credits = 0;
    for (auto& node : nodes_) node->enable_collectives(nic, options.channels);
    if (options.log != nullptr) options.log->assign(nodes_.size(), {});
}

void Cluster::post_barrier(Rank node, const plan::BarrierAlgorithm& algorithm, Time at) {
    nodes_[node]->post(&algorithm, nullptr, 0, at);
}

void Cluster::post_allgather(Rank node, const plan::AllgatherAlgorithm& algorithm,
                             std::uint64_t block_bytes, Time at) {
    nodes_[node]->post(nullptr, &algorithm, block_bytes, at);
}

void Cluster::run_on_host(Rank node, std::vector<HostStep> steps, Time at) {
    nodes_[node]->run_on_host(std::move(steps), at);
}

const Cluster::CollectiveRecord& Cluster::collective(Rank node) const {
    return nodes_[node]->record();
}

std::span<const std::byte> Cluster::result(Rank node) const { return nodes_[node]->result(); }

std::byte Cluster::block_byte(Rank origin, std::uint64_t offset) {
    return static_cast<std::byte>((static_cast<std::uint64_t>(origin) * 131 + offset * 7 + 1) &
                                  0xff);
}

nic::CollectiveStats Cluster::collective_totals() const {
    nic::CollectiveStats t;
    for (const auto& node : nodes_) {
        const nic::CollectiveStats* s = node->collective_stats();
        if (s == nullptr) continue;
        t.nacks_sent += s->nacks_sent;
        t.nacks_forwarded += s->nacks_forwarded;
        t.retransmitted += s->retransmitted;
        t.duplicates += s->duplicates;
        t.early_dropped += s->early_dropped;
    }
    return t;
}

bool Cluster::lose(const PacketHeader& header) {
    if (collectives_.loss <= 0 ||
        (header.kind != PacketKind::allgather && header.kind != PacketKind::nack)) {
        return false;
    }
    if (loss_rng_.uniform() >= collectives_.loss) return false;
    ++lost_packets_;
    return true;
}

Time Cluster::launch(Rank src, Rank dst, std::span<const LinkId> path, const PacketHeader& header,
                     std::span<const std::byte> payload, Time leave, GmTag gm, Time* arrives) {
    const Time ser = wire_time(header.payload_bytes);
    const Time hop = switch_hop_;
    Time head = leave;
    Time start = leave;
    Time left = 0;  // the tail leaves the first link
    for (const LinkId link : path) {
        start = std::max(head, link_free_[link]);
        link_free_[link] = start + ser;
        if (trace_ != nullptr) {
            if (!trace_->named(Trace::Track::link, link)) {
                trace_->name(Trace::Track::link, link, topology_.link_name(link));
            }
            trace_->slice(Trace::Track::link, link, packet_label(header, gm, "packet"), start,
                          start + ser);
        }
        if (left == 0) left = start + ser;
        head = start + hop;
    }
    std::uint32_t id;
    if (free_flights_.empty()) {
        id = static_cast<std::uint32_t>(flights_.size());
        flights_.push_back({src, dst, header, gm});
    } else {
        id = free_flights_.back();
        free_flights_.pop_back();
        flights_[id] = {src, dst, header, gm};
    }
    if (collectives_.payloads) {
        if (flight_payloads_.size() <= id) flight_payloads_.resize(id + 1);
        flight_payloads_[id].assign(payload.begin(), payload.end());
    }
    *arrives = start + ser;
    sim_.schedule(*arrives, *nodes_[dst], kArrive, id);
    return left;
}

Time Cluster::wire_time(std::uint32_t payload_bytes) {
    if (payload_bytes != wire_payload_) {
        wire_payload_ = payload_bytes;
        wire_time_ = transfer_time(
            std::uint64_t{payload_bytes} + static_cast<std::uint64_t>(model_.header_bytes),
            model_.link_bw);
    }
    return wire_time_;
}

void Cluster::fail(std::string what) {
    if (error_.empty()) error_ = std::move(what);
}

bool Cluster::check_quiescent(std::string* why) const {
    for (Rank r = 0; r < size(); ++r) {
        const nic::Nic& n = nodes_[r]->nic();
        if (!n.idle() || !nodes_[r]->host_idle()) {
            *why = "node " + std::to_string(r) + " still holds or queues packets";
            return false;
        }
        for (const Rank p : n.peers()) {
            const int sum = n.send_credits(p) + nodes_[p]->nic().unreturned_credits(r);
            if (sum != n.window(p)) {
                *why = "credits from node " + std::to_string(r) + " to node " +
                       std::to_string(p) + " add up to " + std::to_string(sum) + ", not " +
                       std::to_string(n.window(p));
                return false;
            }
        }
    }
    return true;
}

GmStats Cluster::gm_totals() const {
    GmStats t;
    for (const auto& node : nodes_) t += node->gm_stats();
    return t;
}

nic::NicStats Cluster::totals() const {
    nic::NicStats t;
    for (const auto& node : nodes_) {
        const nic::NicStats& s = node->nic().stats();
        t.data_sent += s.data_sent;
        t.data_received += s.data_received;
        t.credit_packets += s.credit_packets;
        t.piggybacked += s.piggybacked;
        t.blocked += s.blocked;
        t.delivered += s.delivered;
        t.recoveries += s.recoveries;
        t.recovery_packets += s.recovery_packets;
        t.recovery_acks += s.recovery_acks;
        t.peak_buffers = std::max(t.peak_buffers, s.peak_buffers);
    }
    return t;
}

}  // namespace nicsim::sim
