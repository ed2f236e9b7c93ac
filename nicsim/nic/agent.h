// The NIC agent of one rank in one group: numbers collectives in call order, routes each arriving
// packet to its collective, and keeps packets that arrive before their collective is posted
// (their payloads in the global collective channels). A broadcast's packet that names its tree
// goes on to this rank's children at once even then, as LFC's NICs forward multicast packets
// their hosts have not asked for (Bhoedjang et al. §3): a late host does not hold up its
// subtree. Its packets come and go through LFC's NIC (nic.h): the one send path, with its flow
// control, of both fabrics.
#pragma once

#include <algorithm>
#include <memory>
#include <optional>
#include <unordered_map>
#include <vector>

#include "core/ring.h"
#include "core/spares.h"
#include "nic/allgather_op.h"
#include "nic/barrier_op.h"
#include "nic/bcast_op.h"
#include "nic/channels.h"
#include "nic/nic.h"
#include "nic/operation.h"
#include "plan/allgather.h"
#include "plan/barrier.h"
#include "plan/tree.h"

namespace nicsim::nic {

struct AgentConfig {
    ChannelConfig channels;  // where packets of collectives not yet posted are kept
    // The agent's own NIC (nic.h), which every packet comes and goes through. Its credits are
    // the flow-control window with every peer. A real job's collectives keep their payloads in
    // their buffers until they complete, so queued packets need no copy (stable_payloads); the
    // simulator's resend after completion, so it copies.
    NicConfig nic = NicConfig::real_job();
    // Or each peer's window, by rank (0 for a peer whose transport is its own window): when not
    // empty, it holds `size` entries and nic.credits is not used.
    std::vector<int> peer_credits;
    // The group's ranks in locality order (ranks close in the machine next to each other), or
    // empty for rank order. Broadcast trees are built over it, so subtrees stay local.
    std::vector<Rank> order;
    // Each rank's node (ranks with the same number share one), or empty for none known. Given,
    // broadcast trees cross between nodes once per node (plan::node_tree), barriers only
    // between the nodes' first ranks (plan::node_barrier), and allgathers carry each block into
    // each other node once (plan::node_allgather).
    std::vector<int> node_of;
    // A broadcast root's host moves its message into the NIC packet by packet (supply()), as
    // the modeled network's host does, rather than leaving it in host memory for the NIC to send.
    bool host_feeds_root = false;
};

// A rank's schedules of one collective, planned on first use of each algorithm; the last one
// asked for is at hand (a job repeats its calls).
template <typename Algorithm, typename Schedule, bool (*runs)(const Schedule&)>
class Schedules {
public:
    // The algorithm's schedule, plan() making it the first time. Null when the operation cannot
    // run it (`runs` says).
    template <typename Plan>
    const Schedule* get(const Algorithm& algorithm, Plan plan) {
        if (&algorithm == last_algorithm_) [[likely]] return last_;
        return find_or_plan(algorithm, plan);
    }

private:
    // Another algorithm than the last, or a first call: out of get()'s way (cold).
    template <typename Plan>
    [[gnu::cold]] const Schedule* find_or_plan(const Algorithm& algorithm, Plan plan) {
        auto it = planned_.find(&algorithm);
        if (it == planned_.end()) {
            Schedule steps = plan();
            if (!runs(steps)) return nullptr;
            it = planned_.emplace(&algorithm, std::move(steps)).first;
        }
        last_algorithm_ = &algorithm;
        last_ = &it->second;  // the map's nodes stay put
        return last_;
    }

