// colorimetry_vulkan (placeholder until written)
