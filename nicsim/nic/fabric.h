// NIC layer: the per-rank agent that runs collectives, and the Fabric it acts through.
//
// The agent is an event-driven state machine: it reacts to "host posted a collective" and
// "packet arrived", and acts only by handing packets to a Fabric. It never reads a clock, calls
// MPI or does I/O, so the same code runs between real MPI processes (real/) and, with the
// simulator, over a modeled network.
#pragma once

#include <cstddef>
#include <span>

#include "core/packet.h"

namespace nicsim::nic {

class Fabric {
public:
    virtual ~Fabric() = default;
    // Hands one packet to the network for `dst`; the fabric copies what it needs. Returns ok,
    // `again` when it has no room now (the caller keeps the packet and retries), or an error.
    // A fabric that models time but not data (the simulator) is given an empty payload and
    // charges for header.payload_bytes.
    virtual Status transmit(Rank dst, const PacketHeader& header,
                            std::span<const std::byte> payload) = 0;
    // Asks for one call of the agent's on_tick() about `after_us` microseconds from now. Only the
    // timeout refinement of LFC's deadlock detection asks; a fabric without timers ignores it.
    virtual void tick_after(double after_us) { (void)after_us; }
};

}  // namespace nicsim::nic
