// nicoll-tune generate --measure and calibrate: nicoll-bench under mpirun on this machine.
//
// Each measurement is one mpirun of nicoll-bench over all sizes, with the collective's algorithm
// forced by its MCA variable; its Median(us) column (the median over iterations of the slowest
// rank's time) is the cell's time for that run, and the median over --runs runs is compared.
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <map>
#include <sstream>

#include "nicsim/nicsim.h"
#include "plan/barrier.h"
#include "plan/tree.h"
#include "tune.h"

namespace nicoll::tune {

namespace {

struct Bench {
    std::string mpirun = "mpirun";
    std::string extra;  // --mpirun-args
    std::string bench;  // nicoll-bench's path
};

std::string default_bench() {
#ifdef NICOLL_BUILD_DIR
    const std::string built = std::string(NICOLL_BUILD_DIR) + "/examples/nicoll-bench";
    if (access(built.c_str(), X_OK) == 0) return built;
#endif
    return "nicoll-bench";
}

// The cores online (at least 1).
int cores() {
    return static_cast<int>(std::max(1L, sysconf(_SC_NPROCESSORS_ONLN)));
}

// One nicoll-bench run: size -> Median(us), and the nodes its ranks were on.
struct BenchRun {
    std::map<std::uint64_t, double> times;
    int nodes = 1;
};

// Empty with *why when the run failed.
std::optional<BenchRun> run_bench(const Bench& b, int np, const std::string& mca,
                                  const std::string& coll, const std::string& sizes,
                                  int iterations, std::string* why) {
    // Ranks give up their core when idle only when there are more of them than cores (as users
    // run them): otherwise a rank waiting on a machine that runs other work too would hand its
    // core to that work at every poll.
    const bool oversubscribed = np > cores();
    const bool barrier = coll.find("barrier") != std::string::npos;
    const std::string cmd =
        b.mpirun + " -np " + std::to_string(np) + " --oversubscribe" +
        (oversubscribed ? " --mca mpi_yield_when_idle 1" : "") +
        " --mca coll nicoll,tuned,basic,libnbc,self " +
        b.extra + " " + mca + " " + b.bench + " " + coll +
        (barrier ? "" : " --sizes " + sizes) + " -i " +
        std::to_string(iterations) + " -x " + std::to_string(std::max(1, iterations / 10)) +
        " 2>&1";
    FILE* p = popen(cmd.c_str(), "r");
    if (p == nullptr) {
        *why = "cannot run: " + cmd;
        return std::nullopt;
    }
    BenchRun run;
    std::map<std::uint64_t, double>& out = run.times;
    std::string all;
    char line[1024];
    bool by_nicoll = false;
    while (std::fgets(line, sizeof(line), p) != nullptr) {
        all += line;
        std::string l(line);
        if (l.rfind("# run by nicoll:", 0) == 0) by_nicoll = l.find(" 0 of") == std::string::npos;
        if (l.rfind("# layout: ", 0) == 0) run.nodes = std::atoi(l.c_str() + 10);
        if (l.empty() || l[0] == '#') continue;
        std::istringstream in(l);
        std::vector<std::string> f;
        for (std::string w; in >> w;) f.push_back(w);
        if (f.empty()) continue;
        char* end = nullptr;
        const double median = std::strtod(f.back().c_str(), &end);
        if (end == f.back().c_str()) continue;
        out[barrier ? 0 : std::strtoull(f[0].c_str(), nullptr, 10)] = median; // (no size)
    }
    const int status = pclose(p);
    if (status != 0 || out.empty() || !by_nicoll) {
        *why = "`" + cmd + "` " +
               (status != 0  ? "failed"
                : !by_nicoll ? "did not run nicoll"
                             : "printed no times") +
               ":\n" + all;
        return std::nullopt;
    }
    return run;
}

// One candidate's times: [np][size], one value per run.
using Times = std::map<std::uint64_t, std::map<std::uint64_t, std::vector<double>>>;

// The median of the runs at np ranks and `size` bytes; infinite where no run printed that size.
double median_of(const Times& times, std::uint64_t np, std::uint64_t size) {
    const auto row = times.find(np);
    if (row == times.end()) return INFINITY;
    const auto cell = row->second.find(size);
    if (cell == row->second.end() || cell->second.empty()) return INFINITY;
    std::vector<double> v = cell->second;
    std::sort(v.begin(), v.end());
    return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

std::string clock_text(double s) {
    char buf[32];
    const long t = std::lround(s);
    std::snprintf(buf, sizeof(buf), "%ld:%02ld", t / 60, t % 60);
    return buf;
}

std::string now_utc() {
    char buf[64];
    const std::time_t t = std::time(nullptr);
    std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
    return buf;
}

std::string machine() {
    utsname u{};
    uname(&u);
    return std::string(u.nodename) + ", " + u.sysname + " " + u.release + " " + u.machine + ", " +
           std::to_string(cores()) + " cores online";
}

Bench bench_from(const Options& o) {
    Bench b;
    b.bench = o.text("--bench", default_bench());
    b.extra = o.text("--mpirun-args");
    return b;
}

// A candidate: an algorithm, with a k and a packet size (0: auto), forced by MCA variables.
struct Candidate {
    tuning::Section section;
    std::string coll, var, algorithm;
    int k = 0;
    std::uint64_t packet = 0;
    std::string label() const {
        return algorithm + (k > 0 ? " k=" + std::to_string(k) : "") +
               (packet > 0 ? " packet=" + tuning::format_size(packet) : "");
    }
    std::string mca() const {
        return "--mca coll_nicoll_" + var + " " + algorithm +
               (k > 0 ? " --mca coll_nicoll_bcast_k " + std::to_string(k) : "") +
               (packet > 0 ? " --mca coll_nicoll_packet_size " + std::to_string(packet) : "");
    }
};

// kbinomial with each k of `ks` (0: auto); each data-moving algorithm with each packet size of
// `packets` (0: auto); each barrier.
std::vector<Candidate> candidates(const std::vector<std::uint64_t>& ks,
                                  const std::vector<std::uint64_t>& packets) {
    std::vector<Candidate> out;
    for (std::uint64_t p : packets) {
        for (std::uint64_t k : ks) {
            out.push_back({tuning::Section::Bcast, "bcast", "bcast_algorithm", "kbinomial",
                           static_cast<int>(k), p});
        }
        for (const nicsim::plan::TreeShape& shape : nicsim::plan::tree_shapes()) {
            if (shape.takes_k) continue;
            out.push_back({tuning::Section::Bcast, "bcast", "bcast_algorithm",
                           std::string(shape.name), 0, p});
        }
        for (int a = 0; a < nicsim_algorithm_count(NICSIM_COLL_ALLGATHER); ++a) {
            out.push_back({tuning::Section::Allgather, "allgather", "allgather_algorithm",
                           nicsim_algorithm_name(NICSIM_COLL_ALLGATHER, a), 0, p});
        }
    }
    for (const nicsim::plan::BarrierAlgorithm& a : nicsim::plan::barrier_algorithms()) {
        out.push_back(
            {tuning::Section::Barrier, "barrier", "barrier_algorithm", std::string(a.name), 0, 0});
    }
    return out;
}

// The progress line on stderr: a bar, the run in hand, the time taken and left.
class Progress {
public:
    explicit Progress(std::size_t total)
        : total_(total), start_(std::chrono::steady_clock::now()) {}

    void show(std::uint64_t np, const Candidate& c, std::uint64_t run) const {
        const double elapsed = seconds();
        const double left =
            done_ == 0 ? 0
                       : elapsed / static_cast<double>(done_) * static_cast<double>(total_ - done_);
        const int width = 30, filled = static_cast<int>(width * done_ / total_);
        std::fprintf(
            stderr, "\r[%s%s] %3zu/%zu  np %llu %-9s %-28s run %llu  elapsed %s  left %s   ",
            std::string(filled, '#').c_str(), std::string(width - filled, '.').c_str(), done_,
            total_, static_cast<unsigned long long>(np), c.coll.c_str(), c.label().c_str(),
            static_cast<unsigned long long>(run), clock_text(elapsed).c_str(),
            done_ == 0 ? "?" : ("~" + clock_text(left)).c_str());
    }
    void step() { ++done_; }
    void finish() const {
        std::fprintf(stderr, "\r[%s] %zu/%zu  done in %s, %s%40s\n", std::string(30, '#').c_str(),
                     done_, total_, clock_text(seconds()).c_str(), now_utc().c_str(), "");
    }

private:
    double seconds() const {
        return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    }
    std::size_t total_, done_ = 0;
    std::chrono::steady_clock::time_point start_;
};

// What the runs measured: times[candidate]; nodes[np], the most nodes a run of np ranks was on
// (the --mpirun-args hostfile decides).
struct Measured {
    std::vector<Times> times;
    std::map<std::uint64_t, int> nodes;
};

// Every candidate at every np, `runs` times. Runs interleave (run 1 of everything, then run
// 2...), so a burst of load elsewhere on the machine spreads over the candidates instead of
// falling on one. Empty, with *why, at the first run that fails.
std::optional<Measured> measure(const Bench& b, const std::vector<Candidate>& cands,
                                const std::vector<std::uint64_t>& nps, const std::string& sizes,
                                int iterations, std::uint64_t runs, std::string* why) {
    Measured m;
    m.times.resize(cands.size());
    Progress progress(cands.size() * nps.size() * runs);
    for (std::uint64_t r = 0; r < runs; ++r) {
        for (std::uint64_t np : nps) {
            for (std::size_t c = 0; c < cands.size(); ++c) {
                progress.show(np, cands[c], r + 1);
                auto out = run_bench(b, static_cast<int>(np), cands[c].mca(), cands[c].coll, sizes,
                                     iterations, why);
                if (!out) return std::nullopt;
                for (const auto& [size, us] : out->times) m.times[c][np][size].push_back(us);
                m.nodes[np] = std::max(m.nodes[np], out->nodes);
                progress.step();
            }
        }
    }
    progress.finish();
    return m;
}

// Per collective, the candidate with the lowest median over the runs in each cell; every cell's
// medians also go into *medians as JSON members ("bcast np 4 8 B binary": 1.23).
std::vector<Grid> best_grids(const std::vector<Candidate>& cands, const Measured& m,
                             const std::vector<std::uint64_t>& nps,
                             const std::vector<std::uint64_t>& sizes, std::string* medians) {
    std::vector<Grid> grids;
    for (tuning::Section s :
         {tuning::Section::Bcast, tuning::Section::Allgather, tuning::Section::Barrier}) {
        Grid g;
        g.section = s;
        g.comm_sizes = nps;
        for (std::uint64_t np : nps) g.several_nodes.push_back(m.nodes.at(np) > 1);
        g.sizes = s == tuning::Section::Barrier ? std::vector<std::uint64_t>{0} : sizes;
        for (std::uint64_t np : nps) {
            std::vector<Choice> row;
            for (std::uint64_t size : g.sizes) {
                Choice best;
                double best_us = INFINITY;
                for (std::size_t c = 0; c < cands.size(); ++c) {
                    if (cands[c].section != s) continue;
                    const double us = median_of(m.times[c], np, size);
                    char key[192];
                    std::snprintf(key, sizeof(key), "%s\"%s np %llu %llu B %s\": %.2f",
                                  medians->empty() ? "" : ", ", cands[c].coll.c_str(),
                                  static_cast<unsigned long long>(np),
                                  static_cast<unsigned long long>(size), cands[c].label().c_str(),
                                  us);
                    *medians += key;
                    if (us < best_us) {
                        best_us = us;
                        best = {cands[c].algorithm, cands[c].k, cands[c].packet};
                    }
                }
                row.push_back(best);
            }
            g.best.push_back(std::move(row));
        }
        grids.push_back(std::move(g));
    }
    return grids;
}

}  // namespace

int cmd_generate_measure(const Args& args) {
    std::string why;
    auto o = parse_options(args,
                           {"--np", "--sizes", "--iterations", "--runs", "--out", "--bench",
                            "--mpirun-args", "--ks", "--packet-sizes"},
                           {"--measure"}, {}, &why);
    if (!o) return usage_error("generate", why);
    if (!o->has("--np")) return usage_error("generate", "--measure needs --np LIST");
    auto nps = parse_list(o->text("--np"), 2, 256, &why);
    if (!nps) return usage_error("generate", "--np: " + why);
    const std::string sizes_text = o->text("--sizes", "8,512,4k,32k,256k,1M");
    auto sizes = parse_list(sizes_text, 1, std::uint64_t{1} << 30, &why);
    if (!sizes) return usage_error("generate", "--sizes: " + why);
    const auto iterations = parse_one(*o, "--iterations", "200", 1, 100000, "one number", &why);
    if (!iterations) return usage_error("generate", why);
    const auto runs = parse_one(*o, "--runs", "3", 1, 99, "one number", &why);
    if (!runs) return usage_error("generate", why);
    // Parameter sets: kbinomial with auto k and each --ks value; each data-moving algorithm with
    // the auto packet size and each --packet-sizes value.
    std::vector<std::uint64_t> ks{0}, packets{0};
    if (o->has("--ks")) {
        auto list = parse_list(o->text("--ks"), 1, tuning::kMaxK, &why);
        if (!list) return usage_error("generate", "--ks: " + why);
        ks.insert(ks.end(), list->begin(), list->end());
    }
    if (o->has("--packet-sizes")) {
        auto list = parse_list(o->text("--packet-sizes"), 1, tuning::kMaxPacketSize, &why);
        if (!list) return usage_error("generate", "--packet-sizes: " + why);
        packets.insert(packets.end(), list->begin(), list->end());
    }

    const std::vector<Candidate> cands = candidates(ks, packets);
    std::string sizes_arg;
    for (auto s : *sizes) sizes_arg += (sizes_arg.empty() ? "" : ",") + std::to_string(s);
    std::fprintf(
        stderr,
        "nicoll-tune generate: %zu mpirun runs (%zu candidates x np %s x %llu runs), started %s\n",
        cands.size() * nps->size() * *runs, cands.size(), o->text("--np").c_str(),
        static_cast<unsigned long long>(*runs), now_utc().c_str());
    const auto measured =
        measure(bench_from(*o), cands, *nps, sizes_arg, static_cast<int>(*iterations), *runs, &why);
    if (!measured) {
        std::fprintf(stderr, "\nnicoll-tune generate: %s\n", why.c_str());
        return 1;
    }
    std::string medians;
    std::vector<Grid> grids = best_grids(cands, *measured, *nps, *sizes, &medians);

    std::vector<std::string> provenance;
    provenance.push_back("\"generated_by\": " +
                         quote("nicoll-tune generate --measure --np " + o->text("--np") +
                               " --sizes " + sizes_text + " --iterations " +
                               std::to_string(*iterations) + " --runs " + std::to_string(*runs) +
                               o->echo({"--ks", "--packet-sizes", "--mpirun-args"})));
    provenance.push_back("\"date\": " + quote(now_utc()));
    provenance.push_back("\"machine\": " + quote(machine()));
    std::string layouts;
    for (const auto& [np, n] : measured->nodes) {
        layouts += (layouts.empty() ? "" : ", ") + std::to_string(np) + " ranks on " +
                   std::to_string(n) + (n == 1 ? " node" : " nodes");
    }
    provenance.push_back("\"layout\": " +
                         quote(layouts + " (nicoll-bench's layout line); rules measured over "
                                         "several nodes hold only there "
                                         "(\"nodes\": [2, \"inf\"])"));
    provenance.push_back(
        "\"method\": \"nicoll-bench under mpirun --oversubscribe (and --mca mpi_yield_when_idle 1 "
        "with more ranks than cores), each "
        "algorithm forced by its MCA variable; per size the median over runs of nicoll-bench's "
        "Median(us); the lowest kept; k and packet sizes auto unless --ks or --packet-sizes name "
        "candidates\"");
    provenance.push_back("\"medians_us\": {" + medians + "}");
    return emit_table(*o, grids, provenance);
}

namespace {

// What calibrate measured. t0, r_inf and n_1/2 as Pakin et al. (App. A) define them: a
// least-squares line through the one-way times t(n) = t0 + n / r_inf, and n_1/2 = t0 * r_inf,
// the size at half the peak rate.
struct Calibration {
    double latency = 0;                  // us, the smallest size's one-way time
    double t0 = 0;                       // us
    double r_inf = 0;                    // bytes/us = MB/s
    double n_half = 0;                   // bytes
    double per_packet = 0, forward = 0;  // us per packet: sent and received; forwarded
};

// The line through `times` (size -> us): its slope (us per byte) and intercept (us).
std::pair<double, double> fit_line(const std::map<std::uint64_t, double>& times) {
    double sx = 0, sy = 0, sxx = 0, sxy = 0;
    for (const auto& [n, us] : times) {
        sx += static_cast<double>(n);
        sy += us;
        sxx += static_cast<double>(n) * static_cast<double>(n);
        sxy += static_cast<double>(n) * us;
    }
    const double k = static_cast<double>(times.size());
    const double slope = (k * sxy - sx * sy) / (k * sxx - sx * sx);
    return {slope, (sy - slope * sx) / k};
}

// The preset file: the model's costs from the measurements. A packet's NIC overheads are the
// per-packet cost, split evenly between sender and receiver (assumption: the two cannot be told
// apart from outside); the host overheads are what remains of t0, split likewise. The
// forwarding overhead is recorded, not used: the model's forwarding costs tnr + tns, and on a
// machine with fewer cores than ranks the measurement includes waiting for a core.
std::string preset_json(const Calibration& c) {
    const double tn = c.per_packet / 2;
    const double th = std::max(0.0, (c.t0 - c.per_packet) / 2);
    char buf[2048];
    std::snprintf(
        buf, sizeof(buf),
        "{\n  \"nicoll_preset\": 1,\n  \"base\": \"lfc-myrinet\",\n  \"values\": {\n"
        "    \"topology\": \"crossbar\",\n    \"link_bw\": \"%.1f\",\n    \"switch_latency\": "
        "\"0\",\n"
        "    \"mtu\": \"65536\",\n    \"header_bytes\": \"24\",\n    \"host_send\": \"dma\",\n"
        "    \"pio_bw\": \"0\",\n    \"dma_bw\": \"0\",\n"
        "    \"ts\": \"%.3f\",\n    \"tr\": \"%.3f\",\n    \"tns\": \"%.3f\",\n    \"tnr\": "
        "\"%.3f\"\n  },\n"
        "  \"provenance\": {\n    \"generated_by\": \"nicoll-tune calibrate\",\n    \"date\": %s,\n"
        "    \"machine\": %s,\n"
        "    \"measured\": {\"one_way_latency_us\": %.3f, \"t0_us\": %.3f, \"r_inf_mbs\": %.1f, "
        "\"n_half_bytes\": %.0f, \"per_packet_us\": %.4f, \"forward_per_packet_us\": %.4f},\n"
        "    \"sources\": {\"link_bw\": \"r_inf\", \"ts, tr\": \"assumption: (t0 - per-packet) / 2 "
        "each\", "
        "\"tns, tnr\": \"assumption: per-packet / 2 each\", \"mtu\": \"the component's auto packet "
        "size\", "
        "\"topology\": \"assumption: one node, every process a port of one crossbar\"}\n  }\n}\n",
        c.r_inf, th, th, tn, tn, quote(now_utc()).c_str(), quote(machine()).c_str(), c.latency,
        c.t0, c.r_inf, c.n_half, c.per_packet, c.forward);
    return buf;
}

}  // namespace

// One way: half a ping-pong is what FM measured; here a broadcast on 2 ranks is one way from the
// root, the time the receiver has it, which nicoll-bench's slowest-rank time is.
int cmd_calibrate(const Args& args) {
    std::string why;
    auto o =
        parse_options(args, {"--out", "--bench", "--mpirun-args", "--iterations"}, {}, {}, &why);
    if (!o) return usage_error("calibrate", why);
    const auto iterations = parse_one(*o, "--iterations", "200", 1, 100000, "one number", &why);
    if (!iterations) return usage_error("calibrate", why);
    const Bench b = bench_from(*o);
    const int it = static_cast<int>(*iterations);
    std::fprintf(stderr, "nicoll-tune calibrate: 3 mpirun runs, started %s\n", now_utc().c_str());
    auto one_way = run_bench(
        b, 2, "--mca coll_nicoll_bcast_algorithm chain --mca coll_nicoll_packet_size 1048576",
        "bcast", "8,1024,8192,65536,262144,1048576", it, &why);
    if (!one_way) {
        std::fprintf(stderr, "nicoll-tune calibrate: %s\n", why.c_str());
        return 1;
    }
    const auto [slope, t0] = fit_line(one_way->times);
    if (!(slope > 0)) {
        // No model can come of it: a busy machine (other jobs on the cores) drowns the sizes.
        std::fprintf(stderr,
                     "nicoll-tune calibrate: the one-way times do not grow with the message size "
                     "(%.2f us at %llu B, %.2f us at %llu B): the machine was too busy to "
                     "measure; no preset written, run it again\n",
                     one_way->times.begin()->second,
                     static_cast<unsigned long long>(one_way->times.begin()->first),
                     one_way->times.rbegin()->second,
                     static_cast<unsigned long long>(one_way->times.rbegin()->first));
        return 1;
    }
    // A 1 MiB broadcast in 1 KiB packets down a chain of `ranks`.
    const auto chain_of = [&](int ranks) {
        return run_bench(
            b, ranks, "--mca coll_nicoll_bcast_algorithm chain --mca coll_nicoll_packet_size 1024",
            "bcast", "1048576", std::max(1, it / 4), &why);
    };
    // Per-packet overhead: 1 MiB in 1 KiB packets against one packet, on 2 ranks. Forwarding: the
    // same on a chain of 3, whose middle rank receives and passes on every packet as it arrives;
    // what the third rank adds per packet is the forwarding overhead (on a machine with fewer
    // cores than 3 ranks it includes the oversubscription).
    auto small = chain_of(2);
    auto chain3 = small ? chain_of(3) : small;
    if (!small || !chain3) {
        std::fprintf(stderr, "nicoll-tune calibrate: %s\n", why.c_str());
        return 1;
    }
    Calibration c;
    c.latency = one_way->times.begin()->second;
    c.t0 = t0;
    c.r_inf = 1.0 / slope;
    c.n_half = c.t0 * c.r_inf;
    c.per_packet = std::max(
        0.0, (small->times.begin()->second - one_way->times.rbegin()->second) / (1024.0 - 1.0));
    c.forward =
        std::max(0.0, (chain3->times.begin()->second - small->times.begin()->second) / 1024.0);
    std::fprintf(stderr,
                 "one-way latency (8 B): %.2f us\nt0: %.2f us\nr_inf (bandwidth): %.1f "
                 "MB/s\nn_1/2: %.0f bytes\n"
                 "per-packet overhead: %.3f us\nper-packet forwarding overhead: %.3f us\n",
                 c.latency, c.t0, c.r_inf, c.n_half, c.per_packet, c.forward);
    return write_out(*o, preset_json(c), "calibrate") ? 0 : 1;
}

}  // namespace nicoll::tune
