// Simulator: a Chrome trace-event file (open it in Perfetto or chrome://tracing), one track per
// host, per NIC and per link, each slice a span of time that resource was busy.
#pragma once

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "sim/time.h"

namespace nicsim::sim {

class Trace {
public:
    enum class Track { host = 1, nic = 2, link = 3 };

    // Null when `path` cannot be written; *why says why.
    static std::unique_ptr<Trace> open(const std::string& path, std::string* why);
    ~Trace();
    Trace(const Trace&) = delete;
    Trace& operator=(const Trace&) = delete;

    void slice(Track track, std::uint32_t id, const char* what, Time start, Time end);
    // Names a track the first time it is used ("node 3", "node3>sw0").
    bool named(Track track, std::uint32_t id) const;
    void name(Track track, std::uint32_t id, const std::string& name);
    // Writes the end of the file; false when the disk refused something.
    bool close();

private:
    explicit Trace(std::FILE* out) : out_(out) {}
    std::vector<bool>& names(Track track) { return named_[static_cast<int>(track) - 1]; }

    std::FILE* out_;
    bool first_ = true;
    std::vector<bool> named_[3];
};

}  // namespace nicsim::sim
