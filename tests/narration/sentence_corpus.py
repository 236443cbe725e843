"""Paragraphs with their true sentences, for measuring a sentence splitter (docs/RELIABILITY.md has the figures).

Written for these tests in the manner of nineteenth-century English prose and its citations (abbreviations, initials,
titles, decimals, dates), plus Japanese and Arabic. Each paragraph is a list of its sentences; joined with a space
they make the text the splitter sees.
"""

from __future__ import annotations

ENGLISH = [
    [
        "Mr. Starbuck met Dr. Bunger at St. Paul's on the morning of the third.",
        "Neither of them spoke of the whale.",
    ],
    ["“What spermacetti is, men might justly doubt.” —Sir T. Browne.", "Of Sperma Ceti and the Sperma Ceti Whale."],
    ["“Whales in the sea God's voice obey.” —N. E. Primer.", "So says the old book."],
    ["We set sail from the Elbe, wind N.E. in the ship called The Jonas-in-the-Whale.", "Some say it cannot be."],
    ["Capt. Ahab and Mrs. Hussey talked until ten o'clock.", "Then the lamp went out."],
    ["The voyage of 1851 cost $3.50 a day, or 2.5 times the usual sum.", "Nobody complained."],
    ["He wrote to J. R. R. Tolkien and to H. G. Wells in the same week.", "Both answered."],
    ["The letter from Richard Strafford, Phil. Trans. A.D. 1668, was read aloud.", "It was long."],
    ["Prof. Jones, Lt. Smith and Gen. Grant arrived at 5 p.m. on Friday.", "The band played."],
    ["She lived on Baker St. in London.", "Her brother lived in Boston, Mass. for a while."],
    ["Ishmael asked, “Is this the Spouter-Inn?”", "The landlord nodded.", "It was."],
    ["The harpoon weighed approx. 4.5 kg. and was made of iron.", "Queequeg carried it everywhere."],
    ["Vol. II of the Cyclopaedia, p. 33, describes the sperm whale.", "The drawing is poor."],
    ["Wait… was that a spout?", "No, only a wave!"],
    ["The U.S. Navy bought the oil in Sept. and sold it in Oct.", "Profits were small."],
    ["Dr. Watson, i.e. the doctor, and Mr. Holmes, e.g. the detective, were not aboard.", "They stayed home."],
    ["Ch. 42 is called The Whiteness of the Whale.", "It is strange."],
    ["Fig. 3 shows the skeleton.", "Fig. 4 shows the jaw."],
]

JAPANESE = [["これは鯨の話です．", "船は港を出た。", "誰も帰らなかった！"]]
ARABIC = [["هل رأيت الحوت؟", "نعم، رأيته في البحر."]]


def text_of(paragraph: list[str]) -> str:
    return " ".join(paragraph)


def wrong_splits(found: list[str], truth: list[str]) -> tuple[int, int]:
    """(splits where there is no sentence end, sentence ends that were missed), comparing boundary positions."""

    def ends(parts: list[str]) -> set[int]:
        joined, out = "", set()
        for part in parts[:-1]:
            joined += " ".join(part.split())
            out.add(len(joined.replace(" ", "")))
        return out

    found_ends, true_ends = ends(found), ends(truth)
    return len(found_ends - true_ends), len(true_ends - found_ends)
