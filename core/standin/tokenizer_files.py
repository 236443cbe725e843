"""``tokenizer.json`` files with the same template structure as the real ones.

- Turbo: GPT-2 byte-level BPE; ``<|endoftext|>`` is 50256, the 19 paralinguistic tags are 50257..50275 and the
  post-processor appends two ``<|endoftext|>``. The merges are trained on a short built-in corpus and the rest of
  the 50256 regular ids are unreachable fillers, so ids and vocabulary size match the real file.
- Original: character-level BPE with ``[STOP]``=0, ``[UNK]``=1, ``[SPACE]``=2, ``[START]``=255, 704 ids; the
  normalizer turns spaces into ``[SPACE]`` and the template wraps text as ``[6563, 255, …, 0, 6561, 6561]``.
- Multilingual: the same, with 2454 ids, language tags such as ``[en]`` and a block of CJK characters at ids
  2354..2453, past the 2352-row text table, so the runtime's mapping of out-of-table ids is exercised. It holds the
  real token families the language steps produce: ``[cj_a]``…``[cj_z]``, ``[cj_0]``…``[cj_9]`` and ``[cj_.]``
  (Chinese as Cangjie codes), hiragana, katakana and the combining voicing marks NFKD leaves, Hangul jamo (initial,
  medial, final), Hebrew points and the combining marks (U+0301 for Russian stress among them). Its
  ``Cangjie5_TC.json`` (:func:`cangjie_table`) is of our own making: real codes for common characters, made-up
  ones for the rest, and shared codes, so the index rule is exercised.
"""

from __future__ import annotations

import json

from tokenizers import AddedToken, Tokenizer, decoders, models, normalizers, pre_tokenizers, processors, trainers

from core.standin.spec import StandinSpec

# Tables: kept compact (one item a line would fill a screen each).
TURBO_TAGS = (
    "[angry]", "[fear]", "[surprised]", "[whispering]", "[advertisement]", "[dramatic]", "[narration]", "[crying]",
    "[happy]", "[sarcastic]", "[clear throat]", "[sigh]", "[shush]", "[cough]", "[groan]", "[sniff]", "[gasp]",
    "[chuckle]", "[laugh]",
)  # fmt: skip
LANGUAGES = (
    "ar", "da", "de", "el", "en", "es", "fi", "fr", "he", "hi", "it", "ja", "ko", "ms", "nl", "no", "pl", "pt",
    "ru", "sv", "sw", "tr", "zh",
)  # fmt: skip
EOT_ID = 50256
_CORPUS = (
    "The quick brown fox jumps over the lazy dog. She sells sea shells by the sea shore. "
    "Hello there, how are you doing today? I am reading a story aloud for you, and then we will talk. "
    "It was the best of times, it was the worst of times, it was the age of wisdom. "
    'Numbers like 1, 2, 3 and 2026 appear in text; so do questions, exclamations! And quotes: "yes". '
) * 4
CANGJIE_TOKENS = tuple(f"[cj_{c}]" for c in "abcdefghijklmnopqrstuvwxyz0123456789.")
_REAL_CODES = {
    "你": "onf",
    "好": "vnd",
    "中": "l",
    "文": "yk",
    "人": "o",
    "大": "k",
    "日": "a",
    "月": "b",
    "我": "hqi",
    "是": "amyo",
    "的": "hapi",
    "一": "m",
    "不": "mf",
    "了": "nn",
    "天": "mk",
    "學": "hbnd",
    "生": "hqm",
    "書": "lga",
    "國": "wirm",
    "說": "yrcru",
    "们": "olln",
    "們": "oanr",
    "上": "ym",
    "下": "my",
}
_ASCII = [chr(c) for c in range(33, 127) if chr(c) not in "[]"]


def turbo_tokenizer() -> str:
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=600, initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False
    )
    tok.train_from_iterator([_CORPUS], trainer=trainer)
    data = json.loads(tok.to_str())
    vocab = data["model"]["vocab"]
    for i in range(len(vocab), EOT_ID):
        vocab[f"<|standin_unused_{i}|>"] = i
    tok = Tokenizer.from_str(json.dumps(data))
    tok.add_special_tokens([AddedToken("<|endoftext|>", special=True)])
    tok.add_tokens([AddedToken(tag, special=False) for tag in TURBO_TAGS])
    tok.post_processor = processors.TemplateProcessing(
        single="$A <|endoftext|> <|endoftext|>",
        pair="$A <|endoftext|> $B:1 <|endoftext|>:1",
        special_tokens=[("<|endoftext|>", EOT_ID)],
    )
    return tok.to_str()