    std::unordered_map<const Algorithm*, Schedule> planned_;
    const Algorithm* last_algorithm_ = nullptr;
    const Schedule* last_ = nullptr;
};

class Agent {
public:
    // On a NIC of its own over `fabric` (a real job's), made from config.nic and
    // config.peer_credits... invalid_argument when config.order is not a permutation of
    // 0..size-1, or peer_credits or node_of is neither empty nor `size` long.
    Agent(Rank rank, Rank size, Fabric& fabric, AgentConfig config = {});
    // ...or on the driver's NIC, which also carries its host's messages (the modeled network's
    // node); config.nic and config.peer_credits do not apply. `nic` outlives the agent.
    Agent(Rank rank, Rank size, Nic& nic, AgentConfig config = {});
    ~Agent();
    // Collectives in flight hold references into the agent: it stays where it was made.
    Agent(const Agent&) = delete;
    Agent& operator=(const Agent&) = delete;

    // Posts the group's next collective. On success `*seq` names it for test() and release().
    Status post_barrier(const plan::BarrierAlgorithm& algorithm, Seq* seq);

    // A broadcast from `root` over the tree of shape `shape` (k used when the shape takes one),
    // in packets of at most `mtu` bytes (bcast_op.h). `message` is the `bytes` of the message
    // (the root's to send, the others' to fill) or empty to model time only; it must stay valid
    // until the collective is complete. invalid for a root out of range, mtu 0, k < 1 where the
    // shape takes it, a message of another size, or more than kBcastMaxPackets packets.
    Status post_bcast(const plan::TreeShape& shape, int k, Rank root, std::uint64_t bytes,
                      std::uint32_t mtu, std::span<std::byte> message, Seq* seq);
    // The same over a tree the driver laid (labelled with ranks, spanning the group, rooted at
    // tree.root): the modeled network's, one for every node.
    Status post_bcast(const plan::Tree& tree, std::uint64_t bytes, std::uint32_t mtu,
                      std::span<std::byte> message, Seq* seq);
    // This rank cannot take part in its next collective (a local failure `why` before it could
    // post it, such as an allocation): the collective is numbered as any other, and fails here
    // with `why`, which, as every failure of this rank's own, every other rank is told (below).
    //
    // A collective that fails on this rank for a reason of its own (anything but peer_failed: a
    // packet that broke the protocol, post_abort()) is given up everywhere: every other rank is
    // sent an abort packet (Nic::tell(), outside the window), so that its copy fails with
    // peer_failed (unless already complete) instead of waiting for this rank. test(seq) answers
    // in_progress until those packets have left, then the failure. Packets of an aborted
    // collective are dropped on arrival.
    Status post_abort(Status why, Seq* seq);

    // This rank's transport broke (`why`: the NIC's own transport error, or the driver's word):
    // the group is broken, everywhere. Every collective in progress fails with `why`, every later
    // one at once, nothing queued leaves any more, and every other rank is told, which does the
    // same with peer_failed and tells the others again (so one that got through is enough), as
    // MPI's fault-tolerance proposal revokes a communicator.
    void fail(Status why);
    // ok, or why the group is broken (fail() here, or peer_failed when told).
    Status broken() const { return broken_; }

    // With host_feeds_root: the root's host moved the next packet of broadcast `seq` into the
    // NIC, which multicasts it. `again` when the NIC has no send buffer free for it;
    // invalid when `seq` is no broadcast this rank is the root of, or has no packet left.
    Status supply(Seq seq);

    // An allgather of `block_bytes` per rank in packets of at most `mtu` payload bytes
    // (allgather_op.h). `result` holds size * block_bytes bytes with this rank's block in place,
    // or is empty to model time only; it must stay valid and unchanged until release(seq). Or
    // this rank's block is `own` (block_bytes long, valid until the collective is complete),
    // which the op sends from and copies into place itself.
    // invalid for a host-based algorithm, mtu 0, a result of another size, or more than
    // kAllgatherMaxPackets packets in one transfer.
    Status post_allgather(const plan::AllgatherAlgorithm& algorithm, std::uint64_t block_bytes,
                          std::uint32_t mtu, std::span<std::byte> result, Seq* seq,
                          std::span<const std::byte> own = {});

