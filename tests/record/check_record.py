#!/usr/bin/env python3
"""Checks respbench --json records independently of respbench's own code.

Usage: check_record.py SCHEMA RECORD...

For each record: validates it against the JSON Schema (draft 2020-12, `jsonschema`), decodes every
HDR histogram with the `hdrhistogram` package from PyPI (another HdrHistogram implementation than
the one that wrote it) and compares its count, min, max and percentiles with the record's own
summaries (within the histogram's precision), checks that each test's timeline adds up to its
totals (and each troubled second's 100 ms slots to the second), that completed + failed +
unanswered = issued, that the workload options agree with each other and the tests' mixes, and
that a --find-max search's answer is its best passing step. Prints one line per problem and exits
1 if there is any; `scripts/test.sh` installs the
two packages, and the Rust integration tests (tests/integration/record.rs) run this script on
records written against real servers.
"""

import json
import sys

try:
    import jsonschema
    from hdrh.histogram import HdrHistogram
except ImportError as e:  # pragma: no cover - the message is the point
    print(
        f"check_record.py needs the Python packages jsonschema and hdrhistogram ({e}); "
        "run `bash scripts/test.sh` or `python3 -m pip install jsonschema hdrhistogram`",
        file=sys.stderr,
    )
    sys.exit(3)

# HdrHistogram with 3 significant figures: a value and the one the record shows are the same
# bucket's highest equivalent value, printed with sub-microsecond digits; 0.1% plus a nanosecond
# covers float printing and nothing more.
REL = 0.001

PERCENTILES = {"p50": 50.0, "p90": 90.0, "p95": 95.0, "p99": 99.0, "p99_9": 99.9, "p99_99": 99.99}


def close(a_us, b_us):
    return abs(a_us - b_us) <= max(a_us, b_us) * REL + 0.001


def buckets(h):
    """(highest equivalent value, cumulative count) of every non-empty bucket, ascending."""
    out, total = [], 0
    for item in h.get_recorded_iterator():
        total += item.count_at_value_iterated_to
        out.append((h.get_highest_equivalent_value(item.value_iterated_to), total))
    return out


def values_near_rank(bs, rank):
    """The values at ranks rank-1, rank and rank+1 (1-based).

    Implementations turn a percentile into a rank differently (HdrHistogram_c and the Python
    package round p*N/100, the Rust crate takes the ceiling, after floating-point error), so the
    same histogram may answer with the value one rank away, which in a sparse tail is another
    bucket. Both answers are right; anything further is not."""
    found = set()
    for r in (rank - 1, rank, rank + 1):
        r = max(1, min(r, bs[-1][1]))
        found.add(next(v for v, cum in bs if cum >= r))
    return found


def check_histogram(where, encoded, summary, problems):
    h = HdrHistogram.decode(encoded)
    count = h.get_total_count()
    if count != summary["count"]:
        problems.append(f"{where}: histogram count {count} != summary count {summary['count']}")
        return
    if count == 0:
        return
    bs = buckets(h)
    for name, p in PERCENTILES.items():
        rank = round(p * count / 100)
        options = values_near_rank(bs, rank)
        if not any(close(v / 1000.0, summary[name]) for v in options):
            shown = sorted(v / 1000.0 for v in options)
            problems.append(f"{where}: {name} is {summary[name]} us, the histogram says {shown}")
    for name, ns in (("min", h.get_min_value()), ("max", h.get_max_value()), ("avg", h.get_mean_value())):
        if not close(ns / 1000.0, summary[name]):
            problems.append(f"{where}: {name} decodes to {ns / 1000.0} us, summary says {summary[name]}")


