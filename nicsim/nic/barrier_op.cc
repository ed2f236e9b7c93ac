#include "nic/barrier_op.h"

#include <algorithm>

namespace nicsim::nic {

BarrierOp::BarrierOp(Seq seq, plan::BarrierSchedule schedule, TxQueue& tx)
    : seq_(seq), schedule_(std::move(schedule)), tx_(tx) {
    arrived_.reserve(schedule_.size());
    missing_.reserve(schedule_.size());
    for (const auto& step : schedule_) {
        arrived_.emplace_back(step.recv_from.size(), false);
        missing_.push_back(step.recv_from.size());
    }
}

Status BarrierOp::start() { return advance(); }

Status BarrierOp::on_packet(Rank src, const PacketHeader& header,
                            std::span<const std::byte> payload) {
    const std::size_t step = header.step;
    if (step >= schedule_.size() || !payload.empty()) return Status::protocol;
    const auto& from = schedule_[step].recv_from;
    const auto it = std::find(from.begin(), from.end(), src);
    if (it == from.end()) return Status::protocol;  // not a sender of this step
    auto&& seen = arrived_[step][it - from.begin()];
    if (seen) return Status::protocol;  // duplicate token
    seen = true;
    --missing_[step];
    return advance();
}

Status BarrierOp::advance() {
    while (step_ < schedule_.size()) {
        if (!step_sent_) {
            PacketHeader token;
            token.kind = PacketKind::barrier;
            token.seq = seq_;
            token.step = static_cast<std::uint16_t>(step_);
            for (const Rank dst : schedule_[step_].send_to) {
                if (const Status s = tx_.send(dst, token); failed(s)) return s;
            }
            step_sent_ = true;
        }
        if (missing_[step_] != 0) return Status::in_progress;
        ++step_;
        step_sent_ = false;
    }
    return Status::ok;
}

}  // namespace nicsim::nic
