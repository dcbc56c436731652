// gl_sync (placeholder until written)
