#include "tools/pt2pt_cmd.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "sim/fm_pt2pt.h"
#include "tools/json.h"

namespace nicsim::tools {

namespace {

std::optional<bool> on_off(const Options& opts, std::string_view name, bool fallback,
                           std::string* why) {
    if (!opts.has(name)) return fallback;
    const std::string v = opts.text(name);
    if (v == "on") return true;
    if (v == "off") return false;
    *why = std::string(name) + " " + v + ": not one of on|off";
    return std::nullopt;
}

std::optional<std::vector<std::uint32_t>> sizes_from(const Options& opts, std::string* why) {
    const std::string list = opts.text("--sizes", "16,32,64,128,256,512,1024,2048");
    std::vector<std::uint32_t> sizes;
    for (std::size_t at = 0; at <= list.size();) {
        const std::size_t comma = std::min(list.find(',', at), list.size());
        const std::string item = list.substr(at, comma - at);
        char* end = nullptr;
        const long long v = std::strtoll(item.c_str(), &end, 10);
        if (item.empty() || *end != '\0' || v < 1 || v > (1 << 24)) {
            *why = "--sizes " + list + ": '" + item + "' is not a size of 1.." +
                   std::to_string(1 << 24) + " bytes";
            return std::nullopt;
        }
        sizes.push_back(static_cast<std::uint32_t>(v));
        at = comma + 1;
    }
    return sizes;
}

std::string points_json(const sim::Pt2ptResult& r) {
    std::string out = "[";
    for (std::size_t i = 0; i < r.points.size(); ++i) {
        const sim::Pt2ptPoint& p = r.points[i];
        out += (i == 0 ? "" : ",") + JsonObject()
                                         .field("bytes", static_cast<long long>(p.bytes))
                                         .field("latency_us", p.latency_us)
                                         .field("per_packet_us", p.per_packet_us)
                                         .field("bandwidth_mbs", p.bandwidth_mbs)
                                         .str();
    }
    return out + "]";
}

}  // namespace

int run_pt2pt(const Options& opts, const sim::Model& model) {
    std::string why;
    sim::Pt2ptSpec spec;
    spec.model = model;
    spec.layer = opts.text("--layer", "fm");
    if (!sim::parse_fm_io(opts.text("--io", "hybrid"), &spec.fm.io)) {
        return usage_error("pt2pt", "--io " + opts.text("--io") + ": not one of hybrid|dma|none");
    }
    // LANai to LANai (Table 4 rows 1-2) has no host queues to manage or flow to control.
    const bool hosts = spec.fm.io != sim::FmIo::none;
    const auto buffers = on_off(opts, "--buffers", hosts, &why);
    const auto flow = buffers ? on_off(opts, "--flow", *buffers && hosts, &why) : std::nullopt;
    const auto interpret = flow ? on_off(opts, "--interpret", false, &why) : std::nullopt;
    if (!interpret) return usage_error("pt2pt", why);
    if (!hosts && *flow) return usage_error("pt2pt", "--flow on: needs hosts (--io hybrid|dma)");
    if (!sim::parse_fm_loop(opts.text("--loop", "streamed"), &spec.fm.loop)) {
        return usage_error("pt2pt",
                           "--loop " + opts.text("--loop") + ": not one of streamed|baseline");
    }
    if (opts.has("--flow") && *flow && !*buffers) {
        return usage_error(
            "pt2pt",
            "--flow on: needs --buffers on (return-to-sender rejects when a queue is full)");
    }
    spec.fm.buffers = *buffers;
    spec.fm.flow = *flow && *buffers;
    spec.fm.interpret = *interpret;
    const bool fm_only = opts.has("--io") || opts.has("--loop") || opts.has("--buffers") ||
                         opts.has("--flow") || opts.has("--interpret");
    if (spec.layer == "lfc" && fm_only) {
        return usage_error("pt2pt",
                           "--io, --loop, --buffers, --flow and --interpret: only with --layer fm");
    }
    const auto sizes = sizes_from(opts, &why);
    const auto packets = opts.integer("--packets", 65535, 1, 1 << 24, &why);
    const auto trips = packets ? opts.integer("--round-trips", 50, 1, 1 << 20, &why) : std::nullopt;
    if (!sizes || !packets || !trips) return usage_error("pt2pt", why);
    spec.sizes = *sizes;
    if (spec.layer == "lfc" && !opts.has("--sizes")) {
        // The default sizes that fit one of the model's packets (LFC cuts longer messages).
        std::erase_if(spec.sizes,
                      [&](std::uint32_t b) { return b > static_cast<std::uint32_t>(model.mtu); });
        if (spec.sizes.size() < 2) {
            return usage_error("pt2pt", "--layer lfc: the model's mtu " +
                                            std::to_string(model.mtu) +
                                            " leaves fewer than two of the default sizes (16-2048 "
                                            "bytes) in one packet; give --sizes");
        }
    }
    spec.packets = static_cast<int>(*packets);
    spec.round_trips = static_cast<int>(*trips);
    const auto result = sim::run_pt2pt(spec, &why);
    if (!result) return usage_error("pt2pt", why);
    const sim::Pt2ptResult& r = *result;
    const std::string preset = opts.text("--preset", "defaults");
    if (opts.has("--json")) {
        JsonObject j;
        j.field("command", "pt2pt").field("preset", preset).field("layer", spec.layer);
        if (spec.layer == "fm") {
            j.field("io", sim::fm_io_name(spec.fm.io))
                .field("loop", sim::fm_loop_name(spec.fm.loop))
                .field("buffers", spec.fm.buffers)
                .field("flow", spec.fm.flow)
                .field("interpret", spec.fm.interpret);
        }
        j.field("packets", static_cast<long long>(spec.packets))
            .field("round_trips", static_cast<long long>(spec.round_trips))
            .raw("points", points_json(r))
            .field("t0_us", r.metrics.t0_us)
            .field("r_inf_mbs", r.metrics.r_inf_mbs)
            .field("n_half", std::isnan(r.metrics.n_half) ? -1.0 : r.metrics.n_half)
            .field("n_half_linear", r.metrics.n_half_linear);
        if (spec.layer == "fm") {
            j.field("rejected", static_cast<long long>(r.fm.rejected))
                .field("resent", static_cast<long long>(r.fm.resent))
                .field("acks", static_cast<long long>(r.fm.acks))
                .field("host_dmas", static_cast<long long>(r.fm.host_dmas));
        }
        j.field("events", static_cast<long long>(r.events));
        std::printf("%s\n", j.str().c_str());
        return 0;
    }
    if (spec.layer == "fm") {
        std::printf(
            "pt2pt: preset %s, layer fm (loop %.*s, io %.*s, buffers %s, flow %s, interpret %s), "
            "%d packets per bandwidth run, %d round trips\n",
            preset.c_str(), static_cast<int>(sim::fm_loop_name(spec.fm.loop).size()),
            sim::fm_loop_name(spec.fm.loop).data(),
            static_cast<int>(sim::fm_io_name(spec.fm.io).size()),
            sim::fm_io_name(spec.fm.io).data(), spec.fm.buffers ? "on" : "off",
            spec.fm.flow ? "on" : "off", spec.fm.interpret ? "on" : "off", spec.packets,
            spec.round_trips);
    } else {
        std::printf("pt2pt: preset %s, layer lfc, %d packets per bandwidth run, %d round trips\n",
                    preset.c_str(), spec.packets, spec.round_trips);
    }
    std::printf("%10s %14s %16s %16s\n", "bytes", "latency (us)", "us per packet",
                "bandwidth (MB/s)");
    for (const sim::Pt2ptPoint& p : r.points) {
        std::printf("%10u %14.2f %16.3f %16.2f\n", p.bytes, p.latency_us, p.per_packet_us,
                    p.bandwidth_mbs);
    }
    const sim::Table2Metrics& m = r.metrics;
    std::printf(
        "t0 %.2f us, r-inf %.2f MB/s (%.2f MB/s of 2^20 bytes), n-half %s (t0 x r-inf %.0f "
        "bytes)\n",
        m.t0_us, m.r_inf_mbs, m.r_inf_mbs / 1.048576,
        std::isnan(m.n_half)
            ? "never reached"
            : (std::to_string(static_cast<long long>(std::lround(m.n_half))) + " bytes").c_str(),
        m.n_half_linear);
    if (spec.layer == "fm" && spec.fm.flow) {
        std::printf(
            "flow control: %llu packets rejected and resent, %llu acknowledgement packets\n",
            static_cast<unsigned long long>(r.fm.rejected),
            static_cast<unsigned long long>(r.fm.acks));
    }
    return 0;
}

}  // namespace nicsim::tools
