"""Who says each quotation of a book: a pure step from its paragraphs to a speaker and a confidence per quote.

The cues, tried in this order for each paragraph that holds speech (a paragraph is one speaker's, as novels print
dialogue, unless two quotes carry two different tags):

- **explicit**: a speech verb and a name beside the quote (``said Emma``, ``Emma said``, ``cried Mr. Weston``,
  ``Emma replied: “…”``, ``dit Marie``, ``sagte Anna``);
- **pronoun**: ``said he`` / ``she cried`` → the character of that gender named most recently (``said I`` → the
  first-person narrator, ``first_person``);
- **continuation**: the other quotes of a tagged paragraph (``“Well,” said he, “we shall see.”``), and the next
  paragraph of a speech that runs on (each paragraph opening a new quote, the previous one left open);
- **announced**: narration that ends announcing the speech that follows (``With a little reserve of manner, Emma
  continued:`` / ``… and Mrs. Hurst began again.``) names its speaker (cue ``explicit``);
- **beat**: no speech verb, but the paragraph's narration names someone (``Tom set down the cup. “I won’t go.”``);
- **implicit**: a run of untagged quotes alternates between the last two speakers (A, B, A, B); a name inside a quote
  is who is addressed, not who speaks, so the next untagged line is likely theirs. Narration breaks the run.

Every quote gets a confidence (0–1) and its cue; below :data:`UNSURE` a line is marked for review.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Collection
from dataclasses import dataclass

from core.narration.attribution.cues import FIRST_PERSON, pronouns, verb_pattern
from core.narration.attribution.names import Cast, Character, at_sentence_start, find_cast, mentions_in
from core.narration.attribution.quotes import Quote, find_quotes

SPEAKERS_WINDOW = 3
"""A conversation's participants: its last few distinct speakers."""
_SENTENCES = re.compile(r"(?<!\bMr\.)(?<!\bMrs\.)(?<!\bMs\.)(?<!\bDr\.)(?<!\bSt\.)(?<!\bM\.)(?<=[.!?;])\s+")
"""Sentence ends, not after the abbreviations that stand before names (Mrs. Bennet is one sentence's)."""
MEMORY = 200
"""How many of the last names and speakers a pronoun or a turn looks back through (a scene, not the whole book)."""
UNSURE = 0.6
"""Below this confidence a line's speaker is marked for review."""
CONFIDENCE = {
    "explicit": 0.95,
    "first_person": 0.9,
    "continuation": 0.9,
    "pronoun": 0.8,
    "beat": 0.7,
    "vocative": 0.65,
    "implicit": 0.6,
    "nearby": 0.4,
    "none": 0.0,
}


@dataclass(frozen=True)
class QuoteSpeaker:
    paragraph: int
    start: int
    end: int
    speaker: int | None
    """A character's id, or ``None`` when nobody could be named."""
    confidence: float
    cue: str


@dataclass
class Attribution:
    characters: list[Character]
    quotes: list[QuoteSpeaker]

    def speaker_name(self, quote: QuoteSpeaker) -> str | None:
        return None if quote.speaker is None else self.characters[quote.speaker].name


_ANSWER = re.compile(r"^[\s,;:.!?—–-]*was\s+(his|her)\s+(?:\w+\s+)?(?:answer|reply|rejoinder|response|retort)\b", re.I)
"""English's "was her answer" / "was his quick reply": the pronoun's gender tags the quote."""


