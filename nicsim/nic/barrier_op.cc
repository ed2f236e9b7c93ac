#include "nic/barrier_op.h"

#include <algorithm>

namespace nicsim::nic {

bool BarrierOp::runs(const plan::BarrierSchedule& schedule) {
    return std::all_of(schedule.begin(), schedule.end(), [](const plan::BarrierStep& step) {
        return step.recv_from.size() <= plan::kMaxBarrierSenders;
    });
}

NICSIM_HOT_PATH
BarrierOp::BarrierOp(Seq seq, const plan::BarrierSchedule& schedule, Nic& nic)
    : seq_(seq), steps_(schedule.data()), step_count_(schedule.size()), nic_(nic) {
    arrived_.resize(step_count_);
}

NICSIM_HOT_PATH
Status BarrierOp::start() { return advance(); }

NICSIM_HOT_PATH
Status BarrierOp::on_packet(Rank src, const PacketHeader& header,
                            std::span<const std::byte> /*payload*/) {
    const std::size_t step = header.step;
    if (header.kind != PacketKind::barrier || step >= step_count_ || header.payload_bytes != 0) {
        return Status::protocol;
    }
    const auto& from = steps_[step].recv_from;
    const auto it = std::find(from.begin(), from.end(), src);
    if (it == from.end()) return Status::protocol;  // not a sender of this step
    const std::uint64_t bit = std::uint64_t{1} << (it - from.begin());
    if (arrived_[step] & bit) return Status::protocol;  // duplicate token
    arrived_[step] |= bit;
    return advance();
}

NICSIM_HOT_PATH
Status BarrierOp::advance() {
    while (step_ < step_count_) {
        const plan::BarrierStep& step = steps_[step_];
        if (!step_sent_) {
            PacketHeader token;
            token.kind = PacketKind::barrier;
            token.seq = seq_;
            token.step = static_cast<std::uint32_t>(step_);
            for (const Rank dst : step.send_to) {
                if (const Status s = nic_.send(dst, token); failed(s)) return s;
            }
            step_sent_ = true;
        }
        const std::size_t senders = step.recv_from.size();  // at most 64
        const std::uint64_t all = senders == 64 ? ~std::uint64_t{0}
                                                : (std::uint64_t{1} << senders) - 1;
        if (arrived_[step_] != all) return Status::in_progress;
        ++step_;
        step_sent_ = false;
    }
    return Status::ok;
}

}  // namespace nicsim::nic
