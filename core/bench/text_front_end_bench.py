"""``python -m core bench-text``: what the text front end costs per sentence beside the language model (issue 50).

For one everyday sentence in each language the bundle reads (the Multilingual model's 23; English alone for the
others) the same run times, interleaved (front end, model, model, front end, …, the order flipping per language and
per round):

- the front end: ``TextTokenizer.prepare`` then ``encode`` (``punc_norm``, lower-case, NFKD, the language's step, the
  ``[xx]`` tag, ``tokenizer.json``), exactly what the synthesis stream runs per sentence, warm: ``calls`` single calls
  a round, median. ``steps_ms`` is ``model_text`` alone (lower-case, NFKD, the language's step and the tag).
- the language model: that sentence's ids through :meth:`~core.engine.Pipeline.generate_alone` (the decode loop a
  render runs: the text prefilled after the cached voice prefix, then one step per speech token, with the model's
  own sampling and guidance), median of ``runs``. A random-weight bundle never says STOP, so every sentence is given
  the speech tokens it would take to say: 25 a second × its length ÷ its language's speaking rate
  (:data:`CHARS_PER_SECOND`); a model that stops sooner is reported with the tokens it made.

The one-time loads a language's first sentence pays (pykakasi's dictionaries, the Cangjie table, the word segmenter,
the optional Hebrew and Russian steps) are timed apart, as ``first_use_ms``: the first call per language in a fresh
process, before the model loads. ``share_percent`` is front end ÷ language model; the issue's bound is 2 %. It is a
report: nothing fails on a share.
"""

from __future__ import annotations

import os
import platform
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import onnxruntime as ort

from core.engine import (
    Pipeline,
    Row,
    RuntimeOptions,
    SynthesisOptions,
    language_label,
    language_support,
    open_reader,
)

SENTENCES = {
    "ar": "في الصباح الباكر ذهبت جدتي إلى السوق لتشتري الخبز الطازج والخضار من البائع العجوز في زاوية الشارع.",
    "da": (
        "Tidligt om morgenen gik min bedstemor på markedet for at købe friskt brød og grøntsager hos den gamle købmand."
    ),
    "de": "Am frühen Morgen ging meine Großmutter zum Markt, um frisches Brot und Gemüse beim alten Händler zu kaufen.",
    "el": "Νωρίς το πρωί η γιαγιά μου πήγε στην αγορά για να αγοράσει φρέσκο ψωμί και λαχανικά από τον γέρο μανάβη.",
    "en": (
        "Early in the morning my grandmother walked to the market "
        "to buy fresh bread and vegetables from the old grocer."
    ),
    "es": (
        "Temprano por la mañana, mi abuela fue al mercado a comprar "
        "pan fresco y verduras en la tienda del viejo tendero."
    ),
    "fi": "Varhain aamulla isoäitini käveli torille ostamaan tuoretta leipää ja vihanneksia vanhalta kauppiaalta.",
    "fr": "Tôt le matin, ma grand-mère est allée au marché acheter du pain frais et des légumes chez le vieil épicier.",
    "he": "מוקדם בבוקר הלכה סבתא שלי לשוק כדי לקנות לחם טרי וירקות אצל הירקן הזקן שבפינת הרחוב.",
    "hi": "सुबह-सुबह मेरी दादी ताज़ी रोटी और सब्ज़ियाँ खरीदने के लिए गली के कोने वाले पुराने दुकानदार के पास बाज़ार गईं।",
    "it": (
        "Di buon mattino mia nonna è andata al mercato a comprare "
        "pane fresco e verdura dal vecchio droghiere all'angolo."
    ),
    "ja": (
        "今朝早く、祖母は駅前のスーパーマーケットに行って、"
        "焼きたてのパンと新鮮な野菜を買ってから、コーヒーを飲みながら新聞を読みました。"
    ),
    "ko": "이른 아침에 우리 할머니께서는 시장에 가셔서 오래된 가게 주인에게 갓 구운 빵과 신선한 채소를 사 오셨습니다.",
    "ms": (
        "Awal pagi tadi, nenek saya pergi ke pasar untuk membeli roti segar dan sayur-sayuran daripada peniaga tua itu."
    ),
    "nl": (
        "Vroeg in de ochtend ging mijn grootmoeder naar de markt om "
        "vers brood en groenten bij de oude kruidenier te kopen."
    ),
    "no": (
        "Tidlig om morgenen gikk bestemoren min til torget for å "
        "kjøpe ferskt brød og grønnsaker hos den gamle kjøpmannen."
    ),
    "pl": (
        "Wczesnym rankiem moja babcia poszła na targ, żeby kupić świeży chleb i warzywa u starego sklepikarza na rogu."
    ),
    "pt": "De manhã cedo, a minha avó foi ao mercado comprar pão fresco e legumes ao velho merceeiro da esquina.",
    "ru": "Рано утром моя бабушка пошла на рынок, чтобы купить свежий хлеб и овощи у старого продавца на углу улицы.",
    "sv": (
        "Tidigt på morgonen gick min mormor till torget för att köpa färskt bröd och grönsaker hos den gamle handlaren."
    ),
    "sw": (
        "Asubuhi na mapema bibi yangu alikwenda sokoni kununua mkate mpya na mboga kutoka kwa muuzaji mzee wa pembeni."
    ),
    "tr": (
        "Sabah erkenden büyükannem, köşedeki yaşlı bakkaldan taze "
        "ekmek ve sebze almak için pazara gitti ve öğlen döndü."
    ),
    "zh": (
        "今天早上，我的奶奶去市场买了新鲜的面包和蔬菜，"
        "然后在公园里和老朋友们一起喝茶聊天，一直到中午十二点才慢慢地走回家。"
    ),
}
"""One everyday sentence per language (60–120 characters): what a narrated book's sentence looks like."""
CHARS_PER_SECOND = {"zh": 5.0, "ja": 7.5, "ko": 7.0}
"""Written characters spoken per second, punctuation and spaces included: about five Han syllables, seven or eight
kana/kanji, seven Hangul blocks; :data:`DEFAULT_CHARS_PER_SECOND` for alphabets and abjads."""
DEFAULT_CHARS_PER_SECOND = 14.0
SPEECH_TOKENS_PER_SECOND = 25
LIMIT_PERCENT = 2.0
"""Issue 50: the front end stays under 2 % of the language model's time for the same sentence."""
SEED = 7
LOADS = {
    "zh": "the Cangjie table, the word segmenter when its model is there",
    "ja": "pykakasi and its dictionaries",
    "he": "the diacritics step when it is installed",
    "ru": "the stress step when it is installed",
}
"""What a language's first sentence loads (kept for the process)."""