class _Tagger:
    def __init__(self, language: str):
        verb = verb_pattern(language).pattern
        self.verbs = re.compile(verb, re.IGNORECASE)
        pronoun_words = "|".join(sorted(pronouns(language), key=len, reverse=True))
        self.pronouns = pronouns(language)
        roles = "|".join(ROLES)
        relations = "|".join(_RELATION_GENDER)
        people = "|".join(sorted(PEOPLE, key=len, reverse=True))
        who = (  # "said her father" is her father, not "her"; "the concierge called" is a person of the book
            rf"(?P<who>(?:the|his|her|our|le|la|der|die)\s+(?:{roles})\b|(?:{pronoun_words})\b(?!\s+(?:{relations})\b)"
            rf"|(?:the|that|this)\s+(?:[a-z][\w-]*\s+){{0,2}}(?:{people})\b"
            rf"|[A-ZÀ-Þ][\w’'.-]*(?:\s+(?:(?:van|von|de|der|du|la|della|di|da)\s+){{0,2}}[A-ZÀ-Þ][\w’'-]*){{0,2}})"
        )
        lead = r"^[\s,;:.!?—–-]*"
        self.after = [
            re.compile(lead + rf"(?:{verb})(?:-(?P<hyphen>{pronoun_words})\b|\s+{who})", re.IGNORECASE),
            re.compile(lead + who + r"\s+(?:\w+ly\s+)?(?:" + verb + r")\b"),
        ]
        self.before = re.compile(who + r"\s+(?:\w+ly\s+)?(?:" + verb + r")\b[^.!?“”\"«»]{0,40}[,:]\s*[—–-]?\s*$")
        self.incise = re.compile(
            rf"[,.!?…]\s+(?:{verb})(?:-t)?(?:-(?P<hyphen>{pronoun_words})\b|\s+{who})", re.IGNORECASE
        )
        self.before_inverted = re.compile(r"(?:" + verb + r")\s+" + who + r"[^.!?“”\"«»]{0,30}[,:]\s*$", re.IGNORECASE)

    def inside(self, quote: str) -> str | None:
        """French prints the tag inside the guillemets: « Je ne t’en veux pas, dit Marie. Je suis fatiguée. »"""
        if quote[:1] not in "«»":
            return None
        match = self.incise.search(quote)
        if match is None:
            return None
        return match.group("hyphen") if match.group("hyphen") else match.group("who")

    def tag(self, after: str, before: str) -> str | None:
        """The name or pronoun that tags a quote: in the narration right after it, else ending the narration before."""
        for pattern in self.after:
            match = pattern.search(after[:80])
            if match:
                return match.group("hyphen") if match.groupdict().get("hyphen") else match.group("who")
        answer = _ANSWER.match(after[:60])
        if answer:  # “Not at all,” was her answer.
            return "she" if answer.group(1).lower() == "her" else "he"
        tail = before[-90:]
        for pattern in (self.before, self.before_inverted):
            match = pattern.search(tail)
            if match:
                return match.group("who")
        return None


class _Story:
    """What the reader knows so far: who was named last (and whether as a sentence's subject), who spoke last."""

    def __init__(self, cast: Cast, first_person: Character | None):
        self.cast = cast
        self.narrator = first_person
        self.mentioned: deque[tuple[int, bool]] = deque(maxlen=MEMORY)
        self.sentences: deque[int] = deque(maxlen=MEMORY)
        """Beside each entry of :attr:`mentioned`: the number of the sentence it was named in."""
        self._sentence = 0
        self.speakers: deque[int] = deque(maxlen=MEMORY)

    def mention(self, text: str) -> None:
        for sentence in _SENTENCES.split(text):
            self._sentence += 1
            for m in mentions_in(sentence):
                character = self.cast.resolve(m)
                if character is not None:
                    self.mentioned.append((character.id, at_sentence_start(sentence, m.start)))
                    self.sentences.append(self._sentence)

    def recent(self, gender: str, exclude: frozenset[int] = frozenset()) -> int | None:
        """The character of ``gender`` a pronoun most likely means: in the last sentence that names one, the first
        it names (the subject comes before the object: "Mrs. Bennet received from her sister Phillips a note")."""
        best: int | None = None
        latest = -1
        for (cid, _subject), sentence in zip(reversed(self.mentioned), reversed(self.sentences)):
            if cid in exclude or self.cast.characters[cid].gender != gender:
                continue
            if latest < 0:
                latest = sentence
            if sentence != latest:
                break
            best = cid
        return best

    def spoke(self, cid: int | None) -> None:
        if cid is not None:
            self._sentence += 1
            self.speakers.append(cid)
            self.mentioned.append((cid, True))
            self.sentences.append(self._sentence)

    def other_speaker(self, last: int | None) -> int | None:
        for cid in reversed(self.speakers):
            if cid != last:
                return cid
        return None

    def last_mentioned(self, exclude: set[int]) -> int | None:
        """The last character named whose gender is known (a place or a thing named like a person has none)."""
        for cid, _subject in reversed(self.mentioned):
            if cid not in exclude and self.cast.characters[cid].gender is not None:
                return cid
        return None


