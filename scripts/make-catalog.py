#!/usr/bin/env python3
"""Writes a synthetic restaurant catalog of N items to OUT, with the columns of
datasets/restaurants/restaurants.csv (read it with datasets/restaurants/restaurants.schema.json):
for measuring large catalogs (`swiperank catalog build`, `serve --catalog-cache`). Deterministic:
the same N writes the same bytes. Generated files are not committed; write them under /tmp.

    python3 scripts/make-catalog.py 1000000 /tmp/restaurants-1m.csv
"""
import random, sys

if len(sys.argv) != 3:
    sys.exit("usage: make-catalog.py N OUT")
n, out = int(sys.argv[1]), sys.argv[2]
rng = random.Random(20261125)
hoods = {"Riverside": (40.00, -75.00), "Old Town": (40.03, -74.96), "Harbor": (39.97, -74.95),
         "University": (40.05, -75.05), "Northgate": (40.10, -75.00), "Eastfield": (40.01, -74.88),
         "Westbrook": (39.99, -75.12), "Lakeshore": (39.92, -75.03)}
names = sorted(hoods)
cuisines = ["italian", "thai", "mexican", "japanese", "indian", "american", "vegan", "french"]
words = ["Blue", "Golden", "Little", "Corner", "Garden", "Silver", "Red", "Old", "Green", "Happy"]
nouns = ["Table", "Kitchen", "Spoon", "Bistro", "House", "Grill", "Bowl", "Cafe", "Oven", "Leaf"]
with open(out, "w", newline="") as f:
    f.write("id,name,neighborhood,latitude,longitude,cuisine,price_level,rating,reviews,seats,outdoor\n")
    for i in range(n):
        hood = names[rng.randrange(len(names))]
        lat, lon = hoods[hood]
        price = rng.choices((1, 2, 3, 4), (3, 4, 2, 1))[0]
        rating = "" if rng.random() < 0.1 else f"{min(5.0, max(2.5, rng.gauss(3.6 + 0.2 * price, 0.45))):.1f}"
        f.write(f"r{i + 1:07d},{words[rng.randrange(10)]} {nouns[rng.randrange(10)]} {i + 1},{hood},"
                f"{lat + rng.gauss(0, 0.012):.5f},{lon + rng.gauss(0, 0.015):.5f},{cuisines[rng.randrange(8)]},"
                f"{price},{rating},{int(rng.lognormvariate(4.5, 1.1))},{rng.randint(12, 220)},"
                f"{'yes' if rng.random() < 0.5 else 'no'}\n")