def check_test(i, test, problems):
    where = f"tests[{i}] {test['name']}"
    lat = test["latency_us"]
    hist = test["histograms"]
    check_histogram(where + " corrected", hist["corrected"], lat["corrected"], problems)
    check_histogram(where + " uncorrected", hist["uncorrected"], lat["uncorrected"], problems)
    if lat["corrected"]["count"] != test["requests"]["completed"]:
        problems.append(f"{where}: {lat['corrected']['count']} latencies for {test['requests']['completed']} completed")
    for n, node in enumerate(test["nodes"]):
        check_histogram(f"{where} nodes[{n}]", node["histogram"], node["latency_us"], problems)
    mix = test.get("mix", [])
    for m in mix:
        check_histogram(f"{where} mix {m['name']}", m["histogram"], m["latency_us"], problems)
        u = m.get("uncorrected")
        if u is not None:
            check_histogram(f"{where} mix {m['name']} uncorrected", u["histogram"], u["latency_us"], problems)
            if u["latency_us"]["count"] != m["latency_us"]["count"]:
                problems.append(f"{where}: mix {m['name']} uncorrected count differs from its corrected one")
    if mix and all("uncorrected" in m for m in mix):
        # The test's latencies from the write are its commands' together.
        total = sum(m["uncorrected"]["latency_us"]["count"] for m in mix)
        if total != lat["uncorrected"]["count"]:
            problems.append(f"{where}: mix uncorrected counts sum to {total}, the test has {lat['uncorrected']['count']}")
    if mix:
        for key in ("completed", "failed"):
            total = sum(m[key] for m in mix)
            if total != test["requests"][key]:
                problems.append(f"{where}: mix {key} sums to {total}, total is {test['requests'][key]}")
        names = [m["name"].lower() for m in mix]
        if names != test["commands"]:
            problems.append(f"{where}: mix commands {names} but commands {test['commands']}")
    rows = test["timeline"]
    answered = test["requests"]["completed"] + test["requests"]["failed"]
    if answered and not rows:
        problems.append(f"{where}: {answered} replies but an empty timeline")
    if rows:
        for key in ("completed", "failed"):
            total = sum(r[key] for r in rows)
            if total != test["requests"][key]:
                problems.append(f"{where}: timeline {key} sums to {total}, total is {test['requests'][key]}")
    for row in rows:
        slots = row.get("slots")
        if slots is not None:
            for key in ("completed", "failed"):
                total = sum(s[key] for s in slots)
                if total != row[key]:
                    problems.append(f"{where}: second {row['second']}'s slots' {key} sum to {total}, not {row[key]}")
        if sum(row.get("lost", {}).values()) > row["failed"]:
            problems.append(f"{where}: second {row['second']} lost more requests than failed")
    req = test["requests"]
    # Every request written is accounted once: answered, failed (error reply, timeout, lost
    # connection) or unanswered at the end. Cluster redirects re-send requests, so not there.
    if req["issued"] is not None and req.get("redirects") is None and "unanswered" in req:
        accounted = req["completed"] + req["failed"] + req["unanswered"]
        if accounted != req["issued"]:
            problems.append(f"{where}: completed + failed + unanswered = {accounted}, issued {req['issued']}")
    # A reopening attempt is answered, refused, or neither (timed out, reset, under way): never both.
    if "reconnect_refusals" in req and req["reconnects"] + req["reconnect_refusals"] > req["reconnect_attempts"]:
        problems.append(f"{where}: reconnects + refusals exceed the {req['reconnect_attempts']} attempts")


def check_options(record, problems):
    """The workload options agree with each other and with the tests: the key range is -r's,
    a pattern's parameters are its own, a sequential pattern is --sequential, and a mix's
    commands are the ones each test timed."""
    o = record["options"]
    if o["key_maximum"] is not None:
        if o["keyspace"] is None or o["key_maximum"] != o["keyspace"] - 1:
            problems.append(f"options: key_maximum {o['key_maximum']} but keyspace {o['keyspace']}")
        if o["key_minimum"] > o["key_maximum"]:
            problems.append(f"options: key range {o['key_minimum']}..{o['key_maximum']} is empty")
    patterns = [o["key_pattern"]] + [m["key_pattern"] for m in o["mix"] if m["key_pattern"]]
    for kp in patterns:
        params = {k for k in kp if k != "name"}
        allowed = {"gaussian": {"median", "stddev"}, "zipf": {"exponent"}}.get(kp["name"], set())
        if not params <= allowed:
            problems.append(f"options: key pattern {kp['name']} with {sorted(params - allowed)}")
        if kp["name"] == "gaussian" and o["key_maximum"] is not None:
            if not o["key_minimum"] <= kp.get("median", o["key_minimum"]) <= o["key_maximum"]:
                problems.append(f"options: Gaussian median {kp.get('median')} outside the key range")
    if o["sequential"] != (o["key_pattern"]["name"] in ("sequential", "parallel")):
        problems.append(f"options: sequential {o['sequential']} with pattern {o['key_pattern']['name']}")
    sizes = o["data_size_range"]
    if sizes is not None and sizes["min"] > sizes["max"]:
        problems.append(f"options: data_size_range {sizes}")
    if sizes is not None and o["data_size_list"] is not None:
        problems.append("options: both data_size_range and data_size_list")
    names = [m["name"] for m in o["mix"]]
    for i, test in enumerate(record["tests"]):
        timed = [m["name"] for m in test.get("mix", [])]
        if timed != names:
            problems.append(f"tests[{i}]: mix {timed} but options.mix {names}")


