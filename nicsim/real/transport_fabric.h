// The real fabric: carries the agent's packets between MPI processes through the transport the
// caller supplies (coll/ provides one over Open MPI's PML). Nothing in the agent depends on which
// fabric it runs over.
#pragma once

#include "nic/fabric.h"
#include "nicsim/nicsim.h"

namespace nicsim::real {

class TransportFabric final : public nic::Fabric {
public:
    explicit TransportFabric(const nicsim_transport_t& transport) : transport_(transport) {}

    Status transmit(Rank dst, std::span<const std::byte> packet) override {
        return static_cast<Status>(
            transport_.send(transport_.context, dst, packet.data(), packet.size()));
    }

private:
    nicsim_transport_t transport_;
};

}  // namespace nicsim::real
