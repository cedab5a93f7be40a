"""Checks of scripts/check_numbers.py on hand-made docs: a traced figure passes, a drifted one
fails, and so do an untraced figure, a stale generated table and an allowlist entry that matches
nothing. Run: python3 scripts/check_numbers_test.py (stdlib only; bash scripts/test runs it)."""
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import check_numbers  # noqa: E402

METRICS = "policy,ndcg\nengine,0.8236\nrandom,0.3989\n"
REPLAY = ("policy,precision@10,recall@10,ndcg@10,map@10,mrr,auc,swipe_auc,replay_like_rate,replay_matches\n"
          + "".join(f"{p},0.3480,0.3576,0.4386,0.2815,0.7879,0.9688,0.6408,{'' if p == 'random' else '0.8001'},250\n"
                    for p, _ in check_numbers.REPLAY_LABELS))


class CheckNumbersTest(unittest.TestCase):
    def tree(self, readme, allow=None, files=None):
        root = tempfile.mkdtemp()
        self.addCleanup(lambda: __import__("shutil").rmtree(root))
        os.makedirs(os.path.join(root, "notebooks-export"))
        os.makedirs(os.path.join(root, "docs", "measurements"))
        os.makedirs(os.path.join(root, "scripts"))
        for path, text in {"notebooks-export/final_metrics.csv": METRICS, "notebooks-export/replay.csv": REPLAY,
                           "docs/measurements/bench.json": '{"_about": "x", "load": {"values": ["272 ms", "1.14×"]}}',
                           "README.md": readme, **(files or {})}.items():
            with open(os.path.join(root, path), "w", encoding="utf-8") as f:
                f.write(text)
        if allow is not None:
            with open(os.path.join(root, "scripts", "check_numbers_allow.txt"), "w", encoding="utf-8") as f:
                f.write(allow)
        return root

    def test_traced_figures_pass(self):
        root = self.tree("<!-- numbers: notebooks-export/final_metrics.csv -->\nThe engine serves 0.824 against 0.399 (82%).\n\n"
                         "<!-- numbers: docs/measurements/bench.json:load -->\np50 272 ms, 1.14× one instance.\n")
        self.assertEqual(check_numbers.check(root), [])

    def test_drifted_figure_fails(self):
        root = self.tree("<!-- numbers: notebooks-export/final_metrics.csv -->\nThe engine serves 0.829 against 0.399.\n")
        errors = check_numbers.check(root)
        self.assertEqual(len(errors), 1)
        self.assertIn("figure 0.829 is not in notebooks-export/final_metrics.csv", errors[0])

    def test_row_filter_narrows_the_source(self):
        root = self.tree("<!-- numbers: notebooks-export/final_metrics.csv:policy=random -->\nThe engine serves 0.824.\n")
        self.assertEqual(len(check_numbers.check(root)), 1)

    def test_untraced_figure_fails_and_code_is_skipped(self):
        root = self.tree("It takes 1.2 s.\n\n```sh\nswiperank --rate 0.5\n```\n`--x 0.7` and port 8080.\n")
        errors = check_numbers.check(root)
        self.assertEqual(len(errors), 1)
        self.assertIn("figure 1.2 s has no source", errors[0])

    def test_marker_applies_to_the_next_block_only(self):
        root = self.tree("<!-- numbers: notebooks-export/final_metrics.csv -->\n\nServes 0.824.\n\nThen 0.824 again.\n")
        errors = check_numbers.check(root)
        self.assertEqual(len(errors), 1)
        self.assertIn("README.md:5", errors[0])

    def test_sources_must_be_generated_or_results(self):
        root = self.tree("<!-- numbers: README.md -->\nServes 0.824.\n")
        self.assertTrue(any("not a generated or results file" in e for e in check_numbers.check(root)))

    def test_allowlist_allows_and_must_match(self):
        root = self.tree("A timeout of 10 s.\n", allow="README.md | timeout of 10 s | configuration\n")
        self.assertEqual(check_numbers.check(root), [])
        root = self.tree("A timeout of 10 s.\n", allow="README.md | timeout of 10 s | configuration\nREADME.md | gone 3.5 | old\n")
        self.assertEqual(len(check_numbers.check(root)), 1)

    def test_confidence_levels_and_versions_are_not_figures(self):
        root = self.tree("A 95% CI; implicit 0.7.3; RecBole 1.2.1.\n")
        self.assertEqual(check_numbers.check(root), [])

    def test_generated_table_is_compared_and_updated(self):
        table = "\n".join(check_numbers.replay_table(list(__import__("csv").DictReader(REPLAY.splitlines()))))
        self.assertIn("| 0.282 |", table)  # 0.2815 rounds half up
        good = self.tree(f"<!-- generated: replay -->\n{table}\n<!-- /generated -->\n")
        self.assertEqual(check_numbers.check(good), [])
        stale = table.replace("0.969", "0.955", 1)
        root = self.tree(f"<!-- generated: replay -->\n{stale}\n<!-- /generated -->\n")
        errors = check_numbers.check(root)
        self.assertEqual(len(errors), 1)
        self.assertIn("generated table 'replay' differs", errors[0])
        self.assertEqual(check_numbers.check(root, update=True), [])
        self.assertEqual(check_numbers.check(root), [])


if __name__ == "__main__":
    unittest.main()
