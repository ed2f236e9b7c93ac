// The NIC agent of one rank in one group: numbers collectives in call order, routes each arriving
// packet to its collective, keeps packets that arrive before their collective is posted, and owns
// the transmit queue.
#pragma once

#include <memory>
#include <unordered_map>
#include <vector>

#include "nic/operation.h"
#include "nic/tx_queue.h"
#include "plan/barrier.h"

namespace nicsim::nic {

class Agent {
public:
    Agent(Rank rank, Rank size, Fabric& fabric);
    // Collectives in flight hold references into the agent: it stays where it was made.
    Agent(const Agent&) = delete;
    Agent& operator=(const Agent&) = delete;

    // Posts the group's next collective. On success `*seq` names it for test() and release().
    Status post_barrier(const plan::BarrierAlgorithm& algorithm, Seq* seq);

    // A packet from `src` arrived. A packet its collective rejects fails that collective; one
    // that names no collective is only reported.
    Status deliver(Rank src, std::span<const std::byte> packet);

    // Offers queued packets to the fabric again: ok when none is left, in_progress while some
    // still wait, or the transport error, which fails every collective in flight.
    Status progress();

    // ok when this rank's part of collective `seq` is complete (its packets handed to the fabric
    // included), in_progress, or the error that failed it.
    Status test(Seq seq) const;

    // The host no longer asks about `seq`; it is forgotten once done.
    void release(Seq seq);

    // Collectives posted and not yet forgotten, and packets kept for collectives not yet posted.
    std::size_t active() const { return ops_.size(); }
    std::size_t early_packets() const;

private:
    struct Slot {
        Seq seq;
        std::unique_ptr<Operation> op;
        Status status = Status::in_progress;
        bool released = false;
    };
    struct EarlyPacket {
        Rank src;
        PacketHeader header;
        std::vector<std::byte> payload;
    };

    Status start(std::unique_ptr<Operation> op, Seq* seq);
    // This rank's schedule for `algorithm`, planned on first use; null when a step would expect
    // more than plan::kMaxBarrierSenders tokens.
    const plan::BarrierSchedule* schedule(const plan::BarrierAlgorithm& algorithm);
    void settle(Seq seq, Slot& slot, Status s);
    bool is_future(Seq seq) const;

    Rank rank_;
    Rank size_;
    TxQueue tx_;
    Seq next_seq_ = 0;
    std::unordered_map<Seq, Slot> ops_;
    std::unordered_map<Seq, std::vector<EarlyPacket>> early_;
    std::unordered_map<const plan::BarrierAlgorithm*, plan::BarrierSchedule> schedules_;
};

}  // namespace nicsim::nic
