"""What is constant across requests: voice conditioning (memory + disk) and the voice-prefix KV cache."""
