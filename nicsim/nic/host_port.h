// What a NIC needs from its host: somewhere to put arriving packets and a word when send buffers
// free up. In a real job the host is the calling MPI process; in the simulator it is the host
// model, which also charges the host's time.
#pragma once

#include <span>

#include "core/packet.h"

namespace nicsim::nic {

class HostPort {
public:
    virtual ~HostPort() = default;
    // A packet from `src` for this host, written into one of the receive buffers the host posted
    // (or, when the host takes every packet as it arrives, wherever it puts it). Not ok when the
    // host rejects the packet; the NIC is done with it either way. The host may send from here.
    virtual Status deliver(Rank src, const PacketHeader& header,
                           std::span<const std::byte> payload) = 0;
    // A send buffer is free again after post_send() answered `again`.
    virtual void send_space() = 0;
};

}  // namespace nicsim::nic
