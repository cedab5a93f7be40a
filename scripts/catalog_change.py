"""The client side of scripts/catalog-change: seed students, edit the catalog, check the restart.

    python3 scripts/catalog_change.py seed BASE STUDENTS WORK
    python3 scripts/catalog_change.py edit WORK
    python3 scripts/catalog_change.py check BASE STUDENTS WORK

Standard library only. Everything random is seeded.
"""
import base64
import csv
import hashlib
import hmac
import json
import os
import random
import sys
import threading
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor

SEED = 29


def token(student):
    b64 = lambda b: base64.urlsafe_b64encode(b).rstrip(b"=")
    secret = os.environ["SWIPERANK_JWT_SECRET"].encode()
    head = b64(json.dumps({"alg": "HS256", "typ": "JWT"}).encode()) + b"." + \
        b64(json.dumps({"sub": student, "exp": int(time.time()) + 7200}).encode())
    return (head + b"." + b64(hmac.new(secret, head, hashlib.sha256).digest())).decode()


def call(base, method, path, student=None, body=None):
    """(status, parsed JSON body or None); never raises for an HTTP status."""
    headers = {"Content-Type": "application/json"}
    if student:
        headers["Authorization"] = "Bearer " + token(student)
    data = None if body is None else (body if isinstance(body, bytes) else json.dumps(body).encode())
    req = urllib.request.Request(base + path, data=data, method=method, headers=headers)
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            raw = r.read()
            return r.status, (json.loads(raw) if raw else None)
    except urllib.error.HTTPError as e:
        raw = e.read()
        try:
            return e.code, json.loads(raw)
        except ValueError:
            return e.code, None


def seed(base, n, work):
    profile = open("datasets/sample-profile.json", "rb").read()

    def one(i):
        sid = f"cc-{i}"
        status, _ = call(base, "PUT", "/student/profile", sid, profile)
        assert status == 201, (sid, status)
        k = 5 + (i * 7) % 36  # 5–40 swipes
        status, deck = call(base, "GET", f"/student/recommendations/preload?count={k + 1}&fields=minimal", sid)
        assert status == 200, (sid, status)
        cards = [c["school_id"] for c in deck["recommendations"]]
        rng = random.Random(SEED * 100_003 + i)
        swipes = [{"swipe_id": f"{sid}-w{j}", "school_id": c, "action": "like" if rng.random() < 0.4 else "dislike",
                   "timestamp": 1_700_000_000_000 + j} for j, c in enumerate(cards[:k])]
        status, reply = call(base, "POST", "/student/sync", sid, {"swipes": swipes})
        assert status == 200, (sid, status, reply)
        total = k
        if i % 5 == 0:
            status, _ = call(base, "POST", f"/student/schools/{cards[k]}/save", sid)
            assert status == 201, (sid, status)
            total += 1
        status, state = call(base, "GET", "/student/learning-state", sid)
        assert status == 200 and state["total_swipes"] == total, (sid, status, state)
        return sid, total, cards[:k]

    with ThreadPoolExecutor(4) as pool:
        rows = list(pool.map(one, range(n)))
    json.dump({sid: {"total": total, "swiped": swiped} for sid, total, swiped in rows}, open(f"{work}/students.json", "w"))
    print(f"seeded {n} students, {sum(r[1] for r in rows)} swipes and saves acknowledged", file=sys.stderr)


