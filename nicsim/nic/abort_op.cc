#include "nic/abort_op.h"

namespace nicsim::nic {

Status AbortOp::start() {
    PacketHeader h;
    h.kind = PacketKind::abort;
    h.seq = seq_;
    h.origin = rank_;
    for (Rank peer = 0; peer < size_; ++peer) {
        if (peer == rank_) continue;
        if (const Status s = nic_.send(peer, h); failed(s)) return s;
    }
    return why_;
}

}  // namespace nicsim::nic
