// One collective in flight on one rank: started once, then fed the packets addressed to it. Both
// return in_progress until this rank's part is complete, then ok (or the error that failed it).
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
};

}  // namespace nicsim::nic
