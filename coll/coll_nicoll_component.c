/*
 * Component registration: the MCA variables (one table), the MPI_T counters (one table), the
 * open/close/query hooks Open MPI calls, and the statistics printed at MPI_Finalize.
 */
#include "coll_nicoll.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ompi/proc/proc.h"
#include "opal/mca/base/mca_base_pvar.h"
#include "opal/mca/base/mca_base_var.h"

static int nicoll_register(void);
static int nicoll_open(void);
static int nicoll_close(void);
static int nicoll_init_query(bool enable_progress_threads, bool enable_mpi_threads);

nicoll_component_t mca_coll_nicoll_component = {
    .super = {
        .collm_version = {
            MCA_COLL_BASE_VERSION_2_0_0,
            .mca_component_name = "nicoll",
            MCA_BASE_MAKE_VERSION(component, 0, 1, 0),
            .mca_open_component = nicoll_open,
            .mca_close_component = nicoll_close,
            .mca_register_component_params = nicoll_register,
        },
        .collm_data = {MCA_BASE_METADATA_PARAM_CHECKPOINT},
        .collm_init_query = nicoll_init_query,
        .collm_comm_query = nicoll_comm_query,
    },
    .fault_site = -1,
    .output = -1,
};

/* auto's credits where the engine has no model of this machine yet (its packet size:
 * nicoll_tuning_auto_packet_size). */
#define NICOLL_AUTO_CREDITS 8
/* auto keeps a communicator's receive buffers near this many (LFC's fixed NIC memory, shared
 * among the senders), with at least one credit per peer. */
#define NICOLL_AUTO_RECV_SLOTS 256

/* What a string variable may hold besides "auto", and how its value is parsed. */
typedef enum nicoll_value {
    NICOLL_VALUE_NONE,      /* not parsed: an integer variable, or a string taken as it is */
    NICOLL_VALUE_ALGORITHM, /* a name in an engine algorithm table; its index is the value */
    NICOLL_VALUE_NAME,      /* one of a list of names; its index is the value */
    NICOLL_VALUE_INTEGER,   /* a decimal integer in a range (digits only) */
    NICOLL_VALUE_SIZE,      /* bytes in a range, as tuning files write them ("64k"); a long */
} nicoll_value_t;

typedef struct nicoll_choice {
    nicoll_value_t kind;
    nicsim_collective_t table; /* NICOLL_VALUE_ALGORITHM's */
    long min, max;             /* NICOLL_VALUE_INTEGER's and NICOLL_VALUE_SIZE's */
    const char *const *names;  /* NICOLL_VALUE_NAME's, NULL-terminated */
} nicoll_choice_t;

const char *const nicoll_transport_names[] = {"pml", "shm", "ucx", NULL};
/* coll_nicoll_progress's values, indexed by NICOLL_PROGRESS_*. */
static const char *const progress_names[] = {"caller", "thread", NULL};
/* coll_nicoll_progress_priority's values, indexed by NICOLL_PRIORITY_*. */
static const char *const priority_names[] = {"normal", "realtime", NULL};

/* Every MCA variable of the component, declared once: name, type, default, level, help, where its
 * value lives, and (string variables) what it may hold and where its parsed value goes. */
typedef struct nicoll_param {
    const char *name;
    mca_base_var_type_t type;
    int int_default;
    const char *string_default;
    mca_base_var_info_lvl_t level;
    const char *help;
    void *storage;
    nicoll_choice_t choice;
    void *parsed; /* the parsed value: an int, a long for NICOLL_VALUE_SIZE */
} nicoll_param_t;

#define NICOLL_C (&mca_coll_nicoll_component)

/* Help texts built at registration: the algorithm variables' from the engine's tables (indexed
 * by nicsim_collective_t), coll_nicoll_fault's from its sites. */
static char algorithm_help[3][512];
static char fault_help[1024];

