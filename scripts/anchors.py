"""Practitioner anchors for `swiperank evaluate`'s replay: implicit ALS, implicit BPR and LightFM
WARP (with item features) scored on exactly the replay's split and metrics.

Run through `bash scripts/anchors` (which makes the pinned venv); see that file's header for the
protocol. This file holds everything else: reading the generic catalog and swipe log, the split
(a port of `ReplayEvaluator.replay`), the tie-aware metrics (a port of
`RankingMetrics.tieAware`), the popularity and random policies (ports of the replay's own, as a
check that split and metrics match Swift's), the models, their inner-split tuning and the output.
"""
from __future__ import annotations

import argparse
import csv
import json
import math
import os
import re
import sys
import time
import unicodedata

import numpy as np

PROG = "scripts/anchors"


class InputError(Exception):
    """Bad input, reported as `file:line: message`."""


# ---------------------------------------------------------------------------------------------
# Tie-aware metrics: a port of RankingMetrics.tieAware (Sources/SwipeRankEvaluation/RankingMetrics.swift)


def tie_aware(scores, relevant, k):
    """Precision@k, recall@k, NDCG@k and AUC of a scored candidate set, each the expectation over
    every order of tied scores, as `RankingMetrics.tieAware` computes them.

    Scores are cast to float32 first (Swift's `[Float]`), so ties are float32 ties. Within a group
    of equal scores every position holds the group's share of relevant items; in AUC a tied
    (positive, negative) pair counts 1/2. Returns (precision, recall, ndcg, auc) with auc None
    without both a relevant and an irrelevant candidate, and (0, 0, 0, None) without a relevant one.
    The sums over the top k run in Swift's order (same float results); AUC's pair count is a sum of
    half-integers, exact in any order.
    """
    s = np.asarray(scores, dtype=np.float32).ravel()
    rel = np.asarray(relevant, dtype=bool).ravel()
    if k <= 0 or s.shape != rel.shape:
        raise ValueError("tie-aware metrics need k > 0 and one flag per score")
    if np.isnan(s).any():
        raise ValueError("tie-aware metrics need scores without NaN")
    n = s.size
    positives = int(rel.sum())
    negatives = n - positives
    if positives == 0:
        return 0.0, 0.0, 0.0, None
    order = np.argsort(-s, kind="stable")
    ss, rr = s[order], rel[order]
    bounds = np.flatnonzero(ss[1:] != ss[:-1]) + 1
    starts = np.concatenate(([0], bounds))
    sizes = np.diff(np.append(starts, n))
    group_pos = np.add.reduceat(rr.astype(np.int64), starts)
    group_neg = sizes - group_pos
    negatives_down_to_here = np.cumsum(group_neg)  # negatives above the group plus the group's own
    auc_pairs = float(np.sum(group_pos * (negatives - negatives_down_to_here))) \
        + 0.5 * float(np.sum(group_pos * group_neg))
    hits = dcg = 0.0
    position = 0
    for g in range(len(starts)):
        if position >= k:
            break
        size = int(sizes[g])
        share = int(group_pos[g]) / size
        for _ in range(size):
            if position >= k:
                break
            hits += share
            dcg += share / math.log2(position + 2)
            position += 1
    ideal = 0.0
    for i in range(min(k, positives)):
        ideal += 1 / math.log2(i + 2)
    auc = auc_pairs / (positives * negatives) if negatives > 0 else None
    return hits / k, hits / positives, dcg / ideal, auc


# ---------------------------------------------------------------------------------------------
# Swift's random policy: SplitMix64 (Sources/SwipeRankNumerics/SplitMix64.swift) and
# Float.random(in: 0..<1, using:) of the Swift 6 standard library (low 24 bits of next() × 2⁻²⁴).

_MASK64 = (1 << 64) - 1


def splitmix64_floats(seed, count):
    """The first `count` values of `Float.random(in: 0..<1, using: &SplitMix64(seed: seed))`."""
    with np.errstate(over="ignore"):
        state = np.uint64(seed & _MASK64) + np.arange(1, count + 1, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15)
        z = state
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        z = z ^ (z >> np.uint64(31))
    return (z & np.uint64(0xFFFFFF)).astype(np.float32) * np.float32(2.0 ** -24)


# ---------------------------------------------------------------------------------------------
# Input: the generic catalog (schema JSON + CSV) and the swipe log


