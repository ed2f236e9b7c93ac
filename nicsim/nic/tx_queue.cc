#include "nic/tx_queue.h"

namespace nicsim::nic {

Status TxQueue::send(Rank dst, const PacketHeader& header, std::span<const std::byte> payload) {
    if (failed(error_)) return error_;
    if (queue_.empty()) {
        const Status s = fabric_.transmit(dst, header, payload);
        if (s != Status::again) {
            if (failed(s)) error_ = s;
            return s;
        }
    }
    queue_.push_back({dst, header, {payload.begin(), payload.end()}});
    return Status::ok;
}

Status TxQueue::flush() {
    while (!queue_.empty() && !failed(error_)) {
        const Pending& front = queue_.front();
        const Status s = fabric_.transmit(front.dst, front.header, front.payload);
        if (s == Status::again) break;
        if (failed(s)) error_ = s;
        queue_.pop_front();
    }
    return error_;
}

}  // namespace nicsim::nic
