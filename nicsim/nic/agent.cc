#include "nic/agent.h"

#include "nic/barrier_op.h"

namespace nicsim::nic {

Agent::Agent(Rank rank, Rank size, Fabric& fabric) : rank_(rank), size_(size), tx_(fabric) {}

Status Agent::post_barrier(const plan::BarrierAlgorithm& algorithm, Seq* seq) {
    const plan::BarrierSchedule* steps = schedule(algorithm);
    if (steps == nullptr) return Status::invalid;
    return start(std::make_unique<BarrierOp>(next_seq_, *steps, tx_), seq);
}

const plan::BarrierSchedule* Agent::schedule(const plan::BarrierAlgorithm& algorithm) {
    auto it = schedules_.find(&algorithm);
    if (it == schedules_.end()) {
        plan::BarrierSchedule steps = algorithm.plan(rank_, size_);
        for (const plan::BarrierStep& step : steps) {
            if (step.recv_from.size() > plan::kMaxBarrierSenders) return nullptr;
        }
        it = schedules_.emplace(&algorithm, std::move(steps)).first;
    }
    return &it->second;
}

Status Agent::start(std::unique_ptr<Operation> op, Seq* seq) {
    const Seq s = next_seq_;
    Slot& slot = ops_[s];
    ++next_seq_;  // only once the slot exists: a failed allocation must not skip a number
    *seq = s;
    slot.seq = s;
    slot.op = std::move(op);
    settle(s, slot, slot.op->start());
    if (const auto early = early_.find(s); early != early_.end()) {
        std::vector<EarlyPacket> packets = std::move(early->second);
        early_.erase(early);
        for (const EarlyPacket& p : packets) {
            if (slot.status != Status::in_progress) break;
            if (p.header.kind != slot.op->kind()) {
                settle(s, slot, Status::protocol);
                break;
            }
            settle(s, slot, slot.op->on_packet(p.src, p.header, p.payload));
        }
    }
    return failed(slot.status) ? slot.status : Status::ok;
}

Status Agent::deliver(Rank src, std::span<const std::byte> packet) {
    const auto header = PacketHeader::decode(packet);
    if (src < 0 || src >= size_ || !header) return Status::protocol;
    const auto payload = packet.subspan(PacketHeader::kBytes);
    const auto it = ops_.find(header->seq);
    if (it == ops_.end()) {
        if (!is_future(header->seq)) return Status::protocol;  // its collective is long over
        early_[header->seq].push_back({src, *header, {payload.begin(), payload.end()}});
        return Status::ok;
    }
    Slot& slot = it->second;
    if (slot.status != Status::in_progress || header->kind != slot.op->kind()) {
        return Status::protocol;
    }
    const Status s = slot.op->on_packet(src, *header, payload);
    settle(header->seq, slot, s);
    return failed(s) ? s : Status::ok;
}

Status Agent::progress() {
    const Status s = tx_.flush();
    if (failed(s)) {
        for (auto it = ops_.begin(); it != ops_.end();) {
            Slot& slot = (it++)->second;  // settle() may erase the slot
            if (slot.status == Status::in_progress) settle(slot.seq, slot, s);
        }
        return s;
    }
    return tx_.queued() == 0 ? Status::ok : Status::in_progress;
}

void Agent::settle(Seq seq, Slot& slot, Status s) {
    if (s == Status::in_progress) return;
    slot.status = s;
    if (slot.released) ops_.erase(seq);
}

Status Agent::test(Seq seq) const {
    const auto it = ops_.find(seq);
    if (it == ops_.end()) return Status::invalid;
    // A collective is not complete while packets it sent may still wait in the transmit queue.
    if (it->second.status == Status::ok && tx_.queued() != 0) return Status::in_progress;
    return it->second.status;
}

void Agent::release(Seq seq) {
    const auto it = ops_.find(seq);
    if (it == ops_.end()) return;
    if (it->second.status != Status::in_progress) {
        ops_.erase(it);
    } else {
        it->second.released = true;
    }
}

bool Agent::is_future(Seq seq) const {
    // Sequence numbers wrap; "future" means at most half the number space ahead.
    return static_cast<Seq>(seq - next_seq_) < (Seq{1} << 31);
}

std::size_t Agent::early_packets() const {
    std::size_t n = 0;
    for (const auto& [seq, packets] : early_) n += packets.size();
    return n;
}

}  // namespace nicsim::nic
