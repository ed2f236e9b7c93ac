#!/bin/sh
# Open MPI's rsh agent for emulated nodes (--mca plm_rsh_agent, test/lib.sh's mpirun_nodes):
# instead of logging in to HOST, runs Open MPI's daemon command on this machine in a UTS
# namespace of its own whose host name is HOST, so that Open MPI takes each host of the hostfile
# for a node of its own. The command is a shell command line, as ssh hands it to the remote
# shell (with mpirun called by its full path it starts with PATH=... assignments). Needs
# unshare(CLONE_NEWUTS): root, or a user namespace.
host=$1
shift
exec unshare --uts sh -c 'hostname "$1" && eval "$2"' sh "$host" "$*"
