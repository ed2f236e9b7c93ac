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
    // A packet for this host, written into one of the receive buffers the host posted.
    virtual void deliver(const PacketHeader& header, std::span<const std::byte> payload) = 0;
    // A send buffer is free again after post_send() answered `again`.
    virtual void send_space() = 0;
};

}  // namespace nicsim::nic
