"""Kernel tuning: `clalign tune` (cli), the search (search), the kernel families (families) and their inputs."""
