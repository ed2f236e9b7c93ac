#include "sim/fmmc.h"

#include <algorithm>
#include <memory>

#include "core/ring.h"
#include "plan/tree.h"
#include "sim/bcast.h"
#include "sim/simulator.h"

namespace nicsim::sim {

namespace {

enum EventKind : std::uint32_t {
    kArrive,    // arg: flight; a packet reaches this node's NI
    kHostNext,  // the host may go on sending
    kNicPost,   // a packet the host wrote across the I/O bus reaches the NI
    kNicFree,   // the NI may transmit the next packet of its queue
    kGrant,     // arg: credits; the host sees the credit manager's reply
};

enum class Kind : std::uint8_t { data, request, reply, token, giveback };

struct Flight {
    Rank src;
    Rank dst;
    Kind kind;
    Rank origin;
    Seq seq;
    std::uint32_t step;
    std::uint32_t arg;  // data: last packet (1) or not; reply: credits granted
};

struct Tx {
    Rank dst;
    Kind kind;
    Rank origin;
    Seq seq;
    std::uint32_t step;
    std::uint32_t arg;
    std::uint32_t record;  // data: the packet's record at this NI
};

class Fmmc;

class Node final : public EventHandler {
public:
    Node(Fmmc& f, Rank rank) : rank_(rank), f_(f) {}
    void on_event(std::uint32_t kind, std::uint32_t arg) override;

    void start_sending(int messages);
    void send(const Tx& tx);  // queue a packet on the NI
    void grant_from_manager(Rank to, std::uint32_t credits);

    Rank rank_;
    Fmmc& f_;
    // host
    Time host_free = 0;
    Time bus_free = 0;
    int messages_left = 0;
    Seq seq = 0;
    std::uint32_t next_packet = 0;
    bool started = false;
    bool host_scheduled = false;
    bool host_waits = false;
    int credits = 0;  // cached multicast credits
    bool requesting = false;
    int send_slots = 0;  // free NI send buffers
    Time last_post = 0;
    Ring<Tx> posting;  // on the I/O bus towards the NI
    // NI
    Time nic_free = 0;
    bool free_scheduled = false;
    Ring<Tx> tx;
    int queued = 0;            // receive queue occupancy
    std::vector<int> records;  // per packet held: sends left
    std::vector<std::uint32_t> free_records;
    std::vector<bool> record_is_send;
    Ring<Time> frees;         // when host buffers free, not yet seen by the token
    std::uint64_t freed = 0;  // host multicast buffers freed (own multicasts count at once)
    // receiving
    std::vector<std::pair<Seq, std::uint32_t>> expect;  // by origin
    std::vector<int> received;                          // messages by origin
    Time first_done = 0;

private:
    void host_next(Time now);
    void request_credits(Time now);
    void pump(Time now);
    void arrive(const Flight& fl, Time now);
    std::uint32_t new_record(int sends, bool send);
    void sent(std::uint32_t record);
    void give_back();
};

class Fmmc {
public:
    Fmmc(const FmmcSpec& spec, Topology topology, std::vector<plan::Tree> trees)
        : spec_(spec),
          topology_(std::move(topology)),
          trees_(std::move(trees)),
          link_free_(topology_.links(), 0),
          snapshot_(static_cast<std::size_t>(spec.model.nodes), 0) {
        const Rank n = spec.model.nodes;
        for (Rank r = 0; r < n; ++r) nodes_.push_back(std::make_unique<Node>(*this, r));
        for (auto& node : nodes_) {
            node->send_slots = spec.model.send_buffers;
            node->expect.assign(static_cast<std::size_t>(n), {0, 0});
            node->received.assign(static_cast<std::size_t>(n), 0);
        }
        available_ = spec.params.host_buffers;
        const double wire_bytes = spec.params.packet_bytes + spec.model.header_bytes;
        wire_ = transfer_time(static_cast<std::uint64_t>(wire_bytes), spec.model.link_bw);
        control_wire_ = transfer_time(static_cast<std::uint64_t>(spec.model.header_bytes + 8),
                                      spec.model.link_bw);
    }