static nicoll_param_t nicoll_params[] = {
    {"priority", MCA_BASE_VAR_TYPE_INT, 40, NULL, OPAL_INFO_LVL_6,
     "Priority of the nicoll coll component; the highest-priority component that provides a "
     "collective runs it (tuned is 30, basic 10). A negative value disables nicoll. Must be the "
     "same on every rank, as must the coll list: Open MPI chooses components per process, and "
     "a rank where another component wins waits in that component's collective while the "
     "others run nicoll's.",
     &NICOLL_C->priority, {NICOLL_VALUE_NONE}, NULL},
    {"verbose", MCA_BASE_VAR_TYPE_INT, 0, NULL, OPAL_INFO_LVL_9,
     "Verbosity of nicoll's output: 0 errors only, 10 why each communicator is taken or "
     "declined and with what settings, 20 every collective.",
     &NICOLL_C->verbose, {NICOLL_VALUE_NONE}, NULL},
    {"stats", MCA_BASE_VAR_TYPE_INT, 0, NULL, OPAL_INFO_LVL_4,
     "Print nicoll's counters at MPI_Finalize, one line per collective: 0 no, 1 rank 0 of "
     "MPI_COMM_WORLD, 2 every rank.",
     &NICOLL_C->stats_level, {NICOLL_VALUE_NONE}, NULL},
    {"bcast_algorithm", MCA_BASE_VAR_TYPE_STRING, 0, "auto", OPAL_INFO_LVL_5,
     algorithm_help[NICSIM_COLL_BCAST],
     &NICOLL_C->bcast_algorithm_name, {NICOLL_VALUE_ALGORITHM, .table = NICSIM_COLL_BCAST},
     &NICOLL_C->bcast_algorithm},
    {"bcast_k", MCA_BASE_VAR_TYPE_STRING, 0, "auto", OPAL_INFO_LVL_5,
     "Fanout of the k-binomial broadcast tree, 1..64, or auto: the tuning table's k, else the k "
     "with the fewest steps for the message's packets (Kesavan and Panda, Theorem 3).",
     &NICOLL_C->bcast_k_name, {NICOLL_VALUE_INTEGER, .min = 1, .max = NICOLL_TUNING_MAX_K},
     &NICOLL_C->bcast_k},
    {"allgather_algorithm", MCA_BASE_VAR_TYPE_STRING, 0, "auto", OPAL_INFO_LVL_5,
     algorithm_help[NICSIM_COLL_ALLGATHER],
     &NICOLL_C->allgather_algorithm_name, {NICOLL_VALUE_ALGORITHM, .table = NICSIM_COLL_ALLGATHER},
     &NICOLL_C->allgather_algorithm},
    {"barrier_algorithm", MCA_BASE_VAR_TYPE_STRING, 0, "auto", OPAL_INFO_LVL_5,
     algorithm_help[NICSIM_COLL_BARRIER],
     &NICOLL_C->barrier_algorithm_name, {NICOLL_VALUE_ALGORITHM, .table = NICSIM_COLL_BARRIER},
     &NICOLL_C->barrier_algorithm},
    {"packet_size", MCA_BASE_VAR_TYPE_STRING, 0, "auto", OPAL_INFO_LVL_5,
     "Payload bytes per engine packet, 1..67108864, written as in tuning files (64k, 4M: k, M "
     "and G are 2^10, 2^20, 2^30), or auto (the tuning table's, else 64k; 4M on communicators "
     "of two ranks, where no rank forwards). Must be the same on every rank: nicoll declines a "
     "communicator whose ranks differ.",
     &NICOLL_C->packet_size_name,
     {NICOLL_VALUE_SIZE, .min = 1, .max = NICOLL_TUNING_MAX_PACKET_SIZE}, &NICOLL_C->packet_size},
    {"credits", MCA_BASE_VAR_TYPE_STRING, 0, "auto", OPAL_INFO_LVL_5,
     "Flow-control window: packets a rank may send a peer before the peer returns credits "
     "(over shared memory: the packets a ring holds unconsumed), 1..1024, or auto (the tuning "
     "table's; else 8, fewer on communicators of more than 33 ranks so that each keeps about 256 "
     "receive buffers). Must be the same on every rank: nicoll declines a communicator whose "
     "ranks differ.",
     &NICOLL_C->credits_name, {NICOLL_VALUE_INTEGER, .min = 1, .max = NICSIM_CREDITS_MAX},
     &NICOLL_C->credits},
    {"transport", MCA_BASE_VAR_TYPE_STRING, 0, "auto", OPAL_INFO_LVL_5,
     "What carries the engine's packets: auto (rings in shared memory between the ranks of a "
     "node, UCX active messages between nodes), shm (shared memory inside a node, the PML "
     "between nodes), ucx (UCX to every peer) or pml (Open MPI's point-to-point layer to every "
     "peer). Where shared memory or UCX cannot be used on every rank, the PML takes their "
     "peers. Must be the same on every rank: nicoll declines a communicator whose ranks "
     "differ.",
     &NICOLL_C->transport_name, {NICOLL_VALUE_NAME, .names = nicoll_transport_names},
     &NICOLL_C->transport},
    {"progress", MCA_BASE_VAR_TYPE_STRING, 0, "auto", OPAL_INFO_LVL_5,
     "Who moves the packets of nonblocking collectives: caller (the process's MPI calls only), "
     "thread (also a progress thread of the process, which forwards packets and completes the "
     "collectives' communication while the caller computes; it sleeps when none is in flight, "
     "and leaves communicators with a peer reached through the PML to the caller) or auto "
     "(thread where the machine has more cores than the job has processes on it, whatever node "
     "Open MPI places them on, else caller). "
     "Each process may choose its own.",
     &NICOLL_C->progress_name, {NICOLL_VALUE_NAME, .names = progress_names}, &NICOLL_C->progress},
    {"progress_priority", MCA_BASE_VAR_TYPE_STRING, 0, "auto", OPAL_INFO_LVL_5,
     "How the kernel schedules the progress thread: normal (as the process's other threads: "
     "on a core it shares with its process, woken by a packet, it waits for the computation's "
     "time slice to end), realtime (SCHED_FIFO at priority 1, the lowest: woken, it takes the "
     "core at once, as a NIC's interrupt would, and sleeps again soon after nothing moves; needs "
     "CAP_SYS_NICE or an RLIMIT_RTPRIO of 1 or more, else one line and normal) or auto "
     "(realtime where the thread shares its process's core and the process may raise it, else "
     "normal). Each process may choose its own.",
     &NICOLL_C->progress_priority_name, {NICOLL_VALUE_NAME, .names = priority_names},
     &NICOLL_C->progress_priority},
    {"shm_limit", MCA_BASE_VAR_TYPE_STRING, 0, "auto", OPAL_INFO_LVL_5,
     "MiB of shared memory that nicoll's segments (one per communicator and node: its rings, "
     "and staging areas allocated as they are used) may hold on a node, 1..1048576, or auto "
     "(an eighth of the node's memory). Each process keeps its share, the limit divided by the "
     "job's processes on the machine: a segment's rings count against each of its ranks divided "
     "by their number, a staging area against its sender as it grows. A staging area stops "
     "growing once half its sender's share is used (payloads that do not fit then read in "
     "place); a communicator whose rings would take a rank over its share gets no shared "
     "memory (the peers of its node reached as where shared memory cannot be used). Each "
     "process may choose its own: the ranks agree on the outcome.",
     &NICOLL_C->shm_limit_name, {NICOLL_VALUE_INTEGER, .min = 1, .max = 1l << 20},
     &NICOLL_C->shm_limit},
    {"tuning_file", MCA_BASE_VAR_TYPE_STRING, 0, "", OPAL_INFO_LVL_4,
     "Tuning file (man nicoll-tuning(5); nicoll-tune validate FILE checks one): per collective, "
     "communicator size and message size, the algorithm and its parameters. Empty: the embedded "
     "default table. The MCA variables above override it where they are not auto; a file with "
     "an error gets one warning and the embedded default is used.",
     &NICOLL_C->tuning_file, {NICOLL_VALUE_NONE}, NULL},
    {"fault", MCA_BASE_VAR_TYPE_STRING, 0, "", OPAL_INFO_LVL_9, fault_help,
     &NICOLL_C->fault, {NICOLL_VALUE_NONE}, NULL},
};

