// NICs without time, for the tests of LFC's NIC (test_nic.cc) and its deadlock recovery
// (test_deadlock_recovery.cc): NICs wired by FIFO channels (one per ordered pair, as links keep
// order), with the head of a random channel delivered at each step. Each host forwards the
// broadcast packets it is handed along its route for their origin, as the agent does along its
// trees.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <span>
#include <utility>
#include <vector>

#include "nic/nic.h"
#include "sim/rng.h"

namespace nicsim::nic {

struct Packet {
    PacketHeader header;
    std::vector<std::byte> payload;
};

class Net;

class Port final : public Fabric, public HostPort {
public:
    Port(Net& net, Rank self) : net_(net), self_(self) {}
    Status transmit(Rank dst, const PacketHeader& header,
                    std::span<const std::byte> payload) override;
    Status deliver(Rank, const PacketHeader& header, std::span<const std::byte> payload) override {
        got.push_back({header, {payload.begin(), payload.end()}});
        if (!Nic::is_message(header.kind)) {
            if (const auto route = routes.find(header.origin); route != routes.end()) {
                return nic->forward(route->second, header, payload);
            }
            return Status::ok;
        }
        ++consumed;
        return Status::ok;
    }
    void send_space() override { ++space_calls; }
    void tick_after(double) override { tick_wanted = true; }

    Nic* nic = nullptr;
    std::map<Rank, Nic::Route> routes;  // children, by broadcast origin
    std::vector<Packet> got;
    std::vector<Rank> sent_to;  // destinations of data packets, in transmit order
    int space_calls = 0;
    int consumed = 0;           // delivered packets whose buffer the host has not posted again
    bool repost = true;         // the host posts a buffer again once it has a packet out of it
    std::uint64_t flagged = 0;  // packets this NIC sent in a deadlock channel
    bool tick_wanted = false;

private:
    Net& net_;
    Rank self_;
};

class Net {
public:
    // With `ticks`, time passes too: the ticks the NICs ask for come now and then (one step in
    // eight) or when nothing else moves.
    // `peer_credits`: every NIC's windows by peer (Nic's constructor), or empty.
    Net(Rank size, const NicConfig& config, int host_buffers, std::uint64_t seed,
        bool ticks = false, const std::vector<int>& peer_credits = {})
        : rng_(seed), ticks_(ticks) {
        for (Rank r = 0; r < size; ++r) {
            ports.push_back(std::make_unique<Port>(*this, r));
            nics.push_back(std::make_unique<Nic>(r, config, *ports.back(), *ports.back(),
                                                 peer_credits));
            nics.back()->post_host_buffers(host_buffers);
            ports.back()->nic = nics.back().get();
        }
    }
    // Broadcast packets from `origin` go on from `node` to `children`.
    void set_route(Rank node, Rank origin, std::span<const Rank> children) {
        ports[node]->routes[origin] = nics[node]->route(children);
    }
    // `origin` multicasts a packet of its own along its route.
    Status multicast(Rank origin, PacketHeader header, std::span<const std::byte> payload) {
        header.kind = PacketKind::bcast;
        header.origin = origin;
        return nics[origin]->multicast(ports[origin]->routes[origin], header, payload);
    }
    void carry(Rank src, Rank dst, Packet p) { channels_[{src, dst}].push_back(std::move(p)); }
    // Lets hosts post their buffers again, then delivers the head of a random non-empty channel;
    // false when there was nothing to do.
    bool step() {
        bool reposted = false;
        for (Rank r = 0; r < static_cast<Rank>(ports.size()); ++r) {
            if (ports[r]->repost && ports[r]->consumed != 0) {
                const int n = ports[r]->consumed;
                ports[r]->consumed = 0;
                nics[r]->post_host_buffers(n);
                reposted = true;
            }
        }
        std::vector<std::pair<Rank, Rank>> busy;
        for (const auto& [key, q] : channels_) {
            if (!q.empty()) busy.push_back(key);
        }
        if (ticks_ && (busy.empty() || rng_.below(8) == 0)) {
            bool ticked = false;
            for (Rank r = 0; r < static_cast<Rank>(ports.size()); ++r) {
                if (!ports[r]->tick_wanted) continue;
                ports[r]->tick_wanted = false;
                EXPECT_EQ(nics[r]->on_tick(), Status::ok);
                ticked = true;
            }
            reposted = reposted || ticked;
        }
        if (busy.empty()) return reposted;
        const auto [src, dst] = busy[rng_.below(busy.size())];
        auto& q = channels_[{src, dst}];
        const Packet p = std::move(q.front());
        q.pop_front();
        EXPECT_EQ(nics[dst]->on_packet(src, p.header, p.payload), Status::ok);
        return true;
    }
    void run() {
        while (step()) {
        }
    }
    std::size_t in_flight() const {
        std::size_t n = 0;
        for (const auto& [key, q] : channels_) n += q.size();
        return n;
    }

    std::vector<std::unique_ptr<Port>> ports;
    std::vector<std::unique_ptr<Nic>> nics;

private:
    sim::Rng rng_;
    bool ticks_;
    std::map<std::pair<Rank, Rank>, std::deque<Packet>> channels_;
};

inline Status Port::transmit(Rank dst, const PacketHeader& header,
                             std::span<const std::byte> payload) {
    if (header.kind != PacketKind::credit) sent_to.push_back(dst);
    if ((header.flags & kDeadlockFlag) != 0) ++flagged;
    net_.carry(self_, dst, {header, {payload.begin(), payload.end()}});
    return Status::ok;
}

// A packet's payload, recognisable by origin, collective and step.
inline std::vector<std::byte> payload_of(Rank origin, Seq seq, std::uint32_t step,
                                         std::size_t bytes) {
    std::vector<std::byte> p(bytes);
    for (std::size_t i = 0; i < bytes; ++i) {
        p[i] = static_cast<std::byte>((origin * 131 + seq * 31 + step * 7 + i) & 0xff);
    }
    return p;
}

}  // namespace nicsim::nic
