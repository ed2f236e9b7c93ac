#include "sim/trace.h"

#include <cerrno>
#include <cstring>

namespace nicsim::sim {

std::unique_ptr<Trace> Trace::open(const std::string& path, std::string* why) {
    std::FILE* out = std::fopen(path.c_str(), "w");
    if (out == nullptr) {
        *why = "--trace " + path + ": " + std::strerror(errno);
        return nullptr;
    }
    std::fputs("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n", out);
    return std::unique_ptr<Trace>(new Trace(out));
}

Trace::~Trace() {
    if (out_ != nullptr) close();
}

void Trace::slice(Track track, std::uint32_t id, const char* what, Time start, Time end) {
    std::fprintf(
        out_, "%s{\"name\":\"%s\",\"ph\":\"X\",\"pid\":%d,\"tid\":%u,\"ts\":%.6f,\"dur\":%.6f}",
        first_ ? "" : ",\n", what, static_cast<int>(track), id, to_us(start), to_us(end - start));
    first_ = false;
}

bool Trace::named(Track track, std::uint32_t id) const {
    const auto& v = named_[static_cast<int>(track) - 1];
    return id < v.size() && v[id];
}

void Trace::name(Track track, std::uint32_t id, const std::string& name) {
    auto& v = names(track);
    if (v.size() <= id) v.resize(id + 1);
    v[id] = true;
    std::fprintf(out_, "%s{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%d,\"tid\":%u,"
                 "\"args\":{\"name\":\"%s\"}}",
                 first_ ? "" : ",\n", static_cast<int>(track), id, name.c_str());
    first_ = false;
}

bool Trace::close() {
    static const char* const kProcesses[] = {"hosts", "NICs", "links"};
    for (int p = 1; p <= 3; ++p) {
        std::fprintf(out_, "%s{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":%d,"
                     "\"args\":{\"name\":\"%s\"}}",
                     first_ ? "" : ",\n", p, kProcesses[p - 1]);
        first_ = false;
    }
    std::fputs("\n]}\n", out_);
    const bool ok = std::ferror(out_) == 0;
    const bool closed = std::fclose(out_) == 0;
    out_ = nullptr;
    return ok && closed;
}

}  // namespace nicsim::sim