#define NICOLL_COUNT(array) (sizeof(array) / sizeof((array)[0]))

/* "a, b, c" from an engine algorithm table. */
static void algorithm_names(nicsim_collective_t coll, char *out, size_t size)
{
    out[0] = '\0';
    for (int i = 0; i < nicsim_algorithm_count(coll); ++i) {
        size_t used = strlen(out);
        snprintf(out + used, size - used, "%s%s", i ? ", " : "", nicsim_algorithm_name(coll, i));
    }
}

/* Open MPI reads an integer variable without a check ("abc" is 0, "2x" 2); where mpirun set
 * it (--mca or -x: the environment), a value that is not an integer gets one line and the
 * default. */
static void check_integer(const nicoll_param_t *p)
{
    char var[64];
    snprintf(var, sizeof(var), "OMPI_MCA_coll_nicoll_%s", p->name);
    const char *value = getenv(var);
    if (NULL == value) {
        return;
    }
    char *end = NULL;
    (void) strtol(value, &end, 0);
    if ('\0' != value[0] && '\0' == *end) {
        return;
    }
    opal_output(0, "nicoll: coll_nicoll_%s=%s: not an integer; using %d", p->name, value,
                p->int_default);
    *(int *) p->storage = p->int_default;
}

/* Parses a string variable into *parsed; bad values get one line naming the variable and the
 * valid ones, and auto is used: the job goes on, with correct results. */
