"""No hand-copied numbers: every measured figure in the README and the docs is traced to a
generated or committed results file, and this check fails when they drift apart.

Run: python3 scripts/check_numbers.py [--update] [--root DIR]   (stdlib only; bash scripts/test runs it)

What is a figure. In prose and tables outside code (fenced blocks, `inline code`, link targets and
HTML comments are skipped: code is commands and examples, which the walkthrough runs), a figure is
- a number with a decimal point (0.824, +0.113, −0.019, 1.5),
- a percentage (60%, 0.5%),
- a number with a unit of measure (45 s, 8 KiB, 1.14×, 272 ms).
Plain integers (counts, ports, positions, "200 students", "4th card") are not figures, nor are
confidence levels ("95% CI"), nor version numbers (1.2.3 and "Swift 6.1"-style ones in the allowlist).

How a figure is traced. A marker on the line before a block, or inside it, names its sources:

    <!-- numbers: notebooks-export/final_metrics.csv notebooks-export/report.md -->

A block is a paragraph, a list item or a table (lines up to the next blank line). Each figure of
the block must be a value of one of the sources, at the precision shown: 0.824 matches a source
value v when v rounds to 0.824 (|v − 0.824| ≤ 0.0005); a percentage also matches 100·v (60%
matches 0.5982). Signs are not compared (the docs state paired differences in either direction,
"engine − policy" or "policy − engine"), and thousands separators are ignored. A source is a
CSV (every cell; `file.csv:column=value` keeps only the rows where that column holds that
value), a JSON file (every number in it; `file.json:key` only those under that top-level key) or any other text file (every number in it: a report,
or a Swift file that defines a configuration constant). A source must be a generated artifact
(notebooks-export/), a committed results file written by a measuring run (docs/measurements/,
Benchmarks/results/), the shipped data (datasets/) or source code (Sources/): a figure cannot be
traced to another doc.

Generated tables. Between `<!-- generated: NAME -->` and `<!-- /generated -->` the lines must be
exactly what generator NAME writes from its CSV (see GENERATORS); --update rewrites them.

Numbers that are not measurements and sit outside a marked block (a timeout, a version) are listed
with the reason in scripts/check_numbers_allow.txt: `path | snippet | reason`; every figure inside
the snippet (a substring of one line) is allowed. An allowlist entry that no longer matches
anything is an error too, so the list stays small and true.
"""
import csv
import decimal
import glob
import json
import math
import os
import re
import sys

DOC_GLOBS = ["README.md", "docs/*.md", "Sources/*/*.docc/*.md", "Sources/*/*.docc/**/*.md"]
SOURCE_PREFIXES = ("notebooks-export/", "docs/measurements/", "Benchmarks/results/", "datasets/", "Sources/")

UNIT = r"(?:ms|µs|us|ns|s|min|h|MB|MiB|KiB|KB|GB|GiB|B|×|x|rps|req/s)"
SIGN = r"[+\-−]?"
FIGURE = re.compile(
    r"(?<![\w.@/#=^$~'\"-])(" + SIGN + r")(\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+\.\d+|\d+)"
    r"(?:(%)|\s?(" + UNIT + r")(?![\w/]))?(?![\w.]*\d)(?!\.\d)"
)
NUMBER = re.compile(r"[+\-−]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:[eE][+\-]?\d+)?")
MARKER = re.compile(r"<!--\s*numbers:\s*(.*?)\s*-->")
GEN_OPEN = re.compile(r"<!--\s*generated:\s*([\w-]+)\s*-->")
GEN_CLOSE = re.compile(r"<!--\s*/generated\s*-->")


class Figure:
    """One figure of a doc: its text, value, decimals shown and whether it is a percentage."""

    def __init__(self, text, value, decimals, percent, line):
        self.text, self.value, self.decimals, self.percent, self.line = text, value, decimals, percent, line

    def matches(self, values):
        """Whether some source value shows as this figure at its precision (signs not compared)."""
        tolerance = 0.5 * 10 ** -self.decimals + 1e-9
        target = abs(self.value)
        for v in values:
            v = abs(v)
            if abs(v - target) <= tolerance:
                return True
            if self.percent and abs(100 * v - target) <= tolerance:
                return True
        return False


def figures_in(text, line_number):
    """The figures of one line of prose (code, comments and link targets already removed)."""
    found = []
    for m in FIGURE.finditer(text):
        sign, digits, percent, unit = m.group(1), m.group(2), m.group(3), m.group(4)
        if not (("." in digits) or percent or unit):
            continue  # a plain integer: a count, not a measurement
        if percent and re.match(r"\s*(?:CI|bootstrap|confidence|interval)", text[m.end():]):
            continue  # "95% CI": a confidence level, not a measurement
        # "6.1+"-style versions and dotted triples never reach here as one figure (see FIGURE).
        clean = digits.replace(",", "")
        decimals = len(clean.split(".")[1]) if "." in clean else 0
        value = float(clean) * (-1 if sign in ("-", "−") else 1)
        found.append(Figure(m.group(0).strip(), value, decimals, bool(percent), line_number))
    return found