    // A packet from `src` arrived. A packet its collective rejects fails that collective, unless
    // the collective is already complete; one that names no collective is only reported.
    Status deliver(Rank src, std::span<const std::byte> packet);
    // The same, the header already decoded and the payload either payload_bytes long or, when
    // only time is modelled (the simulator), empty.
    Status deliver(Rank src, const PacketHeader& header, std::span<const std::byte> payload);

    // Where the payload of the packet `header` announces belongs (Operation::placement): for a
    // fabric that receives a payload apart from its header. When its collective is not posted
    // here yet (in a real job: unbounded channels), a room of the agent's own, which the
    // packet's delivery then keeps as it is, so that an early payload too is received once; the
    // fabric delivers the packet before it places the sender's next one. Empty when the bytes go
    // elsewhere; deliver() copies them then.
    std::span<std::byte> placement(Rank src, const PacketHeader& header);

    // Offers queued packets to the fabric again: ok when none is left, in_progress while some
    // still wait, or the transport error, which fails every collective in flight.
    Status progress();

    // The driver deems the packets this rank waits for overdue (the agent has no clock): every
    // collective in progress asks its peers for them again (Yu et al. §4.3.1). Then offers the
    // queue as progress() does and returns what it returns.
    Status timeout();

    // ok when this rank's part of collective `seq` is complete (its packets handed to the fabric
    // included), in_progress, or the error that failed it.
    Status test(Seq seq) const;

    // The host no longer asks about `seq`; it is forgotten once done, and no longer answers a
    // peer's NACK. Release a collective that retransmits only when no peer can still miss a
    // packet of it: after every rank completed it.
    void release(Seq seq);

    // Every rank of the group has completed `seq` and every collective before it: the channels
    // they used may take later collectives' packets (channels.h). invalid when `seq` is not
    // posted here yet.
    Status recycle(Seq seq);

    Rank size() const { return size_; }

    // Collectives posted and not yet forgotten, and packets kept for collectives not yet posted.
    std::size_t active() const { return live_; }
    std::size_t early_packets() const { return early_.size(); }
    const CollectiveStats& stats() const { return stats_; }
    // Collectives that have ended here (complete or failed) since the agent was made: a driver
    // that waits for one may stop taking packets once this moves.
    std::uint64_t settled() const { return settled_; }
    // The state of the collective last fed a packet, for a driver that prefetches it before the
    // next packet (it may be forgotten since: only an address, never to be read).
    const void* last_fed() const { return last_fed_; }
    // Flow control (nic.h): packets that had to wait for a credit; credits held for sending to
    // `peer`, and credits owed to it.
    std::uint64_t credit_stalls() const { return nic_->stats().blocked; }
    int credits(Rank peer) const { return nic_->send_credits(peer); }
    int owed_credits(Rank peer) const { return nic_->unreturned_credits(peer); }

private:
    // An op lives in one of the agent's spare blocks (a real job makes one per collective) and
    // goes back there when the agent forgets it.
    struct OpEnd {
        Spares* spares;
        std::size_t bytes;
        NICSIM_HOT_PATH void operator()(Operation* op) const noexcept {
            spares->destroy(op, bytes);
        }
    };
    using OpPtr = std::unique_ptr<Operation, OpEnd>;
    template <typename T, typename... Args>
    OpPtr make_op(Args&&... args) {
        return OpPtr(spares_.make<T>(std::forward<Args>(args)...), OpEnd{&spares_, sizeof(T)});
    }

    struct Slot {
        Seq seq;
        OpPtr op;
        AllgatherOp* allgather = nullptr;  // op, when it is an allgather
        Status status = Status::in_progress;
        bool released = false;
        bool aborted_here = false;  // failed here and given up: done once the aborts left
    };
    // Memory of the agent's own that holds an early payload.
    struct Room {
        std::unique_ptr<std::byte[]> data;
        std::size_t bytes = 0;
    };
    struct EarlyPacket {
        Rank src;
        PacketHeader header;
        Channels::Slice payload;
        // Its payload (payload.length bytes) when it is not in the channels: a packet forwarded
        // on arrival (kForwardedEarly), which the NIC sends from, or any early payload of a real
        // job (unbounded channels), received into the room or copied there.
        Room held;
    };