static void parse(const nicoll_param_t *p)
{
    const nicoll_choice_t *c = &p->choice;
    const char *value = *(char **) p->storage;
    long v = NICOLL_AUTO;
    bool ok = true;
    char valid[256] = "";

    if (NULL != value && 0 != strcmp(value, "auto")) {
        switch (c->kind) {
        case NICOLL_VALUE_ALGORITHM:
            v = nicsim_algorithm_find(c->table, value);
            ok = v >= 0;
            algorithm_names(c->table, valid, sizeof(valid));
            break;
        case NICOLL_VALUE_NAME:
            ok = false;
            for (int i = 0; NULL != c->names[i]; ++i) {
                size_t used = strlen(valid);
                snprintf(valid + used, sizeof(valid) - used, "%s%s", i ? ", " : "", c->names[i]);
                if (0 == strcmp(value, c->names[i])) {
                    v = i;
                    ok = true;
                }
            }
            break;
        case NICOLL_VALUE_INTEGER:
            ok = nicoll_tuning_parse_integer(value, c->min, c->max, &v);
            snprintf(valid, sizeof(valid), "an integer in %ld..%ld", c->min, c->max);
            break;
        case NICOLL_VALUE_SIZE: {
            unsigned long long bytes = 0;
            ok = nicoll_tuning_parse_size(value, &bytes) &&
                 bytes >= (unsigned long long) c->min && bytes <= (unsigned long long) c->max;
            v = (long) bytes;
            snprintf(valid, sizeof(valid), "%ld..%ld bytes, as 65536 or 64k (k, M, G: 2^10, 2^20, "
                     "2^30)", c->min, c->max);
            break;
        }
        case NICOLL_VALUE_NONE:
            return;
        }
        if (!ok) {
            opal_output(0, "nicoll: coll_nicoll_%s=%s: not a valid value (valid: auto, %s); "
                        "using auto", p->name, value, valid);
            v = NICOLL_AUTO;
        }
    }
    if (NICOLL_VALUE_SIZE == c->kind) {
        *(long *) p->parsed = v;
    } else {
        *(int *) p->parsed = (int) v;
    }
}

/* The steps coll_nicoll_fault can fail, indexed by nicoll_fault_site_t. */
static const struct {
    const char *name;
    const char *what;
} fault_sites[NICOLL_FAULT_SITES] = {
    [NICOLL_FAULT_TRANSPORT] = {"transport", "the PML transport's buffers"},
    [NICOLL_FAULT_SETUP] = {"setup", "the set-up exchange's buffers"},
    [NICOLL_FAULT_GROUP] = {"group", "the engine group"},
    [NICOLL_FAULT_SHM_MAP] = {"shm_map", "mapping the shared segment"},
    [NICOLL_FAULT_SHM_PROBE] = {"shm_probe", "reading a peer's memory"},
    [NICOLL_FAULT_UCX] = {"ucx", "starting UCX"},
    [NICOLL_FAULT_PACK] = {"pack", "a non-contiguous MPI_Bcast's or MPI_Allgather's packing "
                                   "buffer"},
    [NICOLL_FAULT_SEND] = {"send", "an engine packet's send"},
    [NICOLL_FAULT_FETCH] = {"fetch", "a payload's fetch over UCX or receive over the PML, just "
                                     "started"},
};