def attribute(paragraphs: list[str], language: str = "en") -> Attribution:
    """Speakers for every quote of ``paragraphs`` (a book's, in order; a chapter's first paragraph may be marked by
    the caller passing an empty string between chapters, which breaks runs)."""
    language = (language or "en").split("-")[0].lower()
    tagger = _Tagger(language)
    quotes = find_quotes(paragraphs, lambda after, before: tagger.tag(after, before) is not None)
    by_paragraph: dict[int, list[Quote]] = {}
    for q in quotes:
        by_paragraph.setdefault(q.paragraph, []).append(q)
    narration = [_narration(p, by_paragraph.get(i, [])) for i, p in enumerate(paragraphs)]
    first_person_words = FIRST_PERSON.get(language)
    first_person = first_person_words is not None and sum(
        len(first_person_words.findall(" ".join(parts))) for parts in narration
    ) > max(5, len(paragraphs) // 20)
    cast = find_cast(paragraphs, tagger.verbs, first_person, language == "de")  # names in speech: who is addressed
    narrator = cast.by_name("I") if first_person else None
    if narrator is not None:
        _name_the_narrator(cast, narrator, quotes, narration)
    story = _Story(cast, narrator)
    out: list[QuoteSpeaker] = []
    previous_open: int | None = None
    run, tail = False, ""
    addressed: int | None = None
    for index, text in enumerate(paragraphs):
        found = by_paragraph.get(index)
        if not found:
            story.mention(text)
            run, previous_open, addressed = False, None, None
            continue
        pieces = _between(text, found)
        vocatives = {c for q in found for c in _addressed(q.text, cast)}
        tags = [
            _resolve(
                tagger.tag(pieces[i + 1], pieces[i]), story, tagger, _named(" ".join(pieces[: i + 1]), cast), vocatives
            )
            for i in range(len(found))
        ]
        for i in range(len(found)):
            if tags[i][0] is None and tagger.verbs.search(pieces[i + 1][:40]):
                relative = _relative(pieces[i + 1][:60], story, vocatives)
                if relative is not None:
                    tags[i] = (relative, "explicit")
        chosen: list[tuple[int | None, str]] = []
        tagged = [t for t in tags if t[0] is not None]
        for i in range(len(found)):
            if tags[i][0] is not None:
                chosen.append(tags[i])
            elif tagged:
                actor = _actor(pieces[i], cast, tagged[0][0], vocatives) if i > 0 else None
                if actor is not None:
                    chosen.append((actor, "beat"))  # “Thanks,” Krum said. Woolsey shook his head. “I've got to…”
                else:
                    chosen.append((tagged[0][0], "continuation"))
            else:
                chosen.append((None, ""))
        if not tagged:
            before = tail if run else paragraphs[index - 1] if index else ""
            speaker, cue = _untagged(
                found, before, pieces, story, cast, previous_open, run, addressed, vocatives, tagger
            )
            chosen = [(speaker, cue if i == 0 else ("continuation" if speaker is not None else cue))
                      for i, _ in enumerate(found)]  # fmt: skip
        story.mention(" ".join(pieces))
        for q, (speaker, cue) in zip(found, chosen):
            cue = cue or "none"
            out.append(QuoteSpeaker(index, q.start, q.end, speaker, CONFIDENCE[cue], cue))
        last = chosen[-1][0]
        story.spoke(last)
        previous_open = last if found[-1].open_end else None
        addressed = next(iter(vocatives - {last}), None) if vocatives else None
        run, tail = True, pieces[-1]
    return Attribution(cast.characters, out)


def _name_the_narrator(cast: Cast, narrator: Character, quotes: list[Quote], narration: list[list[str]]) -> None:
    """A first-person narrator is called by name only in the others' speech ("Jake, you're a fool"), never in their
    own narration: the name addressed most often (twice at least) that the narration never uses is theirs. Its
    forms then mean the narrator, who is shown under that name."""
    told = {c.id for parts in narration for part in parts for c in map(cast.resolve, mentions_in(part)) if c}
    called: dict[int, int] = {}
    for quote in quotes:
        for cid in _addressed(quote.text, cast):
            if cid not in told and cid != narrator.id:
                called[cid] = called.get(cid, 0) + 1
    if not called:
        return
    cid, count = max(called.items(), key=lambda item: (item[1], -item[0]))
    if count < 2:
        return
    named = cast.characters[cid]
    cast.absorb(narrator, named)
    narrator.name, narrator.gender = named.name, named.gender


def _actor(narration: str, cast: Cast, speaker: int | None, exclude: set[int]) -> int | None:
    """Who a whole sentence of narration between two quotes is about (``Woolsey shook his head.``): the character
    it names first, unless that is the paragraph's tagged ``speaker`` or one of ``exclude`` (those addressed).
    (A pronoun or a title there was measured on annotated novels and gained nothing.)"""
    if not re.search(r"[.!?]\s*$", narration) or len(narration.split()) < 2:
        return None
    first = _first_named(_SENTENCES.split(narration.strip())[-1], cast, exclude)
    return first if first != speaker else None


def _narration(text: str, quotes: list[Quote]) -> list[str]:
    return [p for p in _between(text, quotes) if p.strip()]


def _between(text: str, quotes: list[Quote]) -> list[str]:
    """The narration before, between and after the quotes of a paragraph (len(quotes) + 1 pieces)."""
    pieces, cursor = [], 0
    for q in quotes:
        pieces.append(text[cursor : q.start])
        cursor = q.end
    pieces.append(text[cursor:])
    return pieces


def _first_resolved(
    tags: tuple[str | None, ...], story: _Story, tagger: _Tagger, here: list[int], addressed: set[int]
) -> tuple[int | None, str]:
    for tag in tags:
        resolved = _resolve(tag, story, tagger, here, addressed)
        if resolved[0] is not None:
            return resolved
    return None, ""


ROLES = {
    "vicar": ("Reverend", "Vicar", "Rector"), "rector": ("Reverend", "Rector", "Vicar"), "parson": ("Reverend",),
    "curate": ("Curate", "Reverend"), "doctor": ("Dr.", "Doctor"), "docteur": ("Dr.", "Doctor", "Docteur"),
    "captain": ("Captain",), "colonel": ("Colonel",), "major": ("Major",), "admiral": ("Admiral",),
    "general": ("General",), "inspector": ("Inspector",), "professor": ("Professor",), "ladyship": ("Lady",),
    "lordship": ("Lord", "Sir"), "baronet": ("Sir",), "count": ("Count",), "countess": ("Countess",),
}  # fmt: skip
_ROLE = re.compile(r"^(?:the|his|her|our|le|la|der|die)\s+(\w+)$", re.IGNORECASE)


def _role(tag: str, story: _Story) -> int | None:
    """``said the Vicar`` / ``said her ladyship`` / ``dit le docteur``: the person who carries that title (the
    Reverend Ambrose Pettigrew, Lady Catherine, Dr. Morel), the most recently named if several do."""
    match = _ROLE.match(tag.strip())
    titles = ROLES.get(match.group(1).lower()) if match else ROLES.get(tag.strip().lower())
    if not titles:
        return None
    carriers = {
        c.id for c in story.cast.characters if any(alias.split()[0] in titles for alias in c.aliases if alias.split())
    }
    for cid, _subject in reversed(story.mentioned):
        if cid in carriers:
            return cid
    return next(iter(carriers)) if len(carriers) == 1 else None


def _resolve(
    tag: str | None, story: _Story, tagger: _Tagger, here: list[int], addressed: set[int]
) -> tuple[int | None, str]:
    """A tag's name as a character; a pronoun as the one it most likely means: the one of that gender this
    paragraph's narration names first (``Elizabeth turned. “…,” she said.``), else the one of that gender among the
    conversation's last speakers, else the last named (a subject first); never the person the quote addresses."""
    if tag is None:
        return None, ""
    word = tag.strip().lower()
    gender = tagger.pronouns.get(word)
    if gender == "I":
        return (story.narrator.id, "first_person") if story.narrator is not None else (None, "")
    if gender is not None:
        characters = story.cast.characters
        if story.narrator is not None:  # "he" is never the one who says "I", even once they have a name
            addressed = addressed | {story.narrator.id}
        in_paragraph = [cid for cid in here if characters[cid].gender == gender and cid not in addressed]
        if in_paragraph:
            return in_paragraph[0], "pronoun"
        talking = [cid for cid in dict.fromkeys(reversed(story.speakers)) if cid not in addressed][:SPEAKERS_WINDOW]
        same = [cid for cid in talking if characters[cid].gender == gender]
        if len(same) == 1 and len(talking) > 1:
            return same[0], "pronoun"
        cid = story.recent(gender, frozenset(addressed))
        return (cid, "pronoun") if cid is not None else (None, "")
    role = _role(tag, story)
    if role is not None:
        return role, "explicit"
    for mention in mentions_in(tag):
        character = story.cast.resolve(mention)
        if character is not None:
            return character.id, "explicit"
    described = _DESCRIBED.match(tag.strip())
    if described and described.group(2).lower() in PEOPLE:  # "said the concierge": the concierge, a character
        words = described.group(1)
        return story.cast.described(
            f"The {words if words[:1].isupper() else words.lower()}", PEOPLE[described.group(2).lower()]
        ).id, "explicit"
    return None, ""


PEOPLE = {
    "man": "m", "gentleman": "m", "boy": "m", "fellow": "m", "youth": "m", "lad": "m", "waiter": "m", "driver": "m",
    "porter": "m", "coachman": "m", "cabman": "m", "footman": "m", "butler": "m", "landlord": "m", "host": "m",
    "policeman": "m", "constable": "m", "sergeant": "m", "officer": "m", "soldier": "m", "sailor": "m", "clerk": "m",
    "station-master": "m", "stationmaster": "m", "priest": "m", "boatman": "m", "postman": "m", "barman": "m",
    "bartender": "m", "shopkeeper": None, "stranger": None, "servant": None, "visitor": None, "guest": None,
    "child": None, "concierge": None, "cook": None, "nurse": "f", "woman": "f", "lady": "f", "girl": "f",
    "maid": "f", "housekeeper": "f", "landlady": "f", "hostess": "f", "widow": "f", "patronne": "f",
    "governess": "f", "old man": "m", "old woman": "f", "old lady": "f", "young man": "m", "young lady": "f",
    "president": None, "secretary": None, "chairman": "m", "official": None, "drummer": "m", "unknown": None,
    "marquis": "m", "marquise": "f", "doorman": "m", "gardener": "m", "groom": "m", "farmer": "m", "clergyman": "m",
}  # fmt: skip
"""People a book may name by what they are ("said the concierge"), each a character of its own, with a gender."""
_DESCRIBED = re.compile(r"^(?:the|that|this)\s+((?:[a-z][\w-]*\s+){0,2}?((?:old |young )?[a-zA-Z][\w-]*))$", re.I)
"""``the concierge``, ``that brisk official``, ``the President`` (a title the cast does not list: as written)."""


def _addressed(quote: str, cast: Cast) -> set[int]:
    """Who a quote speaks to: a name that opens it or stands between commas (``Lizzy, …``, ``…, Mr. Bennet.``,
    ``my dear Mr. Bennet``), not one it merely talks about (``A Mr. Ashworth, from Derbyshire``)."""
    out = set()
    for m in mentions_in(quote):
        before, after = quote[: m.start], quote[m.end :]
        opens = not before.strip(' “"‘«»„「')
        between = bool(re.search(r"(?:,|\b(?:dear|dearest|good)|\b[Oo]h?)\s*$", before)) and bool(
            re.match(r"\s*[,!?.;]|\s*[”\"’»«“]?\s*$", after)
        )
        alone = re.match(r"\s*([.?!])\W*$", after)  # “Miss Gale.”, “Imogen?”: a greeting, a call; “Bingley.”: an answer
        calls = alone is not None and (m.honorific is not None or alone.group(1) != ".")
        if (opens and (re.match(r"\s*[,!?;]\W*\w", after) or calls)) or between:
            character = cast.resolve(m)
            if character is not None:
                out.add(character.id)
    return out


_RELATION = re.compile(
    r"\b(his|her|their)\s+(wife|lady|husband|father|mother|sister|brother|daughter|son|aunt|uncle|niece|nephew)\b",
    re.IGNORECASE,
)
_RELATION_GENDER = {
    "wife": "f", "lady": "f", "mother": "f", "sister": "f", "daughter": "f", "aunt": "f", "niece": "f",
    "husband": "m", "father": "m", "brother": "m", "son": "m", "uncle": "m", "nephew": "m",
}  # fmt: skip


def _named(text: str, cast: Cast) -> list[int]:
    """The characters ``text`` names, in order, each once."""
    out: list[int] = []
    for m in mentions_in(text):
        character = cast.resolve(m)
        if character is not None and character.id not in out:
            out.append(character.id)
    return out


def _first_named(text: str, cast: Cast, exclude: Collection[int]) -> int | None:
    """The first character ``text`` names who is not one of ``exclude``."""
    return next((cid for cid in _named(text, cast) if cid not in exclude), None)


def _relative(tag_window: str, story: _Story, addressed: Collection[int] = ()) -> int | None:
    """``said his wife`` / ``said her father``: the person of that gender who shares the surname of the one the
    possessive points at (the last man for "his", the last woman for "her"); a wife or mother is Mrs. of that name,
    a husband or father Mr., where the book has them. The one the quote addresses is the likeliest owner
    ("“My dear Mr. Bennet,” said his lady to him")."""
    match = _RELATION.search(tag_window)
    if match is None:
        return None
    owner_gender = {"his": "m", "her": "f"}.get(match.group(1).lower())
    relation = match.group(2).lower()
    wanted = _RELATION_GENDER[relation]
    spoken_to = [cid for cid in addressed if story.cast.characters[cid].gender == owner_gender]
    last = story.speakers[-1] if story.speakers else None
    if len(spoken_to) == 1:
        owner: int | None = spoken_to[0]
    elif last is not None and story.cast.characters[last].gender == owner_gender:
        owner = last  # "cried her brother": the brother of the one he answers
    else:
        owner = story.recent(owner_gender) if owner_gender else None
    if owner is None:
        return None
    surname = story.cast.characters[owner].name.split()[-1]
    married = {"wife": "Mrs.", "lady": "Mrs.", "mother": "Mrs.", "husband": "Mr.", "father": "Mr."}.get(relation)
    if married is not None:
        character = story.cast.by_name(f"{married} {surname}")
        if character is not None and character.id != owner:
            return character.id
    for character in story.cast.characters:
        parts = character.name.split()
        if character.id != owner and character.gender == wanted and len(parts) >= 2 and parts[-1] == surname:
            return character.id
    return None


def _introducer(
    before: str, story: _Story, exclude: set[int], tagger: _Tagger, after_quote: bool
) -> tuple[int, str] | None:
    """Narration that ends announcing the next speech (``With a little reserve of manner, Emma continued:``,
    ``… and Mrs. Hurst began again.``): the one its last sentence names first."""
    text = before.rstrip()
    sentences = _SENTENCES.split(text.strip())
    sentence = sentences[-1]
    if not text.endswith(":") and not tagger.verbs.search(sentence):
        return None
    if after_quote and (len(sentences) < 2 or text.endswith(("”", '"'))):
        return None  # "…," said Emma. — the quote's own tag, not the next one's
    first = _first_named(sentence, story.cast, exclude)
    return (first, "explicit") if first is not None else None


def _untagged(
    found: list[Quote],
    before: str,
    pieces: list[str],
    story: _Story,
    cast: Cast,
    previous_open: int | None,
    run: bool,
    addressed: int | None,
    vocatives: set[int],
    tagger: _Tagger,
) -> tuple[int | None, str]:
    if previous_open is not None and found[0].start <= 2:
        return previous_open, "continuation"
    for piece in pieces:  # the paragraph's own narration names who acts
        actor = _first_named(piece, cast, vocatives)
        if actor is not None:
            return actor, "beat"
    introduced = _introducer(before, story, vocatives, tagger, run) if pieces[0].strip() == "" else None
    if introduced is not None:
        return introduced
    last = story.speakers[-1] if story.speakers else None
    me = story.narrator.id if story.narrator is not None else None
    if not run and me is not None and last not in (None, me) and me not in vocatives:
        return me, "nearby"  # a first-person narrator answers whoever spoke before the narration broke in
    if run:
        if addressed is not None and addressed != last and addressed not in vocatives:
            return addressed, "vocative"
        other = story.other_speaker(last)
        if other is not None and other not in vocatives:
            return other, "implicit"
    nearby = story.last_mentioned(vocatives | ({last} if last is not None else set()))
    return (nearby, "nearby") if nearby is not None else (None, "none")