    const FmmcSpec& spec_;
    Topology topology_;
    std::vector<plan::Tree> trees_;
    Simulator sim;
    std::vector<std::unique_ptr<Node>> nodes_;
    std::vector<Time> link_free_;
    std::vector<Flight> flights_;
    std::vector<std::uint32_t> free_flights_;
    Time wire_ = 0;
    Time control_wire_ = 0;
    // the credit manager, on node 0's NI
    int available_ = 0;
    std::uint64_t used_ = 0;       // credits hosts have spent on packets
    std::uint64_t reclaimed_ = 0;  // credits every host has freed the buffer of
    bool token_out_ = false;
    std::vector<std::uint64_t> snapshot_;  // per host: buffers freed, as the token last saw
    Ring<Rank> waiting_;                   // requests the manager could not serve yet
    FmmcResult result;
    std::string error;

    Time launch(Rank src, Rank dst, const Tx& t, Time leave) {
        std::vector<LinkId> path;
        topology_.route(src, dst, path);
        const Time ser = t.kind == Kind::data ? wire_ : control_wire_;
        const Time hop = from_us(spec_.model.switch_latency);
        Time head = leave, start = leave, left = 0;
        for (const LinkId link : path) {
            start = std::max(head, link_free_[link]);
            link_free_[link] = start + ser;
            if (left == 0) left = start + ser;
            head = start + hop;
        }
        std::uint32_t id;
        const Flight fl{src, dst, t.kind, t.origin, t.seq, t.step, t.arg};
        if (free_flights_.empty()) {
            id = static_cast<std::uint32_t>(flights_.size());
            flights_.push_back(fl);
        } else {
            id = free_flights_.back();
            free_flights_.pop_back();
            flights_[id] = fl;
        }
        sim.schedule(start + ser, *nodes_[dst], kArrive, id);
        return left;
    }

