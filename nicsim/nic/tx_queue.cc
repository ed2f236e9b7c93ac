#include "nic/tx_queue.h"

#include <algorithm>

namespace nicsim::nic {

TxQueue::TxQueue(Fabric& fabric, std::vector<int> windows, bool stable_payloads)
    : fabric_(fabric), stable_payloads_(stable_payloads) {
    if (std::all_of(windows.begin(), windows.end(), [](int w) { return w == 0; })) return;
    peers_.reserve(windows.size());
    for (const int w : windows) peers_.push_back(Peer{w, w, 0, {}});
}

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
    if (!peers_.empty() && peers_[dst].window > 0 && header.kind != PacketKind::credit) {
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
    if (!peers_.empty() && peers_[dst].window > 0) {
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
    if (peers_.empty()) return Status::ok;
    if (src < 0 || src >= static_cast<Rank>(peers_.size())) return Status::protocol;
    Peer& peer = peers_[src];
    if (header.credits > peer.window - peer.credits) return Status::protocol;
    if (peer.window == 0) return Status::ok;
    peer.credits += header.credits;
    if (header.kind == PacketKind::credit) return unblock(src);
    if (const Status s = unblock(src); failed(s)) return s;
    if (++peer.owed * 2 >= peer.window) {
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
