// The collective a rank could not post (Agent::post_abort): a local failure came first, such as a
// buffer it could not allocate. It is numbered as any other and fails at start with that failure,
// which the agent tells every other rank of, as it does every failure of this rank's own.
#pragma once

#include "nic/operation.h"

namespace nicsim::nic {

class AbortOp final : public Operation {
public:
    explicit AbortOp(Status why) : why_(why) {}

    Status start() override { return why_; }
    // The collective's packets from peers are dropped before they get here (Agent::take).
    Status on_packet(Rank, const PacketHeader&, std::span<const std::byte>) override {
        return Status::ok;
    }

private:
    Status why_;
};

}  // namespace nicsim::nic
