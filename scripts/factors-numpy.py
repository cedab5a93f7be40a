#!/usr/bin/env python3
"""An external trainer for SwipeRank's factor model file, in numpy alone.

Fits implicit ALS (Hu, Koren and Volinsky 2008) on a swipe log and writes the documented
FactorModelFile JSON (version 1) that `swiperank serve --factors FILE` loads: the path a
deployment whose log outgrows one machine takes with Spark MLlib's ALS (write its item factors
and the settings the same way). The objective matches `swiperank fit-factors`: a like is a 1
with weight 1 + alpha, a dislike a 0 with weight 1 + alpha_dislike, every item never swiped a 0
with weight 1, ridge lambda on both sides.

It also writes, beside the model, what one student's swipes must give (the closed-form user
solve and every item's affinity), so a test can hold the Swift loader and online update to an
implementation that shares no code with it.

Usage: python3 scripts/factors-numpy.py CATALOG.csv SWIPES.csv OUT.json [EXPECTED.json]
"""
import csv
import json
import sys

import numpy as np

F, LAMBDA, ALPHA, ALPHA_DISLIKE, ITERATIONS, SEED = 4, 1.0, 5.0, 2.0, 10, 7


def main(catalog_path, swipes_path, out_path, expected_path=None):
    with open(catalog_path, newline="") as f:
        ids = [row["id"] for row in csv.DictReader(f)]
    index = {item: i for i, item in enumerate(ids)}
    answers = {}  # (student, item) -> liked, the last answer in time
    with open(swipes_path, newline="") as f:
        rows = sorted(csv.DictReader(f), key=lambda r: (int(r["timestamp"]), r["item_id"]))
        for r in rows:
            answers[(r["student_id"], index[r["item_id"]])] = r["action"] == "like"
    students = sorted({s for s, _ in answers})
    sindex = {s: i for i, s in enumerate(students)}
    n, m = len(ids), len(students)
    rng = np.random.default_rng(SEED)
    items = 0.1 * rng.uniform(-1, 1, (n, F))
    users = np.zeros((m, F))
    by_student = [[] for _ in range(m)]
    by_item = [[] for _ in range(n)]
    for (s, i), liked in answers.items():
        by_student[sindex[s]].append((i, liked))
        by_item[i].append((sindex[s], liked))

    def half_step(logs, other):
        gram = other.T @ other + LAMBDA * np.eye(F)
        out = np.zeros((len(logs), F))
        for e, log in enumerate(logs):
            if not log:
                continue
            a, b = gram.copy(), np.zeros(F)
            for j, liked in log:
                c = ALPHA if liked else ALPHA_DISLIKE
                a += c * np.outer(other[j], other[j])
                if liked:
                    b += (1 + ALPHA) * other[j]
            out[e] = np.linalg.solve(a, b)
        return out

    for _ in range(ITERATIONS):
        users = half_step(by_student, items)
        items = half_step(by_item, users)
    seen = [i for i in range(n) if by_item[i]]
    model = {
        "version": 1, "dimension": F, "confidence": ALPHA, "dislike_confidence": ALPHA_DISLIKE,
        "regularization": LAMBDA, "weight": 2.0,
        "item_ids": [ids[i] for i in seen], "item_factors": items[seen].tolist(),
        "fitted_on": f"scripts/factors-numpy.py: {m} students, {len(answers)} answers",
    }
    with open(out_path, "w") as f:
        json.dump(model, f, indent=1)
        f.write("\n")
    if expected_path:
        # One student's swipes against the written model: items the file leaves out have a zero
        # factor (no embedding), and the prior's Gram matrix runs over every catalog item.
        v = np.zeros((n, F))
        v[seen] = items[seen]
        student = students[0]
        swipes = [(ids[i], liked) for (s, i), liked in sorted(answers.items()) if s == student]
        a, b = v.T @ v + LAMBDA * np.eye(F), np.zeros(F)
        for item, liked in swipes:
            x = v[index[item]]
            a += (ALPHA if liked else ALPHA_DISLIKE) * np.outer(x, x)
            if liked:
                b += (1 + ALPHA) * x
        u = np.linalg.solve(a, b)
        with open(expected_path, "w") as f:
            json.dump({"swipes": [{"item_id": i, "liked": l} for i, l in swipes],
                       "affinities": dict(zip(ids, (v @ u).tolist()))}, f, indent=1)
            f.write("\n")


if __name__ == "__main__":
    if len(sys.argv) not in (4, 5):
        sys.exit(__doc__)
    main(*sys.argv[1:])
