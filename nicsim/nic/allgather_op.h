// placeholder: filled in by the NIC allgather work (issue 4)
