#include "nic/bcast_op.h"

#include <cstring>

namespace nicsim::nic {

BcastOp::BcastOp(Seq seq, Rank rank, const plan::Tree& tree, std::uint64_t bytes, std::uint32_t mtu,
                 std::span<std::byte> message, Nic& nic, CollectiveStats& stats)
    : seq_(seq),
      rank_(rank),
      tree_(tree),
      bytes_(bytes),
      mtu_(mtu),
      message_(message),
      nic_(nic),
      stats_(stats),
      packets_(packet_count(bytes, mtu)) {}

Status BcastOp::start() {
    if (rank_ != tree_.root) return Status::in_progress;
    for (std::uint64_t j = 0; j < packets_; ++j) {
        if (const Status s = send_down(j); failed(s)) return s;
    }
    return Status::ok;
}

bool BcastOp::expects(Rank src, const PacketHeader& header) const {
    if (header.kind != PacketKind::bcast || src != tree_.parent[rank_] ||
        header.origin != tree_.root || next_ == packets_ || header.step != next_) {
        return false;
    }
    const std::uint64_t offset = next_ * mtu_;
    return header.payload_bytes == std::min<std::uint64_t>(mtu_, bytes_ - offset);
}

std::span<std::byte> BcastOp::placement(Rank src, const PacketHeader& header) {
    if (message_.empty() || !expects(src, header)) return {};
    return message_.subspan(next_ * mtu_, header.payload_bytes);
}

Status BcastOp::on_packet(Rank src, const PacketHeader& header,
                          std::span<const std::byte> payload) {
    // Only the parent's next packet: the fabric keeps one sender's packets in order.
    if (!expects(src, header)) return Status::protocol;
    const std::uint64_t offset = next_ * mtu_;
    const std::uint64_t length = header.payload_bytes;
    if (!message_.empty() && !payload.empty() && payload.data() != message_.data() + offset) {
        std::memcpy(message_.data() + offset, payload.data(), length);
    }
    if (!tree_.children[rank_].empty()) {
        if (const Status s = send_down(next_); failed(s)) return s;
        ++stats_.forwarded;
    }
    return ++next_ == packets_ ? Status::ok : Status::in_progress;
}

Status BcastOp::send_down(std::uint64_t index) {
    PacketHeader header;
    header.kind = PacketKind::bcast;
    header.seq = seq_;
    header.step = static_cast<std::uint32_t>(index);
    header.origin = tree_.root;
    header.flags = index + 1 == packets_ ? kLastPacket : 0;
    const std::uint64_t offset = index * mtu_;
    header.payload_bytes =
        static_cast<std::uint32_t>(std::min<std::uint64_t>(mtu_, bytes_ - offset));
    const auto payload = message_.empty() ? std::span<const std::byte>{}
                                          : message_.subspan(offset, header.payload_bytes);
    for (const Rank child : tree_.children[rank_]) {
        if (const Status s = nic_.send(child, header, payload); failed(s)) return s;
    }
    return Status::ok;
}

}  // namespace nicsim::nic
