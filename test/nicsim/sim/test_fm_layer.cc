// The Fast Messages layer (Pakin et al.): return-to-sender delivers every packet once and in order
// when receivers are slow, queues stay within their sizes, the LCP loop shapes cost what the
// model says, and Table 2's metrics come out right for a straight and a convex time per packet.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "sim/fm_layer.h"
#include "sim/fm_pt2pt.h"
#include "sim/simulator.h"
#include "sim/time.h"

namespace nicsim::sim {
namespace {

Model fm_sparc() {
    return preset_model(*find_preset("fm-sparc"));
}

// Every packet from `src` delivered once, in the order sent, with its size.
void expect_in_order(const std::vector<FmLayer::Delivery>& got, Rank src, std::size_t count,
                     std::uint32_t bytes) {
    std::vector<FmLayer::Delivery> from;
    for (const auto& d : got) {
        if (d.src == src) from.push_back(d);
    }
    ASSERT_EQ(from.size(), count);
    for (std::size_t i = 0; i < from.size(); ++i) {
        EXPECT_EQ(from[i].seq, i);
        EXPECT_EQ(from[i].bytes, bytes);
        if (i > 0) {
            EXPECT_GE(from[i].at, from[i - 1].at);
        }
    }
}

TEST(FmLayer, BusyReceiverRejectsAndSenderResendsEveryPacketOnceInOrder) {
    Model model = fm_sparc();
    model.fm_recvq = 4;
    model.fm_rejectq = 16;
    Simulator sim;
    FmLayer fm(model, FmOptions{}, 2, sim);
    fm.extract_from(1, from_us(500));  // the receiver computes for 500 us first
    for (int i = 0; i < 60; ++i) fm.send(0, 1, 128, 0);
    sim.run();
    expect_in_order(fm.deliveries(1), 0, 60, 128);
    EXPECT_GT(fm.stats().rejected, 0u);
    EXPECT_EQ(fm.stats().resent, fm.stats().rejected);
    EXPECT_EQ(fm.stats().data_sent, 60 + fm.stats().resent);
    EXPECT_LE(fm.stats().peak_recvq, 4u);
    EXPECT_LE(fm.stats().peak_outstanding, 16u);
    EXPECT_GE(fm.deliveries(1).front().at, from_us(500));
    std::string why;
    EXPECT_TRUE(fm.check_quiescent(&why)) << why;
}

TEST(FmLayer, WithoutFlowControlAFullQueueHoldsPacketsBackAndNoneIsRejected) {
    Model model = fm_sparc();
    model.fm_recvq = 4;
    Simulator sim;
    FmOptions options;
    options.flow = false;
    FmLayer fm(model, options, 2, sim);
    fm.extract_from(1, from_us(500));
    for (int i = 0; i < 60; ++i) fm.send(0, 1, 128, 0);
    sim.run();
    expect_in_order(fm.deliveries(1), 0, 60, 128);
    EXPECT_EQ(fm.stats().rejected, 0u);
    EXPECT_LE(fm.stats().peak_recvq, 4u);
    std::string why;
    EXPECT_TRUE(fm.check_quiescent(&why)) << why;
}

// Both hosts send to each other through tiny queues while the other is busy at first: returned
// packets carry piggybacked acknowledgements back, which must be owed again, not lost.
class FmBothWays : public ::testing::TestWithParam<std::tuple<int, int, FmIo>> {};

TEST_P(FmBothWays, EveryPacketDeliveredOnceInOrderAndEveryReservationReturned) {
    const auto [recvq, rejectq, io] = GetParam();
    Model model = fm_sparc();
    model.fm_recvq = recvq;
    model.fm_rejectq = rejectq;
    model.fm_ack_every = std::max(1, rejectq / 4);
    Simulator sim;
    FmOptions options;
    options.io = io;
    FmLayer fm(model, options, 3, sim);
    fm.extract_from(1, from_us(300));
    fm.extract_from(2, from_us(150));
    for (int i = 0; i < 40; ++i) {
        fm.send(0, 1, 64, from_us(i));
        fm.send(1, 0, 256, 0);
        fm.send(2, 1, 16, from_us(2 * i));
        fm.send(0, 2, 512, 0);
    }
    sim.run();
    expect_in_order(fm.deliveries(1), 0, 40, 64);
    expect_in_order(fm.deliveries(1), 2, 40, 16);
    expect_in_order(fm.deliveries(0), 1, 40, 256);
    expect_in_order(fm.deliveries(2), 0, 40, 512);
    EXPECT_LE(fm.stats().peak_recvq, static_cast<std::uint32_t>(recvq));
    EXPECT_LE(fm.stats().peak_outstanding, static_cast<std::uint32_t>(rejectq));
    EXPECT_GT(fm.stats().rejected, 0u);
    std::string why;
    EXPECT_TRUE(fm.check_quiescent(&why)) << why;
}

INSTANTIATE_TEST_SUITE_P(Queues, FmBothWays,
                         ::testing::Values(std::tuple{1, 1, FmIo::hybrid},
                                           std::tuple{2, 4, FmIo::hybrid},
                                           std::tuple{4, 16, FmIo::hybrid},
                                           std::tuple{3, 8, FmIo::dma},
                                           std::tuple{8, 64, FmIo::dma}));

TEST(FmLayer, RunsRepeatBitForBit) {
    const auto run = [] {
        Model model = fm_sparc();
        model.fm_recvq = 3;
        Simulator sim;
        FmLayer fm(model, FmOptions{}, 2, sim);
        fm.extract_from(1, from_us(100));
        for (int i = 0; i < 30; ++i) fm.send(0, 1, 100 + i, 0);
        sim.run();
        std::vector<Time> at;
        for (const auto& d : fm.deliveries(1)) at.push_back(d.at);
        return at;
    };
    EXPECT_EQ(run(), run());
}

// LANai to LANai (§4.2): baseline pays one more round of the loop per packet than streamed, and
// a packet costs the LCP's work and then its wire time (App. A), so T(n) is one straight line:
// t0 = work + header time, r-inf = the link, n-half = t0 x r-inf.
TEST(FmPt2pt, LanaiLoopShapesCostWhatTheModelSays) {
    Pt2ptSpec spec;
    spec.model = fm_sparc();
    spec.fm.io = FmIo::none;
    spec.fm.buffers = false;
    spec.fm.flow = false;
    spec.sizes = {16, 64, 256, 1024};
    spec.packets = 2000;
    spec.round_trips = 5;
    std::string why;
    const auto streamed = run_pt2pt(spec, &why);
    ASSERT_TRUE(streamed) << why;
    spec.fm.loop = FmLoop::baseline;
    const auto baseline = run_pt2pt(spec, &why);
    ASSERT_TRUE(baseline) << why;
    const Model& m = spec.model;
    const double work = m.fm_lanai_send + m.fm_lanai_dma + m.header_bytes / m.link_bw;
    // The first packet's trip is spread over the run: within 0.1 %.
    EXPECT_NEAR(streamed->metrics.t0_us, work, 0.001 * work + 0.01);
    EXPECT_NEAR(streamed->metrics.r_inf_mbs, m.link_bw, 0.001 * m.link_bw);
    EXPECT_NEAR(baseline->metrics.t0_us - streamed->metrics.t0_us, m.fm_lanai_loop, 0.01);
    EXPECT_LT(streamed->metrics.n_half, baseline->metrics.n_half);
    EXPECT_NEAR(streamed->metrics.n_half, streamed->metrics.n_half_linear,
                0.002 * streamed->metrics.n_half_linear);
}

TEST(FmPt2pt, HybridStreamIsBoundByProgrammedIoAndDmaByTheCopy) {
    Pt2ptSpec spec;
    spec.model = fm_sparc();
    spec.fm.buffers = false;
    spec.fm.flow = false;
    spec.sizes = {512, 1024, 2048};
    spec.packets = 2000;
    spec.round_trips = 2;
    std::string why;
    const auto hybrid = run_pt2pt(spec, &why);
    ASSERT_TRUE(hybrid) << why;
    EXPECT_NEAR(hybrid->metrics.r_inf_mbs, spec.model.pio_bw, 0.002 * spec.model.pio_bw);
    spec.fm.io = FmIo::dma;
    const auto dma = run_pt2pt(spec, &why);
    ASSERT_TRUE(dma) << why;
    EXPECT_NEAR(dma->metrics.r_inf_mbs, spec.model.copy_bw, 0.002 * spec.model.copy_bw);
}

// Times per packet (us) at `sizes` along T(n) = max over `lines` of c + n / r.
std::vector<double> times_on(const std::vector<double>& sizes,
                             const std::vector<std::pair<double, double>>& lines) {
    std::vector<double> times;
    for (double n : sizes) {
        double t = 0;
        for (const auto& [c, r] : lines) t = std::max(t, c + n / r);
        times.push_back(t);
    }
    return times;
}

TEST(FmPt2pt, Table2MetricsOfAStraightLineGiveNHalfAsTheProduct) {
    // Pakin et al.'s full layer: t0 4.1 us, r-inf 21.4 MB/s of 2^20 bytes.
    const double t0 = 4.1;
    const double r_inf = 21.4 * 1.048576;
    const std::vector<double> sizes = {16, 32, 64, 128, 256, 512, 1024, 2048};
    const auto m = table2_metrics(sizes, times_on(sizes, {{t0, r_inf}}));
    ASSERT_TRUE(m);
    EXPECT_NEAR(m->t0_us, t0, 1e-9);
    EXPECT_NEAR(m->r_inf_mbs, r_inf, 1e-9);
    EXPECT_NEAR(m->n_half_linear, t0 * r_inf, 1e-9);
    EXPECT_NEAR(m->n_half, t0 * r_inf, 1e-9);
}

TEST(FmPt2pt, Table2MetricsOfAPipelineGiveNHalfBelowTheProduct) {
    // A LANai line for small packets (3.5 us + n / 80) and an SBus line for large ones
    // (1 us + n / 25): t0 is the first's intercept, r-inf the second's rate, and the bandwidth
    // reaches r-inf / 2 on the first at 3.5 / (2 / 25 - 1 / 80) = 51.85 bytes, well below
    // t0 x r-inf = 87.5.
    const std::vector<double> sizes = {16, 32, 64, 128, 256, 512, 1024, 2048};
    const auto m = table2_metrics(sizes, times_on(sizes, {{3.5, 80}, {1, 25}}));
    ASSERT_TRUE(m);
    EXPECT_NEAR(m->t0_us, 3.5, 1e-9);
    EXPECT_NEAR(m->r_inf_mbs, 25, 1e-9);
    EXPECT_NEAR(m->n_half, 3.5 / (2.0 / 25 - 1.0 / 80), 1e-9);
    EXPECT_NEAR(m->n_half_linear, 87.5, 1e-9);
}

TEST(FmPt2pt, Table2MetricsReachHalfOfRInfOutsideTheMeasuredSizes) {
    // Below the smallest size, along the t0 line: 0.5 us + n / 100 gives 50 bytes.
    const std::vector<double> large = {100, 200, 400};
    const auto below = table2_metrics(large, times_on(large, {{0.5, 100}}));
    ASSERT_TRUE(below);
    EXPECT_NEAR(below->n_half, 50, 1e-9);
    // Beyond the largest, along the r-inf line: 10 us + n / 100 gives 1000 bytes.
    const std::vector<double> small = {16, 32};
    const auto beyond = table2_metrics(small, times_on(small, {{10, 100}}));
    ASSERT_TRUE(beyond);
    EXPECT_NEAR(beyond->n_half, 1000, 1e-9);
}

TEST(FmPt2pt, Table2MetricsNeedTwoSizesAndATimeThatGrows) {
    EXPECT_FALSE(table2_metrics(std::vector<double>{64}, std::vector<double>{5}));
    EXPECT_FALSE(table2_metrics(std::vector<double>{16, 64}, std::vector<double>{5, 5}));
    EXPECT_FALSE(table2_metrics(std::vector<double>{16, 64}, std::vector<double>{5, 4}));
    // Only the two largest sizes decide r-inf: a dip below them does not matter.
    EXPECT_TRUE(table2_metrics(std::vector<double>{16, 32, 64}, std::vector<double>{5, 4, 6}));
}

TEST(FmPt2pt, BadSpecsAreRefusedWithTheReason) {
    Pt2ptSpec spec;
    spec.model = fm_sparc();
    spec.sizes = {64, 64};
    std::string why;
    EXPECT_FALSE(run_pt2pt(spec, &why));
    EXPECT_NE(why.find("two different sizes"), std::string::npos) << why;
    spec.sizes = {64, 4096};
    spec.layer = "lfc";
    EXPECT_FALSE(run_pt2pt(spec, &why));
    EXPECT_NE(why.find("mtu"), std::string::npos) << why;
    spec.layer = "gm";
    EXPECT_FALSE(run_pt2pt(spec, &why));
    EXPECT_NE(why.find("--layer gm"), std::string::npos) << why;
}

TEST(FmPt2pt, LfcLayerRunsTheEngineUnicastPath) {
    Pt2ptSpec spec;
    spec.model = fm_sparc();
    spec.layer = "lfc";
    spec.sizes = {64, 512, 2048};
    spec.packets = 500;
    spec.round_trips = 3;
    std::string why;
    const auto r = run_pt2pt(spec, &why);
    ASSERT_TRUE(r) << why;
    ASSERT_EQ(r->points.size(), 3u);
    for (const Pt2ptPoint& p : r->points) {
        EXPECT_GT(p.latency_us, spec.model.ts + spec.model.tns + spec.model.tnr + spec.model.tr);
        EXPECT_LE(p.bandwidth_mbs, spec.model.pio_bw);
    }
    EXPECT_GT(r->metrics.t0_us, 0);
}

}  // namespace
}  // namespace nicsim::sim
