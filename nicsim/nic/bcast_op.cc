#include "nic/bcast_op.h"

#include <cstring>

namespace nicsim::nic {

std::uint16_t tree_flags(std::size_t shape, int k) {
    if (k < 0 || k > 255 || shape > (kTreeShapeBits >> 4)) return 0;
    return static_cast<std::uint16_t>(kTreeNamed | (shape << 4) | (static_cast<unsigned>(k) << 8));
}

bool read_tree_flags(std::uint16_t flags, std::size_t* shape, int* k) {
    if ((flags & kTreeNamed) == 0) return false;
    *shape = (flags & kTreeShapeBits) >> 4;
    *k = (flags & kTreeKBits) >> 8;
    return true;
}

NICSIM_HOT_PATH
BcastOp::BcastOp(Seq seq, Rank rank, const TreePlace& place, std::uint64_t bytes,
                 std::uint32_t mtu, std::span<std::byte> message, Nic& nic, CollectiveStats& stats,
                 bool host_fed)
    : packets_(packet_count(bytes, mtu)),
      bytes_(bytes),
      mtu_(mtu),
      rank_(rank),
      seq_(seq),
      host_fed_(host_fed),
      nic_(nic),
      stats_(stats),
      message_(message),
      place_(place) {}

NICSIM_HOT_PATH
Status BcastOp::start() {
    if (rank_ != place_.root || host_fed_) return Status::in_progress;
    while (next_ < packets_) {
        if (const Status s = supply(); failed(s)) return s;
    }
    return Status::ok;
}

NICSIM_HOT_PATH
Status BcastOp::supply() {
    if (rank_ != place_.root || next_ == packets_) return Status::invalid;
    PacketHeader h = packet_header(next_);
    const auto payload = message_.empty() ? std::span<const std::byte>{}
                                          : message_.subspan(next_ * mtu_, h.payload_bytes);
    if (const Status s = nic_.multicast(place_.children, h, payload); failed(s)) return s;
    return ++next_ == packets_ ? Status::ok : Status::in_progress;
}

NICSIM_HOT_PATH
bool BcastOp::expects(Rank src, const PacketHeader& header) const {
    if (header.kind != PacketKind::bcast || src != place_.parent ||
        header.origin != place_.root || next_ == packets_ || header.step != next_) {
        return false;
    }
    const std::uint64_t offset = next_ * mtu_;
    return header.payload_bytes == std::min<std::uint64_t>(mtu_, bytes_ - offset);
}

NICSIM_HOT_PATH
std::span<std::byte> BcastOp::placement(Rank src, const PacketHeader& header) {
    if (message_.empty() || !expects(src, header)) return {};
    return message_.subspan(next_ * mtu_);  // the rest of the message comes from the parent
}

NICSIM_HOT_PATH
Status BcastOp::on_packet(Rank src, const PacketHeader& header,
                          std::span<const std::byte> payload) {
    // Only the parent's next packet: the fabric keeps one sender's packets in order.
    if (!expects(src, header)) return Status::protocol;
    const std::uint64_t offset = next_ * mtu_;
    const std::uint64_t length = header.payload_bytes;
    if (!message_.empty() && !payload.empty() && payload.data() != message_.data() + offset) {
        std::memcpy(message_.data() + offset, payload.data(), length);
    }
    if (!place_.children.empty() && (header.flags & kForwardedEarly) == 0) {
        const auto placed = message_.empty() ? std::span<const std::byte>{}
                                             : message_.subspan(offset, length);
        if (const Status s = nic_.forward(place_.children, header, placed); failed(s)) {
            return s;
        }
        ++stats_.forwarded;
    }
    return ++next_ == packets_ ? Status::ok : Status::in_progress;
}

NICSIM_HOT_PATH
PacketHeader BcastOp::packet_header(std::uint64_t index) const {
    PacketHeader h;
    h.kind = PacketKind::bcast;
    h.seq = seq_;
    h.step = static_cast<std::uint32_t>(index);
    h.origin = place_.root;
    h.flags = place_.named | (index + 1 == packets_ ? kLastPacket : 0);
    h.payload_bytes =
        static_cast<std::uint32_t>(std::min<std::uint64_t>(mtu_, bytes_ - index * mtu_));
    return h;
}

}  // namespace nicsim::nic