def strip_line(line):
    """A line without inline code, HTML comments, link targets and URLs."""
    line = re.sub(r"<!--.*?-->", " ", line)
    line = re.sub(r"`[^`]*`", " ", line)
    line = re.sub(r"\]\([^)]*\)", "] ", line)
    line = re.sub(r"https?://\S+", " ", line)
    return line


def blocks_of(lines):
    """(first line index, lines) of each block outside fenced code, generated regions aside."""
    blocks, current, start, fenced = [], [], 0, False
    for i, line in enumerate(lines):
        if line.lstrip().startswith("```"):
            fenced = not fenced
            if current:
                blocks.append((start, current))
                current = []
            continue
        if fenced:
            continue
        if line.strip() == "":
            if current:
                blocks.append((start, current))
                current = []
            continue
        if not current:
            start = i
        current.append(line)
    if current:
        blocks.append((start, current))
    return blocks


def number_values(text):
    return [float(m.group(0).replace(",", "").replace("−", "-")) for m in NUMBER.finditer(text)]


def load_source(root, spec, cache):
    """The numbers of a source `path` or `path.csv:column=value`."""
    if spec in cache:
        return cache[spec]
    path, _, condition = spec.partition(":")
    if not path.startswith(SOURCE_PREFIXES):
        raise ValueError(f"{spec}: not a generated or results file (allowed: {', '.join(SOURCE_PREFIXES)})")
    full = os.path.join(root, path)
    if not os.path.isfile(full):
        raise ValueError(f"{spec}: no such file")
    with open(full, encoding="utf-8") as f:
        text = f.read()
    if path.endswith(".csv"):
        rows = list(csv.DictReader(text.splitlines()))
        if condition:
            column, _, wanted = condition.partition("=")
            if rows and column not in rows[0]:
                raise ValueError(f"{spec}: no column {column}")
            rows = [r for r in rows if r.get(column) == wanted]
            if not rows:
                raise ValueError(f"{spec}: no row with {column}={wanted}")
        values = []
        for r in rows:
            for cell in r.values():
                try:
                    values.append(float(cell))
                except (TypeError, ValueError):
                    pass
    elif path.endswith(".json"):
        values = []

        def walk(x):
            if isinstance(x, bool):
                return
            if isinstance(x, (int, float)):
                values.append(float(x))
            elif isinstance(x, dict):
                for v in x.values():
                    walk(v)
            elif isinstance(x, list):
                for v in x:
                    walk(v)
            elif isinstance(x, str):
                values.extend(number_values(x))

        data = json.loads(text)
        if condition:
            if not isinstance(data, dict) or condition not in data:
                raise ValueError(f"{spec}: no key {condition}")
            data = data[condition]
        walk(data)
    else:
        values = number_values(text)
    cache[spec] = values
    return values


def load_allowlist(root):
    path = os.path.join(root, "scripts", "check_numbers_allow.txt")
    entries = []
    if not os.path.exists(path):
        return entries
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if not line.strip() or line.startswith("#"):
                continue
            parts = [p.strip() for p in line.rstrip("\n").split(" | ")]
            if len(parts) != 3 or not all(parts):
                raise ValueError(f"check_numbers_allow.txt:{n}: want `path | snippet | reason`")
            entries.append({"path": parts[0], "snippet": parts[1], "reason": parts[2], "used": False, "line": n})
    return entries


# Generated tables: name → (source CSV, function(rows) → lines).
REPLAY_LABELS = [
    ("engine", "engine (learned from the training swipes)"),
    ("profile_only", "profile only"),
    ("popularity", "popularity (likes in training)"),
    ("random", "random"),
    ("population_prior", "population prior (fitted on every student's training swipes), no learning"),
    ("engine_population_prior", "engine learning on top of that prior"),
    ("engine_student_bias", "engine with a bias per student"),
    ("engine_population_prior_bias", "same, on top of the prior (fitted with the bias)"),
]


def half_up(text, places):
    """A CSV cell rounded half up at `places` decimals, from its decimal text (0.2815 → 0.282), so
    a generated table does not depend on how the cell's binary double falls."""
    q = decimal.Decimal(1).scaleb(-places)
    return str(decimal.Decimal(text).quantize(q, rounding=decimal.ROUND_HALF_UP))


def replay_table(rows):
    by_policy = {r["policy"]: r for r in rows}
    lines = ["| policy | P@10 | R@10 | NDCG@10 | MAP@10 | MRR | AUC | swipe AUC | replay like rate (matches) |",
             "|---|---|---|---|---|---|---|---|---|"]
    for policy, label in REPLAY_LABELS:
        r = by_policy[policy]
        cells = [half_up(r[c], 3) for c in ("precision@10", "recall@10", "ndcg@10", "map@10", "mrr", "auc", "swipe_auc")]
        rate = half_up(r["replay_like_rate"], 3) if r["replay_like_rate"] else "—"
        cells.append(f"{rate} ({r['replay_matches']})")
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    return lines


