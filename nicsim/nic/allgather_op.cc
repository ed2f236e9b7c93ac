#include "nic/allgather_op.h"

#include <algorithm>
#include <array>

namespace nicsim::nic {

namespace {

constexpr std::uint32_t kIndexMask = kAllgatherMaxPackets - 1;

std::size_t step_of(const PacketHeader& h) {
    return h.step >> kAllgatherIndexBits;
}
std::uint32_t index_of(const PacketHeader& h) {
    return h.step & kIndexMask;
}

// Where `origin` comes among the blocks the ranges name, in their order.
std::optional<std::size_t> position(std::span<const plan::BlockRange> blocks, Rank origin) {
    std::size_t before = 0;
    for (const plan::BlockRange& range : blocks) {
        if (origin >= range.first && origin - range.first < range.count) {
            return before + static_cast<std::size_t>(origin - range.first);
        }
        before += static_cast<std::size_t>(range.count);
    }
    return std::nullopt;
}

// The origin at `pos` among the blocks the ranges name: the inverse of position().
Rank origin_at(std::span<const plan::BlockRange> blocks, std::size_t pos) {
    for (const plan::BlockRange& range : blocks) {
        if (pos < static_cast<std::size_t>(range.count))
            return range.first + static_cast<Rank>(pos);
        pos -= static_cast<std::size_t>(range.count);
    }
    return -1;  // past the blocks: no caller asks
}

}  // namespace

plan::AllgatherSchedule AllgatherOp::schedule_for(const plan::AllgatherAlgorithm& algorithm,
                                                  Rank rank, std::span<const Rank> order,
                                                  std::span<const int> node_of) {
    const auto size = static_cast<Rank>(order.size());
    if (!node_of.empty()) {
        plan::AllgatherSchedule over_nodes = plan::node_allgather(algorithm, rank, order, node_of);
        if (runs(over_nodes)) return over_nodes;
    }
    return algorithm.plan(rank, size);
}

bool AllgatherOp::runs(const plan::AllgatherSchedule& schedule) {
    return schedule.size() <= kAllgatherMaxSteps &&
           std::all_of(schedule.begin(), schedule.end(),
                       [](const plan::AllgatherStep& step) {
                           return step.sends.size() <= 1 && step.recvs.size() <= 1;
                       });
}

AllgatherOp::AllgatherOp(Seq seq, Rank rank, Rank size, bool combines,
                         const plan::AllgatherSchedule& schedule, std::uint64_t block_bytes,
                         std::uint32_t mtu, std::span<std::byte> result, Nic& nic,
                         CollectiveStats& stats, std::span<const std::byte> own)
    : seq_(seq),
      rank_(rank),
      size_(size),
      combines_(combines),
      schedule_(&schedule),
      block_bytes_(block_bytes),
      mtu_(mtu),
      result_(result),
      own_(result.empty() ? std::span<const std::byte>{} : own),
      nic_(nic),
      stats_(stats),
      per_block_(plan::packet_count(std::array{plan::BlockRange{0, 1}}, block_bytes, mtu)) {
    for (const plan::AllgatherStep& step : schedule) {
        steps_.push_back({cut(step.sends), cut(step.recvs)});
        arrived_.emplace_back(steps_.back().recv.packets);
    }
    if (combines_) return;
    asked_.assign(arrived_.begin(), arrived_.end());
    // Every (origin, peer, step) the sends name, counted by origin, then placed in step order.
    const auto each_send = [&schedule](auto&& f) {
        for (std::size_t k = 0; k < schedule.size(); ++k) {
            for (const plan::Transfer& t : schedule[k].sends) {
                for (const plan::BlockRange& range : t.blocks) {
                    for (Rank o = range.first; o < range.first + range.count; ++o)
                        f(o, t.peer, static_cast<std::uint32_t>(k));
                }
            }
        }
    };
    hop_first_.assign(static_cast<std::size_t>(size) + 1, 0);
    each_send([this](Rank o, Rank, std::uint32_t) { ++hop_first_[o + 1]; });
    for (std::size_t o = 0; o < static_cast<std::size_t>(size); ++o)
        hop_first_[o + 1] += hop_first_[o];
    hops_.resize(hop_first_.back());
    std::vector<std::uint32_t> filled(hop_first_.begin(), hop_first_.end() - 1);
    each_send([&](Rank o, Rank peer, std::uint32_t k) { hops_[filled[o]++] = {peer, k}; });
}

NICSIM_HOT_PATH
bool AllgatherOp::reuse(Seq seq, bool combines, const plan::AllgatherSchedule& schedule,
                        std::uint64_t block_bytes, std::uint32_t mtu, std::span<std::byte> result,
                        std::span<const std::byte> own) {
    if (combines != combines_ || &schedule != schedule_ || block_bytes != block_bytes_ ||
        mtu != mtu_ || result.size() != result_.size()) {
        return false;
    }
    seq_ = seq;
    result_ = result;
    own_ = result.empty() ? std::span<const std::byte>{} : own;
    return true;
}

NICSIM_HOT_PATH
void AllgatherOp::forgotten() {
    for (Arrivals& arrived : arrived_) arrived.clear();
    for (Arrivals& asked : asked_) asked.clear();
    step_ = 0;
    step_sent_ = false;
    unsure_rounds_ = 0;
    tails_wait_ = 0;
    heard_ = false;
    gathered_.clear();
}

NICSIM_HOT_PATH
Status AllgatherOp::start() {
    if (!combines_) {
        for (std::uint32_t q = 0; q < per_block_; ++q) {
            const Status s = send_hops(rank_, q, block_packet(rank_, q));
            if (failed(s)) return s;
        }
    }
    const Status s = advance();  // the first step's packets leave from own_
    place_own();
    return s;
}

NICSIM_HOT_PATH
Status AllgatherOp::on_packet(Rank src, const PacketHeader& header,
                              std::span<const std::byte> payload) {
    switch (header.kind) {
        case PacketKind::allgather:
            return on_data(src, header, payload);
        case PacketKind::nack: {
            const std::size_t step = step_of(header);
            if (header.payload_bytes != 0 || step >= steps_.size()) return Status::protocol;
            return combines_ ? resend_step(src, step, index_of(header), header.origin)
                             : resend_hop(src, step, index_of(header), header.origin);
        }
        default:
            return Status::protocol;
    }
}

NICSIM_HOT_PATH
Status AllgatherOp::on_data(Rank src, const PacketHeader& header,
                            std::span<const std::byte> payload) {
    const auto slot = slot_of(src, header);
    if (!slot) return Status::protocol;
    heard_ = true;
    const std::size_t step = step_of(header);
    const Layout layout = layout_of(header);
    const std::uint64_t bytes = layout.payload();
    if (header.payload_bytes != bytes || payload.size() != (result_.empty() ? 0 : bytes)) {
        return Status::protocol;
    }
    if (!arrived_[step].record(*slot)) {
        ++stats_.duplicates;
        return status();
    }
    if ((header.flags & kResent) != 0) unsure_rounds_ = tails_wait_ = 0;  // a NACK found a loss
    place(layout, payload);
    if (!combines_) {
        const Status s =
            send_hops(header.origin, index_of(header), layout, header.flags & kResent);
        if (failed(s)) return s;
    }
    return advance();
}

NICSIM_HOT_PATH
std::span<std::byte> AllgatherOp::placement(Rank src, const PacketHeader& header) {
    if (result_.empty() || header.kind != PacketKind::allgather) return {};
    const auto slot = slot_of(src, header);
    if (!slot || arrived_[step_of(header)].has(*slot)) return {};
    const Layout layout = layout_of(header);
    const auto run = layout.one_run();
    if (!run || run->length != header.payload_bytes) return {};
    return result_.subspan(run->offset, run->length);
}

Status AllgatherOp::on_timeout() {
    // While packets keep coming, the last packets missing are most likely queued behind them;
    // once none has come since the last round, they are asked for every round (the driver
    // spaces its rounds out while it hears nothing).
    Round round{.tails = tails_wait_ == 0 || !heard_};
    if (!round.tails) --tails_wait_;
    heard_ = false;
    Status s = Status::ok;
    if (combines_) {
        if (step_ < steps_.size()) s = ask_overdue(step_, 0, arrived_[step_].expected(), round);
    } else {
        for (std::size_t step = step_; step < steps_.size() && !failed(s); ++step) {
            const std::size_t expected = arrived_[step].expected();
            asked_[step] = Arrivals(expected);  // a new round of asking
            for (std::size_t first = 0; first < expected && !failed(s); first += per_block_) {
                s = ask_overdue(step, first, first + per_block_, round);
            }
        }
    }
    if (failed(s)) return s;
    if (round.lost) {
        unsure_rounds_ = 0;
        tails_wait_ = 0;
    } else if (round.asked_tail) {
        unsure_rounds_ = std::min(unsure_rounds_ + 1, kMaxTailsBackoff);
        tails_wait_ = (1u << unsure_rounds_) - 1;
    }
    return status();
}

Status AllgatherOp::ask_overdue(std::size_t step, std::size_t first, std::size_t end,
                                Round& round) {
    // Gaps before the last packet in are lost; the last packet stands for the rest, which may
    // be on their way (the header comment).
    const Arrivals& arrived = arrived_[step];
    std::size_t last = end;  // one past the last packet in
    while (last > first && !arrived.has(last - 1)) --last;
    for (std::size_t slot = arrived.next_missing(first); slot < last;
         slot = arrived.next_missing(slot + 1)) {
        round.lost = true;
        ++stats_.nacks_sent;
        if (const Status s = ask(step, slot); failed(s)) return s;
    }
    if (last < end && round.tails) {
        round.asked_tail = true;
        ++stats_.nacks_sent;
        return ask(step, end - 1);
    }
    return Status::ok;
}

Status AllgatherOp::resend_step(Rank src, std::size_t step, std::uint32_t index, Rank origin) {
    const Cut& to = steps_[step].send;
    if (origin != rank_ || to.peer != src || index >= to.packets) {
        return Status::protocol;  // src gets no such packet from this rank
    }
    if (step > step_ || (step == step_ && !step_sent_)) return status();  // not sent yet
    const Status s =
        resend(src, header(PacketKind::allgather, step, index, rank_), packet_of(to, index));
    return failed(s) ? s : status();
}

Status AllgatherOp::resend_hop(Rank src, std::size_t step, std::uint32_t index, Rank origin) {
    if (origin < 0 || origin >= size_) return Status::protocol;
    // Origin's block leaves this rank along its hops: from the start if it is its own, else
    // once it has arrived at step `from`.
    const auto hops = std::span(hops_).subspan(hop_first_[origin],
                                               hop_first_[origin + 1] - hop_first_[origin]);
    if (std::none_of(hops.begin(), hops.end(),
                     [&](const Hop& h) { return h.to == src && h.step == step; }) ||
        index >= per_block_) {
        return Status::protocol;  // src gets no such packet from this rank
    }
    const std::optional<std::size_t> from =
        origin == rank_ ? std::nullopt : step_receiving(origin);
    if (origin != rank_ && !from) return Status::protocol;
    Status s;
    const std::optional<std::size_t> slot = from ? hop_slot(*from, origin, index) : std::nullopt;
    if (!from || arrived_[*from].has(*slot)) {
        s = resend(src, header(PacketKind::allgather, step, index, origin),
                   block_packet(origin, index));
    } else if (!asked_[*from].has(*slot)) {
        ++stats_.nacks_forwarded;
        s = ask(*from, *slot);
    } else {
        s = Status::ok;  // asked already: the packet goes on to src too once it arrives
    }
    return failed(s) ? s : status();
}

Status AllgatherOp::resend(Rank src, PacketHeader&& header, const Layout& layout) {
    if (nic_.holds(src, header)) return Status::ok;  // not sent yet: it leaves in the normal course
    ++stats_.retransmitted;
    header.flags |= kResent;
    return send(src, std::move(header), layout);
}

NICSIM_HOT_PATH
Status AllgatherOp::advance() {
    while (step_ < steps_.size()) {
        if (combines_ && !step_sent_) {
            const Cut& to = steps_[step_].send;
            for (std::uint32_t i = 0; i < to.packets; ++i) {
                const Status s =
                    send(to.peer, header(PacketKind::allgather, step_, i, rank_), packet_of(to, i));
                if (failed(s)) return s;
            }
            step_sent_ = true;
        }
        if (!arrived_[step_].complete()) return Status::in_progress;
        ++step_;
        step_sent_ = false;
    }
    return Status::ok;
}

NICSIM_HOT_PATH
std::optional<std::size_t> AllgatherOp::slot_of(Rank src, const PacketHeader& header) const {
    const std::size_t step = step_of(header);
    const std::uint32_t index = index_of(header);
    if (step >= steps_.size() || steps_[step].recv.peer != src) return std::nullopt;
    if (!combines_) return hop_slot(step, header.origin, index);
    if (header.origin != src || index >= arrived_[step].expected()) return std::nullopt;
    return index;
}

std::optional<std::size_t> AllgatherOp::hop_slot(std::size_t step, Rank origin,
                                                 std::uint32_t index) const {
    if (index >= per_block_) return std::nullopt;
    const auto pos = position(steps_[step].recv.blocks, origin);
    if (!pos) return std::nullopt;
    return *pos * per_block_ + index;
}

std::optional<std::size_t> AllgatherOp::step_receiving(Rank origin) const {
    for (std::size_t step = 0; step < steps_.size(); ++step) {
        if (hop_slot(step, origin, 0)) return step;
    }
    return std::nullopt;
}

PacketHeader AllgatherOp::header(PacketKind kind, std::size_t step, std::uint32_t index,
                                 Rank origin) const {
    PacketHeader h;
    h.kind = kind;
    h.seq = seq_;
    h.step = static_cast<std::uint32_t>(step) << kAllgatherIndexBits | index;
    h.origin = origin;
    return h;
}

Status AllgatherOp::ask(std::size_t step, std::size_t slot) {
    const Cut& recv = steps_[step].recv;
    const auto index = static_cast<std::uint32_t>(combines_ ? slot : slot % per_block_);
    const Rank origin = combines_ ? recv.peer : origin_at(recv.blocks, slot / per_block_);
    if (!combines_) asked_[step].record(slot);
    PacketHeader nack = header(PacketKind::nack, step, index, origin);
    return nic_.send(recv.peer, nack);
}

AllgatherOp::Cut AllgatherOp::cut(const std::vector<plan::Transfer>& transfers) const {
    if (transfers.empty()) return {};
    const plan::Transfer& t = transfers.front();
    Cut cut{t.peer, 0, t.blocks, std::nullopt};
    if (!combines_) {
        cut.packets = static_cast<std::uint64_t>(plan::block_count(t.blocks)) * per_block_;
        return cut;
    }
    cut.packets = plan::packet_count(t.blocks, block_bytes_, mtu_);
    if (t.blocks.size() == 1) {
        cut.run = plan::ByteRange{static_cast<std::uint64_t>(t.blocks[0].first) * block_bytes_,
                                  static_cast<std::uint64_t>(t.blocks[0].count) * block_bytes_};
    }
    return cut;
}

AllgatherOp::Layout AllgatherOp::packet_of(const Cut& cut, std::uint64_t index) const {
    if (!cut.run) return {{}, plan::packet_at(cut.blocks, block_bytes_, mtu_, index)};
    // Bytes [index * mtu, (index + 1) * mtu) of the run, as plan::packet_at() cuts them.
    const std::uint64_t skip = index * mtu_;
    return {{cut.run->offset + skip, std::min<std::uint64_t>(cut.run->length - skip, mtu_)},
            std::nullopt};
}

AllgatherOp::Layout AllgatherOp::block_packet(Rank origin, std::uint32_t index) const {
    const std::uint64_t skip = std::uint64_t{index} * mtu_;
    return {{static_cast<std::uint64_t>(origin) * block_bytes_ + skip,
             std::min<std::uint64_t>(block_bytes_ - skip, mtu_)},
            std::nullopt};
}

NICSIM_HOT_PATH
AllgatherOp::Layout AllgatherOp::layout_of(const PacketHeader& header) const {
    if (combines_) return packet_of(steps_[step_of(header)].recv, index_of(header));
    return block_packet(header.origin, index_of(header));
}

NICSIM_HOT_PATH
Status AllgatherOp::send(Rank dst, PacketHeader&& header, const Layout& layout) {
    header.payload_bytes = static_cast<std::uint32_t>(layout.payload());
    if (result_.empty() || header.payload_bytes == 0) return nic_.send(dst, header);
    if (const auto run = layout.one_run()) return nic_.send(dst, header, bytes_of(*run));
    std::vector<std::byte>& gathered = gathered_.emplace_back();
    for (const plan::ByteRange& piece : layout.pieces->pieces) {
        const auto bytes = bytes_of(piece);
        gathered.insert(gathered.end(), bytes.begin(), bytes.end());
    }
    return nic_.send(dst, header, gathered);
}

std::span<const std::byte> AllgatherOp::bytes_of(plan::ByteRange piece) {
    const std::uint64_t own_at = static_cast<std::uint64_t>(rank_) * block_bytes_;
    if (!own_.empty() && piece.offset < own_at + block_bytes_ &&
        piece.offset + piece.length > own_at) {
        if (piece.offset >= own_at && piece.offset + piece.length <= own_at + block_bytes_) {
            return own_.subspan(piece.offset - own_at, piece.length);
        }
        place_own();
    }
    return result_.subspan(piece.offset, piece.length);
}

NICSIM_HOT_PATH
void AllgatherOp::place_own() {
    if (own_.empty()) return;
    std::copy(own_.begin(), own_.end(),
              result_.begin() + static_cast<std::ptrdiff_t>(rank_ * block_bytes_));
    own_ = {};
}

NICSIM_HOT_PATH
Status AllgatherOp::send_hops(Rank origin, std::uint32_t index, const Layout& layout,
                              std::uint16_t flags) {
    for (std::uint32_t h = hop_first_[origin]; h < hop_first_[origin + 1]; ++h) {
        PacketHeader out = header(PacketKind::allgather, hops_[h].step, index, origin);
        out.flags = flags;
        if (const Status s = send(hops_[h].to, std::move(out), layout); failed(s)) return s;
    }
    return Status::ok;
}

NICSIM_HOT_PATH
void AllgatherOp::place(const Layout& layout, std::span<const std::byte> payload) {
    if (result_.empty()) return;
    const std::span<const plan::ByteRange> pieces =
        layout.pieces ? std::span<const plan::ByteRange>(layout.pieces->pieces)
                      : std::span<const plan::ByteRange>(&layout.run, 1);
    for (const plan::ByteRange& piece : pieces) {
        // A payload the fabric received in place (placement()) is already there.
        if (payload.data() != result_.data() + piece.offset) {
            std::copy_n(payload.begin(), piece.length, result_.begin() + piece.offset);
        }
        payload = payload.subspan(piece.length);
    }
}

}  // namespace nicsim::nic
