#include "sim/hw_multicast.h"

#include <algorithm>
#include <string>

#include "core/packet.h"

namespace nicsim::sim {

namespace {

enum EventKind : std::uint32_t {
    kInject,  // arg: transaction; its next packet leaves the source's NIC
    kArrive,  // arg: arrival; a packet's tail reaches a destination's NIC
    kAck,     // arg: transaction; the combined acks of its packets are back at the source
};

}  // namespace

HwMulticastNetwork::HwMulticastNetwork(const Model& model, Simulator& sim, Trace* trace,
                                       HwMulticastUser& user)
    : model_(model),
      tree_(plan::FatTree::holding(model.nodes, std::max(2, model.switch_ports / 2))),
      sim_(sim),
      trace_(trace),
      user_(user) {
    const auto n = static_cast<std::size_t>(model.nodes);
    host_free_.assign(n, 0);
    nic_free_.assign(n, 0);
    bus_free_.assign(n, 0);
    host_busy_.assign(n, 0);
    link_free_.assign(tree_.links(), 0);
}

Time HwMulticastNetwork::reserve(Time& busy_until, Time at, Time length, Trace::Track track,
                                 std::uint32_t id, const char* what) {
    const Time begin = std::max(at, busy_until);
    busy_until = begin + length;
    if (trace_ != nullptr && length > 0) {
        if (!trace_->named(track, id)) {
            trace_->name(
                track, id,
                track == Trace::Track::link
                    ? tree_.link_name(id)
                    : (track == Trace::Track::host ? "host " : "nic ") + std::to_string(id));
        }
        trace_->slice(track, id, what, begin, busy_until);
    }
    return busy_until;
}

std::uint32_t HwMulticastNetwork::payload(const Transaction& t, std::uint32_t packet) const {
    if (t.send.test) return 0;
    const auto mtu = static_cast<std::uint64_t>(model_.mtu);
    return static_cast<std::uint32_t>(std::min<std::uint64_t>(mtu, t.send.bytes - packet * mtu));
}

std::uint32_t HwMulticastNetwork::post(const Send& send, Time at) {
    const auto id = static_cast<std::uint32_t>(txs_.size());
    Transaction& t = txs_.emplace_back();
    t.send = send;
    t.packets = send.test ? 1
                          : static_cast<std::uint32_t>(
                                std::max<std::uint64_t>(1, packet_count(send.bytes, model_.mtu)));
    t.got.assign(static_cast<std::size_t>(send.dest.size()), 0);
    const auto src = static_cast<std::size_t>(send.source);
    const auto node = static_cast<std::uint32_t>(send.source);
    Time ready = at;
    if (!send.on_nic) {
        ready = reserve(host_free_[src], at, from_us(model_.ts), Trace::Track::host, node, "post");
        host_busy_[src] += from_us(model_.ts);
    }
    // The NIC prepares each packet in turn and fetches its payload across the PCI bus.
    for (std::uint32_t p = 0; p < t.packets; ++p) {
        const Time prepared =
            reserve(nic_free_[src], ready, from_us(model_.tns), Trace::Track::nic, node, "send");
        const Time fetched =
            reserve(bus_free_[src], prepared, transfer_time(payload(t, p), model_.dma_bw),
                    Trace::Track::nic, node, "dma out");
        sim_.schedule(fetched, *this, kInject, id);
    }
    return id;
}

void HwMulticastNetwork::inject(std::uint32_t id) {
    Transaction& t = txs_[id];
    const std::uint32_t bytes = payload(t, t.injected++);
    // Adaptive hops take the up link free soonest; at a tie the highest port, which leaves the
    // broadcast tree's links (port 0) to the multicasts that must use them.
    const auto least_loaded = [this](plan::Switch, std::span<const plan::FatLink> links) {
        std::size_t best = links.size() - 1;
        for (std::size_t i = links.size() - 1; i-- > 0;) {
            if (link_free_[links[i]] < link_free_[links[best]]) best = i;
        }
        return static_cast<int>(best);
    };
    path_.clear();
    hops_.clear();
    if (t.send.multicast) {
        tree_.multicast_route(t.send.source, t.send.dest, least_loaded, path_, &hops_);
    } else {
        tree_.unicast_route(t.send.source, t.send.dest.lo, least_loaded, path_);
        for (std::size_t i = 0; i < path_.size(); ++i) hops_.push_back(static_cast<int>(i));
    }
    // The worm starts when every link is free by the time its head reaches it.
    const Time hop = from_us(model_.switch_latency);
    const Time wire =
        transfer_time(bytes + static_cast<std::uint64_t>(model_.header_bytes), model_.link_bw);
    Time start = sim_.now();
    for (std::size_t i = 0; i < path_.size(); ++i) {
        const Time head = static_cast<Time>(hops_[i]) * hop;
        if (link_free_[path_[i]] > head) start = std::max(start, link_free_[path_[i]] - head);
    }
    const Time ack_wire =
        transfer_time(static_cast<std::uint64_t>(model_.header_bytes), model_.link_bw);
    for (std::size_t i = 0; i < path_.size(); ++i) {
        const Time head = start + static_cast<Time>(hops_[i]) * hop;
        reserve(link_free_[path_[i]], head, wire, Trace::Track::link, path_[i], "packet");
        const plan::FatLink link = path_[i];
        const auto node = static_cast<Rank>(link / 2);
        const bool into_node = link % 2 == 1 && node < model_.nodes;
        if (!into_node || node == t.send.source) continue;
        // The ack goes back through as many switches as the packet came.
        const Arrival a{id, node, static_cast<Time>(hops_[i]) * hop + ack_wire};
        std::uint32_t slot;
        if (free_arrivals_.empty()) {
            slot = static_cast<std::uint32_t>(arrivals_.size());
            arrivals_.push_back(a);
        } else {
            slot = free_arrivals_.back();
            free_arrivals_.pop_back();
            arrivals_[slot] = a;
        }
        ++t.outstanding;
        sim_.schedule(head + wire, *this, kArrive, slot);
    }
    ++packets_;
}

void HwMulticastNetwork::arrive(const Arrival& a) {
    Transaction& t = txs_[a.tx];
    const auto v = static_cast<std::size_t>(a.node);
    const auto node = static_cast<std::uint32_t>(a.node);
    if (t.send.test) t.positive = user_.test(a.node, a.tx) && t.positive;
    const Time taken =
        reserve(nic_free_[v], sim_.now(), from_us(model_.tnr), Trace::Track::nic, node, "receive");
    t.ack_at = std::max(t.ack_at, taken + a.ack_back);
    const std::uint32_t packet = t.got[static_cast<std::size_t>(a.node - t.send.dest.lo)]++;
    const Time in = reserve(bus_free_[v], taken, transfer_time(payload(t, packet), model_.dma_bw),
                            Trace::Track::nic, node, "dma in");
    if (--t.outstanding == 0 && t.injected == t.packets) sim_.schedule(t.ack_at, *this, kAck, a.tx);
    if (packet + 1 == t.packets && !t.send.test) {
        Time done = in;
        if (!t.send.on_nic) {
            done =
                reserve(host_free_[v], in, from_us(model_.tr), Trace::Track::host, node, "receive");
            host_busy_[v] += from_us(model_.tr);
        }
        user_.delivered(a.node, a.tx, done);  // may post, and so move txs_: `t` is not used after
    }
}

void HwMulticastNetwork::on_event(std::uint32_t kind, std::uint32_t arg) {
    switch (kind) {
    case kInject:
        inject(arg);
        break;
    case kArrive: {
        const Arrival a = arrivals_[arg];
        free_arrivals_.push_back(arg);
        arrive(a);
        break;
    }
    case kAck: {
        const Transaction& t = txs_[arg];
        user_.acknowledged(t.send.source, arg, t.positive, sim_.now());
        break;
    }
    default:
        break;
    }
}

}  // namespace nicsim::sim
