"""FX graph mode quantization (placeholder; filled below)."""
