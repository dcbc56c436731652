// cuda_sync (placeholder until written)
