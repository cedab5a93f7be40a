#!/usr/bin/env python3
"""Writes datasets/restaurants/{restaurants.csv,users.csv}: a small synthetic second catalog
(not schools) for showing and testing that the engine and `swiperank evaluate` work on any
catalog. Deterministic: the same script writes the same bytes. The swipes are then generated
by the engine itself: see datasets/restaurants/README.md."""
import csv, os, random

rng = random.Random(20261122)
out = os.path.join(os.path.dirname(__file__), "..", "datasets", "restaurants")
# Neighborhood centres of a made-up city around (40.0, -75.0), a few miles apart.
hoods = {"Riverside": (40.00, -75.00), "Old Town": (40.03, -74.96), "Harbor": (39.97, -74.95),
         "University": (40.05, -75.05), "Northgate": (40.10, -75.00), "Eastfield": (40.01, -74.88),
         "Westbrook": (39.99, -75.12), "Lakeshore": (39.92, -75.03)}
cuisines = ["italian", "thai", "mexican", "japanese", "indian", "american", "vegan", "french"]
words = ["Blue", "Golden", "Little", "Corner", "Garden", "Silver", "Red", "Old", "Green", "Happy"]
nouns = ["Table", "Kitchen", "Spoon", "Bistro", "House", "Grill", "Bowl", "Cafe", "Oven", "Leaf"]
rows = []
for i in range(80):
    hood = rng.choice(sorted(hoods))
    lat, lon = hoods[hood]
    cuisine = rng.choice(cuisines)
    price = rng.choices([1, 2, 3, 4], [3, 4, 2, 1])[0]
    rating = "" if rng.random() < 0.1 else f"{min(5.0, max(2.5, rng.gauss(3.6 + 0.2 * price, 0.45))):.1f}"
    rows.append({
        "id": f"r{i + 1:03d}", "name": f"{rng.choice(words)} {rng.choice(nouns)} {i + 1}",
        "neighborhood": hood, "latitude": f"{lat + rng.gauss(0, 0.012):.5f}",
        "longitude": f"{lon + rng.gauss(0, 0.015):.5f}", "cuisine": cuisine, "price_level": price,
        "rating": rating, "reviews": int(rng.lognormvariate(4.5, 1.1)), "seats": rng.randint(12, 220),
        "outdoor": rng.choice(["yes", "no"]),
    })
with open(os.path.join(out, "restaurants.csv"), "w", newline="") as f:
    w = csv.DictWriter(f, fieldnames=list(rows[0]), lineterminator="\n")
    w.writeheader()
    w.writerows(rows)

users = []
for i in range(60):
    home = rng.random() < 0.85
    lat, lon = hoods[rng.choice(sorted(hoods))]
    user = {"student_id": f"u{i + 1:02d}",
            "home_latitude": f"{lat + rng.gauss(0, 0.02):.5f}" if home else "",
            "home_longitude": f"{lon + rng.gauss(0, 0.02):.5f}" if home else "",
            "max_distance_miles": rng.choice([2, 3, 4, 6]) if home else "",
            "pref:price_level": f"{rng.uniform(-1.2, 0.3):.2f}" if rng.random() < 0.7 else "",
            "pref:quality": f"{rng.uniform(0, 1.0):.2f}" if rng.random() < 0.5 else "",
            "pref:cuisine=" + "thai": "", "pref:cuisine=italian": "", "pref:cuisine=vegan": ""}
    liked = rng.choice(["thai", "italian", "vegan", None])
    if liked:
        user["pref:cuisine=" + liked] = f"{rng.uniform(0.5, 1.5):.2f}"
    users.append(user)
with open(os.path.join(out, "users.csv"), "w", newline="") as f:
    w = csv.DictWriter(f, fieldnames=list(users[0]), lineterminator="\n")
    w.writeheader()
    w.writerows(users)
