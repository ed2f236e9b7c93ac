// A barrier executing a plan::BarrierSchedule.
//
// Per step: send the step's tokens, then wait for the step's tokens, then advance. Tokens for
// later steps may arrive first (a fast neighbour is already there); they are counted against their
// step and consumed when the barrier reaches it. The schedule belongs to the agent, which plans it
// once per algorithm: a barrier only keeps which tokens arrived.
#pragma once

#include "core/small_vector.h"

#include "nic/nic.h"
#include "nic/operation.h"
#include "plan/barrier.h"

namespace nicsim::nic {

class BarrierOp final : public Operation {
public:
    // Whether the op can run `schedule`: no step expects more than plan::kMaxBarrierSenders tokens.
    static bool runs(const plan::BarrierSchedule& schedule);

    BarrierOp(Seq seq, const plan::BarrierSchedule& schedule, Nic& nic);

    Status start() override;
    Status on_packet(Rank src, const PacketHeader& header,
                     std::span<const std::byte> payload) override;

private:
    Status advance();

    Seq seq_;
    const plan::BarrierStep* steps_;  // the schedule's, which the agent keeps
    std::size_t step_count_;
    Nic& nic_;
    std::size_t step_ = 0;    // the step this rank is in
    bool step_sent_ = false;  // whether step_'s tokens are out
    // [step] bit i: token from steps_[step].recv_from[i]; inline for groups of up to 256 ranks
    SmallVector<std::uint64_t, 8> arrived_;
};

}  // namespace nicsim::nic