def _open_csv(path):
    try:
        f = open(path, newline="", encoding="utf-8-sig")
    except OSError as e:
        raise InputError(f"{path}: cannot read: {e.strerror}") from None
    reader = csv.reader(f)
    try:
        header = [h.strip() for h in next(reader)]
    except StopIteration:
        f.close()
        raise InputError(f"{path}:1: empty file (a header line is needed)") from None
    return f, reader, header


def _column(path, header, name, why=""):
    if name not in header:
        raise InputError(f"{path}:1: missing column \"{name}\"{why} (header: {', '.join(header)})")
    return header.index(name)


def _number(text):
    try:
        v = float(text)
    except ValueError:
        return None
    return v if math.isfinite(v) else None


def read_catalog(schema_path, catalog_path):
    """The item ids in row order and the item-feature matrix LightFM gets (before identity
    features), with the feature names. From the schema's `features`: `flag` -> that column (1, true,
    yes, y / 0, false, no, n; empty -> 0), `bins` -> one 0/1 column per bin ([edges[i-1], edges[i])),
    `categorical` -> one 0/1 column per category, and for `bins`/`categorical`/`flag` with missing
    values imputed (the default) a `<name>_missing` indicator, as Swift's catalog builds them;
    `numeric` features are skipped (see the wrapper's header)."""
    try:
        with open(schema_path, encoding="utf-8") as f:
            schema = json.load(f)
    except OSError as e:
        raise InputError(f"{schema_path}: cannot read: {e.strerror}") from None
    except json.JSONDecodeError as e:
        raise InputError(f"{schema_path}:{e.lineno}: not valid JSON: {e.msg}") from None
    if not isinstance(schema, dict) or not isinstance(schema.get("features"), list) or not schema["features"]:
        raise InputError(f"{schema_path}: needs a non-empty \"features\" list")
    id_column = schema.get("id_column")
    if not isinstance(id_column, str):
        raise InputError(f"{schema_path}: needs \"id_column\"")
    f, reader, header = _open_csv(catalog_path)
    with f:
        id_col = _column(catalog_path, header, id_column, f" (the schema's id_column)")
        specs = []
        for i, spec in enumerate(schema["features"]):
            if not isinstance(spec, dict) or not isinstance(spec.get("column"), str) or not isinstance(spec.get("kind"), str):
                raise InputError(f"{schema_path}: features[{i}] needs \"column\" and \"kind\"")
            kind = spec["kind"]
            if kind not in ("flag", "bins", "categorical", "numeric"):
                raise InputError(f"{schema_path}: features[{i}].kind \"{kind}\" is not one of numeric, categorical, bins, flag")
            if spec.get("missing", "impute") not in ("impute", "reject"):
                raise InputError(f"{schema_path}: features[{i}].missing \"{spec.get('missing')}\" is not one of impute, reject")
            if kind == "bins":
                edges, labels = spec.get("edges"), spec.get("labels")
                if (not isinstance(edges, list) or not edges or not all(isinstance(e, (int, float)) for e in edges)
                        or any(a >= b for a, b in zip(edges, edges[1:]))):
                    raise InputError(f"{schema_path}: features[{i}].edges must be strictly increasing numbers")
                if not isinstance(labels, list) or len(labels) != len(edges) + 1:
                    raise InputError(f"{schema_path}: features[{i}].labels needs {len(edges) + 1} labels")
            col = _column(catalog_path, header, spec["column"], f" (named by {schema_path} features[{i}])")
            specs.append((spec, col))
        ids, rows = [], []
        seen = {}
        for row in reader:
            line = reader.line_num
            if not any(cell.strip() for cell in row):
                continue
            if len(row) < len(header):
                raise InputError(f"{catalog_path}:{line}: {len(row)} fields, the header has {len(header)}")
            item = row[id_col].strip()
            if not item:
                raise InputError(f"{catalog_path}:{line}: empty {id_column}")
            if item in seen:
                raise InputError(f"{catalog_path}:{line}: item \"{item}\" already on line {seen[item]}")
            seen[item] = line
            ids.append(item)
            rows.append((line, row))
    if not ids:
        raise InputError(f"{catalog_path}: no items")
    columns, names = [], []
    for (spec, col) in specs:
        kind, name = spec["kind"], spec.get("name") or spec["column"]
        reject = spec.get("missing", "impute") == "reject"
        if kind == "numeric":
            continue
        n = len(rows)
        missing = np.zeros(n, dtype=np.float32)

        def absent(line):
            if reject:
                raise InputError(f"{catalog_path}:{line}: empty value in required column \"{spec['column']}\"")

        if kind == "flag":
            bits = np.zeros(n, dtype=np.float32)
            for r, (line, row) in enumerate(rows):
                cell = row[col].strip().lower()
                if not cell:
                    absent(line)
                    missing[r] = 1
                elif cell in ("1", "true", "yes", "y"):
                    bits[r] = 1
                elif cell not in ("0", "false", "no", "n"):
                    raise InputError(f"{catalog_path}:{line}: \"{row[col]}\" is not a 0/1 flag in column \"{spec['column']}\"")
            columns.append(bits)
            names.append(name)
        elif kind == "bins":
            edges, labels = spec["edges"], spec["labels"]
            hot = np.zeros((len(labels), n), dtype=np.float32)
            for r, (line, row) in enumerate(rows):
                cell = row[col].strip()
                if not cell:
                    absent(line)
                    missing[r] = 1
                    continue
                v = _number(cell)
                if v is None:
                    raise InputError(f"{catalog_path}:{line}: \"{cell}\" in column \"{spec['column']}\" is not a number")
                hot[next((j for j, e in enumerate(edges) if v < e), len(edges)), r] = 1
            columns.extend(hot)
            names.extend(f"{name}={label}" for label in labels)
        else:  # categorical
            values = [row[col].strip() for _, row in rows]
            allowed = spec.get("categories") or sorted({v for v in values if v})
            position = {c: j for j, c in enumerate(allowed)}
            hot = np.zeros((len(allowed), n), dtype=np.float32)
            for r, (line, row) in enumerate(rows):
                if not values[r]:
                    absent(line)
                    missing[r] = 1
                elif values[r] not in position:
                    raise InputError(f"{catalog_path}:{line}: \"{values[r]}\" is not a category of column \"{spec['column']}\"")
                else:
                    hot[position[values[r]], r] = 1
            columns.extend(hot)
            names.extend(f"{name}={c}" for c in allowed)
        if not reject and missing.any():  # Swift adds the indicator anyway; all zeros, it changes nothing here
            columns.append(missing)
            names.append(f"{name}_missing")
    features = np.stack(columns, axis=1) if columns else np.zeros((len(ids), 0), dtype=np.float32)
    return ids, features, names


