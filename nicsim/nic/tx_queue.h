// The NIC's transmit queue: packets leave in the order they were queued, and a packet the fabric
// cannot take now waits, with everything behind it, until flush() finds room.
//
// A packet the fabric takes at once is never copied: the fabric copies what it needs, so a NIC
// can inject the same bytes again and again (seed 001 §4.3: forwarding and resending without
// claiming a send buffer). Only a packet that has to wait is copied into the queue.
#pragma once

#include <deque>
#include <vector>

#include "core/packet.h"
#include "nic/fabric.h"

namespace nicsim::nic {

class TxQueue {
public:
    explicit TxQueue(Fabric& fabric) : fabric_(fabric) {}

    // Queues a packet and transmits what the fabric takes. `payload` is empty or
    // header.payload_bytes long (Fabric::transmit). Transport errors stick: they are returned by
    // this and every later call.
    Status send(Rank dst, const PacketHeader& header, std::span<const std::byte> payload = {});
    Status flush();
    std::size_t queued() const { return queue_.size(); }

private:
    struct Pending {
        Rank dst;
        PacketHeader header;
        std::vector<std::byte> payload;
    };

    Fabric& fabric_;
    std::deque<Pending> queue_;
    Status error_ = Status::ok;
};

}  // namespace nicsim::nic
