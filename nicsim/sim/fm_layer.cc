#include "sim/fm_layer.h"

#include <algorithm>
#include <utility>

#include "sim/time.h"

namespace nicsim::sim {

bool parse_fm_loop(std::string_view name, FmLoop* out) {
    if (name == "streamed") {
        *out = FmLoop::streamed;
    } else if (name == "baseline") {
        *out = FmLoop::baseline;
    } else {
        return false;
    }
    return true;
}

bool parse_fm_io(std::string_view name, FmIo* out) {
    if (name == "hybrid") {
        *out = FmIo::hybrid;
    } else if (name == "dma") {
        *out = FmIo::dma;
    } else if (name == "none") {
        *out = FmIo::none;
    } else {
        return false;
    }
    return true;
}

std::string_view fm_loop_name(FmLoop loop) {
    return loop == FmLoop::streamed ? "streamed" : "baseline";
}

std::string_view fm_io_name(FmIo io) {
    return io == FmIo::hybrid ? "hybrid" : io == FmIo::dma ? "dma" : "none";
}

FmLayer::FmLayer(const Model& model, const FmOptions& options, int nodes, Simulator& sim)
    : model_(model), options_(options), sim_(sim), nodes_(static_cast<std::size_t>(nodes)) {
    // Return-to-sender needs queues with an end to find full, and hosts to acknowledge.
    if (!options_.buffers || options_.io == FmIo::none) options_.flow = false;
    for (Node& n : nodes_) {
        n.next_seq.assign(nodes_.size(), 0);
        n.unacked.assign(nodes_.size(), 0);
        n.expected.assign(nodes_.size(), 0);
        n.outstanding.assign(nodes_.size(), 0);
    }
}

void FmLayer::send(Rank src, Rank dst, std::uint32_t bytes, Time at) {
    at = std::max(at, sim_.now());
    if (options_.io == FmIo::none) {
        // No host: the packet is in the LANai send queue from `at` on (§4.2).
        const Packet p{Kind::data, src, dst, dst, nodes_[src].next_seq[dst]++, bytes, 0};
        schedule_packet(at, posted, src, p);
        return;
    }
    nodes_[src].program.push_back({dst, bytes, at});
    wake_host(src, at);
}

void FmLayer::extract_from(Rank node, Time at) {
    nodes_[node].extract_at = at;
    wake_host(node, at);
}

std::uint32_t FmLayer::park(const Packet& p) {
    if (free_flight_.empty()) {
        flight_.push_back(p);
        flight_node_.push_back(0);
        return static_cast<std::uint32_t>(flight_.size() - 1);
    }
    const std::uint32_t slot = free_flight_.back();
    free_flight_.pop_back();
    flight_[slot] = p;
    return slot;
}

FmLayer::Packet FmLayer::unpark(std::uint32_t slot) {
    free_flight_.push_back(slot);
    return flight_[slot];
}

void FmLayer::schedule_packet(Time at, std::uint32_t kind, Rank node, const Packet& p) {
    const std::uint32_t slot = park(p);
    flight_node_[slot] = static_cast<std::uint32_t>(node);
    sim_.schedule(at, *this, kind, slot);
}

void FmLayer::wake_host(Rank node, Time at) {
    Node& n = nodes_[node];
    at = std::max({at, n.host_free, sim_.now()});
    // An earlier wake looks at everything there is, and asks for the later ones it needs.
    if (at >= n.host_wake) return;
    n.host_wake = at;
    sim_.schedule(at, *this, host_wake, static_cast<std::uint32_t>(node));
}

void FmLayer::wake_lanai(Rank node, Time at) {
    Node& n = nodes_[node];
    at = std::max({at, n.lanai_free, sim_.now()});
    if (at >= n.lanai_wake) return;
    n.lanai_wake = at;
    sim_.schedule(at, *this, lanai_wake, static_cast<std::uint32_t>(node));
}

void FmLayer::on_event(std::uint32_t kind, std::uint32_t arg) {
    switch (static_cast<EventKind>(kind)) {
        case host_wake:
            if (sim_.now() >= nodes_[arg].host_wake) nodes_[arg].host_wake = kNever;
            run_host(static_cast<Rank>(arg));
            return;
        case lanai_wake:
            if (sim_.now() >= nodes_[arg].lanai_wake) nodes_[arg].lanai_wake = kNever;
            run_lanai(static_cast<Rank>(arg));
            return;
        case sent: {
            Node& n = nodes_[arg];
            --n.sendq_used;
            wake_host(static_cast<Rank>(arg), sim_.now());
            return;
        }
        default:
            break;
    }
    const Rank node = static_cast<Rank>(flight_node_[arg]);
    const Packet p = unpark(arg);
    Node& n = nodes_[node];
    switch (static_cast<EventKind>(kind)) {
        case pio: {
            const Time start = std::max(sim_.now(), n.sbus_free);
            const Time done =
                start +
                transfer_time(static_cast<std::uint64_t>(model_.header_bytes) + p.bytes,
                              model_.pio_bw) +
                from_us(model_.fm_sync);
            n.sbus_free = done;
            n.host_free = done;
            schedule_packet(done, posted, node, p);
            wake_host(node, done);
            return;
        }
        case posted:
            (options_.io == FmIo::dma && p.kind != Kind::returned ? n.fetch : n.tx).push_back(p);
            wake_lanai(node, sim_.now());
            return;
        case fetched:
            n.tx.push_back(p);
            wake_lanai(node, sim_.now());
            return;
        case arrived:
            n.rx.push_back(p);
            wake_lanai(node, sim_.now());
            return;
        case landed:
            n.host_rx.push_back(p);
            wake_host(node, sim_.now());
            return;
        default:
            return;
    }
}

// ---- host ----------------------------------------------------------------------------------

Time FmLayer::host_send(Rank node, const Packet& p, Time t) {
    Node& n = nodes_[node];
    const std::uint64_t wire_bytes = static_cast<std::uint64_t>(model_.header_bytes) + p.bytes;
    t += from_us(model_.fm_host_send);
    if (options_.buffers) t += from_us(model_.fm_host_buffer);
    if (options_.flow && p.kind == Kind::data) t += from_us(model_.fm_host_flow);
    if (options_.io == FmIo::hybrid) {
        // The host writes the packet into the LANai send queue, then bumps hostsent (§4.4),
        // once the SBus is free at `t`: the bus is not held before the host reaches it.
        ++n.sendq_used;
        schedule_packet(t, pio, node, p);
        return kNever;
    } else {
        // all-DMA: a copy into the DMA region, then the pointer and the trigger (§4.3).
        // Two single-word writes: they do not hold the SBus against the LANai's DMAs.
        t += transfer_time(wire_bytes, model_.copy_bw) + 2 * from_us(model_.fm_sync);
    }
    ++n.sendq_used;
    schedule_packet(t, posted, node, p);
    return t;
}

Time FmLayer::host_extract(Rank node, Time t) {
    Node& n = nodes_[node];
    const Packet p = n.host_rx.front();
    n.host_rx.pop_front();
    t += from_us(model_.fm_host_extract);
    if (options_.buffers) t += from_us(model_.fm_host_buffer);
    if (p.kind == Kind::returned) {
        // Ours, back: it keeps its reject queue slot, and the acknowledgements it carried are
        // owed again.
        n.unacked[p.to] += p.acks;
        n.resend.push_back(p);
        return t;
    }
    if (p.acks > 0) {
        // p.src acknowledges packets this host sent it: their reject queue slots are free.
        n.outstanding[p.src] -= p.acks;
        n.reserved -= p.acks;
    }
    if (p.kind == Kind::ack) return t;
    if (options_.flow) {
        t += from_us(model_.fm_host_flow);
        ++n.unacked[p.src];
    }
    --n.recvq_used;
    n.last_extract = t;
    // A slot of the host receive queue is free: a LANai waiting for one may go on.
    wake_lanai(node, t);
    const Delivery d{p.src, p.seq, p.bytes, t};
    n.delivered.push_back(d);
    if (hook_) hook_(node, d);
    return t;
}

void FmLayer::run_host(Rank node) {
    Node& n = nodes_[node];
    const Time now = sim_.now();
    if (n.host_free > now) {
        wake_host(node, n.host_free);
        return;
    }
    Time t = now;
    const bool room =
        !options_.buffers || n.sendq_used < static_cast<std::uint32_t>(model_.fm_sendq);
    if (now >= n.extract_at && !n.host_rx.empty()) {
        t = host_extract(node, t);
    } else if (!n.resend.empty() && room) {
        Packet p = n.resend.front();
        n.resend.pop_front();
        p.kind = Kind::data;
        p.dst = p.to;
        p.acks = std::exchange(n.unacked[p.to], 0);
        ++stats_.resent;
        t = host_send(node, p, t);
    } else {
        // An acknowledgement alone: a quarter-window's worth, or the last ones after a pause.
        Rank owed = -1;
        for (Rank s = 0; s < static_cast<Rank>(nodes_.size()) && options_.flow; ++s) {
            const bool full = n.unacked[s] >= static_cast<std::uint32_t>(model_.fm_ack_every);
            const bool pause =
                n.unacked[s] > 0 && now >= n.last_extract + from_us(model_.fm_ack_delay);
            if (full || pause) {
                owed = s;
                break;
            }
        }
        const bool reserve =
            !options_.flow || n.reserved < static_cast<std::uint32_t>(model_.fm_rejectq);
        if (owed >= 0 && room) {
            const Packet p{Kind::ack, node, owed, owed, 0, 0, std::exchange(n.unacked[owed], 0)};
            ++stats_.acks;
            t = host_send(node, p, t);
        } else if (!n.program.empty() && n.program.front().at <= now && room && reserve) {
            const Pending call = n.program.front();
            n.program.pop_front();
            const Packet p{Kind::data,
                           node,
                           call.dst,
                           call.dst,
                           n.next_seq[call.dst]++,
                           call.bytes,
                           options_.flow ? std::exchange(n.unacked[call.dst], 0) : 0};
            if (options_.flow) {
                ++n.outstanding[call.dst];
                ++n.reserved;
                stats_.peak_outstanding = std::max(stats_.peak_outstanding, n.reserved);
            }
            t = host_send(node, p, t);
        } else {
            // Idle: wake for the next call, or to flush acknowledgements after a pause; queue
            // space, acknowledgements and packets wake the host when they come.
            if (!n.program.empty() && n.program.front().at > now)
                wake_host(node, n.program.front().at);
            if (now < n.extract_at && !n.host_rx.empty()) wake_host(node, n.extract_at);
            const bool owes =
                std::any_of(n.unacked.begin(), n.unacked.end(), [](auto u) { return u > 0; });
            if (owes)
                wake_host(node, std::max(now + 1, n.last_extract + from_us(model_.fm_ack_delay)));
            return;
        }
    }
    n.host_free = t;  // kNever while a PIO waits for the SBus: its event wakes the host
    wake_host(node, t);
}

// ---- LANai -------------------------------------------------------------------------------

Time FmLayer::loop_cost(Node& n, bool send) {
    // Baseline goes round the whole loop (Fig. 2a) for every packet; streamed stays in the send
    // or receive loop while it has work of that kind (Fig. 2b) and pays for a round only when it
    // changes over.
    const bool round = options_.loop == FmLoop::baseline || n.last_was_send != send;
    n.last_was_send = send;
    return round ? from_us(model_.fm_lanai_loop) : 0;
}

void FmLayer::run_lanai(Rank node) {
    Node& n = nodes_[node];
    const Time now = sim_.now();
    if (n.lanai_free > now) {
        wake_lanai(node, n.lanai_free);
        return;
    }
    const bool host = options_.io != FmIo::none;
    const bool can_send = !n.tx.empty() && n.link_free <= now;
    // Without return-to-sender, a full host queue holds packets in the LANai (and the network).
    const bool recv_blocked = host && options_.buffers && !options_.flow && !n.rx.empty() &&
                              n.rx.front().kind == Kind::data &&
                              n.recvq_used >= static_cast<std::uint32_t>(model_.fm_recvq);
    const bool can_recv = !n.rx.empty() && !recv_blocked;
    const bool can_deliver = !n.to_host.empty() && n.sbus_free <= now;
    const bool can_fetch = !n.fetch.empty() && n.sbus_free <= now;
    Time t = now;
    // Streamed keeps to the kind of work it did last; baseline alternates (one of each per round).
    const bool prefer_send = options_.loop == FmLoop::streamed ? n.last_was_send : !n.last_was_send;
    const bool do_send = can_send && (prefer_send || (!can_recv && !can_deliver));
    if (do_send) {
        const Packet p = n.tx.front();
        n.tx.pop_front();
        t += loop_cost(n, true) + from_us(model_.fm_lanai_send) + from_us(model_.fm_lanai_dma);
        if (options_.buffers) t += from_us(model_.fm_lanai_buffer);
        const Time wire = transfer_time(static_cast<std::uint64_t>(model_.header_bytes) + p.bytes,
                                        model_.link_bw);
        const Time start = std::max(t, n.link_free);
        n.link_free = start + wire;
        // The LCP waits for the channel before its next send (Fig. 2: "send channel is available").
        t = start;
        if (p.kind == Kind::data) ++stats_.data_sent;
        if (host && p.kind != Kind::returned)
            sim_.schedule(n.link_free, *this, sent, static_cast<std::uint32_t>(node));
        schedule_packet(n.link_free + from_us(model_.switch_latency), arrived, p.dst, p);
        n.lanai_free = t;
        wake_lanai(node, t);
        return;
    }
    if (can_deliver) {
        // Every packet waiting goes up in one DMA (§4.4: aggregation) as soon as the SBus is
        // free, ahead of the next receive: "when the SBus becomes available, the LCP DMAs all
        // undelivered packets to the host memory" (§4.4). The host DMA engine carries them
        // while the LCP receives on (§2: three DMA engines), so the LCP does not wait for it;
        // waiting for the channel to fall idle first would let a stream fill the host queue
        // before the host saw a packet, with the SBus idle meanwhile.
        t += loop_cost(n, false) + from_us(model_.fm_lanai_dma);
        std::uint64_t bytes = 0;
        for (const Packet& p : n.to_host)
            bytes += static_cast<std::uint64_t>(model_.header_bytes) + p.bytes;
        const Time done = t + transfer_time(bytes, model_.dma_bw);
        n.sbus_free = done;
        for (const Packet& p : n.to_host) schedule_packet(done, landed, node, p);
        n.to_host.clear();
        ++stats_.host_dmas;
        n.lanai_free = t;
        wake_lanai(node, t);
        return;
    }
    if (can_recv) {
        Packet p = n.rx.front();
        n.rx.pop_front();
        t += loop_cost(n, false) + from_us(model_.fm_lanai_recv) + from_us(model_.fm_lanai_dma);
        if (options_.buffers) t += from_us(model_.fm_lanai_buffer);
        if (options_.interpret) t += from_us(model_.fm_lanai_switch);
        if (!host) {
            const Delivery d{p.src, p.seq, p.bytes, t};
            n.delivered.push_back(d);
            if (hook_) hook_(node, d);
        } else if (p.kind != Kind::data) {
            n.to_host.push_back(p);
        } else {
            const bool full =
                options_.buffers && n.recvq_used >= static_cast<std::uint32_t>(model_.fm_recvq);
            if (options_.flow && (full || p.seq != n.expected[p.src])) {
                // Return to sender: this packet and, to keep order, every later one from p.src
                // until this one comes again.
                p.kind = Kind::returned;
                p.dst = p.src;
                ++stats_.rejected;
                n.tx.push_back(p);
            } else {
                ++n.expected[p.src];
                ++n.recvq_used;
                stats_.peak_recvq = std::max(stats_.peak_recvq, n.recvq_used);
                n.to_host.push_back(p);
            }
        }
        n.lanai_free = t;
        wake_lanai(node, t);
        return;
    }
    if (can_fetch) {
        // all-DMA: the LANai pulls the packet from the DMA region into its send queue; the
        // host DMA engine works while the LCP goes on (§2: three DMA engines).
        const Packet p = n.fetch.front();
        n.fetch.pop_front();
        t += from_us(model_.fm_lanai_dma);
        const Time done =
            t +
            transfer_time(static_cast<std::uint64_t>(model_.header_bytes) + p.bytes, model_.dma_bw);
        n.sbus_free = done;
        schedule_packet(done, fetched, node, p);
        n.lanai_free = t;
        wake_lanai(node, t);
        return;
    }
    // Nothing to do now: wait for the channel or the SBus; new packets wake the LANai.
    if (!n.tx.empty()) wake_lanai(node, n.link_free);
    if (!n.to_host.empty() || !n.fetch.empty()) wake_lanai(node, n.sbus_free);
}

bool FmLayer::check_quiescent(std::string* why) const {
    for (std::size_t i = 0; i < nodes_.size(); ++i) {
        const Node& n = nodes_[i];
        const std::string who = "fm node " + std::to_string(i) + ": ";
        if (!n.program.empty())
            return *why = who + std::to_string(n.program.size()) + " sends never made", false;
        if (!n.host_rx.empty() || !n.resend.empty() || !n.tx.empty() || !n.rx.empty() ||
            !n.to_host.empty() || !n.fetch.empty()) {
            return *why = who + "a queue still holds packets", false;
        }
        if (n.reserved != 0)
            return *why = who + std::to_string(n.reserved) + " reject queue slots still held",
                   false;
        if (n.sendq_used != 0 || n.recvq_used != 0)
            return *why = who + "queue slots still held", false;
        for (std::uint32_t u : n.unacked) {
            if (u != 0) return *why = who + "packets never acknowledged", false;
        }
    }
    return true;
}

}  // namespace nicsim::sim
