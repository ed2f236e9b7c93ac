// The NIC's transmit queue: packets leave in the order they were queued, and a packet the fabric
// cannot take now waits, with everything behind it, until flush() finds room.
#pragma once

#include <deque>

#include "core/packet.h"
#include "nic/fabric.h"

namespace nicsim::nic {

class TxQueue {
public:
    explicit TxQueue(Fabric& fabric) : fabric_(fabric) {}

    // Queues a header-only packet and transmits what the fabric takes. Transport errors stick:
    // they are returned by this and every later call.
    Status send(Rank dst, const PacketHeader& header);
    Status flush();
    std::size_t queued() const { return queue_.size(); }

private:
    struct Pending {
        Rank dst;
        PacketHeader header;
    };

    Fabric& fabric_;
    std::deque<Pending> queue_;
    Status error_ = Status::ok;
};

}  // namespace nicsim::nic