def check_find_max(fm, problems):
    """A --find-max search: ordered percentiles per window, and an answer that is the mean achieved
    rate of the windows that met the SLO at the highest rate whose windows lead to "met" by two
    (none, or a search that ended too noisy: null); a converged search has a failing rate (broken
    by two, or six windows without a lead) within 5% above it, and three windows at each bound."""
    rates = {}
    for i, st in enumerate(fm["steps"]):
        pcts = [st["p50_us"], st["p99_us"], st["p999_us"]]
        if any(p is None for p in pcts):
            # A window with no reply has no latency (null), and cannot have met the SLO.
            if not all(p is None for p in pcts) or st["met"]:
                problems.append(f"find_max.steps[{i}]: a window without latencies {st}")
        elif not pcts[0] <= pcts[1] <= pcts[2]:
            problems.append(f"find_max.steps[{i}]: percentiles out of order {st}")
        if st["saturated"] != (st["achieved_rps"] < 0.9 * st["offered_rps"]):
            problems.append(f"find_max.steps[{i}]: saturated is {st['saturated']} at {st['achieved_rps']} of {st['offered_rps']}")
        t = rates.setdefault(st["offered_rps"], [0, 0, 0.0])
        if st["met"] and not st["saturated"]:
            t[0] += 1
            t[2] += st["achieved_rps"]
        else:
            t[1] += 1
    if fm["end"] in ("running",):
        return
    met = [r for r, (m, b, _) in rates.items() if m >= b + 2]
    if fm["end"] == "converged" and not met and "boundary" not in fm:
        check_one_window_answer(fm, rates, problems)
        return
    if fm["end"] == "too-noisy" or not met:
        if fm["answer_rps"] is not None:
            problems.append(f"find_max: answer {fm['answer_rps']} with no rate met by two windows (or too noisy)")
        return
    best = max(met)
    m, b, total = rates[best]
    want = total / m
    if fm["answer_rps"] is None or abs(fm["answer_rps"] - want) > 0.51:
        problems.append(f"find_max: answer {fm['answer_rps']}, the windows that met it at {best} achieved {want} on average")
    if fm["end"] == "converged":
        above = [r for r, (m, b, _) in rates.items() if r > best and (b >= m + 2 or m + b >= 6)]
        if not above or min(above) > best * 1.05:
            problems.append(f"find_max: converged without a failing rate within 5% above the answer {best} (rate: [met, broken] {describe(rates)})")
        elif m + b < 3 or sum(rates[min(above)][:2]) < 3:
            problems.append("find_max: converged with fewer than three windows at a bound")


def describe(rates):
    """The windows' verdicts per rate, in rate order: what a failed rule is judged from."""
    return ", ".join(f"{r}: [{m}, {b}]" for r, (m, b, _) in sorted(rates.items()))


def check_one_window_answer(fm, rates, problems):
    """Records of builds before the "met by two" rule (no `find_max.boundary`, one window a
    rate): the answer is the achieved rate at the highest rate that met the SLO unsaturated, and
    a converged search has a rate within 5% above it that failed."""
    met = [r for r, (m, _, _) in rates.items() if m > 0]
    if not met:
        problems.append(f"find_max: answer {fm['answer_rps']} with no rate that met the SLO")
        return
    best = max(met)
    m, _, total = rates[best]
    if fm["answer_rps"] is None or abs(fm["answer_rps"] - total / m) > 0.51:
        problems.append(f"find_max: answer {fm['answer_rps']}, the windows at {best} achieved {total / m}")
    above = [r for r, (_, b, _) in rates.items() if r > best and b > 0]
    if not above or min(above) > best * 1.05:
        problems.append("find_max: converged without a failing rate within 5% above the answer")


def check(schema, path):
    with open(path, encoding="utf-8") as f:
        record = json.load(f)
    problems = [
        f"schema: {'/'.join(map(str, e.absolute_path))}: {e.message}"
        for e in jsonschema.Draft202012Validator(schema).iter_errors(record)
    ]
    if not problems:
        for i, test in enumerate(record["tests"]):
            check_test(i, test, problems)
        check_options(record, problems)
        if "find_max" in record:
            check_find_max(record["find_max"], problems)
        for i, c in enumerate(record.get("counters", [])):
            check_counters(f"counters[{i}]", c, problems)
    return problems


def check_counters(where, c, problems):
    """found = acknowledged - lost + applied, 0 <= applied <= unacknowledged, 0 <= lost <= acknowledged."""
    if c["found"] != c["after"] - c["before"]:
        problems.append(f"{where}: found {c['found']} is not after - before")
    ack, unack, found = c["acknowledged"], c["unacknowledged"], c["found"]
    want_min = min(max(ack - found, 0), ack)
    want_max = min(max(ack - found + unack, 0), ack)
    if (c["lost_min"], c["lost_max"]) != (want_min, want_max):
        problems.append(f"{where}: lost {c['lost_min']}..{c['lost_max']}, expected {want_min}..{want_max}")


def main():
    if len(sys.argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    with open(sys.argv[1], encoding="utf-8") as f:
        schema = json.load(f)
    jsonschema.Draft202012Validator.check_schema(schema)
    failed = False
    for path in sys.argv[2:]:
        for p in check(schema, path):
            print(f"{path}: {p}")
            failed = True
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
