// opencl_stub (placeholder until written)
