"""Token ids and rates shared by every Chatterbox variant (contract §2)."""

SAMPLE_RATE = 24000
TOKENS_PER_SECOND = 25
SAMPLES_PER_TOKEN = SAMPLE_RATE // TOKENS_PER_SECOND  # 960
SPEECH_VOCAB = 6561  # ids 0..6560 are audio codes
START_SPEECH = 6561
STOP_SPEECH = 6562
SILENCE_TOKEN = 4299
EXAGGERATION_TOKEN = 6563
LOGITS_VOCAB = STOP_SPEECH + 1  # Turbo's LM head; when a graph does not declare its width, STOP is the last id used
TEXT_START = 255
TEXT_STOP = 0
TURBO_TAIL_SILENCE = 3  # Turbo appends three silence tokens before decoding

VARIANTS = ("turbo", "original", "multilingual")