    // The NIC hands this host the collectives' packets as they arrive, and, on the agent's own
    // NIC, host messages, which break the protocol there.
    class Host final : public HostPort {
    public:
        explicit Host(Agent& agent) : agent_(agent) {}
        NICSIM_HOT_PATH Status deliver(Rank src, const PacketHeader& header,
                                       std::span<const std::byte> payload) override {
            if (Nic::is_message(header.kind)) return Status::protocol;
            return agent_.take(src, header, payload);
        }
        void send_space() override {}

    private:
        Agent& agent_;
    };

    Status take(Rank src, const PacketHeader& header, std::span<const std::byte> payload);
    // An abort from a peer: for one collective (give_up()), or for the group (fail()).
    Status on_abort(const PacketHeader& header);
    // Collective `seq` failed here: every other rank is told.
    void give_up(Seq seq, Slot& slot);
    // An abort with these flags to every other rank.
    void tell_all(Seq seq, std::uint16_t flags);
    bool aborted(Seq seq) const {
        return !aborted_.empty() &&
               std::find(aborted_.begin(), aborted_.end(), seq) != aborted_.end();
    }
    void remember_abort(Seq seq);
    Status start(OpPtr op, Seq* seq, AllgatherOp* allgather = nullptr);
    Slot* find(Seq seq);
    const Slot* find(Seq seq) const { return const_cast<Agent*>(this)->find(seq); }
    void forget(Seq seq);
    void drop_forwarded();
    // This rank's place in the tree of `shape` (at `index` in plan::tree_shapes()), k and root:
    // built once each, the last one asked for at hand.
    const TreePlace& place(const plan::TreeShape& shape, std::size_t index, int k, Rank root) {
        const std::uint64_t key = (std::uint64_t{index} << 56) |
                                  (static_cast<std::uint64_t>(k) << 32) |
                                  static_cast<std::uint32_t>(root);
        if (last_place_ != nullptr && last_key_ == key) [[likely]] return *last_place_;
        return build_place(shape, index, key, k, root);
    }
    [[gnu::cold]] const TreePlace& build_place(const plan::TreeShape& shape, std::size_t index,
                                               std::uint64_t key, int k, Rank root);
    Status keep_early(Rank src, const PacketHeader& header, std::span<const std::byte> payload,
                      Room& room);
    // The room placement() gave the packet from `src` whose payload is `payload`, if it did; a
    // room given to `src` that does not hold `payload` goes back (give_back).
    Room claim_room(Rank src, std::span<const std::byte> payload);
    // A room of at least `bytes`: a spare one of at most twice that (its pages already the
    // process's), else a new one.
    Room take_room(std::size_t bytes);
    // A room no longer needed: kept for the next early payloads, up to kSpareRooms rooms and
    // kSpareRoomBytes in all (with kSpareRooms kept, in place of the smallest if it is larger),
    // else freed. kSpareRooms covers the early payloads of one large collective (up to 48 a call
    // for 4 oversubscribed ranks' 4 MiB MPI_Allgather in 256 KiB packets); with fewer, calls make
    // rooms anew and fault their pages in (docs/measurements.md, 4 oversubscribed ranks).
    void give_back(Room room);
    // This rank's place in the tree a broadcast's early packet from `src` names, where this rank
    // forwards it: null when it names none, `src` is not this rank's parent in it, or this rank
    // has no children.
    const TreePlace* named_tree_of(Rank src, const PacketHeader& header);
    // Whether a broadcast of `bytes` in packets of `mtu` can be posted into `message`.
    static bool bcast_fits(std::uint64_t bytes, std::uint32_t mtu, std::span<std::byte> message) {
        return mtu != 0 && (message.empty() || message.size() == bytes) &&
               packet_count(bytes, mtu) <= kBcastMaxPackets;
    }
    Status post_bcast(const TreePlace& place, std::uint64_t bytes, std::uint32_t mtu,
                      std::span<std::byte> message, Seq* seq);
    Status feed(Slot& slot, Rank src, const PacketHeader& header,
                std::span<const std::byte> payload);
    // The packets kept for the collective just posted in `slot`, fed to it in their order.
    void feed_early(Slot& slot);
    void settle(Seq seq, Slot& slot, Status s);
    bool is_future(Seq seq) const;
    // The group's ranks in locality order.
    std::vector<Rank> order() const;