def read_swipes(path, item_row):
    """Students in order of first appearance and each one's swipes in file order, as
    (item row, liked, timestamp, item id, line); errors name the file and line."""
    f, reader, header = _open_csv(path)
    with f:
        cols = [_column(path, header, c) for c in ("student_id", "item_id", "action", "timestamp")]
        logs = {}
        for row in reader:
            line = reader.line_num
            if not any(cell.strip() for cell in row):
                continue
            if len(row) < len(header):
                raise InputError(f"{path}:{line}: {len(row)} fields, the header has {len(header)}")
            s, i, a, t = (row[c].strip() for c in cols)
            if not s:
                raise InputError(f"{path}:{line}: empty student_id")
            if not i:
                raise InputError(f"{path}:{line}: empty item_id")
            if i not in item_row:
                raise InputError(f"{path}:{line}: unknown item \"{i}\" (not in the catalog)")
            if a not in ("like", "dislike"):
                raise InputError(f"{path}:{line}: action \"{row[cols[2]]}\" is not like or dislike")
            if not re.fullmatch(r"[+-]?[0-9]+", t) or not -2**63 <= int(t) < 2**63:
                raise InputError(f"{path}:{line}: timestamp \"{row[cols[3]]}\" is not an integer")
            logs.setdefault(s, []).append((item_row[i], a == "like", int(t), i, line))
    if not logs:
        raise InputError(f"{path}: no swipes")
    return logs


# ---------------------------------------------------------------------------------------------
# The split: a port of ReplayEvaluator.replay's