static void make_fault_help(void)
{
    int used = snprintf(fault_help, sizeof(fault_help), "For tests: SITE or SITE:N makes this "
                        "process fail the Nth pass (the first by default) through a step: ");
    for (int i = 0; i < NICOLL_FAULT_SITES; ++i) {
        used += snprintf(fault_help + used, sizeof(fault_help) - (size_t) used, "%s%s (%s)",
                         i ? ", " : "", fault_sites[i].name, fault_sites[i].what);
    }
    snprintf(fault_help + used, sizeof(fault_help) - (size_t) used, ". Every rank then takes "
             "the same path: nicoll declines the communicator, or uses the PML instead of shared "
             "memory or UCX; a failed pack fails that collective on this rank and on every rank "
             "not done with it yet; a failed send or fetch does so for every collective on the "
             "communicator from then on. Empty, or any other value (with one line): no fault.");
}

/* coll_nicoll_fault is SITE or SITE:N, N from 1; anything else gets one line and no fault, so a
 * test that misspells it does not pass without its fault. */
static void parse_fault(void)
{
    const char *spec = NICOLL_C->fault;
    NICOLL_C->fault_site = -1;
    if (NULL == spec || '\0' == spec[0]) {
        return;
    }
    const size_t n = strcspn(spec, ":");
    int site = -1;
    for (int i = 0; i < NICOLL_FAULT_SITES; ++i) {
        if (strlen(fault_sites[i].name) == n && 0 == strncmp(spec, fault_sites[i].name, n)) {
            site = i;
        }
    }
    long nth = 1;
    bool ok = site >= 0;
    if (ok && ':' == spec[n]) {
        ok = nicoll_tuning_parse_integer(spec + n + 1, 1, LONG_MAX, &nth);
    }
    if (!ok) {
        char sites[128] = "";
        for (int i = 0; i < NICOLL_FAULT_SITES; ++i) {
            size_t used = strlen(sites);
            snprintf(sites + used, sizeof(sites) - used, "%s%s", i ? ", " : "",
                     fault_sites[i].name);
        }
        opal_output(0, "nicoll: coll_nicoll_fault=%s: not a valid value (valid: empty, SITE or "
                    "SITE:N with N from 1, SITE one of %s); no fault", spec, sites);
        return;
    }
    NICOLL_C->fault_site = site;
    NICOLL_C->fault_nth = (unsigned long) nth;
}

/* The MPI_T performance variables, read as coll_nicoll_<name> (MPI_T_pvar_get_index). */
static void register_pvar(const mca_base_component_t *c, const char *name, const char *help,
                          unsigned long long *storage)
{
    (void) mca_base_component_pvar_register(c, name, help, OPAL_INFO_LVL_4,
                                            MCA_BASE_PVAR_CLASS_COUNTER,
                                            MCA_BASE_VAR_TYPE_UNSIGNED_LONG_LONG, NULL,
                                            MPI_T_BIND_NO_OBJECT,
                                            MCA_BASE_PVAR_FLAG_READONLY |
                                                MCA_BASE_PVAR_FLAG_CONTINUOUS,
                                            NULL, NULL, NULL, storage);
}

static void register_pvars(const mca_base_component_t *c)
{
    nicoll_stats_t *s = &NICOLL_C->stats;
    for (int i = 0; i < NICOLL_COLLS; ++i) {
        const char *coll = nicoll_coll_names[i];
        char name[64], help[160];
        snprintf(name, sizeof(name), "%s_calls", coll);
        snprintf(help, sizeof(help), "MPI_%s calls this process completed through the engine",
                 coll);
        register_pvar(c, name, help, &s->coll[i].calls);
        snprintf(name, sizeof(name), "%s_bytes", coll);
        snprintf(help, sizeof(help),
                 "bytes of MPI_%s this process completed: the message, or the gathered result",
                 coll);
        register_pvar(c, name, help, &s->coll[i].bytes);
        snprintf(name, sizeof(name), "%s_fallbacks", coll);
        snprintf(help, sizeof(help), "MPI_%s calls handed to the previous component", coll);
        register_pvar(c, name, help, &s->coll[i].fallbacks);
    }
    register_pvar(c, "packets_sent", "engine packets this process handed to the transport",
                  &s->packets_sent);
    register_pvar(c, "packets_received", "engine packets this process took from the transport",
                  &s->packets_received);
    register_pvar(c, "packets_forwarded",
                  "broadcast packets this process passed on to its children as they arrived",
                  &s->packets_forwarded);
    register_pvar(c, "credit_stalls",
                  "engine packets that waited for a flow-control credit (over shared memory: "
                  "times packets waited for a free ring slot)",
                  &s->credit_stalls);
    register_pvar(c, "offloaded",
                  "nonblocking collectives whose communication was over with no MPI call of this "
                  "process's after their start (coll_nicoll_progress thread): the progress thread "
                  "did it, or it was over once posted",
                  &s->offloaded);
    register_pvar(c, "streamed",
                  "payloads this process staged in shared memory with streaming stores, which it "
                  "takes while cached ones cost over 4 times as much (cores far apart)",
                  &s->streamed);
    register_pvar(c, "read_in_place",
                  "payloads this process read from a peer's memory over shared memory "
                  "(process_vm_readv), rather than from the peer's staging area",
                  &s->read_in_place);
    register_pvar(c, "in_place_reads",
                  "the reads (process_vm_readv) that took coll_nicoll_read_in_place's payloads: "
                  "fewer where a message's packets were read together",
                  &s->in_place_reads);
    /* coll_nicoll_<collective>_<algorithm>_calls, e.g. coll_nicoll_bcast_chain_calls */
    static const char *const tables[3] = {"barrier", "bcast", "allgather"};
    for (int t = 0; t < 3; ++t) {
        for (int a = 0; a < nicsim_algorithm_count(t) && a < NICOLL_MAX_ALGORITHMS; ++a) {
            char name[64], help[160];
            snprintf(name, sizeof(name), "%s_%s_calls", tables[t], nicsim_algorithm_name(t, a));
            snprintf(help, sizeof(help),
                     "MPI_%s and its nonblocking form: calls this process posted with %s (the "
                     "tuning decision)", tables[t], nicsim_algorithm_name(t, a));
            register_pvar(c, name, help, &s->algorithm[t][a]);
        }
    }
}

