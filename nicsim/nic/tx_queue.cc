#include "nic/tx_queue.h"

namespace nicsim::nic {

Status TxQueue::send(Rank dst, const PacketHeader& header) {
    if (failed(error_)) return error_;
    if (queue_.empty()) {
        const Status s = fabric_.transmit(dst, header, {});
        if (s != Status::again) {
            if (failed(s)) error_ = s;
            return s;
        }
    }
    queue_.push_back({dst, header});
    return Status::ok;
}

Status TxQueue::flush() {
    while (!queue_.empty() && !failed(error_)) {
        const Status s = fabric_.transmit(queue_.front().dst, queue_.front().header, {});
        if (s == Status::again) break;
        if (failed(s)) error_ = s;
        queue_.pop_front();
    }
    return error_;
}

}  // namespace nicsim::nic