def time_split(logs, train_fraction):
    """Each student's swipes sorted by (timestamp, item id), the first floor(count × fraction) to
    train, the rest held out. `logs`: student -> swipes; returns student -> (train, test)."""
    out = {}
    for student, log in logs.items():
        # Swift orders Strings by their canonical (NFC) Unicode scalars.
        ordered = sorted(log, key=lambda x: (x[2], unicodedata.normalize("NFC", x[3])))
        cut = math.floor(len(ordered) * train_fraction)
        out[student] = (ordered[:cut], ordered[cut:])
    return out


class Task:
    """One split made ready to score: per student the candidates (every item not swiped in
    training), their relevance (liked in the held-out part), and the held-out swiped items with
    their last answer (for swipe AUC)."""

    def __init__(self, students, split, n_items):
        self.students = students
        self.n_items = n_items
        self.train = [split[s][0] for s in students]
        self.rows = []
        for s in students:
            train, test = split[s]
            train_rows = {x[0] for x in train}
            test_likes = {x[0] for x in test if x[1]}
            held_out = {}
            for x in test:
                held_out[x[0]] = x[1]
            swiped = np.array(sorted(held_out), dtype=np.int64)
            labels = np.array([held_out[r] for r in swiped.tolist()], dtype=bool)
            if test_likes:
                mask = np.ones(n_items, dtype=bool)
                mask[list(train_rows)] = False
                candidates = np.flatnonzero(mask)
                relevant = np.isin(candidates, list(test_likes))
            else:
                candidates = relevant = None
            self.rows.append((candidates, relevant, swiped, labels))
        self.ranked = sum(c is not None for c, _, _, _ in self.rows)

    def matrices(self):
        """Training likes (last answer per item: 1 if liked) and training swipes (every swiped
        item, 2 for a like, 1 for a dislike, by the last answer), users x items, as CSR float32."""
        import scipy.sparse as sp
        likes_r, likes_c, all_r, all_c, all_v = [], [], [], [], []
        for u, train in enumerate(self.train):
            last = {}
            for x in train:
                last[x[0]] = x[1]
            for row, liked in last.items():
                all_r.append(u)
                all_c.append(row)
                all_v.append(2.0 if liked else 1.0)
                if liked:
                    likes_r.append(u)
                    likes_c.append(row)
        shape = (len(self.students), self.n_items)
        likes = sp.csr_matrix((np.ones(len(likes_r), dtype=np.float32), (likes_r, likes_c)), shape=shape)
        swipes = sp.csr_matrix((np.array(all_v, dtype=np.float32), (all_r, all_c)), shape=shape)
        likes.sort_indices()
        swipes.sort_indices()
        return likes, swipes

    def like_counts(self):
        """Likes per item over every student's training swipes (each like swipe counts)."""
        counts = np.zeros(self.n_items, dtype=np.float32)
        for train in self.train:
            for x in train:
                if x[1]:
                    counts[x[0]] += 1
        return counts

    def evaluate(self, scores, k):
        """Per-student metrics of a score matrix (students x items, or one row for everyone)."""
        scores = np.asarray(scores, dtype=np.float32)
        per = {m: [None] * len(self.students) for m in ("precision", "recall", "ndcg", "auc", "swipe_auc")}
        constant = 0
        for u, (candidates, relevant, swiped, labels) in enumerate(self.rows):
            row = scores if scores.ndim == 1 else scores[u]
            if candidates is not None:
                cs = row[candidates]
                p, r, n, a = tie_aware(cs, relevant, k)
                per["precision"][u], per["recall"][u], per["ndcg"][u], per["auc"][u] = p, r, n, a
                if cs.size and bool(np.all(cs == cs[0])):
                    constant += 1
            if swiped.size:
                per["swipe_auc"][u] = tie_aware(row[swiped], labels, 1)[3]
        return per, constant


def mean(values):
    """Mean of the defined values, summed in order as Swift's `reduce(0, +)`; NaN without any."""
    v = [x for x in values if x is not None]
    return sum(v) / len(v) if v else float("nan")


def means(per):
    return {m: mean(v) for m, v in per.items()}


# ---------------------------------------------------------------------------------------------
# Models. Every one returns a students x items float32 score matrix.

SEED = 20240601


