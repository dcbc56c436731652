// glib_sync_source (placeholder until written)
