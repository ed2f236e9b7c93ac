// The NIC's transmit queue, with LFC's flow control between every pair of NICs (Bhoedjang et al. §3.1).
//
// Packets leave in the order they were queued. A packet the fabric cannot take now waits, with
// everything behind it, until flush() finds room.
//
// With a window of `credits` (> 0), every packet but a credit update needs a credit for its
// destination: the receiver keeps that many receive buffers for each sender, so a packet sent
// with a credit always finds one. A packet without a credit waits in its destination's
// blocked-sends queue, which is served before any new packet to that destination, so packets to
// one destination still leave in queue order. The receiver frees a buffer once the packet is
// consumed (consumed()) and owes the sender a credit; owed credits ride on the next packet to
// that sender, or go in an explicit credit packet once half the window is owed. A window of 0
// turns flow control off: for every peer (the simulator's collectives after Yu et al., which have
// global channels), or for one whose transport is its own window (a ring of that many slots).
//
// A packet the fabric takes at once is never copied: the fabric copies what it needs, so a NIC
// can inject the same bytes again and again (Yu et al. §4.3: forwarding and resending without
// claiming a send buffer). Only a packet that has to wait is copied into the queue, unless the
// queue is told that payloads stay put (`stable_payloads`): in a real job every payload lies in
// a collective's buffer, which outlives the collective's packets in the queue, and the fabric
// itself may send from it in place.
#pragma once

#include <cstdint>
#include <vector>

#include "core/packet.h"
#include "core/ring.h"
#include "nic/fabric.h"

namespace nicsim::nic {

class TxQueue {
public:
    // `windows` holds each peer's window (0: none); empty, no peer has one.
    TxQueue(Fabric& fabric, std::vector<int> windows = {}, bool stable_payloads = false);

    // Queues a packet and transmits what the fabric and the credits allow. `payload` is empty or
    // header.payload_bytes long (Fabric::transmit); header.credits is set here. Transport errors
    // stick: they are returned by this and every later call.
    Status send(Rank dst, const PacketHeader& header, std::span<const std::byte> payload = {});
    Status flush();

    // Flow control. `header` arrived from `src`: takes the credits it carries back. Then, unless
    // it is a credit update, the packet's receive buffer is free again: `src` is owed a credit.
    // `protocol` when the packet returns more credits than were taken, or `src` is out of range.
    Status received(Rank src, const PacketHeader& header);

    // Packets waiting for the fabric or for a credit.
    std::size_t queued() const { return ready_.size() + blocked_count_; }
    // Packets that had to wait for a credit.
    std::uint64_t stalls() const { return stalls_; }
    // Per pair, the sender's credits plus the receiver's owed ones plus the packets in flight
    // between them always make the window.
    int credits(Rank peer) const { return peers_.empty() ? 0 : peers_[peer].credits; }
    int owed(Rank peer) const { return peers_.empty() ? 0 : peers_[peer].owed; }

private:
    struct Pending {
        Rank dst;
        PacketHeader header;
        std::span<const std::byte> payload;  // the caller's bytes, or `copy`
        std::vector<std::byte> copy;
    };
    Pending pending(Rank dst, const PacketHeader& header, std::span<const std::byte> payload) const;
    struct Peer {
        int window = 0;         // 0: no flow control to and from this peer
        int credits = 0;        // packets this NIC may still send to the peer
        int owed = 0;           // the peer's packets consumed here, not yet credited
        Ring<Pending> blocked;  // packets to the peer waiting for a credit
    };

    // Hands one packet to the fabric, or queues it in ready_ behind the others.
    Status transmit(Rank dst, PacketHeader header, std::span<const std::byte> payload);
    Status unblock(Rank dst);

    Fabric& fabric_;
    bool stable_payloads_;
    std::vector<Peer> peers_;  // empty when no peer has a window
    Ring<Pending> ready_;
    std::size_t blocked_count_ = 0;
    std::uint64_t stalls_ = 0;
    Status error_ = Status::ok;
};

}  // namespace nicsim::nic
