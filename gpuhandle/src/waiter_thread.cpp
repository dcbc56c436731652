// waiter_thread (placeholder until written)
