"""Generating speech tokens: the decode loop, language-model runners (KV chaining), sampler, stop guards, batches."""
