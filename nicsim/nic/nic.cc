#include "nic/nic.h"

#include <algorithm>
#include <limits>

namespace nicsim::nic {

namespace {

std::uint64_t message_key(Rank origin, Seq seq) {
    return (static_cast<std::uint64_t>(static_cast<std::uint32_t>(origin)) << 32) | seq;
}

}  // namespace

Nic::Nic(Rank rank, const NicConfig& config, Fabric& fabric, HostPort& host,
         std::vector<int> peer_credits)
    : rank_(rank),
      config_(config),
      send_buffers_free_(config.send_buffers > 0 ? config.send_buffers
                                                 : std::numeric_limits<int>::max()),
      fabric_(fabric),
      host_(host),
      peer_credits_(std::move(peer_credits)) {}

Nic::PeerId Nic::add_peer(Rank rank) {
    const int window = window_of(rank);
    return peers_.add(rank, Peer{window, 0, 0, 0, static_cast<std::uint16_t>(window), false});
}

int Nic::window_of(Rank rank) const {
    if (peer_credits_.empty()) return config_.credits;
    return rank >= 0 && static_cast<std::size_t>(rank) < peer_credits_.size()
               ? peer_credits_[static_cast<std::size_t>(rank)]
               : 0;
}

NICSIM_HOT_PATH
Nic::Route Nic::route(std::span<const Rank> children) {
    Route ids;
    for (const Rank child : children) ids.push_back(peer_id(child));
    return ids;
}

int Nic::send_credits(Rank peer) const {
    const Peer* p = peers_.find(peer);
    return p == nullptr ? window_of(peer) : p->send_credits;
}

int Nic::unreturned_credits(Rank peer) const {
    const Peer* p = peers_.find(peer);
    return p == nullptr ? 0 : p->unreturned;
}

std::vector<Rank> Nic::peers() const {
    std::vector<Rank> ranks(peers_.keys().begin(), peers_.keys().end());
    std::sort(ranks.begin(), ranks.end());
    return ranks;
}

bool Nic::idle() const {
    return free_.size() == buffers_.size() && transmit_.empty() && to_host_.empty() &&
           fcfs_.empty() && !recovering_ && in_channels_.empty() &&
           std::none_of(channels_.begin(), channels_.end(),
                        [](const DeadlockChannel& ch) { return ch.active; });
}

Nic::BufferId Nic::hold(const PacketHeader& header, std::span<const std::byte> payload,
                        PeerId from) {
    BufferId id;
    if (free_.empty()) {
        id = static_cast<BufferId>(buffers_.size());
        buffers_.emplace_back();
    } else {
        id = free_.back();
        free_.pop_back();
    }
    Buffer& b = buffers_[id];
    b.header = header;
    b.header.credits = 0;
    if (!payload.empty()) {
        if (payloads_.size() <= id) payloads_.resize(id + 1);
        Payload& p = payloads_[id];
        if (config_.stable_payloads) {
            p.bytes = payload;
        } else {
            p.copy.assign(payload.begin(), payload.end());
            p.bytes = p.copy;  // the vector's storage stays put when payloads_ grows
        }
    }
    b.from = from;
    b.sends_left = 0;
    b.for_host = false;
    b.slot_held = true;
    b.channel = kNoChannel;
    stats_.peak_buffers = std::max(stats_.peak_buffers, buffers_.size() - free_.size());
    return id;
}

std::span<const std::byte> Nic::payload_of(BufferId id) const {
    return id < payloads_.size() ? payloads_[id].bytes : std::span<const std::byte>();
}

void Nic::keep_copy(BufferId id) {
    if (id >= payloads_.size() || payloads_[id].bytes.data() == payloads_[id].copy.data()) return;
    Payload& p = payloads_[id];
    p.copy.assign(p.bytes.begin(), p.bytes.end());
    p.bytes = p.copy;
}

NICSIM_HOT_PATH
Status Nic::post_send(Rank dst, PacketHeader header, std::span<const std::byte> payload) {
    if (failed(error_)) return error_;
    if (send_buffers_free_ == 0) {
        host_waits_for_space_ = true;
        return Status::again;
    }
    header.kind = PacketKind::unicast;
    --send_buffers_free_;
    return queue(peer_id(dst), header, payload, kFromHost);
}

NICSIM_HOT_PATH
bool Nic::send_now(PeerId to, PacketHeader& header, std::span<const std::byte> payload,
                   Status* s) {
    Peer& p = peers_[to];
    if (!transmit_.empty() || (p.window != 0 && (p.waiting != 0 || p.send_credits == 0))) {
        return false;
    }
    header.credits = static_cast<std::uint16_t>(std::min(p.unreturned, 0xffff));
    *s = fabric_.transmit(peers_.keys()[to], header, payload);
    if (*s == Status::again) return false;
    if (failed(*s)) {
        error_ = *s;
        return true;
    }
    if (p.window > 0) --p.send_credits;
    p.unreturned -= header.credits;
    ++stats_.data_sent;
    if (header.credits != 0) ++stats_.piggybacked;
    stats_.peak_buffers = std::max(stats_.peak_buffers, buffers_.size() - free_.size() + 1);
    return true;
}

NICSIM_HOT_PATH
Status Nic::send(Rank dst, PacketHeader& header, std::span<const std::byte> payload) {
    if (failed(error_)) return error_;
    return send_to(peer_id(dst), header, payload);
}

NICSIM_HOT_PATH
Status Nic::send_to(PeerId dst, PacketHeader& header, std::span<const std::byte> payload) {
    // A packet that may leave now goes straight to the fabric, which copies what it needs: it
    // needs no buffer here.
    Status s;
    if (!config_.deadlock_recovery && send_now(dst, header, payload, &s)) return s;
    return queue(dst, header, payload, kFromCollective);
}

NICSIM_HOT_PATH
Status Nic::multicast(const Route& children, PacketHeader& header,
                      std::span<const std::byte> payload) {
    if (failed(error_)) return error_;
    if (config_.send_buffers == 0 && config_.forwarding == Forwarding::fpfs &&
        !config_.deadlock_recovery) {  // from the host's memory, to each child in turn
        for (const PeerId child : children) {
            if (const Status s = send_to(child, header, payload); failed(s)) return s;
        }
        return Status::ok;
    }
    if (send_buffers_free_ == 0) {
        host_waits_for_space_ = true;
        return Status::again;
    }
    --send_buffers_free_;
    const BufferId id = hold(header, payload, kFromHost);
    forward(id, children);
    maybe_free(id);
    maybe_recover();
    return pump();
}

NICSIM_HOT_PATH
Status Nic::forward(const Route& children, const PacketHeader& header,
                    std::span<const std::byte> payload) {
    if (failed(error_)) return error_;
    Delivery* d = delivering_;
    // Not the packet being delivered, or one the host placed in a buffer that outlives it (a
    // real job's collective, whose buffer is the packet's receive buffer): sent anew from there,
    // its receive buffer here free at once.
    if (d == nullptr || (d->buffer == kNoBuffer && config_.stable_payloads) ||
        d->header.seq != header.seq || d->header.step != header.step ||
        d->header.kind != header.kind) {
        PacketHeader out = header;
        for (const PeerId child : children) {
            if (const Status s = send_to(child, out, payload); failed(s)) return s;
        }
        return Status::ok;
    }
    if (children.empty()) return Status::ok;
    if (d->buffer == kNoBuffer) {
        // Taken at once so far: what may leave now goes straight to the fabric, and only what
        // has to wait takes the receive buffer (and holds its sender's credit) until it has left.
        std::size_t sent = 0;
        if (config_.forwarding == Forwarding::fpfs) {
            Status s = Status::ok;
            PacketHeader out = d->header;
            while (sent < children.size() && send_now(children[sent], out, payload, &s)) {
                if (failed(s)) return s;
                ++sent;
            }
            if (sent == children.size()) return Status::ok;
            d->refused = s == Status::again;  // on_packet() need not offer the queue again
        }
        Peer& p = peers_[d->from];
        if (p.window > 0) ++p.held;
        d->buffer = hold(d->header, payload, d->from);
        forward(d->buffer, std::span<const PeerId>(children).subspan(sent));
        return Status::ok;
    }
    if (config_.stable_payloads && d->buffer < payloads_.size() && !payload.empty()) {
        payloads_[d->buffer].bytes = payload;  // where the host placed it, which outlives it
    }
    if (d->channel != kNoChannel) {
        forward_in_recovery(d->buffer, children, d->channel);
    } else {
        forward(d->buffer, children);
    }
    return Status::ok;
}

NICSIM_HOT_PATH
Status Nic::queue(PeerId dst, const PacketHeader& header, std::span<const std::byte> payload,
                  PeerId from) {
    const BufferId id = hold(header, payload, from);
    buffers_[id].sends_left = 1;
    enqueue(id, dst);
    maybe_free(id);
    maybe_recover();
    return pump();
}

void Nic::post_host_buffers(int n) {
    host_buffers_ += n;
    while (host_buffers_ > 0 && !to_host_.empty()) {
        const BufferId id = to_host_.front();
        to_host_.pop_front();
        --host_buffers_;
        (void)hand_to_host(id);  // a host that posts buffers takes what it is handed
        maybe_free(id);
    }
    maybe_recover();
    pump();
}

NICSIM_HOT_PATH
Status Nic::on_packet(Rank src, const PacketHeader& header, std::span<const std::byte> payload) {
    if (header.kind == PacketKind::abort) {  // outside the window (tell())
        if (header.credits != 0 || header.payload_bytes != 0) return Status::protocol;
        return port(header.kind).deliver(src, header, payload);
    }
    if (failed(error_)) return error_;
    const PeerId from = peer_id(src);
    if ((header.flags & kDeadlockFlag) != 0) {
        const Status s = on_flagged(from, static_cast<Rank>(header.credits), header, payload);
        if (failed(s)) return s;
        maybe_recover();
        return failed(pump()) ? error_ : Status::ok;
    }
    Peer& p = peers_[from];
    if (header.credits != 0) {
        // A sender never returns more than it was lent.
        if (header.credits > p.window - p.send_credits) return Status::protocol;
        p.send_credits += header.credits;
        unblock(from);
    }
    Status delivered = Status::ok;
    switch (header.kind) {
    case PacketKind::credit:
        break;
    case PacketKind::recovery_ack:
        if (const Status s = on_recovery_ack(from, header.origin); failed(s)) return s;
        break;
    default: {  // data: a host's message, or a packet of a collective's protocol
        if (p.window > 0 && p.held + p.unreturned >= p.window) return Status::protocol;
        ++stats_.data_received;
        if (taken_at_once(header.kind) && !config_.deadlock_recovery) {
            // The host takes it at once: it needs a buffer here only while forward() sends it
            // on, and makes one then.
            PacketHeader h = header;
            h.credits = 0;
            Delivery d{from, h};
            stats_.peak_buffers = std::max(stats_.peak_buffers, buffers_.size() - free_.size() + 1);
            ++stats_.delivered;
            delivering_ = &d;
            delivered = port(header.kind).deliver(src, h, payload);
            delivering_ = nullptr;
            if (d.buffer == kNoBuffer) {
                if (peers_[from].window > 0) owe_credit(from);  // the host may have added peers
            } else {
                if (config_.forwarding == Forwarding::fcfs) release_slot(buffers_[d.buffer]);
                maybe_free(d.buffer);
            }
            if (d.refused) return delivered;  // the fabric takes nothing more now
            break;
        }
        if (p.window > 0) ++p.held;
        const BufferId id = hold(header, payload, from);
        buffers_[id].for_host = true;
        delivered = deliver_or_keep(id);
        const Buffer& b = buffers_[id];  // the host may have sent: buffers_ may have moved
        if (b.sends_left != 0 || b.for_host) keep_copy(id);  // it outlives the caller's bytes
        maybe_free(id);
        break;
    }
    }
    maybe_recover();
    return failed(pump()) ? error_ : delivered;
}

void Nic::forward(BufferId id, std::span<const PeerId> children) {
    if (children.empty()) return;
    buffers_[id].sends_left = static_cast<int>(children.size());
    if (config_.forwarding == Forwarding::fpfs) {
        for (const PeerId child : children) enqueue(id, child);
        return;
    }
    const PacketHeader& h = buffers_[id].header;
    FcfsMessage& message = fcfs_[message_key(h.origin, h.seq)];
    message.buffers.push_back(id);
    message.complete = (h.flags & kLastPacket) != 0;
    serve_fcfs(message, children);
    if (message.child == children.size()) fcfs_.erase(message_key(h.origin, h.seq));
}

void Nic::serve_fcfs(FcfsMessage& message, std::span<const PeerId> children) {
    while (message.child < children.size()) {
        if (message.next < message.buffers.size()) {
            enqueue(message.buffers[message.next++], children[message.child]);
        } else if (message.complete) {
            ++message.child;
            message.next = 0;
        } else {
            return;
        }
    }
}

bool Nic::holds(Rank dst, const PacketHeader& header) const {
    const std::uint32_t peer = peers_.index(dst);
    if (peer == RankMap<Peer, kInlinePeers>::kAbsent) return false;
    const auto same = [&](BufferId id) {
        const PacketHeader& h = buffers_[id].header;
        return h.kind == header.kind && h.seq == header.seq && h.step == header.step &&
               h.origin == header.origin;
    };
    for (std::size_t i = 0; i < transmit_.size(); ++i) {
        if (transmit_[i].dst == peer && transmit_[i].buffer < buffers_.size() &&
            same(transmit_[i].buffer)) {
            return true;
        }
    }
    if (peer < blocked_.size()) {
        for (std::size_t i = 0; i < blocked_[peer].size(); ++i) {
            if (same(blocked_[peer][i])) return true;
        }
    }
    return false;
}

void Nic::enqueue(BufferId id, PeerId dst) {
    Peer& p = peers_[dst];
    if (p.window == 0) {
        transmit_.push_back({id, dst});
    } else if (p.waiting == 0 && p.send_credits > 0) {
        --p.send_credits;
        transmit_.push_back({id, dst});
    } else {
        if (blocked_.size() <= dst) blocked_.resize(dst + 1);
        blocked_[dst].push_back(id);
        ++p.waiting;
        ++waiting_;
        ++stats_.blocked;
    }
}

void Nic::unblock(PeerId dst) {
    Peer& p = peers_[dst];
    if (p.waiting > 0 && p.send_credits > 0 && dst < watch_.size()) ++watch_[dst].moved;
    for (; p.waiting > 0 && p.send_credits > 0; --p.waiting) {
        --p.send_credits;
        --waiting_;
        transmit_.push_back({blocked_[dst].front(), dst});
        blocked_[dst].pop_front();
    }
}

Status Nic::deliver_or_keep(BufferId id) {
    if (taken_at_once(buffers_[id].header.kind)) return hand_to_host(id);
    if (!to_host_.empty() || host_buffers_ == 0) {
        to_host_.push_back(id);  // the host has no buffer: the packet waits, holding its credit
        return Status::ok;
    }
    --host_buffers_;
    return hand_to_host(id);
}

Status Nic::hand_to_host(BufferId id) {
    const PacketHeader header = buffers_[id].header;
    const PeerId from = buffers_[id].from;
    // The host may send from here, which may move buffers_.
    Delivery d{from, header, id, buffers_[id].channel};
    delivering_ = &d;
    const Status s = port(header.kind).deliver(peers_.keys()[from], header, payload_of(id));
    delivering_ = nullptr;
    ++stats_.delivered;
    Buffer& b = buffers_[id];
    b.for_host = false;
    if (config_.forwarding == Forwarding::fcfs) release_slot(b);
    return s;
}

// FCFS keeps a packet until its last child has it, which takes the whole message when the NIC
// serves its first child; a send buffer or window shorter than the message would then stall it
// for good (Kesavan and Panda has no flow control). So under FCFS a packet moves to the NIC's
// message store and gives its slot back early: a received one once the host has it, a sent one once
// it left for the first child. The store is what FCFS costs in buffering (NicStats::peak_buffers).
void Nic::release_slot(Buffer& b) {
    if (!b.slot_held) return;
    b.slot_held = false;
    if (b.from == kFromHost) {
        ++send_buffers_free_;
        if (host_waits_for_space_) {
            host_waits_for_space_ = false;
            host_.send_space();
        }
        return;
    }
    if (b.from == kFromCollective) return;
    if (b.channel != kNoChannel) {  // a deadlock buffer: no window's, no credit to return
        const PeerId owner = b.channel;
        b.channel = kNoChannel;
        const auto id = static_cast<BufferId>(&b - buffers_.data());
        in_channels_.erase(std::find(in_channels_.begin(), in_channels_.end(), id));
        free_channel(owner);
        return;
    }
    Peer& p = peers_[b.from];
    if (p.window == 0) return;
    --p.held;
    if (migrate_channel_packet(b.from)) return;
    owe_credit(b.from);
}

// A receive buffer of `from`'s window is free: its credit goes back on the next packet to
// `from`, or in an update of its own once `from` is down to the low-water mark.
void Nic::owe_credit(PeerId from) {
    Peer& p = peers_[from];
    ++p.unreturned;
    const int sender_has = p.window - p.held - p.unreturned;
    if (sender_has <= low_water(p) && !p.update_queued) {
        p.update_queued = true;
        transmit_.push_back({kCreditUpdate, from});
    }
}

void Nic::maybe_free(BufferId id) {
    Buffer& b = buffers_[id];
    if (b.sends_left != 0 || b.for_host) return;
    release_slot(b);
    if (id < payloads_.size()) {
        payloads_[id].copy.clear();
        payloads_[id].bytes = {};
    }
    free_.push_back(id);
}

void Nic::shut(Status why) {
    if (!failed(error_)) error_ = why;
    while (!transmit_.empty()) transmit_.pop_front();
    for (Ring<BufferId>& queue : blocked_) {
        while (!queue.empty()) queue.pop_front();
    }
    waiting_ = 0;
}

void Nic::tell(Rank dst, const PacketHeader& header) {
    PacketHeader h = header;
    h.credits = 0;  // outside the window
    telling_.push_back({dst, h});
    pump_tells();
}

void Nic::pump_tells() {
    std::size_t kept = 0;
    for (const Tell& t : telling_) {
        // Each to its own peer, and a peer's refusal holds back none of the others'.
        if (fabric_.transmit(t.dst, t.header, {}) == Status::again) telling_[kept++] = t;
    }
    telling_.resize(kept);
}

NICSIM_HOT_PATH
Status Nic::progress() {
    if (!telling_.empty()) pump_tells();
    maybe_recover();
    const Status s = pump();
    if (failed(s)) return s;
    return transmit_.empty() ? Status::ok : Status::in_progress;
}

NICSIM_HOT_PATH
Status Nic::send_queued() {
    while (!transmit_.empty() && !failed(error_)) {
        const Descriptor d = transmit_.front();
        Peer& p = peers_[d.dst];
        PacketHeader header;
        std::span<const std::byte> payload;
        if (d.buffer == kCreditUpdate) {
            p.update_queued = false;
            if (p.unreturned == 0) {  // a data packet carried them back meanwhile
                transmit_.pop_front();
                continue;
            }
            header.kind = PacketKind::credit;
            header.origin = rank_;
        } else if (d.buffer == kRecoveryAck) {
            header.kind = PacketKind::recovery_ack;
            header.origin = peers_.keys()[d.channel];
        } else {
            header = buffers_[d.buffer].header;
            payload = payload_of(d.buffer);
        }
        const bool flagged = d.channel != kNoChannel && d.buffer != kRecoveryAck;
        if (flagged) {  // outside the window: it names the channel's owner instead of credits
            header.flags |= kDeadlockFlag;
            header.credits = static_cast<std::uint16_t>(
                d.channel == kOwnChannel ? rank_ : peers_.keys()[d.channel]);
        } else {
            header.credits = static_cast<std::uint16_t>(std::min(p.unreturned, 0xffff));
        }
        const Status s = fabric_.transmit(peers_.keys()[d.dst], header, payload);
        if (s == Status::again) {  // progress() offers it again
            if (d.buffer == kCreditUpdate) p.update_queued = true;
            return Status::ok;
        }
        if (failed(s)) {
            error_ = s;
            return s;
        }
        transmit_.pop_front();
        if (!flagged) p.unreturned -= header.credits;
        if (d.buffer == kCreditUpdate) {
            ++stats_.credit_packets;
        } else if (d.buffer == kRecoveryAck) {
            ++stats_.recovery_acks;
        } else {
            if (flagged) ++stats_.recovery_packets;
            ++stats_.data_sent;
            if (!flagged && header.credits != 0) ++stats_.piggybacked;
            Buffer& b = buffers_[d.buffer];
            if (config_.forwarding == Forwarding::fcfs && b.from == kFromHost) release_slot(b);
            --b.sends_left;
            maybe_free(d.buffer);
        }
    }
    return error_;
}

}  // namespace nicsim::nic
