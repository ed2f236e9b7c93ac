// The Fast Messages layer (seed 004): return-to-sender delivers every packet once and in order
// when receivers are slow, queues stay within their sizes, the LCP loop shapes cost what the
// model says, and the t0 / r-inf fit recovers a line it is given.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
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
// a packet costs the LCP's work and then its wire time (App. A), so the fit gives
// t0 = work + header time and r-inf = the link.
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
    EXPECT_NEAR(streamed->fit.t0_us, work, 0.001 * work + 0.01);
    EXPECT_NEAR(streamed->fit.r_inf_mbs, m.link_bw, 0.001 * m.link_bw);
    EXPECT_NEAR(baseline->fit.t0_us - streamed->fit.t0_us, m.fm_lanai_loop, 0.01);
    EXPECT_LT(streamed->n_half, baseline->n_half);
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
    EXPECT_NEAR(hybrid->fit.r_inf_mbs, spec.model.pio_bw, 0.002 * spec.model.pio_bw);
    spec.fm.io = FmIo::dma;
    const auto dma = run_pt2pt(spec, &why);
    ASSERT_TRUE(dma) << why;
    EXPECT_NEAR(dma->fit.r_inf_mbs, spec.model.copy_bw, 0.002 * spec.model.copy_bw);
}

TEST(FmPt2pt, FitRecoversALineFromSyntheticData) {
    // Seed 004's full layer: t0 4.1 us, r-inf 21.4 MB/s of 2^20 bytes.
    const double t0 = 4.1;
    const double r_inf = 21.4 * 1.048576;
    std::vector<double> sizes = {16, 32, 64, 128, 256, 512, 1024, 2048};
    std::vector<double> times;
    for (double n : sizes) times.push_back(t0 + n / r_inf);
    const auto fit = fit_startup(sizes, times);
    ASSERT_TRUE(fit);
    EXPECT_NEAR(fit->t0_us, t0, 1e-9);
    EXPECT_NEAR(fit->r_inf_mbs, r_inf, 1e-9);
    // Noise that sums to zero and is orthogonal to the sizes leaves the fit unchanged.
    const auto robust = fit_startup(
        std::vector<double>{16, 32, 48},
        std::vector<double>{t0 + 16 / r_inf + 0.5, t0 + 32 / r_inf - 1.0, t0 + 48 / r_inf + 0.5});
    ASSERT_TRUE(robust);
    EXPECT_NEAR(robust->t0_us, t0, 1e-9);
    EXPECT_NEAR(robust->r_inf_mbs, r_inf, 1e-6);
    EXPECT_FALSE(fit_startup(std::vector<double>{64}, std::vector<double>{5}));
    EXPECT_FALSE(fit_startup(std::vector<double>{16, 64}, std::vector<double>{5, 5}));
    EXPECT_FALSE(fit_startup(std::vector<double>{16, 64}, std::vector<double>{5, 4}));
}

TEST(FmPt2pt, HalfPowerSizeIsInterpolatedOnTheMeasuredCurve) {
    std::vector<Pt2ptPoint> points(3);
    points[0].bytes = 16;
    points[0].bandwidth_mbs = 4;
    points[1].bytes = 64;
    points[1].bandwidth_mbs = 10;
    points[2].bytes = 256;
    points[2].bandwidth_mbs = 18;
    EXPECT_DOUBLE_EQ(size_reaching(points, 7), 40);
    EXPECT_DOUBLE_EQ(size_reaching(points, 14), 160);
    EXPECT_DOUBLE_EQ(size_reaching(points, 2), 16);
    EXPECT_TRUE(std::isnan(size_reaching(points, 20)));
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
    EXPECT_GT(r->fit.t0_us, 0);
}

}  // namespace
}  // namespace nicsim::sim
