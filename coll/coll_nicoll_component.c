/*
 * Component registration: the MCA variables (one table), the MPI_T counters (one table), and
 * the open/close/query hooks Open MPI calls.
 */
#include "coll_nicoll.h"

#include <stdio.h>
#include <string.h>

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
    .output = -1,
};

/* Every MCA variable of the component, declared once: name, type, default, level, help and
 * where its value lives. `help` NULL means the help is built at registration (see below). */
typedef struct nicoll_param {
    const char *name;
    mca_base_var_type_t type;
    int int_default;
    const char *string_default;
    mca_base_var_info_lvl_t level;
    const char *help;
    void *storage;
} nicoll_param_t;

static char barrier_algorithm_help[512];

static const nicoll_param_t nicoll_params[] = {
    {"priority", MCA_BASE_VAR_TYPE_INT, 40, NULL, OPAL_INFO_LVL_6,
     "Priority of the nicoll coll component; the highest-priority component that provides a "
     "collective runs it (tuned is 30, basic 10). A negative value disables nicoll.",
     &mca_coll_nicoll_component.priority},
    {"verbose", MCA_BASE_VAR_TYPE_INT, 0, NULL, OPAL_INFO_LVL_9,
     "Verbosity of nicoll's output: 0 errors only, 10 why each communicator is taken or "
     "declined, 20 every collective.",
     &mca_coll_nicoll_component.verbose},
    {"barrier_algorithm", MCA_BASE_VAR_TYPE_STRING, 0, "dissemination", OPAL_INFO_LVL_5,
     barrier_algorithm_help, &mca_coll_nicoll_component.barrier_algorithm_name},
};

/* The MPI_T performance variables, read as coll_nicoll_<name> (MPI_T_pvar_get_index). */
typedef struct nicoll_stat {
    const char *name;
    const char *help;
    unsigned long long *storage;
} nicoll_stat_t;

static const nicoll_stat_t nicoll_stats[] = {
    {"barriers", "MPI_Barrier calls this process completed through the nicsim engine",
     &mca_coll_nicoll_component.stats.barriers},
    {"packets_sent", "engine packets this process handed to the PML",
     &mca_coll_nicoll_component.stats.packets_sent},
    {"packets_received", "engine packets this process took from the PML",
     &mca_coll_nicoll_component.stats.packets_received},
};

#define NICOLL_COUNT(array) (sizeof(array) / sizeof((array)[0]))

/* "a, b, c" from the engine's barrier table. */
static void barrier_algorithm_names(char *out, size_t size)
{
    out[0] = '\0';
    for (int i = 0; i < nicsim_algorithm_count(NICSIM_COLL_BARRIER); ++i) {
        size_t used = strlen(out);
        snprintf(out + used, size - used, "%s%s", i ? ", " : "",
                 nicsim_algorithm_name(NICSIM_COLL_BARRIER, i));
    }
}

static int nicoll_register(void)
{
    const mca_base_component_t *c = &mca_coll_nicoll_component.super.collm_version;
    char names[256];

    barrier_algorithm_names(names, sizeof(names));
    snprintf(barrier_algorithm_help, sizeof(barrier_algorithm_help),
             "Algorithm of MPI_Barrier, one of: %s (see nicsim algorithms).", names);

    for (size_t i = 0; i < NICOLL_COUNT(nicoll_params); ++i) {
        const nicoll_param_t *p = &nicoll_params[i];
        if (MCA_BASE_VAR_TYPE_STRING == p->type) {
            *(const char **) p->storage = p->string_default;
        } else {
            *(int *) p->storage = p->int_default;
        }
        (void) mca_base_component_var_register(c, p->name, p->help, p->type, NULL, 0,
                                               0, p->level,
                                               MCA_BASE_VAR_SCOPE_ALL, p->storage);
    }

    for (size_t i = 0; i < NICOLL_COUNT(nicoll_stats); ++i) {
        const nicoll_stat_t *s = &nicoll_stats[i];
        (void) mca_base_component_pvar_register(c, s->name, s->help, OPAL_INFO_LVL_4,
                                                MCA_BASE_PVAR_CLASS_COUNTER,
                                                MCA_BASE_VAR_TYPE_UNSIGNED_LONG_LONG, NULL,
                                                MPI_T_BIND_NO_OBJECT,
                                                MCA_BASE_PVAR_FLAG_READONLY |
                                                    MCA_BASE_PVAR_FLAG_CONTINUOUS,
                                                NULL, NULL, NULL, s->storage);
    }

    /* Bad values get one line naming the variable and a safe choice; the job goes on. */
    const char *name = mca_coll_nicoll_component.barrier_algorithm_name;
    mca_coll_nicoll_component.barrier_algorithm = nicsim_algorithm_find(NICSIM_COLL_BARRIER, name);
    if (mca_coll_nicoll_component.barrier_algorithm < 0) {
        opal_output(0, "nicoll: coll_nicoll_barrier_algorithm=%s: unknown algorithm (known: %s); "
                    "using %s", name ? name : "", names,
                    nicsim_algorithm_name(NICSIM_COLL_BARRIER, 0));
        mca_coll_nicoll_component.barrier_algorithm = 0;
    }
    if (mca_coll_nicoll_component.verbose < 0) {
        opal_output(0, "nicoll: coll_nicoll_verbose=%d: must be >= 0; using 0",
                    mca_coll_nicoll_component.verbose);
        mca_coll_nicoll_component.verbose = 0;
    }
    return OMPI_SUCCESS;
}

static int nicoll_open(void)
{
    mca_coll_nicoll_component.output = opal_output_open(NULL);
    opal_output_set_verbosity(mca_coll_nicoll_component.output,
                              mca_coll_nicoll_component.verbose);
    return OMPI_SUCCESS;
}

static int nicoll_close(void)
{
    if (mca_coll_nicoll_component.output >= 0) {
        opal_output_close(mca_coll_nicoll_component.output);
        mca_coll_nicoll_component.output = -1;
    }
    return OMPI_SUCCESS;
}

static int nicoll_init_query(bool enable_progress_threads, bool enable_mpi_threads)
{
    (void) enable_progress_threads;
    (void) enable_mpi_threads;
    return OMPI_SUCCESS;
}
