#!/usr/bin/env python3
"""Paired differences, with 95% bootstrap intervals, between the engine's replay policies and the
practitioner anchors, on the same students of the same split.

Reads the per-student CSVs `swiperank evaluate --per-student` and `scripts/anchors` write (one
row per policy and student: precision@k, recall@k, ndcg@k, auc, swipe_auc; blank where
undefined) and, for every (engine policy, anchor) pair, prints the mean difference over the
students both define, with a percentile bootstrap interval (10,000 resamples of students,
seeded: the same files print the same numbers). Standard library only.

Usage: python3 scripts/paired.py ENGINE.csv ANCHORS.csv [--engine P ...] [--anchor A ...]
"""
import argparse
import csv
import random
import sys


def read(path):
    table = {}
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            table.setdefault(row["policy"], {})[row["student_id"]] = row
    return table


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("engine_csv")
    parser.add_argument("anchors_csv")
    parser.add_argument("--engine", nargs="*", default=["engine_collaborative", "engine_population_prior"])
    parser.add_argument("--anchor", nargs="*", default=None)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    engine, anchors = read(args.engine_csv), read(args.anchors_csv)
    metrics = [m for m in next(iter(next(iter(engine.values())).values())).keys() if m not in ("policy", "student_id")]
    wanted = args.anchor or [a for a in anchors if a not in ("popularity", "random")]
    print("paired differences over the same students, mean [95% bootstrap CI]:")
    for e in args.engine:
        if e not in engine:
            sys.exit(f"{args.engine_csv}: no policy {e!r} (has {sorted(engine)})")
        for a in wanted:
            if a not in anchors:
                sys.exit(f"{args.anchors_csv}: no policy {a!r} (has {sorted(anchors)})")
            cells = []
            for m in metrics:
                pairs = [(float(x[m]), float(anchors[a][s][m])) for s, x in engine[e].items()
                         if s in anchors[a] and x[m] != "" and anchors[a][s][m] != ""]
                if not pairs:
                    continue
                d = [x - y for x, y in pairs]
                rng = random.Random(args.seed)
                means = sorted(sum(rng.choice(d) for _ in d) / len(d) for _ in range(10_000))
                cells.append(f"{m} {sum(d) / len(d):+.3f} [{means[249]:+.3f}, {means[9_749]:+.3f}] (n={len(d)})")
            print(f"  {e} − {a}:\n      " + "\n      ".join(cells))


if __name__ == "__main__":
    main()