def fit_als(task, params, threads):
    from implicit.cpu.als import AlternatingLeastSquares
    likes, swipes = task.matrices()
    model = AlternatingLeastSquares(factors=params["factors"], regularization=params["regularization"],
                                    alpha=params["alpha"], iterations=params["iterations"], use_cg=True,
                                    calculate_training_loss=False, num_threads=threads, random_state=SEED)
    model.fit(likes if params["positives"] == "likes" else swipes, show_progress=False)
    return np.asarray(model.user_factors, dtype=np.float32) @ np.asarray(model.item_factors, dtype=np.float32).T


def fit_bpr(task, params, threads):
    from implicit.cpu.bpr import BayesianPersonalizedRanking
    likes, swipes = task.matrices()
    matrix = likes if params["positives"] == "likes" else (swipes > 0).astype(np.float32).tocsr()
    model = BayesianPersonalizedRanking(factors=params["factors"], learning_rate=params["learning_rate"],
                                        regularization=params["regularization"], iterations=params["iterations"],
                                        num_threads=threads, random_state=SEED, verify_negative_samples=True)
    model.fit(matrix, show_progress=False)
    # implicit keeps the item bias as the last factor (the users' last factor is 1).
    return np.asarray(model.user_factors, dtype=np.float32) @ np.asarray(model.item_factors, dtype=np.float32).T


def lightfm_item_features(features):
    """LightFM's default item features: an identity feature per item plus the catalog's features,
    each row scaled to sum 1 (what `lightfm.data.Dataset.build_item_features` does by default)."""
    import scipy.sparse as sp
    n = features.shape[0]
    matrix = sp.hstack([sp.identity(n, dtype=np.float32, format="csr"), sp.csr_matrix(features)], format="csr")
    sums = np.asarray(matrix.sum(axis=1)).ravel()
    return (sp.diags(1 / sums).astype(np.float32) @ matrix).astype(np.float32).tocsr()


def lightfm_runs(task, params, epochs_list, item_features, threads):
    """Trains one LightFM WARP model and yields (epochs, scores) at each checkpoint of
    `epochs_list` (increasing), continuing the same run (fit_partial)."""
    from lightfm import LightFM
    likes, swipes = task.matrices()
    matrix = (likes if params["positives"] == "likes" else (swipes > 0).astype(np.float32)).tocoo()
    model = LightFM(no_components=params["components"], loss="warp", learning_rate=params["learning_rate"],
                    item_alpha=params["alpha"], user_alpha=params["alpha"], random_state=np.random.RandomState(SEED))
    n_users, n_items = matrix.shape
    users = np.repeat(np.arange(n_users, dtype=np.int32), n_items)
    items = np.tile(np.arange(n_items, dtype=np.int32), n_users)
    done = 0
    for epochs in epochs_list:
        model.fit_partial(matrix, item_features=item_features, epochs=epochs - done, num_threads=threads)
        done = epochs
        scores = model.predict(users, items, item_features=item_features, num_threads=threads)
        yield epochs, np.asarray(scores, dtype=np.float32).reshape(n_users, n_items)


# The grids (small on purpose: the whole run stays within a few minutes on 2 cores).
def grids(quick):
    positives = ["likes", "swipes"]
    if quick:
        return {"als": [dict(positives="likes", factors=32, regularization=0.1, alpha=10.0, iterations=15)],
                "bpr": [dict(positives="likes", factors=32, learning_rate=0.05, regularization=0.01, iterations=50)],
                "lightfm": ([dict(positives="likes", components=32, learning_rate=0.05, alpha=0.0)], [10])}
    als = [dict(positives=p, factors=f, regularization=r, alpha=a, iterations=15)
           for p in positives for f in (8, 16, 32, 64) for r in (0.01, 0.1, 1.0) for a in (1.0, 3.0, 10.0)]
    bpr = [dict(positives=p, factors=f, learning_rate=lr, regularization=r, iterations=it)
           for p in positives for f in (16, 64) for lr in (0.005, 0.01, 0.02) for r in (0.001, 0.01) for it in (50, 100, 200)]
    lightfm = ([dict(positives=p, components=c, learning_rate=lr, alpha=a)
                for p in positives for c in (32, 64, 128) for lr in (0.05, 0.1) for a in (0.0, 1e-6)], [10, 30, 60])
    return {"als": als, "bpr": bpr, "lightfm": lightfm}


