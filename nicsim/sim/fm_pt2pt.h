// Simulator: point-to-point latency and bandwidth between two hosts, the experiment behind
// `nicsim pt2pt`, measured as seed 004 §4.1 does and summed up in its Table 2 metrics.
//
//   latency     a packet ping-ponged `round_trips` times; the time over 2 * round_trips
//   bandwidth   `packets` packets sent back to back; bytes over the time from the first
//               FM_send to the last handler's return (payload only: headers are overhead)
//   t0, r-inf   the least-squares line t(n) = t0 + n / r-inf through the bandwidth run's time
//               per packet at each size n
//   n-half      t0 * r-inf, where that line gives half of r-inf; and, as Table 2 words it, the
//               size at which the measured bandwidth reaches r-inf / 2 (interpolated)
//
// The layer is FM (sim/fm_layer.h) or LFC's unicast path (sim/cluster.h, the engine's NIC),
// both on the same model, so the two can be compared.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "sim/fm_layer.h"
#include "sim/model.h"

namespace nicsim::sim {

struct Pt2ptSpec {
    Model model;
    std::string layer = "fm";  // fm|lfc
    FmOptions fm;
    std::vector<std::uint32_t> sizes;  // payload bytes per packet; at least two distinct
    int packets = 65535;               // seed 004 §4.1: 65,535 packets
    int round_trips = 50;              // seed 004 §4.1: 50 times back and forth
};

struct Pt2ptPoint {
    std::uint32_t bytes = 0;
    double latency_us = 0;     // one way
    double per_packet_us = 0;  // bandwidth run: time over packets
    double bandwidth_mbs = 0;  // 10^6 bytes per second
};

struct StartupFit {
    double t0_us = 0;
    double r_inf_mbs = 0;  // 10^6 bytes per second; infinite for a flat line
};

struct Pt2ptResult {
    std::vector<Pt2ptPoint> points;
    StartupFit fit;
    double n_half = 0;           // t0 * r-inf, bytes
    double n_half_measured = 0;  // where the measured bandwidth reaches r-inf / 2; NAN if never
    FmLayer::Stats fm;           // FM: summed over the bandwidth runs
    std::uint64_t events = 0;
};

// Least squares through (size, time per packet in us). Empty when fewer than two distinct sizes
// or the line does not rise (no finite positive r-inf).
std::optional<StartupFit> fit_startup(std::span<const double> sizes,
                                      std::span<const double> times_us);
// Where bandwidth first reaches `target` MB/s, interpolated linearly between the points (sorted
// by size); NAN when it never does.
double size_reaching(std::span<const Pt2ptPoint> points, double target_mbs);

// Empty with one line in *why for a bad spec, or when a run breaks an invariant (a packet lost,
// duplicated or out of order, a queue or reservation left over), which would be a bug.
std::optional<Pt2ptResult> run_pt2pt(const Pt2ptSpec& spec, std::string* why);

}  // namespace nicsim::sim
