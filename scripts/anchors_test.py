"""Checks of scripts/anchors.py: the port of RankingMetrics.tieAware on hand-made cases and
against brute force over every tie order, Swift's random draws, the split, input errors and the
replay-table check. Run: python3 scripts/anchors_test.py (needs numpy only; falls back to the
venv that `bash scripts/anchors` makes)."""
import itertools
import math
import os
import random
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
try:
    import numpy as np
except ImportError:
    venv = os.path.join(os.path.dirname(HERE), ".build", "anchors-venv", "bin", "python")
    if os.path.exists(venv) and os.path.realpath(sys.executable) != os.path.realpath(venv):
        os.execv(venv, [venv] + sys.argv)
    sys.exit("anchors_test: needs numpy (or run `bash scripts/anchors --help` once to make .build/anchors-venv)")
sys.path.insert(0, HERE)
import anchors  # noqa: E402
from anchors import tie_aware  # noqa: E402


def brute_force(scores, relevant, k):
    """The four metrics averaged over every tie-breaking order (ties in random order), AUC by pairs."""
    s = [float(np.float32(x)) for x in scores]
    n = len(s)
    orders = [p for p in itertools.permutations(range(n)) if all(s[p[i]] >= s[p[i + 1]] for i in range(n - 1))]
    positives = sum(relevant)
    if positives == 0:
        return 0.0, 0.0, 0.0, None
    ideal = sum(1 / math.log2(i + 2) for i in range(min(k, positives)))
    prec = rec = ndcg = 0.0
    for p in orders:
        hits = sum(relevant[i] for i in p[:k])
        prec += hits / k / len(orders)
        rec += hits / positives / len(orders)
        ndcg += sum(1 / math.log2(r + 2) for r, i in enumerate(p[:k]) if relevant[i]) / ideal / len(orders)
    negatives = n - positives
    auc = None
    if negatives:
        pairs = sum((1.0 if s[a] > s[b] else 0.5 if s[a] == s[b] else 0.0)
                    for a in range(n) if relevant[a] for b in range(n) if not relevant[b])
        auc = pairs / (positives * negatives)
    return prec, rec, ndcg, auc


class TieAwareTests(unittest.TestCase):
    def assertMetrics(self, got, want):
        for g, w in zip(got, want):
            if w is None:
                self.assertIsNone(g)
            else:
                self.assertAlmostEqual(g, w, places=12)

    def test_no_ties(self):
        # The relevant item last of three: P@3 1/3, recall 1, NDCG 1/log2(4) = 0.5, AUC 0.
        self.assertMetrics(tie_aware([3, 2, 1], [False, False, True], 3), (1 / 3, 1.0, 0.5, 0.0))
        self.assertMetrics(tie_aware([3, 2, 1], [True, False, False], 1), (1.0, 1.0, 1.0, 1.0))

    def test_all_equal_scores_are_chance(self):
        # Four tied items, one relevant, k = 2: each position holds 1/4 of a hit.
        p, r, n, a = tie_aware([0.5] * 4, [False, True, False, False], 2)
        self.assertAlmostEqual(p, 0.25)
        self.assertAlmostEqual(r, 0.5)
        self.assertAlmostEqual(n, 0.25 * (1 + 1 / math.log2(3)))
        self.assertEqual(a, 0.5)

    def test_mixed_ties(self):
        # A tied (positive, negative) pair counts 1/2; the lower positive beats nothing.
        self.assertMetrics(tie_aware([1, 1, 0], [True, False, True], 1), (0.5, 0.25, 0.5, 0.25))

    def test_k_larger_than_candidates(self):
        # Precision divides by k even when fewer candidates exist (as Swift does).
        self.assertMetrics(tie_aware([2, 1], [True, False], 5), (0.2, 1.0, 1.0, 1.0))
        self.assertMetrics(tie_aware([7, 7], [True, True], 5), (0.4, 1.0, 1.0, None))

    def test_undefined_cases(self):
        self.assertEqual(tie_aware([1, 2, 3], [False] * 3, 10), (0.0, 0.0, 0.0, None))
        self.assertEqual(tie_aware([], [], 1), (0.0, 0.0, 0.0, None))
        self.assertIsNone(tie_aware([1, 2], [True, True], 1)[3])
        with self.assertRaises(ValueError):
            tie_aware([1, 2], [True], 1)
        with self.assertRaises(ValueError):
            tie_aware([1, 2], [True, False], 0)

    def test_ties_are_float32_ties(self):
        # Distinct as doubles, equal as Float: a tie, as in Swift.
        self.assertEqual(tie_aware([1.0, 1.0 + 1e-9], [False, True], 1)[3], 0.5)
        self.assertEqual(tie_aware([-0.0, 0.0], [False, True], 1)[3], 0.5)

    def test_matches_brute_force_over_tie_orders(self):
        rng = random.Random(7)
        for _ in range(300):
            n = rng.randint(1, 6)
            scores = [rng.choice([0.0, 0.25, 0.5, 1.0, 2.0]) for _ in range(n)]
            relevant = [rng.random() < 0.4 for _ in range(n)]
            k = rng.randint(1, 7)
            self.assertMetrics(tie_aware(scores, relevant, k), brute_force(scores, relevant, k))