Say = Callable[[str], None]


class BenchTextError(ValueError):
    """The command cannot run as asked (a language without a sentence or support, fewer than one run or call)."""


def expected_seconds(language: str, sentence: str) -> float:
    return len(sentence) / CHARS_PER_SECOND.get(language, DEFAULT_CHARS_PER_SECOND)


def bench_text(
    bundle: Path | str,
    runtime: RuntimeOptions | None = None,
    runs: int = 3,
    calls: int = 50,
    languages: list[str] | None = None,
    models_dir: Path | None = None,
    say: Say | None = None,
) -> dict[str, Any]:
    """Time the front end and the language model per language (see the module); returns the report."""
    say = say or (lambda line: print(line, file=sys.stderr, flush=True))
    if runs < 1 or calls < 1:
        raise BenchTextError("--runs and --calls must be at least 1")
    reader = open_reader(bundle, models_dir)
    multilingual = reader.variant == "multilingual"
    available = [code for code in SENTENCES if code in reader.languages] if multilingual else ["en"]
    codes = available if languages is None else [code for code in languages if code in available]
    unknown = sorted(set(languages or ()) - set(available))
    if unknown or not codes:
        raise BenchTextError(f"no sentence or no support here for: {', '.join(unknown) or 'any language'}")
    root = reader.front_end.bundle

    def front_end(code: str) -> Any:
        prepared, _ = reader.prepare(SENTENCES[code])
        return reader.encode(prepared, code if multilingual else None)

    # First use, in a fresh process before anything else runs: the process's first sentence (tokenizer and regular
    # expressions), then each language's first (its one-time loads).
    started = time.perf_counter()
    reader.encode(reader.prepare("Hello there.")[0], "en" if multilingual else None)
    first_call_ms = (time.perf_counter() - started) * 1000
    first_use: dict[str, float] = {}
    for code in codes:
        started = time.perf_counter()
        front_end(code)
        first_use[code] = (time.perf_counter() - started) * 1000
    notices = [{"code": n.code, **n.data} for n in reader.take_notices()]

    say(f"loading {bundle} …")
    started = time.perf_counter()
    pipe = Pipeline.from_bundle(bundle, runtime or RuntimeOptions())
    load_s = time.perf_counter() - started
    lookup = pipe.condition(None)
    ids = {code: front_end(code) for code in codes}
    tokens = {code: max(1, round(SPEECH_TOKENS_PER_SECOND * expected_seconds(code, SENTENCES[code]))) for code in codes}
    params = {code: pipe.resolve(SynthesisOptions(language=code if multilingual else None)) for code in codes}

    def language_model(code: str) -> tuple[float, int, str]:
        row = Row(ids[code], params[code], SEED, tokens[code])
        started = time.perf_counter()
        generated = pipe.generate_alone(lookup.conditioning, lookup.key, row)
        return (time.perf_counter() - started) * 1000, len(generated.tokens), generated.stop_reason

    # The voice prefix is built and cached by the first sentence; sessions warm up.
    pipe.generate_alone(lookup.conditioning, lookup.key, Row(ids[codes[0]], params[codes[0]], SEED, 4))
    fe_ms: dict[str, list[float]] = {code: [] for code in codes}
    steps_ms: dict[str, list[float]] = {code: [] for code in codes}
    lm_ms: dict[str, list[float]] = {code: [] for code in codes}
    made: dict[str, tuple[int, str]] = {}

    def time_front_end(code: str) -> None:
        prepared, _ = reader.prepare(SENTENCES[code])
        language = code if multilingual else None
        for _ in range(calls):
            started = time.perf_counter()
            front_end(code)
            fe_ms[code].append((time.perf_counter() - started) * 1000)
            started = time.perf_counter()
            reader.model_text(prepared, language)
            steps_ms[code].append((time.perf_counter() - started) * 1000)

    def time_language_model(code: str) -> None:
        ms, count, stop = language_model(code)
        lm_ms[code].append(ms)
        made[code] = (count, stop)

    for round_ in range(runs):
        order = codes if round_ % 2 == 0 else codes[::-1]
        for i, code in enumerate(order):
            sides = (time_front_end, time_language_model)
            for side in sides if (round_ + i) % 2 == 0 else sides[::-1]:
                side(code)
        say(f"round {round_ + 1}/{runs} done")

    rows: list[dict[str, Any]] = []
    for code in codes:
        sentence = SENTENCES[code]
        support = language_support(code, root, models_dir)
        fe, lm = statistics.median(fe_ms[code]), statistics.median(lm_ms[code])
        rows.append(
            {
                "language": code,
                "name": language_label(code),
                "sentence": sentence,
                "chars": len(sentence),
                "seconds": round(expected_seconds(code, sentence), 2),
                "text_tokens": int(ids[code].shape[1]),
                "speech_tokens_asked": tokens[code],
                "speech_tokens": made[code][0],
                "stop_reason": made[code][1],
                "front_end_ms": round(fe, 4),
                "steps_ms": round(statistics.median(steps_ms[code]), 4),
                "lm_ms": round(lm, 2),
                "lm_ms_runs": [round(ms, 1) for ms in lm_ms[code]],
                "lm_ms_per_token": round(lm / max(1, made[code][0]), 2),
                "share_percent": round(100 * fe / lm, 5) if lm > 0 else None,
                "first_use_ms": round(first_use[code], 3),
                "first_use_loads": LOADS.get(code, ""),
                "missing": [*support.required_missing, *support.optional_missing],
            }
        )
    shares = [(float(r["share_percent"]), str(r["language"])) for r in rows if r["share_percent"] is not None]
    top: tuple[float | None, str | None] = max(shares) if shares else (None, None)
    info = pipe.capabilities
    return {
        "bundle": str(bundle),
        "variant": info.variant,
        "lm_precision": info.lm_precision,
        "q4_compute": info.q4_compute,
        "cfg": bool(info.supports_cfg and any(p.cfg_weight > 0 for p in params.values())),
        "providers": dict(info.providers),
        "runs": runs,
        "calls": calls,
        "speech_tokens_per_second": SPEECH_TOKENS_PER_SECOND,
        "load_s": round(load_s, 1),
        "first_call_ms": round(first_call_ms, 3),
        "notices": notices,
        "rows": rows,
        "max_share_percent": top[0],
        "max_share_language": top[1],
        "limit_percent": LIMIT_PERCENT,
        "all_under_limit": top[0] is not None and top[0] < LIMIT_PERCENT,
        "machine": {
            "cpus": os.cpu_count(),
            "platform": platform.platform(),
            "python": platform.python_version(),
            "onnxruntime": ort.__version__,
        },
    }


