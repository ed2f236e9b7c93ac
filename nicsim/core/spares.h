// Spare blocks of memory kept for reuse, by size: for objects made and destroyed at the rate of
// collectives (a real job's operations and requests), which would otherwise cost a malloc and a
// free each. The owner of the objects owns their Spares (an agent its operations, a group its
// requests), so nothing is shared between threads and nothing needs a lock.
//
// The spare blocks form a list through the blocks themselves, per size in cache lines (one list
// for each of 1 to kClasses lines, found by the size alone); at most kKeep of each size are kept
// (the live objects of a burst of nonblocking collectives), the rest go back to the heap, as do
// larger blocks. Every block starts on a cache line, so an object of two lines touches two.
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
        return ::operator new(lines(bytes) * kLine, kAlignment);
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
    static constexpr std::size_t kLine = 64;
    static constexpr std::size_t kClasses = 16;  // blocks of up to 1 KiB
    static constexpr std::align_val_t kAlignment{kLine};
    static void release(void* block) noexcept { ::operator delete(block, kAlignment); }
    struct Block {
        Block* next;
    };
    struct List {
        Block* head = nullptr;
        std::size_t count = 0;
    };

    // The lines a block of `bytes` (at least one) takes.
    static std::size_t lines(std::size_t bytes) { return (bytes + kLine - 1) / kLine; }
    // The list of blocks as long as one of `bytes`; null for a block over kClasses lines.
    List* find(std::size_t bytes) {
        const std::size_t i = lines(bytes) - 1;
        return i < kClasses ? &lists_[i] : nullptr;
    }

    std::array<List, kClasses> lists_;
};

}  // namespace nicsim
