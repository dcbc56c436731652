// gl_stub (placeholder until written)
