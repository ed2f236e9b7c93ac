#include "nic/agent.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <new>
#include <numeric>
#include <stdexcept>

#include "nic/abort_op.h"
#include "nic/bcast_op.h"
#include "plan/ordering.h"

namespace nicsim::nic {

namespace {

std::vector<int> checked(Rank size, std::vector<int> peer_credits) {
    if (!peer_credits.empty() && peer_credits.size() != static_cast<std::size_t>(size)) {
        throw std::invalid_argument("peer_credits does not name every rank of the group");
    }
    return peer_credits;
}

}  // namespace

Agent::Agent(Rank rank, Rank size, Fabric& fabric, AgentConfig config)
    : Agent(rank, size, nullptr, &fabric, std::move(config)) {}

Agent::Agent(Rank rank, Rank size, Nic& nic, AgentConfig config)
    : Agent(rank, size, &nic, nullptr, std::move(config)) {}

Agent::Agent(Rank rank, Rank size, Nic* nic, Fabric* fabric, AgentConfig config)
    : nic_(nic),
      rank_(rank),
      size_(size),
      order_(std::move(config.order)),
      node_of_(std::move(config.node_of)),
      host_feeds_root_(config.host_feeds_root),
      channels_(config.channels),
      idle_allgather_(nullptr, OpEnd{&spares_, sizeof(AllgatherOp)}) {
    if (nic_ == nullptr) {
        nic_ = &own_nic_.emplace(rank, config.nic, *fabric, host_,
                                 checked(size, std::move(config.peer_credits)));
    }
    nic_->attach(&host_);
    if (!node_of_.empty() && node_of_.size() != static_cast<std::size_t>(size)) {
        throw std::invalid_argument("node_of does not name every rank's node");
    }
    if (order_.empty()) return;  // rank order, made when a plan needs it (order())
    std::vector<Rank> sorted = order_;
    std::sort(sorted.begin(), sorted.end());
    for (Rank i = 0; i < size; ++i) {
        if (static_cast<Rank>(sorted.size()) != size || sorted[i] != i) {
            throw std::invalid_argument("order is not a permutation of the group's ranks");
        }
    }
}

Agent::~Agent() {
    nic_->attach(nullptr);
    // The ops go back into spares_, which, declared after ops_, goes first.
    while (!ops_.empty()) ops_.pop_front();
    idle_allgather_.reset();
}

std::vector<Rank> Agent::order() const {
    if (!order_.empty()) return order_;
    std::vector<Rank> ranks(static_cast<std::size_t>(size_));
    std::iota(ranks.begin(), ranks.end(), 0);
    return ranks;
}

NICSIM_HOT_PATH
Status Agent::post_barrier(const plan::BarrierAlgorithm& algorithm, Seq* seq) {
    const auto* steps = barrier_schedules_.get(algorithm, [&] {
        // Over nodes rank 0's node comes first, so that rank 0 leads it and roots a tree.
        return node_of_.empty()
                   ? algorithm.plan(rank_, size_)
                   : plan::node_barrier(algorithm, rank_, plan::rotate_to(order(), 0), node_of_);
    });
    if (steps == nullptr) return Status::invalid;
    return start(make_op<BarrierOp>(next_seq_, *steps, *nic_), seq);
}

const TreePlace& Agent::build_place(const plan::TreeShape& shape, std::size_t index,
                                    std::uint64_t key, int k, Rank root) {
    auto it = places_.find(key);
    if (it == places_.end()) {
        // The locality order turned to start at the root (plan::rotate_to, as the model lays
        // its trees), laid along the tree's pre-order: the root at position 0, and every
        // subtree a run of that order; over nodes, when known, a tree of such trees.
        const std::vector<Rank> local = plan::rotate_to(order(), root);
        const plan::Tree tree = node_of_.empty() ? plan::lay_along(shape.build(size_, k), local)
                                                 : plan::node_tree(shape, k, local, node_of_);
        it = places_.try_emplace(key, rank_, tree, *nic_, tree_flags(index, k)).first;
    }
    last_key_ = key;
    last_place_ = &it->second;  // the map's nodes stay put
    return it->second;
}

NICSIM_HOT_PATH
Status Agent::post_bcast(const plan::TreeShape& shape, int k, Rank root, std::uint64_t bytes,
                         std::uint32_t mtu, std::span<std::byte> message, Seq* seq) {
    if (root < 0 || root >= size_ || (shape.takes_k && k < 1) || !bcast_fits(bytes, mtu, message)) {
        return Status::invalid;
    }
    if (!shape.takes_k) k = 0;
    const auto index = static_cast<std::size_t>(&shape - plan::tree_shapes().data());
    return post_bcast(place(shape, index, k, root), bytes, mtu, message, seq);
}

Status Agent::post_bcast(const plan::Tree& tree, std::uint64_t bytes, std::uint32_t mtu,
                         std::span<std::byte> message, Seq* seq) {
    if (tree.children.size() != static_cast<std::size_t>(size_) ||
        tree.parent.size() != static_cast<std::size_t>(size_) || tree.root < 0 ||
        tree.root >= size_ || !bcast_fits(bytes, mtu, message)) {
        return Status::invalid;
    }
    return post_bcast(TreePlace(rank_, tree, *nic_), bytes, mtu, message, seq);
}

NICSIM_HOT_PATH
Status Agent::post_bcast(const TreePlace& place, std::uint64_t bytes, std::uint32_t mtu,
                         std::span<std::byte> message, Seq* seq) {
    return start(make_op<BcastOp>(next_seq_, rank_, place, bytes, mtu, message, *nic_, stats_,
                                  host_feeds_root_),
                 seq);
}

Status Agent::post_abort(Status why, Seq* seq) {
    if (!failed(why) || why == Status::again || why == Status::peer_failed) return Status::invalid;
    const Status s = start(make_op<AbortOp>(why), seq);
    return s == why ? Status::ok : s;  // `why` is the collective's outcome, not the post's
}

void Agent::fail(Status why) {
    if (failed(broken_)) return;
    broken_ = why;
    tell_all(next_seq_, kGroupBroken);  // and every rank that hears tells the others again
    nic_->shut(why);
    for (std::size_t i = 0; i < ops_.size(); ++i) {  // settle() may forget a slot, not move it
        std::optional<Slot>& slot = ops_[i];
        if (slot && slot->status == Status::in_progress) settle(slot->seq, *slot, why);
    }
}

void Agent::give_up(Seq seq, Slot& slot) {
    remember_abort(seq);
    slot.aborted_here = true;
    tell_all(seq, 0);
}

void Agent::tell_all(Seq seq, std::uint16_t flags) {
    PacketHeader h;
    h.kind = PacketKind::abort;
    h.seq = seq;
    h.origin = rank_;
    h.flags = flags;
    for (Rank peer = 0; peer < size_; ++peer) {
        if (peer != rank_) nic_->tell(peer, h);
    }
}

void Agent::remember_abort(Seq seq) {
    if (aborted(seq)) return;
    if (aborted_.size() == kRememberedAborts) aborted_.erase(aborted_.begin());
    aborted_.push_back(seq);
}

Status Agent::on_abort(const PacketHeader& header) {
    if ((header.flags & kGroupBroken) != 0) {
        fail(Status::peer_failed);
        return Status::ok;
    }
    const Seq seq = header.seq;
    remember_abort(seq);
    if (Slot* slot = find(seq); slot != nullptr && slot->status == Status::in_progress) {
        settle(seq, *slot, Status::peer_failed);  // may forget the slot
    }
    return Status::ok;  // a collective not posted yet fails when it is (start())
}

Status Agent::supply(Seq seq) {
    Slot* slot = find(seq);
    if (slot == nullptr || slot->status != Status::in_progress) return Status::invalid;
    const Status s = slot->op->supply();
    if (s == Status::again) return s;
    settle(seq, *slot, s);  // may forget the slot
    return failed(s) ? s : Status::ok;
}

NICSIM_HOT_PATH
Status Agent::post_allgather(const plan::AllgatherAlgorithm& algorithm, std::uint64_t block_bytes,
                             std::uint32_t mtu, std::span<std::byte> result, Seq* seq,
                             std::span<const std::byte> own) {
    // size * block_bytes <= mtu * kAllgatherMaxPackets bounds every transfer's packets.
    std::uint64_t total;
    if (algorithm.on_host || mtu == 0 ||
        __builtin_mul_overflow(block_bytes, static_cast<std::uint64_t>(size_), &total) ||
        total > mtu * kAllgatherMaxPackets ||
        (!result.empty() && result.size() != total) ||
        (!own.empty() && own.size() != block_bytes)) {
        return Status::invalid;
    }
    const auto* steps = allgather_schedules_.get(algorithm, [&] {
        return node_of_.empty() ? algorithm.plan(rank_, size_)
                                : AllgatherOp::schedule_for(algorithm, rank_, order(), node_of_);
    });
    if (steps == nullptr) return Status::invalid;
    if (idle_allgather_ && idle_allgather_->reuse(next_seq_, algorithm.combines, *steps,
                                                  block_bytes, mtu, result, own)) {
        AllgatherOp* op = idle_allgather_.release();
        return start(OpPtr(op, idle_allgather_.get_deleter()), seq, op);
    }
    auto op = make_op<AllgatherOp>(next_seq_, rank_, size_, algorithm.combines, *steps,
                                   block_bytes, mtu, result, *nic_, stats_, own);
    auto* allgather = static_cast<AllgatherOp*>(op.get());
    return start(std::move(op), seq, allgather);
}

NICSIM_HOT_PATH
Agent::Slot* Agent::find(Seq seq) {
    const Seq i = seq - ops_first_;  // wraps past the window for older seqs
    if (i >= ops_.size() || !ops_[i]) return nullptr;
    return &*ops_[i];
}

NICSIM_HOT_PATH
void Agent::forget(Seq seq) {
    std::optional<Slot>& slot = ops_[seq - ops_first_];
    if (slot->allgather != nullptr) {
        slot->allgather->forgotten();
        idle_allgather_.reset(slot->allgather);  // ends the one kept before
        slot->op.release();
    }
    slot.reset();
    --live_;
    if (!forwarded_.empty()) drop_forwarded();
}

void Agent::drop_forwarded() {
    if (nic_->queued() != 0) return;
    std::erase_if(forwarded_, [&](const auto& f) {
        return !is_future(f.first) && find(f.first) == nullptr;  // forgotten
    });
}

NICSIM_HOT_PATH
Status Agent::start(OpPtr op, Seq* seq, AllgatherOp* allgather) {
    while (!ops_.empty() && !ops_.front()) {
        ops_.pop_front();
        ++ops_first_;
    }
    if (ops_.empty()) ops_first_ = next_seq_;
    if (!forwarded_.empty()) drop_forwarded();
    // The op's first packets leave before its slot is filled in, which then cannot fail: on
    // the way from the host's call to the wire there is only the op's own work.
    ops_.reserve_one();
    const Seq s = next_seq_++;
    *seq = s;
    Status started = broken_;  // a broken group runs nothing: the collective fails at once
    if (failed(broken_)) (void) nic_->progress();  // and offers its aborts again
    try {
        if (!failed(broken_)) started = op->start();
    } catch (const std::bad_alloc&) {
        started = Status::no_memory;  // the collective fails; its number and slot stay taken
    } catch (...) {
        started = Status::invalid;  // as the C API reports anything else thrown
    }
    Slot& slot = ops_.append().emplace();
    ++live_;
    slot.seq = s;
    slot.op = std::move(op);
    slot.allgather = allgather;
    settle(s, slot, started);
    const Status posted = failed(slot.status) ? slot.status : Status::ok;
    // A peer told us it could not take part: the collective is posted, and fails.
    if (slot.status == Status::in_progress && aborted(s)) settle(s, slot, Status::peer_failed);
    if (!early_.empty()) feed_early(slot);
    return posted;
}

void Agent::feed_early(Slot& slot) {
    for (EarlyPacket& p : early_) {
        if (p.header.seq == slot.seq) posted_early_.push_back(std::move(p));
    }
    if (posted_early_.empty()) return;
    std::erase_if(early_, [&](const EarlyPacket& p) { return p.header.seq == slot.seq; });
    for (EarlyPacket& p : posted_early_) {
        if (!p.held.data) {
            // The host copies the early payloads out of the channel.
            feed(slot, p.src, p.header, channels_.read(slot.seq, p.payload));
            continue;
        }
        feed(slot, p.src, p.header, {p.held.data.get(), p.payload.length});
        if (p.header.flags & kForwardedEarly) {
            forwarded_.emplace_back(slot.seq, std::move(p.held.data));
        } else {
            give_back(std::move(p.held));
        }
    }
    posted_early_.clear();
}

Status Agent::deliver(Rank src, std::span<const std::byte> packet) {
    const auto header = PacketHeader::decode(packet);
    if (!header) return Status::protocol;
    return deliver(src, *header, packet.subspan(PacketHeader::kBytes));
}

NICSIM_HOT_PATH
Status Agent::deliver(Rank src, const PacketHeader& header, std::span<const std::byte> payload) {
    if (src < 0 || src >= size_ || (!payload.empty() && payload.size() != header.payload_bytes)) {
        return Status::protocol;
    }
    return nic_->on_packet(src, header, payload);
}

// The packet is consumed here (placed, or kept with the agent): its receive buffer is free again
// when this returns.
NICSIM_HOT_PATH
Status Agent::take(Rank src, const PacketHeader& header, std::span<const std::byte> payload) {
    Room room = rooms_.empty() ? Room{} : claim_room(src, payload);
    Status s = Status::ok;
    if (header.kind == PacketKind::abort) {
        s = on_abort(header);
    } else if (aborted(header.seq)) {
        // a packet of a collective a rank gave up
    } else if (Slot* slot = find(header.seq); slot == nullptr) {
        s = keep_early(src, header, payload, room);
    } else {
        s = feed(*slot, src, header, payload);  // (posted since its room was given)
    }
    if (room.data) give_back(std::move(room));
    return s;
}

NICSIM_HOT_PATH
Agent::Room Agent::claim_room(Rank src, std::span<const std::byte> payload) {
    for (auto it = rooms_.begin(); it != rooms_.end(); ++it) {
        if (it->first == src) {
            Room room = std::move(it->second);
            rooms_.erase(it);
            if (payload.data() == room.data.get()) return room;
            give_back(std::move(room));  // the fabric received elsewhere after all
            break;
        }
    }
    return {};
}

void Agent::give_back(Room room) {
    if (!room.data) return;
    // With every place taken, the room replaces the smallest spare if it is larger: a small room
    // comes cheap from the heap, a large one made anew is fresh memory, written page by page as
    // the payload is copied in. (A job's early payloads of many sizes, as a sweep leaves them,
    // would otherwise keep the small ones: 4 oversubscribed ranks, 1 MiB MPI_Allgather in OSU's
    // loop after 1 B-64 KiB, a new 1 MiB room for 1 early packet in 2 to 8, and 1.5-1.9 ms a
    // call against 0.8-1.0 ms.)
    const bool full = spare_rooms_.size() == kSpareRooms;
    const std::size_t replaced = full ? spare_rooms_.front().bytes : 0;
    if (full && replaced >= room.bytes) return;  // (freed here)
    if (spare_bytes_ - replaced + room.bytes > kSpareRoomBytes) return;
    if (full) spare_rooms_.erase(spare_rooms_.begin());
    spare_bytes_ += room.bytes - replaced;
    const auto at = std::upper_bound(spare_rooms_.begin(), spare_rooms_.end(), room.bytes,
                                     [](std::size_t b, const Room& r) { return b < r.bytes; });
    spare_rooms_.insert(at, std::move(room));
}

Status Agent::keep_early(Rank src, const PacketHeader& header, std::span<const std::byte> payload,
                         Room& room) {
    if (!is_future(header.seq)) return Status::protocol;  // its collective is long over
    // A NACK for a collective not posted here asks for a packet that leaves once it is.
    if (header.kind == PacketKind::nack) return Status::ok;
    const TreePlace* t = named_tree_of(src, header);
    if (t != nullptr || (channels_.unbounded() && !payload.empty())) {
        // Kept in a room, received there or copied there; forwarded now, from it, when this rank
        // forwards the broadcast (the room then lives until the broadcast is over).
        if (!room.data) {
            room = take_room(payload.size());
            if (!payload.empty()) std::memcpy(room.data.get(), payload.data(), payload.size());
        }
        EarlyPacket p{src, header, {0, payload.size()}, std::move(room)};
        if (t != nullptr) {
            const Status s =
                nic_->forward(t->children, header, {p.held.data.get(), payload.size()});
            if (failed(s)) return s;
            ++stats_.forwarded;
            p.header.flags |= kForwardedEarly;
        }
        early_.push_back(std::move(p));
        return Status::ok;
    }
    const auto kept = channels_.store(header.seq, header.payload_bytes, payload);
    if (!kept) {
        ++stats_.early_dropped;  // its collective asks for it again once posted
        return Status::ok;
    }
    early_.push_back({src, header, *kept, {}});
    return Status::ok;
}

const TreePlace* Agent::named_tree_of(Rank src, const PacketHeader& header) {
    std::size_t shape = 0;
    int k = 0;
    if (header.kind != PacketKind::bcast || failed(broken_) ||
        !read_tree_flags(header.flags, &shape, &k) || shape >= plan::tree_shapes().size() ||
        header.origin < 0 || header.origin >= size_ ||
        (plan::tree_shapes()[shape].takes_k ? k < 1 : k != 0)) {
        return nullptr;
    }
    const TreePlace& t = place(plan::tree_shapes()[shape], shape, k, header.origin);
    return t.parent == src && !t.children.empty() ? &t : nullptr;
}

NICSIM_HOT_PATH
Status Agent::feed(Slot& slot, Rank src, const PacketHeader& header,
                   std::span<const std::byte> payload) {
    if (failed(slot.status)) return Status::protocol;
    last_fed_ = slot.op.get();
    const Status s = slot.op->on_packet(src, header, payload);
    if (slot.status == Status::in_progress) settle(slot.seq, slot, s);  // may forget the slot
    return failed(s) ? s : Status::ok;
}

NICSIM_HOT_PATH
std::span<std::byte> Agent::placement(Rank src, const PacketHeader& header) {
    Slot* slot = find(header.seq);
    if (slot != nullptr) {
        return slot->status == Status::in_progress ? slot->op->placement(src, header)
                                                   : std::span<std::byte>{};
    }
    if (!channels_.unbounded() || header.payload_bytes == 0 || header.kind == PacketKind::abort ||
        header.kind == PacketKind::nack || aborted(header.seq) || !is_future(header.seq)) {
        return {};
    }
    (void) claim_room(src, {});  // a room given before and never delivered into goes back
    Room room = take_room(header.payload_bytes);
    const std::span<std::byte> at{room.data.get(), header.payload_bytes};
    rooms_.emplace_back(src, std::move(room));
    return at;
}

Agent::Room Agent::take_room(std::size_t bytes) {
    // The smallest spare that fits, wasting at most half.
    const auto fits = std::lower_bound(spare_rooms_.begin(), spare_rooms_.end(), bytes,
                                       [](const Room& r, std::size_t b) { return r.bytes < b; });
    if (fits == spare_rooms_.end() || fits->bytes / 2 > bytes) {
        return {std::make_unique_for_overwrite<std::byte[]>(bytes), bytes};
    }
    spare_bytes_ -= fits->bytes;
    Room room = std::move(*fits);
    spare_rooms_.erase(fits);
    return room;
}

Status Agent::progress() {
    const Status s = nic_->progress();
    if (failed(s)) {
        fail(s);
        return s;
    }
    return nic_->queued() == 0 ? Status::ok : Status::in_progress;
}

Status Agent::timeout() {
    for (std::size_t i = 0; i < ops_.size(); ++i) {  // settle() may forget a slot, not move it
        std::optional<Slot>& slot = ops_[i];
        if (slot && slot->status == Status::in_progress) {
            settle(slot->seq, *slot, slot->op->on_timeout());
        }
    }
    return progress();
}

NICSIM_HOT_PATH
void Agent::settle(Seq seq, Slot& slot, Status s) {
    if (s == Status::in_progress) return;
    slot.status = s;
    ++settled_;
    // A failure of this rank's own is told: a broken transport breaks the group, anything else
    // gives up this collective.
    if (failed(s) && s != Status::peer_failed && !failed(broken_) && !aborted(seq)) {
        if (failed(nic_->error())) {
            fail(nic_->error());
        } else {
            give_up(seq, slot);
        }
    }
    if (slot.released) forget(seq);
}

NICSIM_HOT_PATH
Status Agent::test(Seq seq) const {
    const Slot* slot = find(seq);
    if (slot == nullptr) return Status::invalid;
    // A collective is not complete while packets it sent may still wait in the transmit queue,
    // nor a collective given up while the others have not all been told.
    // (A broken group's queue never empties, and no longer reads the payloads.)
    if (slot->status == Status::ok && nic_->queued() != 0 && !failed(broken_)) {
        return Status::in_progress;
    }
    if (slot->aborted_here && nic_->untold() != 0) return Status::in_progress;
    return slot->status;
}

NICSIM_HOT_PATH
void Agent::release(Seq seq) {
    Slot* slot = find(seq);
    if (slot == nullptr) return;
    if (slot->status != Status::in_progress) {
        forget(seq);
    } else {
        slot->released = true;
    }
}

Status Agent::recycle(Seq seq) {
    if (is_future(seq)) return Status::invalid;  // its early packets may still need the channel
    channels_.recycle(seq);
    return Status::ok;
}

bool Agent::is_future(Seq seq) const {
    return seq_at_or_after(seq, next_seq_);
}

}  // namespace nicsim::nic
