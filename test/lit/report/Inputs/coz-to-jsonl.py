"""Rewrites a tab-separated Coz profile in the JSON Lines spelling newer Coz
writes by default (record types with '_', selected_samples, numbers as JSON
numbers). Used to check that both spellings read the same."""
import json
import sys

TYPES = {"throughput-point": "throughput_point", "progress-point": "throughput_point",
         "latency-point": "latency_point"}
KEYS = {"selected-samples": "selected_samples"}
TEXT = {"selected", "name", "location", "type"}

for line in open(sys.argv[1], encoding="utf-8"):
    line = line.rstrip("\n")
    if not line:
        continue
    parts = line.split("\t")
    record = {"type": TYPES.get(parts[0], parts[0])}
    for part in parts[1:]:
        key, _, value = part.partition("=")
        if parts[0] == "progress-point" and key == "type":
            continue
        key = KEYS.get(key, key)
        if key in TEXT:
            record[key] = value
        elif "." in value:
            record[key] = float(value)
        else:
            record[key] = int(value)
    sys.stdout.write(json.dumps(record, separators=(",", ":")) + "\n")
