// Spare blocks of memory kept for reuse, by size: for objects made and destroyed at the rate of
// collectives (a real job's operations and requests), which would otherwise cost a malloc and a
// free each. The owner of the objects owns their Spares (an agent its operations, a group its
// requests), so nothing is shared between threads and nothing needs a lock.
//
// The spare blocks form a list through the blocks themselves, per size; at most kKeep of each
// size are kept (the live objects of a burst of nonblocking collectives), the rest go back to
// the heap, as do blocks of a fifth size. Every block starts on a cache line, so an object of
// two lines touches two.
#pragma once

#include <array>
#include <cstddef>
#include <new>
#include <utility>

#include "core/hot.h"

namespace nicsim {

class Spares {
public:
    Spares() = default;
    Spares(const Spares&) = delete;
    Spares& operator=(const Spares&) = delete;
    ~Spares() {
        for (List& list : lists_) {
            while (list.head != nullptr) release(std::exchange(list.head, list.head->next));
        }
    }

    NICSIM_HOT_PATH void* take(std::size_t bytes) {
        if (List* list = find(bytes); list != nullptr && list->head != nullptr) {
            --list->count;
            return std::exchange(list->head, list->head->next);
        }
        return ::operator new(bytes, kAlignment);
    }

    NICSIM_HOT_PATH void give(void* block, std::size_t bytes) noexcept {
        if (List* list = find(bytes); list != nullptr && list->count < kKeep) {
            list->head = new (block) Block{list->head};
            ++list->count;
            return;
        }
        release(block);
    }

    // Makes a T in a spare block; `destroy` ends it. (A T's spares are returned by its size.)
    template <typename T, typename... Args>
    T* make(Args&&... args) {
        static_assert(alignof(T) <= static_cast<std::size_t>(kAlignment));
        void* block = take(sizeof(T));
        try {
            return new (block) T(std::forward<Args>(args)...);
        } catch (...) {
            give(block, sizeof(T));
            throw;
        }
    }
    template <typename T>
    void destroy(T* object, std::size_t bytes = sizeof(T)) noexcept {
        object->~T();
        give(object, bytes);
    }

private:
    static constexpr std::size_t kKeep = 64;
    static constexpr std::align_val_t kAlignment{64};
    static void release(void* block) noexcept { ::operator delete(block, kAlignment); }
    struct Block {
        Block* next;
    };
    struct List {
        std::size_t bytes = 0;
        Block* head = nullptr;
        std::size_t count = 0;
    };

    // The list of blocks of `bytes`, claimed on first use; null when every list is taken by
    // another size or a block could not hold the link.
    List* find(std::size_t bytes) {
        if (bytes < sizeof(Block)) return nullptr;
        for (List& list : lists_) {
            if (list.bytes == bytes) return &list;
            if (list.bytes == 0) {
                list.bytes = bytes;
                return &list;
            }
        }
        return nullptr;
    }

    std::array<List, 4> lists_;
};

}  // namespace nicsim