    Agent(Rank rank, Rank size, Nic* nic, Fabric* fabric, AgentConfig config);

    // What a packet's way through the agent touches comes first (the slot of its collective
    // included, while few are in flight), the rest after it.
    Host host_{*this};
    Nic* nic_;  // own_nic_, or the driver's
    Rank rank_;
    Rank size_;
    Seq ops_first_ = 0;
    Seq next_seq_ = 0;
    std::size_t live_ = 0;
    std::uint64_t settled_ = 0;
    const void* last_fed_ = nullptr;
    CollectiveStats stats_;
    // Collectives posted and not yet forgotten, by seq. Seqs are handed out in order, so this is
    // a window from the oldest one still held (ops_first_); forgotten ones leave a hole until
    // everything before them is gone too. The destructor ends them before spares_ goes.
    Ring<std::optional<Slot>, 4> ops_;
    Spares spares_;  // where the ops live
    std::vector<Rank> order_;  // empty: rank order
    std::vector<int> node_of_;
    bool host_feeds_root_;
    Channels channels_;
    // The last allgather forgotten, kept to become the next one of the same schedule and sizes
    // (AllgatherOp::reuse): a job repeats its calls.
    std::unique_ptr<AllgatherOp, OpEnd> idle_allgather_;
    // Packets of collectives not posted yet, in order of arrival, and those of the collective
    // being posted while they are fed to it: vectors that keep their memory (a job's barriers
    // and small collectives meet early packets at every call).
    std::vector<EarlyPacket> early_;
    std::vector<EarlyPacket> posted_early_;
    // Rooms given to early packets in flight (at most one per sender: a fabric places a sender's
    // packets in order), and rooms free again, whose pages are already the process's: a job's
    // next collectives bring early payloads of the same sizes.
    std::vector<std::pair<Rank, Room>> rooms_;
    std::vector<Room> spare_rooms_;  // smallest first
    std::size_t spare_bytes_ = 0;
    static constexpr std::size_t kSpareRooms = 64;
    static constexpr std::size_t kSpareRoomBytes = std::size_t{64} << 20;
    // The payloads of packets forwarded before their collective was posted, by collective, which
    // the NIC may send from until it has let them go: kept until their collective is forgotten
    // and the NIC holds no packet (drop_forwarded()).
    std::vector<std::pair<Seq, std::unique_ptr<std::byte[]>>> forwarded_;
    Status broken_ = Status::ok;  // fail(): the group is broken, with this
    // Collectives aborted lately (given up here or at a peer), whose packets are dropped:
    // the last kRememberedAborts of them.
    static constexpr std::size_t kRememberedAborts = 64;
    std::vector<Seq> aborted_;
    // This rank's schedules, planned once per algorithm.
    Schedules<plan::BarrierAlgorithm, plan::BarrierSchedule, &BarrierOp::runs> barrier_schedules_;
    Schedules<plan::AllgatherAlgorithm, plan::AllgatherSchedule, &AllgatherOp::runs>
        allgather_schedules_;
    // This rank's places in broadcast trees by (shape, k, root), built once each.
    std::unordered_map<std::uint64_t, TreePlace> places_;
    // The last one asked for: a job broadcasts from the same root again and again.
    std::uint64_t last_key_ = 0;
    const TreePlace* last_place_ = nullptr;
    std::optional<Nic> own_nic_;  // a real job's agent's NIC
};

}  // namespace nicsim::nic