def edit(work):
    rng = random.Random(SEED)
    students = json.load(open(f"{work}/students.json"))
    with open("datasets/schools.csv", newline="") as f:
        reader = csv.reader(f)
        header = next(reader)
        rows = list(reader)
    swiped = sorted({c for s in students.values() for c in s["swiped"]})
    deleted = set(rng.sample(swiped, min(50, len(swiped))))
    rows = [r for r in rows if r[0] not in deleted]
    tuition, earnings = header.index("tuition_in_state"), header.index("median_earnings")
    for r in rng.sample(rows, 500):
        col = rng.choice([tuition, earnings])
        if r[col]:
            r[col] = str(int(float(r[col]) * 1.01) + 1)
    template = rows[0]
    for k in range(100):
        new = list(template)
        new[0], new[1] = str(980_000 + k), f"Added College {k}"
        rows.append(new)
    with open(f"{work}/schools.csv", "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(header)
        w.writerows(rows)
    with open("datasets/school_majors.csv", newline="") as f, open(f"{work}/school_majors.csv", "w", newline="") as out:
        reader, w = csv.reader(f), csv.writer(out, lineterminator="\n")
        w.writerow(next(reader))
        w.writerows(r for r in reader if r[0] not in deleted)
    json.dump(sorted(deleted), open(f"{work}/deleted.json", "w"))
    print(f"edited catalog: {len(deleted)} deleted, 500 values changed, 100 added", file=sys.stderr)


def percentile(values, p):
    values = sorted(values)
    return values[min(len(values) - 1, int(p / 100 * len(values)))] if values else float("nan")


def check(base, n, work):
    students = json.load(open(f"{work}/students.json"))
    deleted = set(json.load(open(f"{work}/deleted.json")))
    ids = sorted(students)
    started = time.monotonic()
    done = threading.Event()
    failures, latencies, served_deleted, lock = [], [], [], threading.Lock()

    def load(thread):
        rng = random.Random(SEED + thread)
        while not done.is_set() and time.monotonic() - started < 300:
            sid = rng.choice(ids)
            t0 = time.perf_counter()
            status, body = call(base, "GET", "/student/recommendations?count=10&fields=minimal", sid)
            elapsed = (time.perf_counter() - t0) * 1000
            with lock:
                latencies.append(elapsed)
                if status != 200:
                    failures.append((sid, status, body))
                else:
                    served_deleted.extend(c["school_id"] for c in body["recommendations"] if c["school_id"] in deleted)
            time.sleep(0.01)  # paced: ~100 requests/s per thread at most

    threads = [threading.Thread(target=load, args=(t,)) for t in range(2)]
    for t in threads:
        t.start()
    sweep = {}
    while time.monotonic() - started < 300:
        status, health = call(base, "GET", "/health")
        sweep = (health or {}).get("migration", {}).get("sweep", {})
        if sweep.get("state") in ("done", "failed"):
            break
        time.sleep(0.05)
    sweep_seconds = time.monotonic() - started
    done.set()
    for t in threads:
        t.join()
    status, health = call(base, "GET", "/health")

    lost = []
    for sid in ids:
        status, state = call(base, "GET", "/student/learning-state", sid)
        if status != 200:
            failures.append((sid, status, state))
        elif state["total_swipes"] != students[sid]["total"]:
            lost.append((sid, students[sid]["total"], state["total_swipes"]))
    migration = health["migration"]
    print(f"students {n}: sweep {sweep.get('state')} in {sweep_seconds:.1f} s "
          f"(scanned {sweep.get('scanned')}, migrated by the sweep {sweep.get('migrated')}, "
          f"by a request {migration['migrated'] - sweep.get('migrated', 0)}, failed {migration['failed']})")
    print(f"decks during the sweep: {len(latencies)} requests, p50 {percentile(latencies, 50):.1f} ms, "
          f"p99 {percentile(latencies, 99):.1f} ms, max {max(latencies, default=float('nan')):.1f} ms (client-measured)")
    print(f"failed requests {len(failures)}, students with a changed swipe count {len(lost)}, "
          f"deleted schools served {len(served_deleted)}, health {health['status']}, catalog {health['catalog']}")
    ok = (not failures and not lost and not served_deleted and sweep.get("state") == "done"
          and health["status"] == "ok" and migration["failed"] == 0)
    if not ok:
        print("FAILED", failures[:5], lost[:5], served_deleted[:5], file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    command = sys.argv[1]
    if command == "seed":
        seed(sys.argv[2], int(sys.argv[3]), sys.argv[4])
    elif command == "edit":
        edit(sys.argv[2])
    elif command == "check":
        check(sys.argv[2], int(sys.argv[3]), sys.argv[4])
    else:
        sys.exit(f"unknown command {command}")
