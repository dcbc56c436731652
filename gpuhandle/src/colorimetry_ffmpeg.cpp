// colorimetry_ffmpeg (placeholder until written)
