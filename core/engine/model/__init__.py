"""Loading a model: bundle files, graph signatures, sessions, the embedder and the loaded parts."""
