#!/bin/sh
# Open MPI's rsh agent for emulated nodes (--mca plm_rsh_agent, test/lib.sh's mpirun_nodes):
# instead of logging in to HOST, runs Open MPI's daemon command on this machine in a UTS
# namespace of its own whose host name is HOST, so that Open MPI takes each host of the hostfile
# for a node of its own. Needs unshare(CLONE_NEWUTS): root, or a user namespace.
host=$1
shift
exec unshare --uts sh -c "hostname '$host' && exec $*"
