// One collective in flight on one rank: started once, fed the packets addressed to it, and done
// when this rank's part is complete.
#pragma once

#include <span>

#include "core/packet.h"

namespace nicsim::nic {

class Operation {
public:
    virtual ~Operation() = default;
    virtual PacketKind kind() const = 0;
    virtual Status start() = 0;
    virtual Status on_packet(Rank src, const PacketHeader& header,
                             std::span<const std::byte> payload) = 0;
    virtual bool done() const = 0;
};

}  // namespace nicsim::nic