class ReplayPortTests(unittest.TestCase):
    def test_splitmix64_floats(self):
        # SplitMix64(seed: 0).next() is 0xE220A8397B1DCDAF (the reference generator's first
        # output); Float.random(in: 0..<1) keeps its low 24 bits × 2⁻²⁴.
        x = anchors.splitmix64_floats(0, 2)
        self.assertEqual(x.dtype, np.float32)
        self.assertEqual(float(x[0]), (0xE220A8397B1DCDAF & 0xFFFFFF) / 2 ** 24)
        self.assertTrue(np.all((x >= 0) & (x < 1)))

    def test_time_split(self):
        # Sorted by (timestamp, item id as a string), then floor(count × fraction) to train.
        log = [(0, True, 5, "m9", 2), (1, False, 5, "m10", 3), (2, True, 1, "m2", 4), (3, True, 9, "m1", 5)]
        train, test = anchors.time_split({"u": log}, 0.7)["u"]
        self.assertEqual([x[3] for x in train], ["m2", "m10"])
        self.assertEqual([x[3] for x in test], ["m9", "m1"])

    def test_task_candidates_and_swipe_auc(self):
        # Items 0..3; train: 0 liked; test: 1 liked, 2 disliked, then 2 liked (the last answer).
        split = {"u": ([(0, True, 1, "a", 2)], [(1, True, 2, "b", 3), (2, False, 3, "c", 4), (2, True, 4, "c", 5)])}
        task = anchors.Task(["u"], split, 4)
        candidates, relevant, swiped, labels = task.rows[0]
        self.assertEqual(candidates.tolist(), [1, 2, 3])
        self.assertEqual(relevant.tolist(), [True, True, False])
        self.assertEqual(labels.tolist(), [True, True])  # both liked by the last answer: no swipe AUC
        per, _ = task.evaluate(np.array([[9, 3, 2, 1]], dtype=np.float32), 2)
        self.assertEqual((per["precision"][0], per["auc"][0], per["swipe_auc"][0]), (1.0, 1.0, None))

    def test_replay_table_check(self):
        text = ("policy                            precision@10    recall@10      ndcg@10        map@10"
                "          mrr          auc    swipe_auc   IPS likes  matches\n"
                "popularity                               0.107        0.061        0.128        0.071"
                "        0.289        0.837        0.643           -        0\n"
                "random                                   0.011        0.005        0.010        0.004"
                "        0.046        0.503        0.507           -        0\n"
                "precision, recall, NDCG and AUC count tied scores in expectation\n")
        rows = anchors.parse_replay_table(text)
        self.assertEqual(rows["popularity"]["ndcg@10"], 0.128)
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "replay.txt")
            with open(path, "w") as f:
                f.write(text)
            ours = {"popularity": dict(precision=0.1071, recall=0.0614, ndcg=0.12799, auc=0.8368, swipe_auc=0.6431),
                    "random": dict(precision=0.0113, recall=0.005, ndcg=0.0102, auc=0.503, swipe_auc=0.507)}
            self.assertEqual(anchors.check_against_swift(path, ours, 10)["result"], "match")
            ours["random"]["auc"] = 0.51
            check = anchors.check_against_swift(path, ours, 10)
            self.assertEqual(check["result"], "MISMATCH")
            self.assertEqual(len(check["mismatches"]), 1)


class InputTests(unittest.TestCase):
    def write(self, d, name, text):
        path = os.path.join(d, name)
        with open(path, "w") as f:
            f.write(text)
        return path

    def catalog(self, d):
        schema = self.write(d, "s.json", '{"id_column": "id", "features": ['
                            '{"column": "g", "kind": "flag", "group": "genre"},'
                            '{"column": "year", "kind": "numeric", "group": "era"},'
                            '{"column": "year", "kind": "bins", "name": "era", "edges": [1970, 1990],'
                            ' "labels": ["old", "mid", "new"], "group": "era"}]}')
        movies = self.write(d, "m.csv", "id,g,year\na,1,1960\nb,0,1990\nc,yes,\n")
        return schema, movies

    def test_catalog_features(self):
        with tempfile.TemporaryDirectory() as d:
            ids, features, names = anchors.read_catalog(*self.catalog(d))
            self.assertEqual(ids, ["a", "b", "c"])
            self.assertEqual(names, ["g", "era=old", "era=mid", "era=new", "era_missing"])
            self.assertEqual(features.tolist(), [[1, 1, 0, 0, 0], [0, 0, 0, 1, 0], [1, 0, 0, 0, 1]])

    def test_errors_name_file_and_line(self):
        with tempfile.TemporaryDirectory() as d:
            schema, movies = self.catalog(d)
            items = {"a": 0, "b": 1, "c": 2}
            bad = self.write(d, "w.csv", "student_id,item_id,action,timestamp\nu,a,like,1\nu,b,love,2\n")
            with self.assertRaisesRegex(anchors.InputError, r"w\.csv:3: action \"love\" is not like or dislike"):
                anchors.read_swipes(bad, items)
            bad = self.write(d, "w.csv", "student_id,item_id,timestamp\nu,a,1\n")
            with self.assertRaisesRegex(anchors.InputError, r"w\.csv:1: missing column \"action\""):
                anchors.read_swipes(bad, items)
            bad = self.write(d, "w.csv", "student_id,item_id,action,timestamp\nu,z,like,1\n")
            with self.assertRaisesRegex(anchors.InputError, r"w\.csv:2: unknown item \"z\""):
                anchors.read_swipes(bad, items)
            bad = self.write(d, "w.csv", "student_id,item_id,action,timestamp\nu,a,like,1.5\n")
            with self.assertRaisesRegex(anchors.InputError, r"w\.csv:2: timestamp"):
                anchors.read_swipes(bad, items)
            self.write(d, "m.csv", "id,g,year\na,maybe,1960\n")
            with self.assertRaisesRegex(anchors.InputError, r"m\.csv:2: \"maybe\" is not a 0/1 flag"):
                anchors.read_catalog(schema, movies)
            self.write(d, "m.csv", "id,year\na,1960\n")
            with self.assertRaisesRegex(anchors.InputError, r"m\.csv:1: missing column \"g\""):
                anchors.read_catalog(schema, movies)


if __name__ == "__main__":
    unittest.main()
