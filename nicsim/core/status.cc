#include "core/status.h"

namespace nicsim {

const char* to_string(Status s) {
    switch (s) {
        case Status::ok: return "success";
        case Status::in_progress: return "in progress";
        case Status::invalid: return "invalid argument";
        case Status::no_memory: return "out of memory";
        case Status::again: return "transport busy, try again";
        case Status::transport: return "transport failure";
        case Status::protocol: return "malformed or unexpected packet";
        case Status::peer_failed: return "another rank could not take part (a local failure there)";
    }
    return "unknown status";
}

}  // namespace nicsim
