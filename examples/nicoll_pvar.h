/*
 * Reading nicoll's counters from an MPI program through the MPI tool interface (MPI_T).
 *
 * nicoll exports its statistics as MPI_T performance variables named coll_nicoll_<counter>
 * (see `man coll_nicoll`): continuous counters bound to no object. As MPI_T defines counters,
 * a handle counts from the moment it is allocated, so open one before the code to measure and
 * read it after. A program can use them to prove that nicoll, not a fallback component, ran its
 * collectives.
 *
 * Call MPI_T_init_thread() before and MPI_T_finalize() after, as with any MPI_T use.
 */
#ifndef NICOLL_PVAR_H
#define NICOLL_PVAR_H

#include <mpi.h>

typedef struct nicoll_counter {
    MPI_T_pvar_session session;
    MPI_T_pvar_handle handle;
} nicoll_counter_t;

/* Starts counting; returns 0, or -1 when nicoll is not loaded in this process. */
static inline int nicoll_counter_open(nicoll_counter_t *c, const char *name)
{
    int index, count;
    if (MPI_SUCCESS != MPI_T_pvar_get_index(name, MPI_T_PVAR_CLASS_COUNTER, &index) ||
        MPI_SUCCESS != MPI_T_pvar_session_create(&c->session)) {
        return -1;
    }
    if (MPI_SUCCESS != MPI_T_pvar_handle_alloc(c->session, index, NULL, &c->handle, &count) ||
        1 != count) {
        MPI_T_pvar_session_free(&c->session);
        return -1;
    }
    return 0;
}

/* What the counter counted since nicoll_counter_open(); returns 0 or -1. */
static inline int nicoll_counter_read(nicoll_counter_t *c, unsigned long long *value)
{
    return MPI_SUCCESS == MPI_T_pvar_read(c->session, c->handle, value) ? 0 : -1;
}

static inline void nicoll_counter_close(nicoll_counter_t *c)
{
    MPI_T_pvar_handle_free(c->session, &c->handle);
    MPI_T_pvar_session_free(&c->session);
}

#endif /* NICOLL_PVAR_H */
