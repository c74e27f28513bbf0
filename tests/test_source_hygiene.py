"""Library code says what and why; measured figures belong on the performance page.

Every ``.py`` file under ``src/sparsekernel`` (the loaders in ``datasets/`` excepted, which
must name the data sets they read) is scanned line by line for

- durations: a number followed by a time unit (``20 s``, ``0.3 ms``, ``5 min``, ``2 h``);
- speed ratios: a number followed by ``x`` (``1.5x``, ``0.39x``, ``3x SVC's``);
- before -> after figures: a number, ``->`` or ``→``, a number (``12 -> 7``);
- the names of the benchmark data sets (``ijcnn1``, ``a9a``, ``covtype``, ``mnist``, ...;
  ``letter`` only where it means the data set: ``letter's``, ``on letter``, ``letter (``).

At most ``LIMIT`` matching lines may remain (a CLI help string that has to name a file, say).
"""

import re
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src" / "sparsekernel"
SKIP = SRC / "datasets"
LIMIT = 10

_NUM = r"(?<![\w.])\d+(?:\.\d+)?"  # a plain number: not part of a name, 1e-6 or 2.5.1
PATTERNS = {
    # a number then a time unit, the unit a word of its own (not "10 samples", "3 min_df")
    "duration": re.compile(
        _NUM + r"\s?(?:s|ms|us|µs|ns|sec|secs|seconds?|minutes?|mins?|h|hours?)(?![\w(])"),
    # a number glued to x (1.5x, 10x), or "x SVC's"; never "2 * x" or "2 ** x"
    "ratio": re.compile(_NUM + r"x(?![\w(\[])|\bx\s+(?:SVC|LIBSVM|ThunderSVM)'s\b",
                        re.IGNORECASE),
    # a measured before -> after pair: a number, an arrow, a number
    "before->after": re.compile(_NUM + r"\s*%?\s*(?:->|→|=>)\s*~?\d"),
    "data set": re.compile(
        r"\b(?:ijcnn1?|a\d+a|w\d+a|covtype|covertype|(?:fashion[_ -]?)?mnist(?:_5k)?|"
        r"fashion[_ -]mnist|pendigits|dna|shuttle|abalone|california(?:[_ ]housing)?|"
        r"cal_housing|higgs|susy|cadata|usps|cod-?rna|webspam|rcv1|news20|adult|ripley|"
        r"banana|ringnorm|twonorm|waveform|raetsch|r[aä]tsch)\b"
        r"|\bletter(?:'s\b|\s*\(|\.scale)|\b(?:on|of|for|in|from)\s+letter\b",
        re.IGNORECASE),
}


def offending_lines(root=SRC):
    """``(path, line number, kind, text)`` of each line that matches a pattern."""
    found = []
    for path in sorted(root.rglob("*.py")):
        if SKIP in path.parents:
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            for kind, pattern in PATTERNS.items():
                if pattern.search(line):
                    found.append((path, number, kind, line.strip()))
                    break
    return found


def test_patterns_match_what_they_mean():
    hits = ["takes about 20 s", "0.3 ms per row", "in 5 minutes", "1.5x faster", "0.39x",
            "3x SVC's time", "at x SVC's speed", "error 12.1 -> 7.4", "from 80 → 20 basis",
            "on ijcnn1", "a9a and w8a", "covtype", "Fashion-MNIST", "mnist_5k", "letter's 26",
            "on letter", "letter (26 classes)", "california_housing"]
    misses = ["y = 2 ** x", "tol=1e-6", "shape[0] -> (n, m)", "2 * x + 1", "n_samples -> m",
              "10 samples", "3 min_df", "the letter a", "f(x) -> y", "x -> 2 x", "3d", "1.5",
              "s.shape[0]", "array(2)", "x2 = 5", "float32", "step 2 (x fixed)"]
    for text in hits:
        assert any(p.search(text) for p in PATTERNS.values()), text
    for text in misses:
        assert not any(p.search(text) for p in PATTERNS.values()), text


def test_source_has_few_figures_and_data_set_names():
    found = offending_lines()
    report = "\n".join(f"{path.relative_to(SRC.parents[1])}:{number}: [{kind}] {text}"
                       for path, number, kind, text in found)
    assert len(found) <= LIMIT, f"{len(found)} lines (at most {LIMIT}):\n{report}"
