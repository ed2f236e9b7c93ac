#include "nic/tx_queue.h"

namespace nicsim::nic {

TxQueue::TxQueue(Fabric& fabric, Rank size, int credits, bool stable_payloads)
    : fabric_(fabric),
      window_(credits),
      stable_payloads_(stable_payloads),
      peers_(credits > 0 ? size : 0, Peer{credits, 0, {}}) {}

TxQueue::Pending TxQueue::pending(Rank dst, const PacketHeader& header,
                                  std::span<const std::byte> payload) const {
    Pending p{dst, header, payload, {}};
    if (!stable_payloads_) {
        p.copy.assign(payload.begin(), payload.end());
        p.payload = p.copy;  // the vector's storage stays put when the record moves
    }
    return p;
}

Status TxQueue::send(Rank dst, const PacketHeader& header, std::span<const std::byte> payload) {
    if (failed(error_)) return error_;
    if (window_ > 0 && header.kind != PacketKind::credit) {
        Peer& peer = peers_[dst];
        if (peer.credits == 0 || !peer.blocked.empty()) {
            peer.blocked.push_back(pending(dst, header, payload));
            ++blocked_count_;
            ++stalls_;
            return Status::ok;
        }
        --peer.credits;
    }
    return transmit(dst, header, payload);
}

Status TxQueue::transmit(Rank dst, PacketHeader header, std::span<const std::byte> payload) {
    if (window_ > 0) {
        // Whatever is owed to dst rides along; a credit update carries nothing else.
        Peer& peer = peers_[dst];
        header.credits = static_cast<std::uint16_t>(peer.owed);
        peer.owed = 0;
    }
    if (ready_.empty()) {
        const Status s = fabric_.transmit(dst, header, payload);
        if (s != Status::again) {
            if (failed(s)) error_ = s;
            return error_;
        }
    }
    ready_.push_back(pending(dst, header, payload));
    return Status::ok;
}

Status TxQueue::flush() {
    while (!ready_.empty() && !failed(error_)) {
        const Pending& front = ready_.front();
        const Status s = fabric_.transmit(front.dst, front.header, front.payload);
        if (s == Status::again) break;
        if (failed(s)) error_ = s;
        ready_.pop_front();
    }
    return error_;
}

Status TxQueue::received(Rank src, const PacketHeader& header) {
    if (window_ == 0) return Status::ok;
    if (src < 0 || src >= static_cast<Rank>(peers_.size())) return Status::protocol;
    Peer& peer = peers_[src];
    if (header.credits > window_ - peer.credits) return Status::protocol;
    peer.credits += header.credits;
    if (header.kind == PacketKind::credit) return unblock(src);
    if (const Status s = unblock(src); failed(s)) return s;
    if (++peer.owed * 2 >= window_) {
        PacketHeader update;
        update.kind = PacketKind::credit;
        return transmit(src, update, {});
    }
    return Status::ok;
}

Status TxQueue::unblock(Rank dst) {
    Peer& peer = peers_[dst];
    while (peer.credits > 0 && !peer.blocked.empty() && !failed(error_)) {
        Pending p = std::move(peer.blocked.front());
        peer.blocked.pop_front();
        --blocked_count_;
        --peer.credits;
        transmit(dst, p.header, p.payload);
    }
    return error_;
}

}  // namespace nicsim::nic
