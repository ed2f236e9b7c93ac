#include "sim/fm_pt2pt.h"

#include <algorithm>
#include <cmath>

#include "sim/cluster.h"
#include "sim/simulator.h"
#include "sim/time.h"
#include "sim/topology.h"

namespace nicsim::sim {

std::optional<Table2Metrics> table2_metrics(std::span<const double> sizes,
                                            std::span<const double> times_us) {
    const std::size_t k = std::min(sizes.size(), times_us.size());
    if (k < 2) return std::nullopt;
    const double top = (times_us[k - 1] - times_us[k - 2]) / (sizes[k - 1] - sizes[k - 2]);
    if (!(top > 0)) return std::nullopt;
    const double low = (times_us[1] - times_us[0]) / (sizes[1] - sizes[0]);
    Table2Metrics m;
    m.t0_us = times_us[0] - low * sizes[0];
    m.r_inf_mbs = 1 / top;
    m.n_half_linear = m.t0_us * m.r_inf_mbs;
    // Where T is the line c + s * n, the bandwidth n / T(n) is h at n = h * c / (1 - h * s).
    const double h = m.r_inf_mbs / 2;
    const auto crossing = [h](double xa, double ya, double slope) {
        return h * (ya - slope * xa) / (1 - h * slope);
    };
    m.n_half = NAN;
    if (sizes[0] / times_us[0] >= h) {
        // Reached at the smallest size already: on the t0 line below it, if there is one.
        m.n_half = m.t0_us > 0 ? crossing(0, m.t0_us, low) : sizes[0];
        return m;
    }
    for (std::size_t i = 1; i < k; ++i) {
        if (sizes[i] / times_us[i] < h) continue;
        const double slope = (times_us[i] - times_us[i - 1]) / (sizes[i] - sizes[i - 1]);
        m.n_half = crossing(sizes[i - 1], times_us[i - 1], slope);
        return m;
    }
    // Beyond the largest size, along the r-inf line: T's rate there is r-inf > h, so it gets
    // there unless that line starts at or below zero.
    const double beyond = crossing(sizes[k - 1], times_us[k - 1], top);
    if (beyond >= sizes[k - 1]) m.n_half = beyond;
    return m;
}

namespace {

// Every delivery of a run in order and once: `count` packets of `bytes` from `src`.
bool check_deliveries(const std::vector<FmLayer::Delivery>& got, Rank src, int count,
                      std::uint32_t bytes, std::string* why) {
    if (got.size() != static_cast<std::size_t>(count)) {
        *why =
            "fm: " + std::to_string(got.size()) + " packets delivered of " + std::to_string(count);
        return false;
    }
    for (std::size_t i = 0; i < got.size(); ++i) {
        if (got[i].src != src || got[i].seq != i || got[i].bytes != bytes) {
            *why = "fm: delivery " + std::to_string(i) + " is packet " +
                   std::to_string(got[i].seq) + " of node " + std::to_string(got[i].src);
            return false;
        }
    }
    return true;
}

struct Measured {
    double latency_us = 0;
    double per_packet_us = 0;
};

std::optional<Measured> measure_fm(const Pt2ptSpec& spec, std::uint32_t bytes, Pt2ptResult& result,
                                   std::string* why) {
    Measured m;
    {
        // Ping-pong: each node answers a packet with one of the same size until the count is done.
        Simulator sim;
        FmLayer fm(spec.model, spec.fm, 2, sim);
        const int legs = 2 * spec.round_trips;
        int done = 0;
        Time last = 0;
        fm.on_deliver([&](Rank node, const FmLayer::Delivery& d) {
            last = d.at;
            if (++done < legs) fm.send(node, 1 - node, bytes, d.at);
        });
        fm.send(0, 1, bytes, 0);
        result.events += sim.run();
        if (done != legs) {
            *why = "fm: ping-pong of " + std::to_string(bytes) + " bytes stopped after " +
                   std::to_string(done) + " legs of " + std::to_string(legs);
            return std::nullopt;
        }
        if (!fm.check_quiescent(why)) return std::nullopt;
        m.latency_us = to_us(last) / legs;
    }
    Simulator sim;
    FmLayer fm(spec.model, spec.fm, 2, sim);
    for (int i = 0; i < spec.packets; ++i) fm.send(0, 1, bytes, 0);
    result.events += sim.run();
    if (!check_deliveries(fm.deliveries(1), 0, spec.packets, bytes, why) ||
        !fm.check_quiescent(why)) {
        return std::nullopt;
    }
    m.per_packet_us = to_us(fm.deliveries(1).back().at) / spec.packets;
    const FmLayer::Stats& s = fm.stats();
    result.fm.data_sent += s.data_sent;
    result.fm.rejected += s.rejected;
    result.fm.resent += s.resent;
    result.fm.acks += s.acks;
    result.fm.host_dmas += s.host_dmas;
    result.fm.peak_recvq = std::max(result.fm.peak_recvq, s.peak_recvq);
    result.fm.peak_outstanding = std::max(result.fm.peak_outstanding, s.peak_outstanding);
    return m;
}

std::optional<Measured> measure_lfc(const Pt2ptSpec& spec, std::uint32_t bytes, Pt2ptResult& result,
                                    std::string* why) {
    Model model = spec.model;
    model.nodes = 2;
    model.p2p_flow = "credits";  // the layer asked for, whatever the preset's host messages use
    Measured m;
    {
        Simulator sim;
        Cluster cluster(model, Topology::crossbar(2), nic::Forwarding::fpfs, sim, nullptr);
        Time t = 0;
        const int legs = 2 * spec.round_trips;
        for (int leg = 0; leg < legs; ++leg) {
            const Rank from = leg % 2;
            cluster.send(from, 1 - from, static_cast<Seq>(leg / 2), bytes, t);
            result.events += sim.run();
            const auto& got = cluster.receipts(1 - from);
            if (!cluster.error().empty() || got.size() != static_cast<std::size_t>(leg / 2 + 1)) {
                *why = "lfc: ping-pong of " + std::to_string(bytes) + " bytes: " +
                       (cluster.error().empty() ? "a message never arrived" : cluster.error());
                return std::nullopt;
            }
            t = got.back().done;
        }
        if (!cluster.check_quiescent(why)) return std::nullopt;
        m.latency_us = to_us(t) / legs;
    }
    Simulator sim;
    Cluster cluster(model, Topology::crossbar(2), nic::Forwarding::fpfs, sim, nullptr);
    for (int i = 0; i < spec.packets; ++i) cluster.send(0, 1, static_cast<Seq>(i), bytes, 0);
    result.events += sim.run();
    const auto& got = cluster.receipts(1);
    if (!cluster.error().empty() || got.size() != static_cast<std::size_t>(spec.packets)) {
        *why = "lfc: bandwidth run of " + std::to_string(bytes) +
               " bytes: " + (cluster.error().empty() ? "messages missing" : cluster.error());
        return std::nullopt;
    }
    if (!cluster.check_quiescent(why)) return std::nullopt;
    m.per_packet_us = to_us(got.back().done) / spec.packets;
    return m;
}

}  // namespace

std::optional<Pt2ptResult> run_pt2pt(const Pt2ptSpec& spec, std::string* why) {
    if (spec.layer != "fm" && spec.layer != "lfc") {
        *why = "--layer " + spec.layer + ": not one of fm|lfc";
        return std::nullopt;
    }
    std::vector<std::uint32_t> sizes = spec.sizes;
    std::sort(sizes.begin(), sizes.end());
    sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
    if (sizes.size() < 2) {
        *why = "--sizes: at least two different sizes are needed for t0 and r-inf";
        return std::nullopt;
    }
    if (spec.layer == "lfc" && sizes.back() > static_cast<std::uint32_t>(spec.model.mtu)) {
        // LFC would cut the message into packets, and the metrics are per packet.
        *why = "--sizes " + std::to_string(sizes.back()) + ": above the model's mtu " +
               std::to_string(spec.model.mtu) + " (one packet per message)";
        return std::nullopt;
    }
    if (spec.packets < 1 || spec.round_trips < 1) {
        *why = "--packets and --round-trips: must be at least 1";
        return std::nullopt;
    }
    if (spec.layer == "fm" && spec.fm.flow && !spec.fm.buffers) {
        *why = "--flow on: needs --buffers on (return-to-sender rejects when a queue is full)";
        return std::nullopt;
    }
    Pt2ptResult result;
    std::vector<double> xs;
    std::vector<double> ys;
    for (const std::uint32_t bytes : sizes) {
        const auto m = spec.layer == "fm" ? measure_fm(spec, bytes, result, why)
                                          : measure_lfc(spec, bytes, result, why);
        if (!m) return std::nullopt;
        Pt2ptPoint p;
        p.bytes = bytes;
        p.latency_us = m->latency_us;
        p.per_packet_us = m->per_packet_us;
        p.bandwidth_mbs = bytes / m->per_packet_us;
        result.points.push_back(p);
        xs.push_back(bytes);
        ys.push_back(m->per_packet_us);
    }
    const auto metrics = table2_metrics(xs, ys);
    if (!metrics) {
        *why = "the time per packet does not grow between the two largest sizes: no r-inf";
        return std::nullopt;
    }
    result.metrics = *metrics;
    return result;
}

}  // namespace nicsim::sim