def describe(key, params):
    if key == "als":
        return (f"{params['positives']}, {params['factors']} factors, reg {params['regularization']:g}, "
                f"alpha {params['alpha']:g}, {params['iterations']} iterations")
    if key == "bpr":
        return (f"{params['positives']}, {params['factors']} factors, lr {params['learning_rate']:g}, "
                f"reg {params['regularization']:g}, {params['iterations']} iterations")
    return (f"{params['positives']}, {params['components']} components, lr {params['learning_rate']:g}, "
            f"alpha {params['alpha']:g}, {params['epochs']} epochs")


def tune_and_fit(key, grid, inner, outer, k, item_features, threads, log):
    """Scores every grid point on the inner split (mean NDCG@k on validation), picks the best (the
    first in grid order on a tie), refits on the whole training part and returns its test scores."""
    table = []
    if key == "lightfm":
        points, checkpoints = grid
        for params in points:
            for epochs, scores in lightfm_runs(inner, params, checkpoints, item_features, threads):
                p = dict(params, epochs=epochs)
                table.append((p, means(inner.evaluate(scores, k)[0])["ndcg"]))
                log(f"  {key} {describe(key, p)}: validation NDCG@{k} {table[-1][1]:.4f}")
    else:
        fit = fit_als if key == "als" else fit_bpr
        for params in grid:
            table.append((params, means(inner.evaluate(fit(inner, params, threads), k)[0])["ndcg"]))
            log(f"  {key} {describe(key, params)}: validation NDCG@{k} {table[-1][1]:.4f}")
    best, best_ndcg = table[0]
    for params, ndcg in table[1:]:
        if ndcg > best_ndcg:
            best, best_ndcg = params, ndcg
    if key == "lightfm":
        params = {x: y for x, y in best.items() if x != "epochs"}
        scores = list(lightfm_runs(outer, params, [best["epochs"]], item_features, threads))[0][1]
    else:
        scores = (fit_als if key == "als" else fit_bpr)(outer, best, threads)
    return best, best_ndcg, table, scores


# ---------------------------------------------------------------------------------------------
# The check against Swift's own replay table (scripts/movielens writes it to OUT/replay.txt)


def parse_replay_table(text):
    """The policy rows of `swiperank evaluate`'s replay table: policy -> {metric: value}."""
    lines = text.splitlines()
    for i, line in enumerate(lines):
        words = line.split()
        if words[:1] == ["policy"] and "swipe_auc" in words:
            metrics = words[1:words.index("swipe_auc") + 1]
            rows = {}
            for row in lines[i + 1:]:
                cells = row.split()
                if len(cells) < len(metrics) + 1:
                    break
                try:
                    rows[cells[0]] = {m: float(v) for m, v in zip(metrics, cells[1:len(metrics) + 1])}
                except ValueError:
                    break
            return rows
    return {}


def check_against_swift(path, ours, k):
    """Compares our popularity and random means, rounded to 3 decimals as Swift prints them."""
    if not os.path.exists(path):
        return {"file": path, "result": "not run", "detail": f"no {path} (scripts/movielens writes it)"}
    with open(path, encoding="utf-8") as f:
        swift = parse_replay_table(f.read())
    names = {"precision": f"precision@{k}", "recall": f"recall@{k}", "ndcg": f"ndcg@{k}", "auc": "auc", "swipe_auc": "swipe_auc"}
    compared, mismatches = 0, []
    for policy in ("popularity", "random"):
        if policy not in swift:
            mismatches.append(f"{policy}: not in the Swift table")
            continue
        for ours_name, swift_name in names.items():
            if swift_name not in swift[policy]:
                continue
            compared += 1
            mine = float(f"{ours[policy][ours_name]:.3f}")
            if mine != swift[policy][swift_name]:
                mismatches.append(f"{policy} {swift_name}: ours {mine:.3f}, Swift {swift[policy][swift_name]:.3f}")
    result = "match" if compared and not mismatches else "MISMATCH"
    return {"file": path, "result": result, "compared": compared, "mismatches": mismatches}


# ---------------------------------------------------------------------------------------------


def versions():
    from importlib.metadata import version, PackageNotFoundError
    out = {"python": sys.version.split()[0]}
    for name in ("numpy", "scipy", "implicit", "lightfm-next"):
        try:
            out[name] = version(name)
        except PackageNotFoundError:
            out[name] = None
    return out


