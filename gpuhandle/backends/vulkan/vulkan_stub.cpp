// vulkan_stub (placeholder until written)