    // The manager serves a request, or keeps it until the token brings credits back.
    void request(Rank from) {
        ++result.credit_requests;
        if (available_ == 0) {
            waiting_.push_back(from);
            return;
        }
        grant(from);
    }
    // A host done sending gives its unspent credits back (assumed: otherwise they are lost to
    // every other sender).
    void give_back(int credits) {
        available_ += credits;
        while (!waiting_.empty() && available_ > 0) {
            const Rank r = waiting_.front();
            waiting_.pop_front();
            grant(r);
        }
    }
    void grant(Rank to) {
        const int n = std::min(available_, spec_.params.credit_batch);
        available_ -= n;
        nodes_[0]->grant_from_manager(to, static_cast<std::uint32_t>(n));
    }
    void credit_spent() {
        ++used_;
        if (!token_out_ && spec_.model.nodes > 1) start_token();
    }
    void start_token() {
        token_out_ = true;
        nodes_[0]->send({1, Kind::token, 0, 0, 0, 0, 0});
    }
    // The token is back at the manager: what every host freed is free on every host.
    void token_home(std::uint64_t own_freed) {
        snapshot_[0] = own_freed;
        const std::uint64_t all = *std::min_element(snapshot_.begin(), snapshot_.end());
        available_ += static_cast<int>(all - reclaimed_);
        reclaimed_ = all;
        token_out_ = false;
        while (!waiting_.empty() && available_ > 0) {
            const Rank r = waiting_.front();
            waiting_.pop_front();
            grant(r);
        }
        if (used_ > reclaimed_) start_token();
    }
};

std::uint32_t Node::new_record(int sends, bool send) {
    std::uint32_t id;
    if (free_records.empty()) {
        id = static_cast<std::uint32_t>(records.size());
        records.push_back(sends);
        record_is_send.push_back(send);
    } else {
        id = free_records.back();
        free_records.pop_back();
        records[id] = sends;
        record_is_send[id] = send;
    }
    return id;
}

void Node::sent(std::uint32_t record) {
    if (--records[record] != 0) return;
    free_records.push_back(record);
    if (record_is_send[record]) {
        ++send_slots;
        if (host_waits && !host_scheduled) {
            host_waits = false;
            host_scheduled = true;
            f_.sim.schedule(std::max(f_.sim.now(), nic_free), *this, kHostNext);
        }
    } else {
        --queued;
    }
}

// Done sending: unspent credits go back to the manager, now or when a late grant comes.
void Node::give_back() {
    if (credits == 0) return;
    if (rank_ == 0) {
        f_.give_back(credits);
    } else {
        send({0, Kind::giveback, rank_, 0, 0, static_cast<std::uint32_t>(credits), 0});
    }
    credits = 0;
}

void Node::start_sending(int messages) {
    messages_left = messages;
    host_scheduled = true;
    f_.sim.schedule(0, *this, kHostNext);
}

void Node::send(const Tx& t) {
    tx.push_back(t);
    pump(f_.sim.now());
}

void Node::grant_from_manager(Rank to, std::uint32_t credits_granted) {
    if (to == rank_) {  // the manager's own host
        f_.sim.schedule(std::max(f_.sim.now(), nic_free), *this, kGrant, credits_granted);
        return;
    }
    send({to, Kind::reply, 0, 0, 0, credits_granted, 0});
}

void Node::pump(Time now) {
    const FmmcParams& p = f_.spec_.params;
    const Time tns = from_us(f_.spec_.model.tns * p.ni_cost);
    while (!tx.empty()) {
        if (nic_free > now) {
            if (!free_scheduled) {
                free_scheduled = true;
                f_.sim.schedule(nic_free, *this, kNicFree);
            }
            return;
        }
        const Tx t = tx.front();
        tx.pop_front();
        const Time leave = now + tns;
        nic_free = f_.launch(rank_, t.dst, t, leave);
        if (t.kind == Kind::data) {
            ++f_.result.data_packets;
            sent(t.record);
        } else if (t.kind == Kind::token) {
            ++f_.result.token_hops;
        }
    }
}

void Node::request_credits(Time now) {
    requesting = true;
    // The host writes the request to its NI, which sends it to the manager.
    const Time begin = std::max({now, host_free, bus_free});
    host_free = bus_free = begin + transfer_time(8, f_.spec_.model.pio_bw);
    if (rank_ == 0) {
        f_.request(0);
        return;
    }
    send({0, Kind::request, rank_, 0, 0, 0, 0});
}

void Node::host_next(Time now) {
    const FmmcSpec& s = f_.spec_;
    if (messages_left == 0) return;
    if (!started) {
        started = true;
        const Time begin = std::max(now, host_free);
        host_free = begin + from_us(s.model.ts);
        host_scheduled = true;
        f_.sim.schedule(host_free, *this, kHostNext);
        return;
    }
    // Ask for the next batch once half of this one is spent (assumed: FM/MC's hosts cache).
    if (!requesting && credits <= s.params.credit_batch / 2) request_credits(now);
    if (credits == 0 || send_slots - static_cast<int>(posting.size()) <= 0) {
        host_waits = true;
        return;
    }
    --credits;
    ++freed;  // the sender's own host holds no buffer for its multicast
    f_.credit_spent();
    const std::uint32_t packets = f_.result.packets;
    const Time begin = std::max({now, host_free, bus_free});
    const auto payload = static_cast<std::uint64_t>(s.params.packet_bytes);
    host_free = bus_free = begin + transfer_time(payload, s.model.pio_bw);
    posting.push_back(
        {-1, Kind::data, rank_, seq, next_packet, next_packet + 1 == packets ? 1u : 0u, 0});
    f_.sim.schedule(host_free, *this, kNicPost);
    last_post = host_free;
    if (++next_packet == packets) {
        next_packet = 0;
        ++seq;
        started = false;
        --messages_left;
        if (messages_left == 0) give_back();
    }
    host_scheduled = true;
    f_.sim.schedule(host_free, *this, kHostNext);
}

void Node::arrive(const Flight& fl, Time now) {
    const FmmcSpec& s = f_.spec_;
    const Time start = std::max(now, nic_free);
    const Time tnr = from_us(s.model.tnr * s.params.ni_cost);
    if (fl.kind != Kind::data) {
        nic_free = start + tnr;
        switch (fl.kind) {
            case Kind::request:
                f_.request(fl.origin);
                break;
            case Kind::reply:
                f_.sim.schedule(nic_free, *this, kGrant, fl.arg);
                break;
            case Kind::giveback:
                f_.give_back(static_cast<int>(fl.arg));
                break;
            case Kind::token:
                while (!frees.empty() && frees.front() <= nic_free) {
                    frees.pop_front();
                    ++freed;
                }
                if (rank_ == 0) {
                    f_.token_home(freed);
                } else {
                    f_.snapshot_[rank_] = freed;
                    send({(rank_ + 1) % s.model.nodes, Kind::token, 0, 0, 0, 0, 0});
                }
                break;
            default:
                break;
        }
        return;
    }
    nic_free = start + tnr;
    // One receive queue for every sender, no flow control: when it is full, half of it goes to
    // host memory across the I/O bus, and comes back the same way before it is forwarded.
    if (queued >= s.params.ni_queue) {
        const int out = std::max(1, s.params.ni_queue / 2);
        const Time move =
            transfer_time(static_cast<std::uint64_t>(out) * s.params.packet_bytes, s.model.dma_bw);
        const Time begin = std::max(nic_free, bus_free);
        bus_free = begin + 2 * move;
        nic_free += tnr;  // assumed: starting the swap costs the NI about one receive
        f_.result.swapped += static_cast<std::uint64_t>(out);
        queued -= out;
    }
    // The packet goes to the host's multicast buffer (a credit guarantees one)...
    const Time begin = std::max(nic_free, bus_free);
    bus_free =
        begin + transfer_time(static_cast<std::uint64_t>(s.params.packet_bytes), s.model.dma_bw);
    frees.push_back(bus_free);
    auto& [eseq, estep] = expect[fl.origin];
    if (fl.seq != eseq || fl.step != estep) {
        if (f_.error.empty()) {
            f_.error = "node " + std::to_string(rank_) + " got packet " + std::to_string(fl.step) +
                       " of message " + std::to_string(fl.seq) + " from origin " +
                       std::to_string(fl.origin) + " out of order";
        }
    }
    if (fl.arg == 1) {
        eseq = fl.seq + 1;
        estep = 0;
        const Time done = std::max(bus_free, host_free) + from_us(s.model.tr);
        host_free = done;
        if (received[fl.origin]++ == 0 && fl.origin == s.root) first_done = done;
    } else {
        estep = fl.step + 1;
    }
    // ...and on to the children of its sender's tree.
    const auto& children = f_.trees_[fl.origin].children[rank_];
    if (children.empty()) return;
    ++queued;
    const std::uint32_t rec = new_record(static_cast<int>(children.size()), false);
    for (const Rank c : children)
        tx.push_back({c, Kind::data, fl.origin, fl.seq, fl.step, fl.arg, rec});
    pump(now);
}

void Node::on_event(std::uint32_t kind, std::uint32_t arg) {
    const Time now = f_.sim.now();
    switch (kind) {
        case kArrive: {
            const Flight fl = f_.flights_[arg];
            f_.free_flights_.push_back(arg);
            arrive(fl, now);
            break;
        }
        case kHostNext:
            host_scheduled = false;
            host_next(now);
            break;
        case kNicPost: {
            const Tx t = posting.front();
            posting.pop_front();
            --send_slots;
            const auto& children = f_.trees_[rank_].children[rank_];
            if (children.empty()) {
                ++send_slots;
                break;
            }
            const std::uint32_t rec = new_record(static_cast<int>(children.size()), true);
            for (const Rank c : children)
                tx.push_back({c, Kind::data, t.origin, t.seq, t.step, t.arg, rec});
            pump(now);
            break;
        }
        case kNicFree:
            free_scheduled = false;
            pump(now);
            break;
        case kGrant:
            credits += static_cast<int>(arg);
            requesting = false;
            if (messages_left == 0) give_back();
            if (host_waits && !host_scheduled) {
                host_waits = false;
                host_scheduled = true;
                f_.sim.schedule(std::max(now, host_free), *this, kHostNext);
            }
            break;
    }
}

}  // namespace

std::optional<FmmcResult> run_fmmc(const FmmcSpec& spec, std::string* why) {
    const Rank n = spec.model.nodes;
    const FmmcParams& p = spec.params;
    if (spec.root < 0 || spec.root >= n) {
        *why =
            "--root " + std::to_string(spec.root) + ": not a node of 0.." + std::to_string(n - 1);
        return std::nullopt;
    }
    if (spec.messages < 1) {
        *why = "--messages " + std::to_string(spec.messages) + ": must be at least 1";
        return std::nullopt;
    }
    if (n < 2) {
        *why = "nodes=" + std::to_string(n) + ": FM/MC needs at least 2 nodes";
        return std::nullopt;
    }
    if (p.credit_batch < 1 || p.host_buffers < p.credit_batch || p.ni_queue < 2) {
        *why = "fmmc parameters: need 1 <= credit_batch <= host_buffers and ni_queue >= 2";
        return std::nullopt;
    }
    std::optional<Topology> topology = make_topology(spec.model, why);
    if (!topology) return std::nullopt;
    // Fixed packets; the first of a message gives up the handler word (Bhoedjang et al. §5.3).
    const std::uint64_t first = static_cast<std::uint64_t>(p.packet_bytes - p.handler_bytes);
    const std::uint64_t packets =
        spec.bytes <= first ? 1 : 1 + (spec.bytes - first + p.packet_bytes - 1) / p.packet_bytes;
    std::vector<plan::Tree> trees;
    const plan::TreeShape* binary = plan::find_tree_shape("binary");
    for (Rank origin = 0; origin < n; ++origin) {
        trees.push_back(plan::relabel(binary->build(n, 0), tree_order(*topology, origin)));
    }
    Fmmc f(spec, std::move(*topology), std::move(trees));
    f.result.packets = static_cast<std::uint32_t>(packets);
    for (Rank r = 0; r < n; ++r) {
        if (spec.all_senders || r == spec.root) f.nodes_[r]->start_sending(spec.messages);
    }
    f.result.events = f.sim.run();
    if (!f.error.empty()) {
        *why = "simulation broke an invariant: " + f.error;
        return std::nullopt;
    }
    double sum = 0;
    int senders = 0;
    for (Rank r = 0; r < n; ++r) {
        const Node& node = *f.nodes_[r];
        for (Rank o = 0; o < n; ++o) {
            const bool sends = spec.all_senders || o == spec.root;
            const int want = o != r && sends ? spec.messages : 0;
            if (node.received[o] != want) {
                *why = "simulation broke an invariant: node " + std::to_string(r) + " received " +
                       std::to_string(node.received[o]) + " of " + std::to_string(want) +
                       " messages from " + std::to_string(o);
                return std::nullopt;
            }
        }
        if (r != spec.root)
            f.result.latency_us = std::max(f.result.latency_us, to_us(node.first_done));
        if (!spec.all_senders && r != spec.root) continue;
        const double s = to_us(node.last_post) * 1e-6;
        sum += s > 0 ? static_cast<double>(spec.bytes) * spec.messages / s / 1e6 : 0;
        ++senders;
    }
    f.result.per_sender_mbs = senders == 0 ? 0 : sum / senders;
    return f.result;
}

}  // namespace nicsim::sim