GENERATORS = {"replay": ("notebooks-export/replay.csv", replay_table)}


def generated_lines(root, name):
    if name not in GENERATORS:
        raise ValueError(f"unknown generator {name} (known: {', '.join(sorted(GENERATORS))})")
    path, make = GENERATORS[name]
    with open(os.path.join(root, path), encoding="utf-8") as f:
        return make(list(csv.DictReader(f)))


def doc_files(root):
    seen = []
    for pattern in DOC_GLOBS:
        for p in sorted(glob.glob(os.path.join(root, pattern), recursive=True)):
            rel = os.path.relpath(p, root)
            if rel not in seen:
                seen.append(rel)
    return seen


def check_file(root, rel, allowlist, cache, update):
    """Errors of one doc; with `update`, rewrites its generated regions first."""
    errors = []
    full = os.path.join(root, rel)
    with open(full, encoding="utf-8") as f:
        lines = f.read().split("\n")
    # Generated regions: compare (or rewrite), then leave them out of the figure check.
    i, out, skip = 0, [], set()
    while i < len(lines):
        m = GEN_OPEN.search(lines[i])
        if not m:
            out.append(lines[i])
            i += 1
            continue
        end = next((j for j in range(i + 1, len(lines)) if GEN_CLOSE.search(lines[j])), None)
        if end is None:
            errors.append(f"{rel}:{i + 1}: <!-- generated: {m.group(1)} --> without <!-- /generated -->")
            out.extend(lines[i:])
            break
        try:
            want = generated_lines(root, m.group(1))
        except (ValueError, OSError, KeyError) as e:
            errors.append(f"{rel}:{i + 1}: {e}")
            want = lines[i + 1:end]
        have = lines[i + 1:end]
        if have != want and not update:
            diff = next((k for k in range(max(len(have), len(want))) if k >= len(have) or k >= len(want) or have[k] != want[k]), 0)
            errors.append(f"{rel}:{i + 2 + diff}: generated table '{m.group(1)}' differs from {GENERATORS.get(m.group(1), ('?',))[0]}"
                          f" (run python3 scripts/check_numbers.py --update):\n    have: {have[diff] if diff < len(have) else '(nothing)'}"
                          f"\n    want: {want[diff] if diff < len(want) else '(nothing)'}")
        out.append(lines[i])
        start = len(out)
        out.extend(want if update else have)
        skip.update(range(start, len(out)))
        out.append(lines[end])
        i = end + 1
    if update and out != lines:
        with open(full, "w", encoding="utf-8") as f:
            f.write("\n".join(out))
    lines = out
    pending = None  # sources of a marker alone in its block: they apply to the next block
    for start, block in blocks_of(lines):
        markers = [m.group(1) for line in block for m in MARKER.finditer(line)]
        prose = [(start + k, strip_line(line)) for k, line in enumerate(block) if start + k not in skip]
        figures = [fig for n, text in prose for fig in figures_in(text, n + 1)]
        if markers and not figures:
            pending = " ".join(markers)
            continue
        specs = (" ".join(markers) if markers else pending or "").split()
        pending = None
        values = []
        for spec in specs:
            try:
                values.extend(load_source(root, spec, cache))
            except (ValueError, OSError, json.JSONDecodeError) as e:
                errors.append(f"{rel}:{start + 1}: source {e}")
        for fig in figures:
            raw_line = lines[fig.line - 1]
            allowed = [a for a in allowlist if a["path"] == rel and a["snippet"] in raw_line
                       and fig.text in strip_line(a["snippet"])]
            if allowed:
                for a in allowed:
                    a["used"] = True
                continue
            if not specs:
                errors.append(f"{rel}:{fig.line}: figure {fig.text} has no source (add <!-- numbers: FILE --> to its block, "
                              f"or list it in scripts/check_numbers_allow.txt with a reason)")
            elif not fig.matches(values):
                errors.append(f"{rel}:{fig.line}: figure {fig.text} is not in {' '.join(specs)} (drifted or mistyped)")
    return errors


def check(root, update=False):
    """Every error of the docs under `root` (an empty list when they are all traced)."""
    try:
        allowlist = load_allowlist(root)
    except ValueError as e:
        return [str(e)]
    cache, errors = {}, []
    files = doc_files(root)
    for rel in files:
        errors.extend(check_file(root, rel, allowlist, cache, update))
    for a in allowlist:
        if not a["used"]:
            errors.append(f"check_numbers_allow.txt:{a['line']}: '{a['snippet']}' no longer matches a figure of {a['path']} (remove it)")
    return errors


def main(argv):
    update = "--update" in argv
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    if "--root" in argv:
        root = argv[argv.index("--root") + 1]
    errors = check(root, update=update)
    for e in errors:
        print(e, file=sys.stderr)
    if errors:
        print(f"check-numbers: {len(errors)} figure(s) not traced to a generated or results file", file=sys.stderr)
        return 1
    print(f"check-numbers: every figure in {len(doc_files(root))} docs is traced")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