static int nicoll_register(void)
{
    const mca_base_component_t *c = &mca_coll_nicoll_component.super.collm_version;
    static const struct {
        nicsim_collective_t coll;
        const char *what;
        const char *auto_choice;
    } tables[3] = {
        {NICSIM_COLL_BCAST, "MPI_Bcast's tree", "kbinomial with the best k"},
        {NICSIM_COLL_ALLGATHER, "MPI_Allgather's algorithm",
         "rd while the result fits in one packet, else ab"},
        {NICSIM_COLL_BARRIER, "MPI_Barrier's algorithm", "dissemination"},
    };
    for (int i = 0; i < 3; ++i) {
        char names[256];
        algorithm_names(tables[i].coll, names, sizeof(names));
        snprintf(algorithm_help[tables[i].coll], sizeof(algorithm_help[0]),
                 "%s, one of: auto (the tuning table's rule, else %s), %s (see nicsim algorithms).",
                 tables[i].what, tables[i].auto_choice, names);
    }
    make_fault_help();
    for (size_t i = 0; i < NICOLL_COUNT(nicoll_params); ++i) {
        const nicoll_param_t *p = &nicoll_params[i];
        if (MCA_BASE_VAR_TYPE_STRING == p->type) {
            *(const char **) p->storage = p->string_default;
        } else {
            *(int *) p->storage = p->int_default;
        }
        /* The priority may also be written through MPI_T between communicator creations (a
         * communicator made while it is negative is left to the other components, as
         * nicoll-bench --paired makes one); every other variable is read at MPI_Init. */
        const mca_base_var_flag_t flags =
            &NICOLL_C->priority == p->storage ? MCA_BASE_VAR_FLAG_SETTABLE : 0;
        (void) mca_base_component_var_register(c, p->name, p->help, p->type, NULL, 0, flags,
                                               p->level, MCA_BASE_VAR_SCOPE_ALL, p->storage);
        if (NICOLL_VALUE_NONE != p->choice.kind) {
            parse(p);
        } else if (MCA_BASE_VAR_TYPE_INT == p->type) {
            check_integer(p);
        }
    }
    register_pvars(c);
    NICOLL_C->bcast_kbinomial = nicsim_algorithm_find(NICSIM_COLL_BCAST, "kbinomial");
    NICOLL_C->allgather_ab = nicsim_algorithm_find(NICSIM_COLL_ALLGATHER, "ab");

    if (NICOLL_C->verbose < 0) {
        opal_output(0, "nicoll: coll_nicoll_verbose=%d: must be >= 0; using 0", NICOLL_C->verbose);
        NICOLL_C->verbose = 0;
    }
    if (NICOLL_C->stats_level < 0 || NICOLL_C->stats_level > 2) {
        opal_output(0, "nicoll: coll_nicoll_stats=%d: must be 0, 1 or 2; using 0",
                    NICOLL_C->stats_level);
        NICOLL_C->stats_level = 0;
    }
    parse_fault();
    return OMPI_SUCCESS;
}