def table(report: dict[str, Any]) -> str:
    """The report as the lines ``bench-text`` prints."""
    lines = [
        f"{report['variant']} ({report['bundle']}), language model {report['lm_precision']}"
        f"{' (' + report['q4_compute'] + ' compute)' if report['q4_compute'] else ''}"
        f"{', CFG' if report['cfg'] else ''}; median of {report['runs']} model runs and "
        f"{report['runs'] * report['calls']} front-end calls per language",
        f"{'language':<16} {'chars':>5} {'ids':>4} {'tokens':>6} {'front end':>10} {'steps':>9} {'LM':>10} "
        f"{'share':>9} {'first use':>10}",
    ]
    for r in report["rows"]:
        lines.append(
            f"{r['name']:<16} {r['chars']:>5} {r['text_tokens']:>4} {r['speech_tokens']:>6} "
            f"{r['front_end_ms']:>7.3f} ms {r['steps_ms']:>6.3f} ms {r['lm_ms']:>7.0f} ms "
            f"{r['share_percent']:>8.4f}% {r['first_use_ms']:>7.1f} ms"
        )
    verdict = "every language stays under" if report["all_under_limit"] else "NOT every language stays under"
    lines.append(
        f"largest share: {report['max_share_percent']}% ({report['max_share_language']}); {verdict} "
        f"{report['limit_percent']:g} % of the language model's time"
    )
    lines.append(f"first sentence of the process: {report['first_call_ms']:.1f} ms")
    for notice in report["notices"]:
        lines.append(f"note: {notice['code']} ({notice.get('language', '')})")
    return "\n".join(lines)
