#include "nic/channels.h"

namespace nicsim::nic {

Channels::Channels(const ChannelConfig& config)
    : bytes_(config.bytes),
      unbounded_(config.unbounded),
      channels_(config.unbounded ? 0 : config.count) {}

std::optional<Channels::Slice> Channels::store(Seq seq, std::uint32_t payload_bytes,
                                               std::span<const std::byte> payload) {
    if (payload_bytes == 0) return Slice{};
    if (channels_.empty()) return std::nullopt;
    Channel& channel = channels_[seq % channels_.size()];
    if (channel.free) {
        channel.owner = seq;
        channel.free = false;
    } else if (channel.owner != seq) {
        return std::nullopt;
    }
    if (payload_bytes > bytes_ - channel.used) return std::nullopt;
    channel.used += payload_bytes;
    const Slice slice{channel.data.size(), payload.size()};
    channel.data.insert(channel.data.end(), payload.begin(), payload.end());
    return slice;
}

std::span<const std::byte> Channels::read(Seq seq, Slice slice) const {
    if (slice.length == 0) return {};
    return std::span(channels_[seq % channels_.size()].data).subspan(slice.offset, slice.length);
}

void Channels::recycle(Seq seq) {
    for (Channel& channel : channels_) {
        if (!channel.free && seq_at_or_after(seq, channel.owner)) {
            channel.free = true;
            channel.used = 0;
            channel.data.clear();
        }
    }
}

}  // namespace nicsim::nic