size_t nicoll_packet_size(int comm_size)
{
    if (NICOLL_AUTO != NICOLL_C->packet_size) {
        return (size_t) NICOLL_C->packet_size;
    }
    size_t tuned;
    int credits;
    nicoll_decide_transport(comm_size, &tuned, &credits);
    if (0 != tuned) {
        return tuned;
    }
    return nicoll_tuning_auto_packet_size(comm_size);
}

int nicoll_credits(int comm_size)
{
    if (NICOLL_AUTO != NICOLL_C->credits) {
        return NICOLL_C->credits;
    }
    size_t packet_size;
    int tuned;
    nicoll_decide_transport(comm_size, &packet_size, &tuned);
    if (0 != tuned) {
        return tuned;
    }
    int credits = NICOLL_AUTO_RECV_SLOTS / (comm_size > 1 ? comm_size - 1 : 1);
    return credits < 1 ? 1 : credits > NICOLL_AUTO_CREDITS ? NICOLL_AUTO_CREDITS : credits;
}

bool nicoll_fault_at(nicoll_fault_site_t site)
{
    static unsigned long passes; /* through the fault's site so far */
    if (++passes != NICOLL_C->fault_nth) {
        return false;
    }
    opal_output(0, "nicoll: coll_nicoll_fault=%s: failing step %s (pass %lu) on this process",
                NICOLL_C->fault, fault_sites[site].name, NICOLL_C->fault_nth);
    return true;
}

static int nicoll_open(void)
{
    NICOLL_C->output = opal_output_open(NULL);
    opal_output_set_verbosity(NICOLL_C->output, NICOLL_C->verbose);
    nicoll_progress_count_in();
    return OMPI_SUCCESS;
}

/* coll_nicoll_stats: one line per collective, blocking and nonblocking forms apart. */
static void print_stats(void)
{
    const nicoll_stats_t *s = &NICOLL_C->stats;
    const unsigned rank = OMPI_PROC_MY_NAME->vpid;
    if (0 == NICOLL_C->stats_level || (1 == NICOLL_C->stats_level && 0 != rank)) {
        return;
    }
    for (int i = 0; i < NICOLL_COLLS; ++i) {
        opal_output(0, "nicoll: stats rank %u %s: calls %llu bytes %llu fallbacks %llu", rank,
                    nicoll_coll_names[i], s->coll[i].calls, s->coll[i].bytes,
                    s->coll[i].fallbacks);
    }
    opal_output(0, "nicoll: stats rank %u packets: sent %llu received %llu forwarded %llu "
                "credit stalls %llu; offloaded collectives %llu; streamed payloads %llu; "
                "payloads read in place %llu in %llu reads", rank,
                s->packets_sent, s->packets_received, s->packets_forwarded, s->credit_stalls,
                s->offloaded, s->streamed, s->read_in_place, s->in_place_reads);
    for (int t = 0; t < 3; ++t) {
        char line[256] = "";
        for (int a = 0, used = 0; a < nicsim_algorithm_count(t) && a < NICOLL_MAX_ALGORITHMS; ++a) {
            used += snprintf(line + used, sizeof(line) - used, " %s %llu",
                             nicsim_algorithm_name(t, a), s->algorithm[t][a]);
        }
        opal_output(0, "nicoll: stats rank %u %s algorithms:%s", rank,
                    NICSIM_COLL_BARRIER == t ? "barrier" : NICSIM_COLL_BCAST == t ? "bcast"
                                                                                  : "allgather",
                    line);
    }
}

static int nicoll_close(void)
{
    nicoll_progress_close();
    print_stats();
    nicoll_tuning_close();
    nicoll_transport_close();
    nicoll_ucx_close();
    if (NICOLL_C->output >= 0) {
        opal_output_close(NICOLL_C->output);
        NICOLL_C->output = -1;
    }
    return OMPI_SUCCESS;
}

static int nicoll_init_query(bool enable_progress_threads, bool enable_mpi_threads)
{
    (void) enable_progress_threads;
    (void) enable_mpi_threads;
    nicoll_tuning_open();
    nicoll_progress_open();
    return OMPI_SUCCESS;
}
