// vulkan_sync (placeholder until written)
