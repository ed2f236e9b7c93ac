// The real fabric: carries the agent's packets between MPI processes through the transport the
// caller supplies (coll/ provides one over Open MPI's PML). Nothing in the agent depends on which
// fabric it runs over.
#pragma once

#include <vector>

#include "nic/fabric.h"
#include "nicsim/nicsim.h"

namespace nicsim::real {

class TransportFabric final : public nic::Fabric {
public:
    explicit TransportFabric(const nicsim_transport_t& transport) : transport_(transport) {}

    Status transmit(Rank dst, const PacketHeader& header,
                    std::span<const std::byte> payload) override {
        const auto head = header.encode();
        if (payload.empty()) {
            return static_cast<Status>(
                transport_.send(transport_.context, dst, head.data(), head.size()));
        }
        wire_.assign(head.begin(), head.end());
        wire_.insert(wire_.end(), payload.begin(), payload.end());
        return static_cast<Status>(
            transport_.send(transport_.context, dst, wire_.data(), wire_.size()));
    }

private:
    nicsim_transport_t transport_;
    std::vector<std::byte> wire_;  // header and payload side by side, reused
};

}  // namespace nicsim::real
