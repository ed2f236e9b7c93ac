// LFC's deadlock detection and recovery (Bhoedjang et al. §4): the parts of nic::Nic that run it.
// The protocol and the state it keeps are described in nic/deadlock_recovery.h.
#include <algorithm>

#include "nic/nic.h"

namespace nicsim::nic {

DeadlockChannel& Nic::channel(PeerId owner) {
    if (channels_.size() <= owner) channels_.resize(owner + 1);
    return channels_[owner];
}

// §4.1: a non-empty blocked-sends queue signals deadlock at once. One recovery at a time; the
// next starts from the queue after the last one served, so every queue gets its turn.
void Nic::consider_recovery() {
    if (recovering_ || failed(error_)) return;
    const auto queues = static_cast<PeerId>(blocked_.size());
    const bool timeout = config_.recovery_timeout_us > 0;
    if (timeout) ask_for_tick();
    for (PeerId i = 0; i < queues; ++i) {
        const PeerId dst = (next_queue_ + i) % queues;
        if (blocked_[dst].empty()) continue;
        if (timeout && (dst >= watch_.size() || !watch_[dst].suspected)) continue;
        next_queue_ = (dst + 1) % queues;
        if (rank_ > 0xffff) {  // a flagged packet names its owner in 16 bits
            error_ = Status::invalid;
            return;
        }
        const BufferId id = blocked_[dst].front();
        blocked_[dst].pop_front();
        --peers_[dst].waiting;
        --waiting_;
        transmit_.push_back({id, dst, kOwnChannel});
        recovering_ = true;
        ++stats_.recoveries;
        return;
    }
}

// §5.2's refinement: the fabric ticks while queues are blocked; a queue blocked at two ticks
// in a row with no packet leaving it on a credit in between is suspected until one does.
void Nic::ask_for_tick() {
    if (tick_pending_) return;
    for (const Ring<BufferId>& queue : blocked_) {
        if (queue.empty()) continue;
        tick_pending_ = true;
        fabric_.tick_after(config_.recovery_timeout_us);
        return;
    }
}

Status Nic::on_tick() {
    if (failed(error_)) return error_;
    tick_pending_ = false;
    if (watch_.size() < blocked_.size()) watch_.resize(blocked_.size());
    for (PeerId dst = 0; dst < blocked_.size(); ++dst) {
        QueueWatch& w = watch_[dst];
        const bool blocked = !blocked_[dst].empty();
        if (!blocked) {
            w.suspected = false;
        } else if (w.blocked_at_tick && w.moved == w.seen) {
            w.suspected = true;
        } else if (w.moved != w.seen) {
            w.suspected = false;
        }
        w.blocked_at_tick = blocked;
        w.seen = w.moved;
    }
    maybe_recover();
    ask_for_tick();
    return failed(pump()) ? error_ : Status::ok;
}

// §4.2: a packet in `owner`'s channel makes this NIC part of the deadlocked subtree.
Status Nic::on_flagged(PeerId from, Rank owner_rank, const PacketHeader& header,
                       std::span<const std::byte> payload) {
    if (!config_.deadlock_recovery || owner_rank == rank_ ||
        (header.kind != PacketKind::bcast && header.kind != PacketKind::unicast)) {
        return Status::protocol;
    }
    const PeerId owner = peer_id(owner_rank);
    DeadlockChannel& ch = channel(owner);
    if (ch.active) return Status::protocol;  // the owner's buffer here is taken
    ch = DeadlockChannel{true, true, from, 0};
    ++stats_.data_received;
    PacketHeader h = header;
    h.flags &= static_cast<std::uint16_t>(~kDeadlockFlag);
    const BufferId id = hold(h, payload, from);
    buffers_[id].channel = owner;
    buffers_[id].for_host = true;
    in_channels_.push_back(id);
    // A broadcast's packet goes on in the channel as its agent forwards it (forward()).
    const Status delivered = deliver_or_keep(id);
    // A free buffer of the sender's window takes the packet out of the channel at once.
    Peer& p = peers_[from];
    if (p.unreturned > 0) {
        --p.unreturned;
        migrate_channel_packet(from);
    }
    maybe_free(id);
    maybe_ack(owner);
    return delivered;
}

// The packet joins every child's blocked-sends queue; a child without a credit is sent, in the
// owner's channel, the first blocked packet of the same tree: per-tree FIFO order holds.
void Nic::forward_in_recovery(BufferId id, std::span<const PeerId> children, PeerId owner) {
    if (children.empty()) return;
    buffers_[id].sends_left = static_cast<int>(children.size());
    const Rank origin = buffers_[id].header.origin;
    for (const PeerId child : children) {
        Peer& p = peers_[child];
        if (p.waiting == 0 && p.send_credits > 0) {
            --p.send_credits;
            transmit_.push_back({id, child});
            continue;
        }
        if (blocked_.size() <= child) blocked_.resize(child + 1);
        blocked_[child].push_back(id);
        ++p.waiting;
        ++waiting_;
        ++stats_.blocked;
        BufferId first = id;
        take_first_of_tree(child, origin, &first);
        transmit_.push_back({first, child, owner});
        ++channel(owner).acks_pending;
    }
}

// Takes the first broadcast packet of `origin`'s tree out of `dst`'s blocked-sends queue.
bool Nic::take_first_of_tree(PeerId dst, Rank origin, BufferId* id) {
    Ring<BufferId>& queue = blocked_[dst];
    const std::size_t n = queue.size();
    bool found = false;
    for (std::size_t i = 0; i < n; ++i) {
        const BufferId b = queue.front();
        queue.pop_front();
        const PacketHeader& h = buffers_[b].header;
        if (!found && h.kind == PacketKind::bcast && h.origin == origin) {
            found = true;
            *id = b;
            continue;
        }
        queue.push_back(b);
    }
    if (found) {
        --peers_[dst].waiting;
        --waiting_;
    }
    return found;
}

// A buffer of `from`'s window is free: the oldest of `from`'s packets still in a deadlock
// channel moves into it, and that channel is free. The sender does not get the credit back.
bool Nic::migrate_channel_packet(PeerId from) {
    const auto it = std::find_if(in_channels_.begin(), in_channels_.end(),
                                 [&](BufferId b) { return buffers_[b].from == from; });
    if (it == in_channels_.end()) return false;
    Buffer& b = buffers_[*it];
    const PeerId owner = b.channel;
    b.channel = kNoChannel;
    in_channels_.erase(it);
    ++peers_[from].held;
    free_channel(owner);
    return true;
}

void Nic::free_channel(PeerId owner) {
    channel(owner).holding = false;
    maybe_ack(owner);
}

// Acknowledgements merge back along the subtree: this NIC answers its parent once its own buffer
// of the owner's is free and every child it flagged has answered.
void Nic::maybe_ack(PeerId owner) {
    DeadlockChannel& ch = channel(owner);
    if (!ch.active || ch.holding || ch.acks_pending != 0) return;
    ch.active = false;
    transmit_.push_back({kRecoveryAck, ch.parent, owner});
}

Status Nic::on_recovery_ack(PeerId, Rank owner_rank) {
    if (owner_rank == rank_) {
        if (!recovering_) return Status::protocol;
        recovering_ = false;  // the channel is free on every NIC: the next recovery may start
        return Status::ok;
    }
    const PeerId owner = peer_id(owner_rank);
    DeadlockChannel& ch = channel(owner);
    if (!ch.active || ch.acks_pending == 0) return Status::protocol;
    --ch.acks_pending;
    maybe_ack(owner);
    return Status::ok;
}

std::vector<BlockedQueue> Nic::blocked_queues() const {
    std::vector<BlockedQueue> queues;
    for (PeerId dst = 0; dst < blocked_.size(); ++dst) {
        if (!blocked_[dst].empty()) queues.push_back({peers_.keys()[dst], blocked_[dst].size()});
    }
    std::sort(queues.begin(), queues.end(),
              [](const BlockedQueue& a, const BlockedQueue& b) { return a.dst < b.dst; });
    return queues;
}

}  // namespace nicsim::nic
