// NIC layer: the per-rank agent that runs collectives, and the Fabric it acts through.
//
// The agent is an event-driven state machine: it reacts to "host posted a collective" and
// "packet arrived", and acts only by handing packets to a Fabric. It never reads a clock, calls
// MPI or does I/O, so the same code runs between real MPI processes (real/) and, with the
// simulator, over a modeled network.
#pragma once

#include <cstddef>
#include <span>

#include "core/status.h"

namespace nicsim::nic {

class Fabric {
public:
    virtual ~Fabric() = default;
    // Hands one packet to the network for `dst`; the fabric copies it. Returns ok, `again` when
    // it has no room now (the caller keeps the packet and retries), or an error.
    virtual Status transmit(Rank dst, std::span<const std::byte> packet) = 0;
};

}  // namespace nicsim::nic
