"""One request as a stream of audio chunks, and the plan of when to run the decoder."""