def main(argv):
    parser = argparse.ArgumentParser(prog=PROG, description=(
        "Runs implicit ALS, implicit BPR and LightFM WARP (+ item features) on the same time split "
        "and metrics as `swiperank evaluate`'s replay."))
    parser.add_argument("out", nargs="?", default=None,
                        help="folder with movies.csv, movies.schema.json, swipes.csv (default .build/movielens); outputs go there too")
    parser.add_argument("--train-fraction", type=float, default=0.7, help="share of each student's swipes to learn from (default 0.7)")
    parser.add_argument("--k", type=int, default=10, help="the cutoff (default 10)")
    parser.add_argument("--seed", type=int, default=1, help="seed of the random policy, as `swiperank evaluate --seed` (default 1)")
    parser.add_argument("--catalog", default="movies.csv", help="catalog file name inside OUT (default movies.csv)")
    parser.add_argument("--schema", default="movies.schema.json", help="schema file name inside OUT (default movies.schema.json)")
    parser.add_argument("--interactions", default="swipes.csv", help="swipe log file name inside OUT (default swipes.csv)")
    parser.add_argument("--quick", action="store_true", help="one configuration per model instead of the grid (a smoke test)")
    args = parser.parse_args(argv)
    if not 0 < args.train_fraction < 1:
        parser.error("--train-fraction must be in (0, 1)")
    if args.k <= 0:
        parser.error("--k must be > 0")
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    out = args.out or os.path.join(root, ".build", "movielens")
    if not os.path.isdir(out):
        raise InputError(f"{out}: no such folder (make one with `bash scripts/movielens {out}`)")
    threads = 1
    started = time.time()

    def log(message):
        print(message, file=sys.stderr, flush=True)

    schema_path, catalog_path, swipes_path = (os.path.join(out, x) for x in (args.schema, args.catalog, args.interactions))
    ids, features, feature_names = read_catalog(schema_path, catalog_path)
    item_row = {item: r for r, item in enumerate(ids)}
    logs = read_swipes(swipes_path, item_row)
    students = list(logs)  # order of first appearance, as `evaluate` without --students
    k, tf = args.k, args.train_fraction
    n_items = len(ids)
    outer_split = time_split(logs, tf)
    outer = Task(students, outer_split, n_items)
    # The inner split: the same time split of each student's training swipes.
    inner = Task(students, time_split({s: outer_split[s][0] for s in students}, tf), n_items)
    log(f"{len(ids)} items ({len(feature_names)} item features), {len(students)} students, "
        f"{sum(len(v) for v in logs.values())} swipes; {outer.ranked} students with a held-out like, "
        f"{inner.ranked} with a validation like")

    results = []  # (key, label, per-student, constant, extra)
    pop_scores = outer.like_counts()
    per, constant = outer.evaluate(pop_scores, k)
    inner_pop = means(inner.evaluate(inner.like_counts(), k)[0])["ndcg"]
    results.append(("popularity", "popularity (likes in training)", per, constant, {"validation_ndcg": inner_pop}))
    random_scores = splitmix64_floats(args.seed, len(students) * n_items).reshape(len(students), n_items)
    per, constant = outer.evaluate(random_scores, k)
    results.append(("random", f"random (Swift's SplitMix64 draws, seed {args.seed})", per, constant, {}))

    item_features = lightfm_item_features(features)
    labels = {"als": ("implicit_als", "implicit ALS"), "bpr": ("implicit_bpr", "implicit BPR"),
              "lightfm": ("lightfm_warp", "LightFM WARP + item features")}
    for key, grid in grids(args.quick).items():
        t0 = time.time()
        best, best_ndcg, table, scores = tune_and_fit(key, grid, inner, outer, k, item_features, threads, log)
        per, constant = outer.evaluate(scores, k)
        name, label = labels[key]
        results.append((name, f"{label} ({describe(key, best)})", per, constant, {
            "chosen": best, "validation_ndcg": best_ndcg, "grid_size": len(table), "seconds": round(time.time() - t0, 1),
            "grid": [dict(p, validation_ndcg=v) for p, v in table]}))
        log(f"{label}: chose {describe(key, best)} (validation NDCG@{k} {best_ndcg:.4f}) in {time.time() - t0:.0f} s")

    summary = {name: means(per) for name, _, per, _, _ in results}
    check = check_against_swift(os.path.join(out, "replay.txt"), summary, k)
    seconds = time.time() - started

    # Outputs: the table (stdout), per-student metrics (CSV), means and choices (JSON).
    metric_cols = [f"precision@{k}", f"recall@{k}", f"ndcg@{k}", "auc", "swipe_auc"]
    per_path = os.path.join(out, "anchors-per-student.csv")
    with open(per_path, "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["policy", "student_id"] + metric_cols)
        for name, _, per, _, _ in results:
            for u, s in enumerate(students):
                w.writerow([name, s] + ["" if per[m][u] is None else repr(per[m][u])
                                        for m in ("precision", "recall", "ndcg", "auc", "swipe_auc")])
    pct = f"{tf * 100:g}%"
    print(f"Practitioner anchors on the replay split of {swipes_path}: each student's first {pct} of swipes "
          f"(by time) to learn from, the rest held out;")
    print(f"every item not swiped in training ranked, held-out likes relevant; means over {outer.ranked} students "
          f"(swipe AUC: held-out likes vs held-out dislikes). Ties count in expectation, as in Swift.")
    print("")
    print(f"| policy | P@{k} | NDCG@{k} | AUC | swipe AUC |")
    print("|---|---|---|---|---|")
    for name, label, per, _, _ in results:
        m = summary[name]
        print(f"| {label} | {m['precision']:.3f} | {m['ndcg']:.3f} | {m['auc']:.3f} | {m['swipe_auc']:.3f} |")
    print("")
    print(f"Hyperparameters chosen on the inner split (each student's training swipes split the same way: "
          f"first {pct} to fit, the rest to validate), by mean validation NDCG@{k}, then refitted on all training swipes:")
    print(f"  popularity: nothing to choose (validation NDCG@{k} {inner_pop:.4f}, for reference)")
    for name, label, _, _, extra in results[2:]:
        key = {"implicit_als": "als", "implicit_bpr": "bpr", "lightfm_warp": "lightfm"}[name]
        print(f"  {label.split(' (')[0]}: {describe(key, extra['chosen'])}; validation NDCG@{k} "
              f"{extra['validation_ndcg']:.4f} (best of {extra['grid_size']}, {extra['seconds']:.0f} s)")
    for name, label, _, constant, _ in results:
        if constant:
            print(f"warning: {name} scored every candidate the same for {constant} students: its metrics there are chance.")
    if check["result"] == "not run":
        print(f"check against the Swift replay: not run ({check['detail']}).")
    else:
        print(f"check against the Swift replay ({check['file']}): popularity and random rows, {check['compared']} numbers "
              f"to 3 decimals: {check['result']}" + "".join(f"\n  {x}" for x in check["mismatches"]))
    v = versions()
    print(f"versions: python {v['python']}, numpy {v['numpy']}, scipy {v['scipy']}, implicit {v['implicit']}, "
          f"lightfm-next {v['lightfm-next']}; single-threaded (BLAS too), fixed seeds: deterministic on a given "
          f"machine; implicit and LightFM are not bit-reproducible across CPUs/BLAS builds (float rounding).")
    print(f"per-student metrics: {per_path}; means and choices: {os.path.join(out, 'anchors.json')} ({seconds:.0f} s)")
    with open(os.path.join(out, "anchors.json"), "w") as f:
        json.dump({
            "data": {"catalog": catalog_path, "schema": schema_path, "interactions": swipes_path,
                     "items": n_items, "students": len(students), "item_features": feature_names},
            "train_fraction": tf, "k": k, "students_ranked": outer.ranked, "students_validated": inner.ranked,
            "policies": [dict({"policy": name, "label": label, "means": {c: summary[name][m] for c, m in
                                                                         zip(metric_cols, ("precision", "recall", "ndcg", "auc", "swipe_auc"))},
                               "counts": {c: sum(x is not None for x in per[m]) for c, m in
                                          zip(metric_cols, ("precision", "recall", "ndcg", "auc", "swipe_auc"))},
                               "constant_scores": constant}, **extra)
                         for name, label, per, constant, extra in results],
            "check": check, "versions": v, "threads": threads, "model_seed": SEED, "random_seed": args.seed,
            "seconds": round(seconds, 1),
        }, f, indent=2)
        f.write("\n")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except InputError as e:
        print(f"{PROG}: {e}", file=sys.stderr)
        sys.exit(1)
