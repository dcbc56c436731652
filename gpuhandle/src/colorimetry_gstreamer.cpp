// colorimetry_gstreamer (placeholder until written)
