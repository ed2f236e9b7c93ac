// One collective in flight on one rank: started once, then fed the packets addressed to it, which
// it validates itself. Every entry point returns in_progress until this rank's part is complete,
// then ok (or the error that failed it). A complete collective may still be fed packets (a peer
// asking for one again, a duplicate): what it answers then is reported, its outcome stays.
#pragma once

#include <cstdint>
#include <span>

#include "core/packet.h"

namespace nicsim::nic {

// What one agent's collectives did beyond the normal case, for the driver (the simulator) to read.
// Without loss and without premature timeouts every counter but `forwarded` stays 0.
struct CollectiveStats {
    std::uint64_t nacks_sent = 0;       // NACKs for packets overdue at this rank
    std::uint64_t nacks_forwarded = 0;  // NACKs passed up for packets this rank lacks too
    std::uint64_t retransmitted = 0;    // packets sent again in answer to a NACK
    std::uint64_t duplicates = 0;       // packets that had arrived before, ignored
    std::uint64_t early_dropped = 0;    // early packets no channel could keep
    std::uint64_t forwarded = 0;        // broadcast packets passed on to children as they arrived
};

class Operation {
public:
    virtual ~Operation() = default;
    virtual Status start() = 0;
    virtual Status on_packet(Rank src, const PacketHeader& header,
                             std::span<const std::byte> payload) = 0;
    // The host moved the next packet of the collective's own data into the NIC (a host-fed
    // broadcast root, bcast_op.h); invalid for a collective that takes none.
    virtual Status supply() { return Status::invalid; }
    // Called while in progress, when the driver deems the packets this rank waits for overdue.
    // A collective without retransmission has nothing to do.
    virtual Status on_timeout() { return Status::in_progress; }
    // Where the payload of the packet `header` announces belongs, if it is this collective's
    // next packet from `src` and its bytes are one run of the collective's buffer: a fabric that
    // receives payloads apart from headers puts it there, and on_packet() finds it in place.
    // Empty otherwise (the fabric receives it anywhere and on_packet() copies it). It may run on
    // past the payload, over the bytes the next packets from `src` fill in order, each where the
    // one before ended: the fabric may receive them there ahead.
    virtual std::span<std::byte> placement(Rank /*src*/, const PacketHeader& /*header*/) {
        return {};
    }
};

}  // namespace nicsim::nic
