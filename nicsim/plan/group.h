// placeholder: filled in by the allgather planner work (issue 4)
