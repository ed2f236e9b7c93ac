// Simulator: point-to-point latency and bandwidth between two hosts, the experiment behind
// `nicsim pt2pt`, measured as Pakin et al. §4.1 does and summed up in its Table 2 metrics.
//
//   latency     a packet ping-ponged `round_trips` times; the time over 2 * round_trips
//   bandwidth   `packets` packets sent back to back; bytes over the time from the first
//               FM_send to the last handler's return (payload only: headers are overhead)
//
// Table 2's metrics, each as the table words it, from the bandwidth run's time per packet T(n):
//
//   t0       "startup overhead": T extrapolated to an empty packet, along the line through
//            the two smallest sizes
//   r-inf    "peak bandwidth for infinitely large packets (asymptotic)": the rate at which T
//            grows between the two largest sizes
//   n-half   "packet size to achieve bandwidth of r-inf / 2": where n / T(n) reaches it, with T
//            taken as straight between measured sizes (and along the t0 and r-inf lines
//            outside them)
//
// A T(n) that is one straight line gives n-half = t0 * r-inf. A pipeline whose slowest stage
// changes with the size does not: with a LANai that sets T for small packets and an SBus that
// sets it for large ones, T(n) = max(LANai, host) is convex and n-half falls below t0 * r-inf,
// as in every host row of Pakin et al.'s Table 4 (hybrid: 44 bytes against 3.5 us x 21.2 MB/s =
// 78). The product is kept beside the measured value for comparison.
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
    int packets = 65535;               // Pakin et al. §4.1: 65,535 packets
    int round_trips = 50;              // Pakin et al. §4.1: 50 times back and forth
};

struct Pt2ptPoint {
    std::uint32_t bytes = 0;
    double latency_us = 0;     // one way
    double per_packet_us = 0;  // bandwidth run: time over packets
    double bandwidth_mbs = 0;  // 10^6 bytes per second
};

// Pakin et al. Table 2's metrics (see above).
struct Table2Metrics {
    double t0_us = 0;
    double r_inf_mbs = 0;      // 10^6 bytes per second
    double n_half = 0;         // bytes: where the bandwidth reaches r-inf / 2
    double n_half_linear = 0;  // bytes: t0 * r-inf, the n-half of a straight T(n)
};

struct Pt2ptResult {
    std::vector<Pt2ptPoint> points;
    Table2Metrics metrics;
    FmLayer::Stats fm;  // FM: summed over the bandwidth runs
    std::uint64_t events = 0;
};

// Table 2's metrics from the time per packet (us) at each size (bytes), the sizes ascending
// and distinct. Empty when there are fewer than two sizes, or T does not grow between the two
// largest (no finite positive r-inf).
std::optional<Table2Metrics> table2_metrics(std::span<const double> sizes,
                                            std::span<const double> times_us);

// Empty with one line in *why for a bad spec, or when a run breaks an invariant (a packet lost,
// duplicated or out of order, a queue or reservation left over), which would be a bug.
std::optional<Pt2ptResult> run_pt2pt(const Pt2ptSpec& spec, std::string* why);

}  // namespace nicsim::sim
