"""The characters of a book, found in its narration: names with their honorifics, the aliases that point at one
person, and a gender where the text gives one.

- A **name** is a run of capitalised words that is not a common sentence opener, seen at least once where a capital
  does not just start a sentence, or after an honorific, or next to a speech verb.
- **Honorifics** (Mr., Mrs., Miss, Dr., Lady, Captain, …) make their own person with the surname: Mr. Bennet and
  Mrs. Bennet are two people. A full name joins its parts (Elizabeth Bennet: Elizabeth, Miss Elizabeth, and Miss
  Bennet where no other Bennet woman is named); a bare surname goes to the one person who carries it.
- **Gender** comes from the honorific, else from the pronouns that follow the name in the same sentence (Emma …
  she …), else from a short list of common first names.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field


def _words(text: str) -> list[str]:
    return text.split()


HONORIFICS = {
    "Mr": "m", "Mister": "m", "Sir": "m", "Lord": "m", "Master": "m", "Monsieur": "m", "M": "m", "Herr": "m",
    "Signor": "m", "Señor": "m", "Don": "m", "Father": "m", "Uncle": "m", "Brother": "m", "Colonel": "m",
    "Captain": "m", "Major": "m", "General": "m", "Lieutenant": "m", "Admiral": "m", "Reverend": "m",
    "Mrs": "f", "Miss": "f", "Ms": "f", "Lady": "f", "Madam": "f", "Madame": "f", "Mme": "f", "Mademoiselle": "f",
    "Mlle": "f", "Frau": "f", "Fräulein": "f", "Señora": "f", "Signora": "f", "Aunt": "f", "Sister": "f",
    "Mother": "f", "Dame": "f", "Duchess": "f", "Countess": "f", "Princess": "f", "Queen": "f",
    "Dr": None, "Doctor": None, "Professor": None, "Inspector": "m", "Count": "m", "Duke": "m", "Prince": "m",
    "King": "m", "Baron": "m", "Baroness": "f", "Comrade": None,
}  # fmt: skip
STOP = frozenset(
    _words(
        """A An The And But Or So Yet For Nor If When While Then There Here This That These Those It Its He She His Her
        Him They Them Their We Us Our You Your I My Me Mine What Who Whom Whose Which Why How Where Yes No Not Oh Ah
        Well Now Indeed Perhaps Still Only Even After Before As At By In On Of To With Without From Into Upon Over Under
        Chapter Book Part Volume Monday Tuesday Wednesday Thursday Friday Saturday Sunday January February March April
        May June July August September October November December God Heaven Lord Christmas Sir Madam Dear Good Poor Do
        Did Does Is Was Were Be Been Are Have Has Had Will Would Shall Should Can Could Must Might Let All Some Any
        Every Each Both Neither Either Nothing Everything Something Anything Nobody Everybody Somebody Everyone Someone
        Anyone One Two Three
        Mamma Papa Mama Pa Ma Mum Dad Ha Hm Hush Pray Pooh Alas Nay Aye Ay Oho Hullo Hello Goodbye Besides Although
        Though Because Since Until Unless Whether Meanwhile However Moreover Also Just Again Once Never Always Sometimes
        Often Soon Later Today Tomorrow Yesterday Tonight Mrs Mr Miss Ms Dr Lady Captain Colonel Le La Les Un Une Der
        Die Das Ein Eine Und Aber Ich Du Er Sie Es Wir Ihr Je Tu Il Elle Nous Vous Ils Elles Et Mais Oui Non Ja Nein
        During Through Across Behind Beyond Between Among Against Toward Towards Within Like Unlike Except Despite
        Below Above Near Along Around About Beside Inside Outside Whenever Wherever Whatever Whoever Presently"""
    )
)
MALE_NAMES = frozenset(
    _words(
        """John James William George Charles Henry Thomas Edward Robert Richard Frederick Arthur Walter Francis Joseph
        Samuel David Peter Paul Tom Jack Harry Fred Bill Bob Ned Matthew Mark Luke Philip Edmund Fitzwilliam Frank
        Gilbert Sherlock Holmes Watson Darcy Bingley Wickham Collins Knightley Elton Weston Churchill Wentworth Tom Sam
        Ben Max Hans Karl Pierre Jean Jacques Louis Michel"""
    )
)
FEMALE_NAMES = frozenset(
    _words(
        """Mary Elizabeth Jane Anne Anna Emma Catherine Lydia Kitty Charlotte Harriet Marianne Elinor Fanny Isabella
        Margaret Sarah Lucy Alice Diana Marilla Rachel Louisa Caroline Georgiana Lizzy Eliza Kate Susan Helen Ellen
        Maria Julia Clara Sophie Sophia Amelia Eleanor Jo Meg Beth Amy Rose Lily Grace Marie Claire Lisa Greta"""
    )
)
NICKNAMES = {
    "Lizzy": "Elizabeth", "Eliza": "Elizabeth", "Liz": "Elizabeth", "Lizzie": "Elizabeth", "Bess": "Elizabeth",
    "Betsy": "Elizabeth", "Kitty": "Catherine", "Kate": "Catherine", "Katy": "Catherine", "Fanny": "Frances",
    "Polly": "Mary", "Molly": "Mary", "Peggy": "Margaret", "Meg": "Margaret", "Maggie": "Margaret", "Nell": "Eleanor",
    "Nelly": "Ellen", "Sukey": "Susan", "Sue": "Susan", "Letty": "Letitia", "Di": "Diana", "Annie": "Anne",
    "Jack": "John", "Johnny": "John", "Bob": "Robert", "Bobby": "Robert", "Dick": "Richard", "Bill": "William",
    "Will": "William", "Tom": "Thomas", "Tommy": "Thomas", "Ned": "Edward", "Ted": "Edward", "Harry": "Henry",
    "Jim": "James", "Jem": "James", "Sam": "Samuel", "Fred": "Frederick", "Freddy": "Frederick", "Charley": "Charles",
    "Charlie": "Charles", "Matty": "Matthew", "Joe": "Joseph", "Ben": "Benjamin", "Nick": "Nicholas",
}  # fmt: skip
"""Common English nicknames and the first name they stand for: a nickname joins the person who carries that name."""
PLACE_SUFFIXES = frozenset(
    _words(
        """House Park Lodge Hall Street Square Abbey Castle Court Manor Place Road Lane Cottage Farm Church Gables
        Island Bay River Hill Common Wood Woods Green Town City Station Bridge Row Terrace Gardens Inn Hotel Club
        Avenue"""
    )
)
"""A run ending in one of these is a place (Netherfield Park, Lucas Lodge, Green Gables), not a person."""
NATIONS = frozenset(
    _words(
        """English French Irish Scotch Scottish Scots Welsh Italian German Spanish Dutch Russian American Indian
        British Greek Roman Latin Swiss Austrian Prussian Polish Turkish Chinese Japanese Christian Catholic Swedish
        Norwegian Danish European Alpine Parisian Protestant"""
    )
)
_LOCATIVE = re.compile(
    r"\b(?:(?:at|to|from|in|into|near|towards?|through|round|via|within|across|beyond|reach(?:ed)?|left)\s+"
    r"(?:the\s+)?|the\s+|of\s+)$",
    re.IGNORECASE,
)
ROLE_WORDS = frozenset(
    _words("vicar rector parson curate doctor docteur captain colonel major admiral general inspector professor")
)
_WORD = r"[A-ZÀ-ÖØ-Þ][a-zß-öø-ÿ'’]+"
_PARTICLE = r"(?:van der|van den|van|von der|von|de la|de|du|der|den|della|del|di|da|ten|ter)"
NAME = re.compile(
    rf"\b(?:(?P<honorific>{'|'.join(sorted(HONORIFICS, key=len, reverse=True))})\.?\s+)?"
    rf"(?P<name>(?:(?<=\s){_PARTICLE}\s+)?{_WORD}(?:[ -](?:{_PARTICLE} )?{_WORD}){{0,3}})"
)
"""A name: an optional honorific, then capitalised words; a particle may stand before the surname (Mr. van der
Luyden, Madame de la Tour, Charles de Gaulle)."""
_POSSESSIVE = re.compile(r"[’']s?$")
_CONTRACTION = re.compile(r"^I[’']|[’'](?:ll|ve|d|m|re|t)$|n[’']t$")
_PRONOUN_AFTER = re.compile(r"\b(he|his|himself|she|hers|herself)\b", re.IGNORECASE)
_LOWER_WORD = re.compile(r"\b[a-zß-öø-ÿ]+\b")
_SENTENCE_START = re.compile(r"(?:^|[.!?…]\s+|[“\"‘«„—]\s*)$")


@dataclass
class Character:
    id: int
    name: str
    """The fullest form seen (``Mr. Fitzwilliam Darcy`` → kept as its most frequent full form)."""
    gender: str | None = None
    aliases: set[str] = field(default_factory=set)
    mentions: int = 0

    def label(self) -> str:
        return self.name


@dataclass(frozen=True)
class Mention:
    start: int
    end: int
    form: str
    """As written: ``Mr. Darcy``, ``Elizabeth``."""
    honorific: str | None
    words: tuple[str, ...]


def mentions_in(text: str) -> list[Mention]:
    """The capitalised runs of ``text`` that may be names (with their honorific), stop words taken off their ends."""
    out = []
    for match in NAME.finditer(text):
        words = tuple(_POSSESSIVE.sub("", w) for w in match.group("name").replace("-", " ").split())
        if any(_CONTRACTION.search(w) for w in words):
            continue  # I’ll, It’s, Don’t: not names
        honorific = match.group("honorific")
        while words and words[0] in STOP and not (honorific is None and words[0] in HONORIFICS and len(words) > 1):
            words = words[1:]
        if honorific is None and len(words) > 1 and words[0] in HONORIFICS:  # "The Reverend Ambrose Pettigrew"
            honorific, words = words[0], words[1:]
        while words and words[-1] in STOP:
            words = words[:-1]
        if not words:
            continue
        if honorific is None and len(words) == 1 and (words[0] in HONORIFICS or words[0].lower() in ROLE_WORDS):
            continue  # "the Vicar", "the Captain": a title, resolved to who carries it
        out.append(Mention(match.start(), match.end(), match.group(0), honorific, words))
    return out


def at_sentence_start(text: str, start: int) -> bool:
    return bool(_SENTENCE_START.search(text[max(0, start - 4) : start]))


class Cast:
    """The characters of a book and how each written form resolves to one of them."""

    def __init__(self) -> None:
        self.characters: list[Character] = []
        self._by_key: dict[str, int] = {}

    def resolve(self, mention: Mention) -> Character | None:
        for key in _keys(mention):
            if key in self._by_key:
                return self.characters[self._by_key[key]]
        return None

    def find(self, form: str) -> Character | None:
        found = mentions_in(form)
        return self.resolve(found[0]) if found else None

    def by_name(self, name: str) -> Character | None:
        return next((c for c in self.characters if c.name == name), None)

    def described(self, name: str, gender: str | None) -> Character:
        """The character a book names by what they are (``The concierge``), added the first time."""
        key = name.lower()
        if key in self._by_key:
            return self.characters[self._by_key[key]]
        character = self._add(name, gender)
        self._link(key, character)
        return character

    def absorb(self, into: Character, other: Character) -> None:
        """Every form of ``other`` names ``into`` from now on (``other`` keeps its place in the list, with none)."""
        for alias in other.aliases:
            self._by_key[alias] = into.id
        into.aliases |= other.aliases
        other.aliases = set()

    def _add(self, name: str, gender: str | None) -> Character:
        character = Character(len(self.characters), name, gender)
        self.characters.append(character)
        return character

    def _link(self, key: str, character: Character) -> None:
        self._by_key.setdefault(key, character.id)
        character.aliases.add(key)


def _keys(mention: Mention) -> list[str]:
    """How a mention may be looked up, most specific first."""
    words = " ".join(mention.words)
    keys = []
    if mention.honorific:
        keys.append(f"{_honorific(mention.honorific)} {words}")
        if len(mention.words) > 1:
            keys.append(f"{_honorific(mention.honorific)} {mention.words[-1]}")
    keys.append(words)
    return keys


def _honorific(word: str) -> str:
    word = word.rstrip(".")
    return word + "." if word in ("Mr", "Mrs", "Ms", "Dr", "M", "Mme", "Mlle") else word


def find_cast(
    narration: list[str], speech_verbs: re.Pattern[str], first_person: bool = False, nouns_capitalised: bool = False
) -> Cast:
    """The characters named in ``narration`` (the paragraphs' text outside quotes). Where every noun is capitalised
    (German), a capital proves nothing: a name must carry an honorific or stand next to a speech verb."""
    counts: Counter[tuple[str | None, tuple[str, ...]]] = Counter()
    trusted: set[tuple[str, ...]] = set()
    places: Counter[tuple[str, ...]] = Counter()
    """How often each plain run stands where a place does (after "at", "to", "from", …)."""
    pronouns: dict[tuple[str, ...], Counter[str]] = defaultdict(Counter)
    for text in narration:
        for mention in mentions_in(text):
            counts[(_honorific(mention.honorific) if mention.honorific else None, mention.words)] += 1
            # A capital that opens a sentence proves nothing ("Calm, she said"); right beside a speech verb it does
            # ("said Anna", "Anna said"), as a capital inside a sentence does where only names are capitalised.
            before, after = text[max(0, mention.start - 16) : mention.start], text[mention.end : mention.end + 16]
            tagged = bool(re.search(speech_verbs.pattern + r"\s+$", before, re.I)) or bool(
                re.match(r"\s+(?:\w+ly\s+)?" + speech_verbs.pattern, after, re.I)
            )
            vocative = bool(re.search(r"[“\"‘«»„]\s*$", before)) and bool(re.match(r"\s*[,!]", after))
            # “Lizzy, you must not”: a name opening a quote addresses someone; “Nonsense!” or “Come, …” does not,
            # so a word there counts only where it is a known first name.
            tagged = tagged or (vocative and _first_name(mention.words[0]))
            if mention.honorific is None and _LOCATIVE.search(text[max(0, mention.start - 16) : mention.start]):
                places[mention.words] += 1
            mid_sentence = not nouns_capitalised and not at_sentence_start(text, mention.start)
            if mention.honorific or mid_sentence or tagged:
                trusted.add(mention.words)
            stop = re.search(r"[.!?;]", text[mention.end :])
            tail = text[mention.end : mention.end + (stop.start() if stop else 80)]
            pronoun = _PRONOUN_AFTER.search(tail)
            if pronoun and not mentions_in(tail[: pronoun.start()]):
                pronouns[mention.words][_gender_of(pronoun.group(1))] += 1
    cast = Cast()
    forms: dict[int, Counter[str]] = defaultdict(Counter)
    ordered = sorted(
        counts.items(), key=lambda kv: (kv[0][0] is None, len(kv[0][1]) == 1, kv[0][1][0] in NICKNAMES, -kv[1])
    )
    plain_counts: Counter[tuple[str, ...]] = Counter()
    for (honorific, words), count in counts.items():
        if honorific is None:
            plain_counts[words] += count
    lower = Counter(_LOWER_WORD.findall(" ".join(narration))) if not nouns_capitalised else Counter()
    for (honorific, words), count in ordered:
        if words not in trusted:
            continue
        if honorific is None and _place(words, places[words], plain_counts[words]):
            continue
        if honorific is None and len(words) == 1 and not _first_name(words[0]) and lower[words[0].lower()] > count:
            continue  # "Thus", "Right", "Truth": a word the book mostly writes in lower case is not a name
        plain = " ".join(words)
        character = _existing(cast, honorific, words)
        if character is None and honorific is None and len(words) == 1 and _carriers(cast, words[0]) > 1:
            continue  # "Pettigrew" when Mr. and Miss Pettigrew are both named: resolved by who is meant, not a person
        if character is None:
            gender = HONORIFICS.get(honorific.rstrip(".")) if honorific else None
            character = cast._add(f"{honorific} {plain}" if honorific else plain, gender)
        character.mentions += count
        form = f"{honorific} {plain}" if honorific else plain
        forms[character.id][form] += count
        cast._link(form, character)
        if len(words) > 1 and not _wife_of(honorific, words, pronouns.get(words)):
            cast._link(plain, character)
            if words[0] not in cast._by_key and words[0] not in HONORIFICS:
                cast._link(words[0], character)
            if honorific:
                cast._link(f"{honorific} {words[-1]}", character)  # Mr. Harold Vane is Mr. Vane
    for character in cast.characters:
        character.name = _display_name(forms[character.id])
        if character.gender is None:
            character.gender = _gender(character, pronouns)
    _join_mister(cast)
    _link_surnames(cast)
    if first_person:
        cast._link("I", cast._add("I", None))
    return cast


def _wife_of(honorific: str | None, words: tuple[str, ...], votes: Counter[str] | None) -> bool:
    """``Mrs. Newland Archer`` (``Mrs. Peter Blewett``) is Newland Archer's wife when the plain name is a man's (a
    man's first name, or its pronouns say so): the plain name is then not hers. ``Mrs. Rachel Lynde`` is Rachel."""
    if honorific is None:
        return False
    title = HONORIFICS.get(honorific.rstrip("."))
    if (title == "f" and words[0] in FEMALE_NAMES) or (title == "m" and words[0] in MALE_NAMES):
        return False
    if title == "f" and words[0] in MALE_NAMES:
        return True
    other = "m" if title == "f" else "f" if title == "m" else None
    return votes is not None and other is not None and votes[other] > votes[title or ""]


def _first_name(word: str) -> bool:
    return word in MALE_NAMES or word in FEMALE_NAMES or word in NICKNAMES


def _place(words: tuple[str, ...], at_place: int, seen: int) -> bool:
    """A run that names a place or a people, not a person: it ends in a place word (Netherfield Park, Green Gables),
    it is a nation's adjective (French), or it mostly follows "at", "to", "from", "the", "of" … (at Longbourn, to
    London, the Thames, a glass of Beaune)."""
    if words[-1] in PLACE_SUFFIXES or (len(words) == 1 and words[0] in NATIONS):
        return True
    return not _first_name(words[0]) and at_place * 2 >= seen and at_place > 0


def _existing(cast: Cast, honorific: str | None, words: tuple[str, ...]) -> Character | None:
    """The person a form names among those already found: the same form; a full name's first name; an honorific's
    surname (Miss Bennet → the one Bennet woman); a plain word that one honorific form carries (Darcy → Mr. Darcy,
    Elizabeth → Miss Elizabeth)."""
    plain = " ".join(words)
    if honorific:
        for key in (f"{honorific} {plain}", f"{honorific} {words[-1]}"):
            if key in cast._by_key:
                return cast.characters[cast._by_key[key]]
        gender = HONORIFICS.get(honorific.rstrip("."))
        known = cast._by_key.get(plain)
        if known is not None and cast.characters[known].gender in (None, gender):
            return cast.characters[known]
        if len(words) == 1 and gender is None:  # Comrade Syme, Dr. Syme: the one Syme named already
            carriers = {cid for key, cid in cast._by_key.items() if len(key.split()) >= 2 and key.split()[-1] == plain}
            if len(carriers) == 1:
                return cast.characters[next(iter(carriers))]
        return None
    if plain in cast._by_key:
        return cast.characters[cast._by_key[plain]]
    if len(words) == 1 and NICKNAMES.get(plain) in cast._by_key:  # Lizzy is Elizabeth, once Elizabeth is named
        return cast.characters[cast._by_key[NICKNAMES[plain]]]
    if len(words) > 1 and words[0] in cast._by_key:
        return cast.characters[cast._by_key[words[0]]]
    named = "m" if words[0] in MALE_NAMES else "f" if words[0] in FEMALE_NAMES else None
    carriers = {
        cast._by_key[key]
        for key in cast._by_key
        if len(key.split()) >= 2 and key.split()[-1] == words[-1] and key.split()[0].rstrip(".") in HONORIFICS
    }
    if named is not None:  # Peter Blewett is not Mrs. Peter Blewett
        carriers = {cid for cid in carriers if cast.characters[cid].gender in (None, named)}
    if len(carriers) == 1:
        return cast.characters[next(iter(carriers))]
    return None


def _carriers(cast: Cast, surname: str) -> int:
    return len({cid for key, cid in cast._by_key.items() if len(key.split()) >= 2 and key.split()[-1] == surname})


def _join_mister(cast: Cast) -> None:
    """``Mr. Archer`` and ``Newland Archer``, the one man of each kind with that surname, are one man: the book
    names him both ways. (A woman's surname changes with marriage, and two titled men may be father and son, so
    only a plain full name joins the one ``Mr.``.)"""
    misters: dict[str, set[int]] = defaultdict(set)
    plain_men: dict[str, set[int]] = defaultdict(set)
    for character in cast.characters:
        for alias in character.aliases:
            parts = alias.split()
            if len(parts) == 2 and parts[0] == "Mr.":
                misters[parts[1]].add(character.id)
            elif len(parts) >= 2 and parts[0].rstrip(".") not in HONORIFICS and character.gender == "m":
                plain_men[parts[-1]].add(character.id)
    for surname, ids in misters.items():
        men = plain_men.get(surname, set()) - ids
        if len(ids) != 1 or len(men) != 1:
            continue
        into, other = cast.characters[next(iter(ids))], cast.characters[next(iter(men))]
        if any(alias.split()[0].rstrip(".") in HONORIFICS for alias in other.aliases):
            continue  # Sir William Lucas is not Mr. Lucas
        cast.absorb(into, other)
        into.mentions += other.mentions
        into.name, other.mentions = other.name, 0


def _link_surnames(cast: Cast) -> None:
    """A bare surname goes to the one person carrying it (Darcy → Mr. Darcy); shared by a man with an honorific
    and women (Mr. and Miss Bingley), it is the man's, as novels print it ("said Bingley"); otherwise (two men,
    Mr. and Sir William Pettigrew) it stays unlinked."""
    carriers: dict[str, set[int]] = defaultdict(set)
    men: dict[str, set[int]] = defaultdict(set)
    for character in cast.characters:
        for alias in list(character.aliases):
            parts = alias.split()
            if len(parts) >= 2:
                carriers[parts[-1]].add(character.id)
                if HONORIFICS.get(parts[0].rstrip(".")) == "m":
                    men[parts[-1]].add(character.id)
    for surname, ids in carriers.items():
        if surname in cast._by_key:
            continue
        if len(ids) == 1:
            cast._link(surname, cast.characters[next(iter(ids))])
        elif len(men[surname]) == 1 and all(cast.characters[i].gender != "m" for i in ids - men[surname]):
            cast._link(surname, cast.characters[next(iter(men[surname]))])
        elif not men[surname]:
            male = [i for i in ids if cast.characters[i].gender == "m"]
            if len(male) == 1 and all(cast.characters[i].gender != "m" for i in ids if i != male[0]):
                cast._link(surname, cast.characters[male[0]])  # Lucian Gregory, not Miss or Rosamond Gregory


def _display_name(forms: Counter[str]) -> str:
    """A full plain name when there is one (Elizabeth Bennet), else the most used form (Mr. Darcy, Emma)."""
    full = [f for f in forms if len(f.split()) >= 2 and f.split()[0].rstrip(".") not in HONORIFICS]
    if full:
        return max(full, key=lambda f: (forms[f], len(f)))
    return max(forms, key=lambda f: (forms[f], len(f.split())))


def _gender(character: Character, pronouns: dict[tuple[str, ...], Counter[str]]) -> str | None:
    votes: Counter[str] = Counter()
    for alias in character.aliases:
        parts = alias.split()
        words = tuple(p for p in parts if p.rstrip(".") not in HONORIFICS)
        votes.update(pronouns.get(words, Counter()))
        title_gender = HONORIFICS.get(parts[0].rstrip("."))
        if title_gender is not None:
            votes[title_gender] += 5
        if parts[0] in MALE_NAMES:
            votes["m"] += 2
        if parts[0] in FEMALE_NAMES:
            votes["f"] += 2
    if not votes:
        return None
    gender, top = votes.most_common(1)[0]
    return gender if top > sum(votes.values()) - top else None


def _gender_of(pronoun: str) -> str:
    return "m" if pronoun.lower() in ("he", "him", "his", "himself") else "f"
