// The collective a rank could not post (Agent::post_abort): a local failure came first, such as a
// buffer it could not allocate. It is numbered as any other, and at start every other rank is
// sent an abort packet (kind abort, seq the collective, origin this rank), so that its copy of
// the collective fails instead of waiting for this rank. Its outcome is the local failure.
#pragma once

#include "nic/nic.h"
#include "nic/operation.h"

namespace nicsim::nic {

class AbortOp final : public Operation {
public:
    AbortOp(Seq seq, Rank rank, Rank size, Status why, Nic& nic)
        : seq_(seq), rank_(rank), size_(size), why_(why), nic_(nic) {}

    // Sends the aborts; answers `why`.
    Status start() override;
    // The collective's packets from peers are dropped before they get here (Agent::take).
    Status on_packet(Rank, const PacketHeader&, std::span<const std::byte>) override {
        return Status::ok;
    }

private:
    Seq seq_;
    Rank rank_;
    Rank size_;
    Status why_;
    Nic& nic_;
};

}  // namespace nicsim::nic
