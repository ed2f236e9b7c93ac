// Memory recycled per type: a base class whose objects, made and destroyed at the rate of
// collectives (a real job's ops and requests), reuse the blocks of earlier ones instead of
// calling malloc and free each time. A derived class's objects are recycled by their own size,
// so `Recycled<Base>` serves a whole hierarchy with a virtual destructor (the delete expression
// passes the dynamic type's size).
//
// The spare blocks form a list through the blocks themselves, per thread and per size; at most
// kKeep of each size are kept (the live objects of a burst of nonblocking collectives), the rest
// go back to the heap.
#pragma once

#include <array>
#include <cstddef>
#include <new>
#include <utility>

namespace nicsim {

template <typename Tag>
class Recycled {
public:
    static void* operator new(std::size_t bytes) {
        if (Spare* s = spare(bytes); s != nullptr && s->head != nullptr) {
            Block* b = s->head;
            s->head = b->next;
            --s->count;
            return b;
        }
        return ::operator new(bytes);
    }
    static void operator delete(void* p, std::size_t bytes) noexcept {
        if (Spare* s = spare(bytes); s != nullptr && s->count < kKeep) {
            s->head = new (p) Block{s->head};
            ++s->count;
            return;
        }
        ::operator delete(p);
    }

private:
    static constexpr std::size_t kKeep = 64;
    static constexpr std::size_t kSizes = 4;
    struct Block {
        Block* next;
    };
    struct Spare {
        std::size_t bytes = 0;
        Block* head = nullptr;
        std::size_t count = 0;
    };
    struct Spares {
        std::array<Spare, kSizes> sizes;
        ~Spares() {
            for (Spare& s : sizes) {
                while (s.head != nullptr) ::operator delete(std::exchange(s.head, s.head->next));
            }
        }
    };

    // The spare list of blocks of `bytes`, claimed on first use; null when kSizes sizes are
    // already taken (those objects use the heap directly) or a block could not hold the link.
    static Spare* spare(std::size_t bytes) {
        if (bytes < sizeof(Block)) return nullptr;
        thread_local Spares spares;
        for (Spare& s : spares.sizes) {
            if (s.bytes == bytes) return &s;
            if (s.bytes == 0) {
                s.bytes = bytes;
                return &s;
            }
        }
        return nullptr;
    }
};

}  // namespace nicsim
