// async_wait (placeholder until written)