def _char_tokenizer(spec: StandinSpec) -> Tokenizer:
    vocab = {"[STOP]": 0, "[UNK]": 1, "[SPACE]": 2}
    symbols = list(_ASCII)
    if spec.variant == "multilingual":
        symbols = [s for s in symbols if not s.isupper()]
        symbols += [chr(c) for c in range(0x300, 0x370)]  # combining marks left by NFKD
        symbols += [chr(c) for c in range(0x3B1, 0x3CA)]  # Greek
        symbols += [chr(c) for c in range(0x430, 0x450)]  # Cyrillic
        symbols += [chr(c) for c in range(0x5D0, 0x5EB)]  # Hebrew
        symbols += [chr(c) for c in range(0x621, 0x64B)]  # Arabic
        symbols += [chr(c) for c in range(0x905, 0x940)]  # Devanagari
        symbols += [chr(c) for c in range(0x1100, 0x1113)] + [chr(c) for c in range(0x1161, 0x1176)]  # Hangul jamo
        symbols += [chr(c) for c in range(0x3041, 0x3097)]  # Hiragana
        symbols += [chr(c) for c in range(0x11A8, 0x11C3)]  # Hangul jamo finals
        symbols += [chr(c) for c in range(0x30A1, 0x30FB)]  # Katakana
        symbols += [chr(c) for c in range(0x3099, 0x309D)]  # combining voicing marks (NFKD of が, ぱ)
        symbols += [chr(c) for c in range(0x5B0, 0x5C8)]  # Hebrew points
        symbols += ["\u3002", "\u3001", "\uff01", "\uff1f", "\u00bf", "\u00a1"]
    next_id = 3
    for s in symbols:
        if next_id == 255:
            next_id += 1
        vocab[s] = next_id
        next_id += 1
    vocab["[START]"] = 255
    merges = []
    if spec.variant == "multilingual":  # the Cangjie tokens, in ids the text table has
        for token in CANGJIE_TOKENS:
            vocab[token] = next_id
            next_id += 1
    for pair in ("th", "he", "in", "er", "an", "re", "on", "at", "en", "nd", "es", "or", "te", "of", "ed", "is"):
        if pair[0] in vocab and pair[1] in vocab:
            vocab[pair] = next_id
            merges.append((pair[0], pair[1]))
            next_id += 1
    cjk_start = spec.tokenizer_vocab - 100 if spec.variant == "multilingual" else spec.tokenizer_vocab
    lang_ids = {}
    if spec.variant == "multilingual":
        for i, lang in enumerate(LANGUAGES):
            lang_ids[f"[{lang}]"] = cjk_start - 60 + i
    for i in range(next_id, spec.tokenizer_vocab):
        if i >= cjk_start:
            vocab[chr(0x4E00 + i - cjk_start)] = i
        elif f"<|unused_{i}|>" not in vocab and i not in lang_ids.values():
            vocab[f"<|unused_{i}|>"] = i
    for tag, i in lang_ids.items():
        vocab[tag] = i
    tok = Tokenizer(models.BPE(vocab=vocab, merges=merges, unk_token="[UNK]"))
    tok.normalizer = normalizers.Replace(" ", "[SPACE]")
    cangjie = [AddedToken(t, normalized=True) for t in CANGJIE_TOKENS] if spec.variant == "multilingual" else []
    tok.add_tokens(
        [AddedToken("[SPACE]", normalized=True)] + [AddedToken(t, normalized=True) for t in lang_ids] + cangjie
    )
    tok.add_special_tokens(["[STOP]", "[UNK]", "[START]"])
    tok.post_processor = processors.TemplateProcessing(
        single="[EXAGGERATION] [START] $A [STOP] [SPEECH_START] [SPEECH_START]",
        special_tokens=[("[EXAGGERATION]", 6563), ("[START]", 255), ("[STOP]", 0), ("[SPEECH_START]", 6561)],
    )
    return tok


def cangjie_table() -> str:
    """A ``Cangjie5_TC.json`` of our own making, in the real file's shape (a JSON array of ``"字\tcode"`` lines):
    the characters above with their real codes, then the stand-in tokenizer's block U+4E00..U+4E63 with codes made
    up in pairs (two characters a code, so the second gets index 1), one character with two lines (the last code
    counts)."""
    lines = [f"{char}\t{code}" for char, code in _REAL_CODES.items()]
    for i in range(100):
        char = chr(0x4E00 + i)
        if char in _REAL_CODES:
            continue
        code = "".join("abcdefghijklmnopqrstuvwxy"[(i // 2 // 25**k) % 25] for k in range(2)) + "z"
        lines.append(f"{char}\t{code}")
    lines.append(f"{chr(0x4E01)}\tyyz\textra")
    return json.dumps(lines, ensure_ascii=False, indent=0)


def llama_tokenizer(spec: StandinSpec) -> str:
    return _char_tokenizer(spec).to_str()


def tokenizer_json(spec: StandinSpec) -> str:
    return turbo_tokenizer() if spec.variant == "turbo" else llama_tokenizer(spec)
