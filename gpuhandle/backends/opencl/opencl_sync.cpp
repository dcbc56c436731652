// opencl_sync (placeholder until written)
