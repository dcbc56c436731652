// cuda_stub (placeholder until written)
