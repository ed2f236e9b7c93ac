// The real fabric: carries the agent's packets between MPI processes through the transport the
// caller supplies (coll/ provides one over Open MPI's PML). Nothing in the agent depends on which
// fabric it runs over.
#pragma once

#include "nic/fabric.h"
#include "nicsim/nicsim.h"

namespace nicsim::real {

static_assert(PacketHeader::kBytes == NICSIM_HEADER_BYTES);

class TransportFabric final : public nic::Fabric {
public:
    explicit TransportFabric(const nicsim_transport_t& transport) : transport_(transport) {}

    Status transmit(Rank dst, const PacketHeader& header,
                    std::span<const std::byte> payload) override {
        const auto head = header.encode();
        return static_cast<Status>(transport_.send(transport_.context, dst, head.data(),
                                                   payload.data(), payload.size()));
    }

private:
    nicsim_transport_t transport_;
};

}  // namespace nicsim::real
